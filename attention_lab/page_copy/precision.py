"""The page's two graphs (graphs.py) in a smaller precision, and what that changes against float32.

- float32: the graphs as exported.
- float16: every weight of 1 KB or more stored in float16 and cast to float32 in the graph by a Cast node that
  reads it, so the graphs compute in float32 as before: half the size, the weights rounded to float16 and the rest
  of the arithmetic unchanged. onnxruntime folds those casts when it loads a graph, so a step costs what it cost
  in float32. Computing in float16 too (onnxruntime.transformers.float16's conversion) also loads and runs in
  onnxruntime-web's WebAssembly backend, which has few float16 kernels and casts around the rest; it rounds the
  activations and the attention weights the page shows besides, and on de-en's test split it wrote float32's
  tokens less often (199 of 200 against 200) with larger attention differences, for no gain in size.
- int8: onnxruntime's dynamic quantization (onnxruntime.quantization.quantize_dynamic) of every MatMul with a
  constant weight and every Gather from one (the embeddings): the weights in int8, symmetric, one scale per tensor;
  a MatMul quantizes its input at run time (DynamicQuantizeLinear) and multiplies in integers (MatMulInteger); a
  Gather reads the int8 table and dequantizes the rows it gathers. The attention itself (Q·Kᵀ, softmax, ·V), the
  norms and the biases stay float32.

Each weight is stored once in the blob both graphs read, in int8 too: the quantizer works on one graph at a time
and on weights it reads directly, so the graphs are first prepared as quantization.quant_pre_process prepares them
(onnxruntime's basic optimizations, whose constant folding turns each Transpose or Slice of a weight into the weight
a MatMul reads, but with no MatMul and bias fused into a Gemm, which dynamic quantization leaves in float32; then
shape inference), and the reads of a weight in the other orientation are rewritten:

- a tied embedding (the table E gathered from, and Eᵀ the output projection reads) is gathered from Eᵀ along its
  axis 1 and transposed back, so the int8 Eᵀ is the one table both graphs hold, and the output layer stays an
  int8 MatMul (reading Eᵀ through DequantizeLinear instead would dequantize the whole table at every step: an
  opus-mt-sized step took 28 ms instead of 7 in one measurement with onnxruntime; benchmarks/RESULTS.md's precision
  table has the step times of each precision, which vary with the machine's load);
- any other read of a MatMul's weight (the value norms read W_o) goes through DequantizeLinear of the int8 weight
  (and a Transpose where it wants the other orientation).

An int8 copy has no gradients graph (gradients.py): its backward pass multiplies by each weight and by its
transpose, both of which the quantizer would keep, and de-en's int8 copy grew from under a third of float32's to half
of it; the gradient methods of an int8 copy are the server's.

`drift` measures what a precision changes: the share of sources whose greedy tokens are the reference's, and the
largest difference of any attention weight (encoder, decoder self-attention, cross-attention) on the reference's
tokens (teacher forcing), both decoded with onnxruntime (graph_decoding.py); and for the explanations, the largest
difference of a step's source share and of a flow edge's weight on those tokens (the readings' graph).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .flow import FLOW
from .gradients import GRADIENTS
from .graph_decoding import GraphDecoder, GraphDecoding, analysis_session, keep_masks
from .graphs import WEIGHTS, Exported, shared_weights
from .readings import READINGS

PRECISIONS = ("float32", "float16", "int8")
ATTENTIONS = ("encoder", "self", "cross")  # the graphs' attention outputs (encoder graph; decoder graph)
LARGE = 1024  # bytes: a tensor this large is a weight (graphs.shared_weights stores it in the blob)


def converted(made: Exported, precision: str) -> Exported:
    """`made` (graphs.exported) in `precision`, its weights stored once in one blob as graphs.py stores them."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)} (got {precision!r})")
    if precision == "float32":
        return made
    if precision == "int8":  # with no gradients graph (see the module's docstring)
        made = Exported(made.encoder, made.decoder, made.weights, without(made.analyses, GRADIENTS.name))
    graphs = loaded(made)
    graphs = [halved(g) for g in graphs] if precision == "float16" else quantized(graphs)
    blob = shared_weights(*graphs)
    encoder, decoder, *analyses = (g.SerializeToString() for g in graphs)
    return Exported(encoder, decoder, blob, dict(zip(made.analyses, analyses, strict=True)))


