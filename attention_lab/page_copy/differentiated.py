"""The export of a graph whose pass differentiates (graphs.differentiated), run as `python -m
attention_lab.page_copy.differentiated` in a process of its own: it reads (module, example inputs, input names,
output names, axes) pickled from its standard input, which graphs.differentiated writes there, and writes the graph's
bytes to its standard output.

The pass is traced by torch.fx into plain operations, forward and backward (make_fx with torch's core
decompositions, its sizes symbolic), then written by torch's dynamo exporter (onnxscript) with each axis a dimension.
The TorchScript exporter the other graphs use cannot: it refuses a tensor that requires grad inside the traced pass.
The weights stay the model's own tensors (no optimization folds them), which graphs.shared_weights stores once.
"""

from __future__ import annotations

import pickle
import sys
import warnings

import torch
from torch import nn

GRADIENTS_OPSET = 18  # the dynamo exporter's least


def exported(module: nn.Module, args: tuple, inputs, outputs, axes: dict) -> bytes:
    """The graph of `module` traced on `args`, as its bytes."""
    from torch._decomp import core_aten_decompositions
    from torch.export import Dim
    from torch.fx.experimental.proxy_tensor import make_fx

    dims = {name: Dim(name) for axis in axes.values() for name in axis.values()}
    shapes = tuple({i: dims[name] for i, name in axes[put].items()} if put in axes else None for put in inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's notes on what it traced
        module = module.eval()
        traced = make_fx(module, core_aten_decompositions(), tracing_mode="symbolic", _allow_non_fake_inputs=True)(
            *args
        )
        program = torch.onnx.export(
            traced,
            args,
            input_names=list(inputs),
            output_names=list(outputs),
            dynamic_shapes=shapes,
            opset_version=GRADIENTS_OPSET,
            dynamo=True,
            optimize=False,
            verbose=False,
        )
    graph = program.model_proto
    # the exporter's shapes of the values inside (hints): some of a transformers model's disagree with what ONNX
    # Runtime infers, which its WebAssembly build refuses; it infers them itself
    graph.graph.ClearField("value_info")
    for node in graph.graph.node:  # where in torch's code each node was traced from: 87% of the graph's bytes
        node.ClearField("metadata_props")
    return graph.SerializeToString()


def main() -> None:
    module, args, inputs, outputs, axes = pickle.loads(sys.stdin.buffer.read())  # from graphs.differentiated
    sys.stdout.buffer.write(exported(module, args, inputs, outputs, axes))


if __name__ == "__main__":
    main()
