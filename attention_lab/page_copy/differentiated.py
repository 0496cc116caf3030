"""The export of an explanations' graph whose pass differentiates (graphs.differentiated), run as `python -m
attention_lab.page_copy.differentiated FOLDER NAME` in a process of its own: it loads the model saved in FOLDER
(save_pretrained: safetensors and its config; ours, or a transformers model through the adapter), traces the graph
NAME of explanations.ANALYSES on its example inputs, and writes the graph's bytes to its standard output.

The pass is traced by torch.fx into plain operations, forward and backward (make_fx with torch's core
decompositions, its sizes symbolic), then made an ExportedProgram by torch.export and written by torch's ONNX exporter
(onnxscript's torchlib) with each axis a dimension. The TorchScript exporter the other graphs use cannot: it refuses a
tensor that requires grad inside the traced pass, and has no ONNX form for some of the operations traced.
The weights stay the model's own tensors (no optimization folds them), which graphs.shared_weights stores once.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch
from torch import nn

GRADIENTS_OPSET = 18  # the dynamo exporter's least


def exported(module: nn.Module, args: tuple, inputs, outputs, axes: dict) -> bytes:
    """The graph of `module` traced on `args`, as its bytes: traced by torch.fx, made an ExportedProgram by
    torch.export, then translated by torch's ONNX exporter (its torchlib functions) as the traced operations are.
    `torch.onnx.export` would trace the program twice more: once to refine the sizes' bounds (here the guards on them
    are kept as checks, which the exporter drops), and once to decompose again what make_fx has already decomposed
    into core ATen. Without them, the reversal model's export took 25.2 s rather than 34.2 s (medians of 3, this
    command's whole process; a graph of the same size that gives the same answers). The steps left are the
    exporter's own, called as torch.onnx.export calls them (torch is pinned: they are not its public API), but two
    more traces: the writes into a tensor are rewritten in the graph (out_of_place) rather than traced again through
    torch.func.functionalize where they are index_put_ alone (ours and a Marian's), and the exporter's type-promotion
    pass, which inserts casts where torch promotes a type, is left out. Without both, the reversal model's export
    took 20.4 s rather than 32.1 s (one run each, in one process), with outputs equal to the bit at three sizes of
    each axis, the reversal model's and a tiny Marian's. A graph ONNX Runtime cannot run without a cast is refused by
    graphs.runs_as_traced as any other, and its methods stay on the server."""
    from onnxscript import ir as onnxscript_ir
    from torch._decomp import core_aten_decompositions
    from torch.export import Dim
    from torch.fx.experimental import _config as fx_experimental
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.onnx._internal.exporter import _core, _fx_passes, _ir_passes, _registration

    dims = {name: Dim(name) for axis in axes.values() for name in axis.values()}
    shapes = tuple({i: dims[name] for i, name in axes[put].items()} if put in axes else None for put in inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's notes on what it traced
        module = module.eval()
        traced = make_fx(module, core_aten_decompositions(), tracing_mode="symbolic", _allow_non_fake_inputs=True)(
            *args
        )
        # each operation that writes into a tensor made one that returns a new tensor, as the ONNX exporter
        # translates them: the backward pass of an indexing writes into its zeros (index_put_), rewritten in place;
        # any other such write, by tracing the graph again through torch.func.functionalize
        if not out_of_place(traced):
            functional = torch.func.functionalize(traced, remove="mutations")
            traced = make_fx(functional, tracing_mode="symbolic", _allow_non_fake_inputs=True)(*args)
        with fx_experimental.patch(backed_size_oblivious=True):  # as torch.onnx.export traces: sizes 0 and 1 too
            program = torch.export.export(
                traced, args, dynamic_shapes=shapes, strict=False, prefer_deferred_runtime_asserts_over_guards=True
            )
        program._graph_module = _fx_passes.remove_assertion_nodes(program.graph_module)
        registry = _registration.ONNXRegistry.from_torchlib(opset_version=GRADIENTS_OPSET)
        model = _core._exported_program_to_onnx_program(program, registry=registry).model
    _ir_passes.rename_inputs(model, list(inputs))
    _ir_passes.rename_outputs(model, list(outputs))
    graph = onnxscript_ir.to_proto(model)
    # the exporter's shapes of the values inside (hints): some of a transformers model's disagree with what ONNX
    # Runtime infers, which its WebAssembly build refuses; it infers them itself
    graph.graph.ClearField("value_info")
    for node in graph.graph.node:  # where in torch's code each node was traced from: 87% of the graph's bytes
        node.ClearField("metadata_props")
    return graph.SerializeToString()


def out_of_place(traced) -> bool:
    """Whether every operation of `traced` (a torch.fx GraphModule) that writes into a tensor was an index_put_ into
    a tensor read by nothing before it, now each made an index_put, its result read by what came after (the graph
    changed in place); False, the graph unchanged, where there is another write."""
    writes = [
        n
        for n in traced.graph.nodes
        if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload) and n.target._schema.is_mutable
    ]
    order = {node: i for i, node in enumerate(traced.graph.nodes)}
    put = torch.ops.aten.index_put_.default
    if any(n.target is not put or any(order[u] < order[n] for u in n.args[0].users) for n in writes):
        return False
    for node in writes:
        written = node.args[0]
        with traced.graph.inserting_after(node):
            made = traced.graph.call_function(torch.ops.aten.index_put.default, node.args, node.kwargs)
        node.replace_all_uses_with(made)
        for user in [u for u in written.users if order.get(u, -1) > order[node]]:
            user.replace_input_with(written, made)
        traced.graph.erase_node(node)
    traced.recompile()
    return True


def loaded(folder: Path) -> nn.Module:
    """The model save_pretrained wrote in `folder`: ours, or (its config names a model_type) a transformers one."""
    from transformer import Transformer
    from transformer.checkpoint import model_type

    if model_type(folder) is None:
        return Transformer.from_pretrained(folder).eval()
    from ..adapters.hf.load import load_model
    from ..adapters.hf.model import HFSeq2Seq

    return HFSeq2Seq(load_model(folder, "model")).eval()


def main() -> None:
    from torch.fx import config as fx_config

    from .explanations import ANALYSES

    # this process's traces keep no node's Python stack: exported drops it from the graph (metadata_props), and
    # recording it at every node took a sixth of the export (de-en's 36.2 s -> 30.4 s, reverse's 29.0 s -> 22.8 s; the
    # same bytes)
    fx_config.do_not_emit_stack_traces = True

    folder, name = Path(sys.argv[1]), sys.argv[2]
    graph = next(g for g in ANALYSES if g.name == name)
    model = loaded(folder)
    module, args = graph.module(model), graph.example(model)
    sys.stdout.buffer.write(exported(module, args, graph.inputs, graph.outputs, graph.axes))


if __name__ == "__main__":
    main()