def without(graphs: dict, name: str) -> dict:
    return {key: graph for key, graph in graphs.items() if key != name}


def loaded(made: Exported) -> list:
    """The graphs of `made` (Exported.graphs, in that order) as onnx ModelProtos holding their weights."""
    import onnx

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / WEIGHTS).write_bytes(made.weights)
        graphs = []
        for name, graph in made.graphs().items():
            (Path(folder) / f"{name}.onnx").write_bytes(graph)
            graphs.append(onnx.load(str(Path(folder) / f"{name}.onnx")))
        return graphs


def halved(graph):
    """`graph` with each float32 weight of LARGE bytes or more stored in float16, cast back by a Cast node."""
    import onnx
    from onnxruntime.transformers.float16 import convert_tensor_float_to_float16

    casts = []
    for tensor in graph.graph.initializer:
        if tensor.data_type != onnx.TensorProto.FLOAT or len(tensor.raw_data) < LARGE:
            continue
        name = tensor.name
        tensor.name = f"{name}_float16"
        convert_tensor_float_to_float16(tensor)
        casts.append(
            onnx.helper.make_node("Cast", [tensor.name], [name], f"{name}_to_float32", to=onnx.TensorProto.FLOAT)
        )
    nodes = [*casts, *graph.graph.node]
    graph.graph.ClearField("node")
    graph.graph.node.extend(nodes)
    return graph


@dataclass(frozen=True)
class Drift:
    """What a precision changes against the reference (float32)."""

    identical: float  # the share of sources whose greedy tokens are the reference's
    max_attention: float  # the largest absolute difference of any attention weight, on the reference's tokens
    n: int  # sources
    # the explanations' too, on the reference's tokens (the readings' graph, readings.py; 0 without it): the largest
    # difference of a step's source share (ALTI+) and of any flow edge's weight
    max_source_share: float = 0.0
    max_flow_edge: float = 0.0


def drift(
    reference: Exported,
    other: Exported,
    config: dict,
    sources: list[list[int]],
    wanted: list[GraphDecoding] | None = None,
) -> Drift:
    """`other` against `reference` on `sources` (ids, eos included), both greedy-decoded with onnxruntime;
    `wanted`: the reference's decodings of them, when they are decoded already (a copy measures two precisions)."""
    if not sources:
        raise ValueError("drift needs at least one source (got none)")
    theirs = GraphDecoder(other, config)
    wanted = wanted or reference_decodings(reference, config, sources)
    same, largest = 0, 0.0
    for source, want in zip(sources, wanted, strict=True):
        free = theirs.decode(source)
        same += free.tokens == want.tokens
        forced = free if free.tokens == want.tokens else theirs.decode(source, force=want.tokens)
        largest = max(largest, attention_difference(want, forced))
    share, edge = readings_difference(reference, other, config, sources, [w.tokens for w in wanted])
    return Drift(same / len(sources), largest, len(sources), share, edge)


def readings_difference(
    reference: Exported, other: Exported, config: dict, sources: list[list[int]], tokens: list[list[int]]
) -> tuple[float, float]:
    """The largest difference of a step's source share (the readings' graph) and of a flow edge (the flow's graph,
    every row) between two precisions' graphs, on `tokens` (the reference's) after each source; 0 for a reading
    either has no graph for."""
    has = lambda name: name in reference.analyses and name in other.analyses
    sessions = {
        g.name: [analysis_session(x, g.name) for x in (reference, other)] for g in (READINGS, FLOW) if has(g.name)
    }
    keep = keep_masks(config)
    share = edge = 0.0
    for source, written in zip(sources, tokens, strict=True):
        if not written:
            continue
        feeds = {"source": np.array([source], np.int64), "tokens": np.array(written, np.int64)}
        feeds.update(keep_encoder=keep["encoder"], keep_self=keep["decoder_self"], keep_cross=keep["cross"])
        if READINGS.name in sessions:
            a, b = (dict(zip(READINGS.outputs, s.run(None, feeds))) for s in sessions[READINGS.name])
            share = max(share, float(np.abs(a["alti_source"].sum(-1) - b["alti_source"].sum(-1)).max()))
        if FLOW.name in sessions:
            every_row = {**feeds, "first_source": np.array(0, np.int64), "first_step": np.array(0, np.int64)}
            a, b = (s.run(None, every_row) for s in sessions[FLOW.name])
            edge = max(edge, *(float(np.abs(x - y).max(initial=0.0)) for x, y in zip(a, b, strict=True)))
    return share, edge


def reference_decodings(reference: Exported, config: dict, sources: list[list[int]]) -> list[GraphDecoding]:
    """The greedy decodings of `sources` that drift measures another precision against."""
    ours = GraphDecoder(reference, config)
    return [ours.decode(source) for source in sources]


def attention_difference(a: GraphDecoding, b: GraphDecoding) -> float:
    """The largest absolute difference of any attention weight between two decodings of one source on the same
    tokens: the encoder's, and every step's self- and cross-attention."""
    pairs = [(a.encoder["encoder"], b.encoder["encoder"])]
    pairs += [(x.outputs[kind], y.outputs[kind]) for x, y in zip(a.steps, b.steps) for kind in ATTENTIONS[1:]]
    return max(float(np.abs(x - y).max(initial=0.0)) for x, y in pairs)


def quantized(graphs: list) -> list:
    """The graphs with their MatMuls and Gathers quantized to int8 dynamically, each weight held in int8 only."""
    import onnx
    from onnxruntime.quantization import QuantType, quant_pre_process, quantize_dynamic

    int8 = [{"quant_type": QuantType.QInt8, "symmetric": True}]  # a table gathered from, as a MatMul's weight
    with tempfile.TemporaryDirectory() as folder:
        prepared = []
        for i, graph in enumerate(graphs):
            folded(graph, Path(folder) / f"folded{i}.onnx")
            path = Path(folder) / f"prepared{i}.onnx"
            quant_pre_process(Path(folder) / f"folded{i}.onnx", path, skip_optimization=True, skip_symbolic_shape=True)
            prepared.append(onnx.load(str(path)))
        weights = matmul_weights(prepared)
        out = []
        for i, graph in enumerate(prepared):
            read_transposed(graph, weights)
            names = {t.name for t in graph.graph.initializer}
            tables = {n.input[0]: int8 for n in graph.graph.node if n.op_type == "Gather" and n.input[0] in names}
            path = Path(folder) / f"int8{i}.onnx"
            with quiet():
                quantize_dynamic(
                    graph,
                    path,
                    op_types_to_quantize=["MatMul", "Gather"],
                    weight_type=QuantType.QInt8,
                    extra_options={"TensorQuantOverrides": tables},
                )
            out.append(read_dequantized(onnx.load(str(path)), weights))
        return out


class _QuantizerNotes(logging.Filter):
    """Drops the quantizer's notes on every tensor it leaves as it is: it logs them at INFO on the root logger, so
    into the app's log. Records of any other code pass."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.levelno < logging.WARNING and "onnxruntime" in record.pathname)


_NOTES = _QuantizerNotes()


@contextlib.contextmanager
def quiet():
    """The quantizer's notes kept out of the log while it runs (the root logger's level is left as it is)."""
    root = logging.getLogger()
    root.addFilter(_NOTES)
    try:
        yield
    finally:
        root.removeFilter(_NOTES)


def folded(graph, path: Path) -> None:
    """`graph` with onnxruntime's basic optimizations (constant folding: a Transpose or Slice of a weight becomes the
    weight a MatMul reads) written to `path`, as quant_pre_process optimizes, but every MatMul kept a MatMul: fused
    with its bias into a Gemm (a transformers model's output layer), dynamic quantization would leave it float32."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(path)
    disabled = ["ConstantSharing", "MatMulAddFusion"]  # ConstantSharing: as quant_pre_process disables it
    ort.InferenceSession(graph.SerializeToString(), options, ["CPUExecutionProvider"], disabled_optimizers=disabled)


def digest(array: np.ndarray) -> bytes:
    """What tells two arrays apart: their bytes in C order, and their shape."""
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).digest() + str(array.shape).encode()


def matmul_weights(graphs: list) -> dict[bytes, np.ndarray]:
    """Every constant weight W (in, out) a MatMul of `graphs` reads, by the digest of Wᵀ."""
    from onnx import numpy_helper

    found = {}
    for graph in graphs:
        tensors = {t.name: t for t in graph.graph.initializer}
        for node in graph.graph.node:
            if node.op_type == "MatMul" and node.input[1] in tensors:
                weight = numpy_helper.to_array(tensors[node.input[1]])
                if weight.ndim == 2 and weight.dtype == np.float32:
                    found[digest(weight.T)] = weight
    return found


def read_transposed(graph, weights: dict[bytes, np.ndarray]) -> None:
    """`graph` with each tensor that is the transpose of a weight W of `weights` replaced by W: a Gather from it
    gathers from W along axis 1 and transposes back; anything else reads Transpose(W)."""
    from onnx import helper, numpy_helper

    tensors = {t.name: t for t in graph.graph.initializer if len(t.raw_data) >= LARGE}
    arrays = {name: numpy_helper.to_array(t) for name, t in tensors.items()}
    held = {digest(array): name for name, array in arrays.items()}
    multiplied = {node.input[1] for node in graph.graph.node if node.op_type == "MatMul"}
    flipped = {}  # the name of Wᵀ -> the name of W
    for name, array in arrays.items():
        if name not in multiplied and (weight := weights.get(digest(array))) is not None:
            if digest(weight) not in held:  # W is read in this graph only through Wᵀ: W joins it
                held[digest(weight)] = f"{name}_transposed"
                graph.graph.initializer.append(numpy_helper.from_array(weight, held[digest(weight)]))
            flipped[name] = held[digest(weight)]
    ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in [*graph.graph.input, *graph.graph.value_info]}
    nodes, read = [], set()
    for node in graph.graph.node:
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
        # a Gather whose ids' rank is unknown falls back on Transpose(W): right, but it dequantizes the whole table
        if node.op_type == "Gather" and node.input[0] in flipped and axis == 0 and node.input[1] in ranks:
            out, rank = node.output[0], ranks[node.input[1]]
            nodes.append(helper.make_node("Gather", [flipped[node.input[0]], node.input[1]], [f"{out}_t"], axis=1))
            nodes.append(helper.make_node("Transpose", [f"{out}_t"], [out], perm=[*range(1, rank + 1), 0]))
            continue
        read.update(name for name in node.input if name in flipped)
        nodes.append(node)
    reads = [helper.make_node("Transpose", [flipped[name]], [name], perm=[1, 0]) for name in sorted(read)]
    graph.graph.ClearField("node")
    graph.graph.node.extend([*reads, *nodes])
    for name in flipped:
        graph.graph.initializer.remove(tensors[name])


def read_dequantized(graph, weights: dict[bytes, np.ndarray]):
    """`graph` (quantized) with each float32 weight of `weights` it still holds (read by an op the quantizer leaves
    in float32) read through DequantizeLinear of its int8 form, quantized as the quantizer quantizes a MatMul's
    weight where the quantizer has not; returns `graph`."""
    import onnx
    from onnx import helper, numpy_helper
    from onnxruntime.quantization.quant_utils import quantize_data

    wanted = {digest(w) for w in weights.values()}
    names = {t.name for t in graph.graph.initializer}
    reads = []
    for tensor in list(graph.graph.initializer):
        if tensor.data_type != onnx.TensorProto.FLOAT or len(tensor.raw_data) < LARGE:
            continue
        array, name = numpy_helper.to_array(tensor), tensor.name
        if digest(array) not in wanted:
            continue
        q, scale, zero = f"{name}_quantized", f"{name}_scale", f"{name}_zero_point"
        if q not in names:
            zero_point, step, data = quantize_data(array.flatten(), onnx.TensorProto.INT8, True)
            graph.graph.initializer.extend(
                [
                    numpy_helper.from_array(np.asarray(data, np.int8).reshape(array.shape), q),
                    helper.make_tensor(scale, onnx.TensorProto.FLOAT, [], [float(step)]),
                    helper.make_tensor(zero, onnx.TensorProto.INT8, [], [int(zero_point)]),
                ]
            )
        reads.append(helper.make_node("DequantizeLinear", [q, scale, zero], [name], f"{name}_DequantizeLinear"))
        graph.graph.initializer.remove(tensor)
    nodes = [*reads, *graph.graph.node]
    graph.graph.ClearField("node")
    graph.graph.node.extend(nodes)
    return graph
