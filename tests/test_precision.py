"""The page's graphs in a smaller precision (attention_lab/page_copy/precision.py), and the runner that measures them
(page_copy/graph_decoding.py), on the bundled de-en model:

- int8 is under 0.35 of float32's size and float16 about half; each distinct tensor is stored once in the blob the
  two graphs share, the tied embedding (gathered from by both graphs, multiplied by the decoder's output layer)
  once, in int8, and no float32 weight of a MatMul is left;
- what a precision changes (drift) is nothing against itself, and little for float16 and int8;
- the graphs load and decode in onnxruntime-web (WebAssembly, in Node) to Python onnxruntime's tokens;
- the runner applies the page config's step rules and forces tokens (teacher forcing);
- a transformers Marian's tied embedding (its encoder's, its decoder's and its output layer's) is stored once in int8
  too, its output layer (a MatMul and a bias) quantized.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest

from attention_lab.messages import jsonable
from attention_lab.page_copy import explanations
from attention_lab.page_copy.copies import page_config
from attention_lab.page_copy.graph_decoding import GraphDecoder
from attention_lab.page_copy.graphs import exported
from attention_lab.page_copy.precision import PRECISIONS, Drift, converted, drift
from tests.conftest import exported_shared
from tests.node import needs_node, node
from transformer import bundled, load_pretrained

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent
DECODE = REPO / "tests" / "js" / "graphs_decode.mjs"
TEXTS = [
    "Ich habe den Verdacht, dass er lügt.",
    "Kannst du mir bitte das Salz geben?",
    "Das Wetter ist heute schön.",
    "Wir gehen morgen ins Kino.",
    "Der Zug hat zehn Minuten Verspätung.",
    "Sie liest jeden Abend ein Buch.",
    "Mein Bruder wohnt in einer kleinen Stadt.",
    "Das ist nicht meine Schuld.",
]


@pytest.fixture(scope="module")
def deen(tmp_path_factory):
    """The de-en pipeline, its page config, sources, and its graphs in every precision (the float32 graphs those of
    the run's page copy, the gradients graph included: conftest.exported_shared)."""
    pipeline = load_pretrained(bundled("de-en"))
    made = exported_shared(pipeline.model.eval(), tmp_path_factory, gradients=True)
    sources = [pipeline.truncate(pipeline.tokenizer.encode(text)) for text in TEXTS]
    graphs = {precision: converted(made, precision) for precision in PRECISIONS}
    return pipeline, jsonable(page_config(pipeline, "de-en")), sources, graphs


def external(graph: bytes) -> dict[str, tuple[int, int, int, tuple[int, ...]]]:
    """A graph's tensors in the blob: name -> (offset, length, ONNX data type, dims)."""
    stored = {}
    for tensor in onnx.load_from_string(graph).graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            where = {entry.key: entry.value for entry in tensor.external_data}
            stored[tensor.name] = (int(where["offset"]), int(where["length"]), tensor.data_type, tuple(tensor.dims))
    return stored


def whole_tables_dequantized(graph: bytes, sizes: set[int]) -> list[str]:
    """The DequantizeLinear nodes of a graph that dequantize a whole table of `sizes` (vocabulary, width): what a
    step must not do (its Gathers dequantize the rows they read, its output layer multiplies in integers)."""
    model = onnx.load_from_string(graph).graph
    tables = {t.name for t in model.initializer if set(t.dims) == sizes}
    return [n.name for n in model.node if n.op_type == "DequantizeLinear" and n.input[0] in tables]


def test_int8_is_under_a_third_of_float32_and_float16_half(deen):
    *_, graphs = deen
    size = {precision: len(g.encoder) + len(g.decoder) + len(g.weights) for precision, g in graphs.items()}
    assert size["int8"] < 0.35 * size["float32"], size
    assert 0.48 * size["float32"] < size["float16"] < 0.52 * size["float32"], size
    assert converted(graphs["float32"], "float32") is graphs["float32"]
    with pytest.raises(ValueError, match="precision must be one of float32, float16, int8"):
        converted(graphs["float32"], "int4")


@pytest.mark.parametrize("precision", PRECISIONS)
def test_each_distinct_tensor_is_stored_once_and_the_weights_in_the_precision(deen, precision):
    pipeline, *_, graphs = deen
    made, c = graphs[precision], pipeline.model.config
    places = {(name, k): v for name, graph in made.graphs().items() for k, v in external(graph).items()}
    every = {graph.name for graph in explanations.ANALYSES}  # the explanations' graphs in each, but int8's gradients
    assert set(made.analyses) == (every - {"gradients"} if precision == "int8" else every)
    end = 0
    for offset, length in sorted({place[:2] for place in places.values()}):  # one after the other, 64-byte aligned
        assert end <= offset < end + 64 and offset % 64 == 0
        end = offset + length
    assert end == len(made.weights)
    chunks = [made.weights[offset : offset + length] for offset, length in {place[:2] for place in places.values()}]
    assert len(set(chunks)) == len(chunks)  # no two places hold the same bytes
    kind = {"float32": onnx.TensorProto.FLOAT, "float16": onnx.TensorProto.FLOAT16, "int8": onnx.TensorProto.INT8}
    tables = {place for place in places.values() if set(place[3]) == {c.tgt_vocab_size, c.d_model}}
    assert [place[2] for place in tables] == [kind[precision]]  # the tied embedding: once, in the precision
    assert {graph for graph, name in places if places[graph, name] in tables} >= {"encoder", "decoder"}
    if precision != "float32":  # float32 keeps only vectors (biases, norms) and the positions' table, no weight
        kept = {place[3] for place in places.values() if place[2] == onnx.TensorProto.FLOAT}
        assert all(len(dims) == 1 or dims == (c.max_len, c.d_model) for dims in kept), kept
    if precision == "int8":  # every MatMul with a constant weight became the quantizer's MatMulInteger
        for graph in (made.encoder, made.decoder):
            assert not whole_tables_dequantized(graph, {c.tgt_vocab_size, c.d_model})
            model = onnx.load_from_string(graph)
            constant = {t.name for t in model.graph.initializer}
            assert not [n.name for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in constant]


def test_drift_is_nothing_against_itself_and_little_for_float16_and_int8(deen):
    _, config, sources, graphs = deen
    assert drift(graphs["float32"], graphs["float32"], config, sources) == Drift(1.0, 0.0, len(sources))
    half = drift(graphs["float32"], graphs["float16"], config, sources)
    assert half.n == len(sources) and half.identical >= 0.85 and 0 < half.max_attention < 0.01, half
    int8 = drift(graphs["float32"], graphs["int8"], config, sources)
    assert int8.identical >= 0.6 and half.max_attention < int8.max_attention < 0.2, int8
    json.dumps(jsonable(int8))  # what the page config carries
    with pytest.raises(ValueError, match="at least one source"):
        drift(graphs["float32"], graphs["int8"], config, [])


def node_decode(folder: Path, sources: list[list[int]], steps: int) -> dict:
    request = folder / "request.json"
    request.write_text(json.dumps({"sources": sources, "steps": steps}), encoding="utf-8")
    done = subprocess.run(
        node(str(DECODE), str(folder), str(request)), capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@needs_node
@pytest.mark.parametrize("precision", ["float16", "int8"])
def test_the_reduced_graphs_decode_in_onnxruntime_web_as_in_python(deen, precision, tmp_path):
    _, config, sources, graphs = deen
    made = graphs[precision]
    for name, data in (("encoder.onnx", made.encoder), ("decoder.onnx", made.decoder), ("weights.bin", made.weights)):
        (tmp_path / name).write_bytes(data)
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    python = GraphDecoder(made, config)
    page = node_decode(tmp_path, sources[:4], steps=6)["tokens"]
    assert page == [python.decode(source).tokens[:6] for source in sources[:4]]


def test_the_runner_forces_tokens_and_applies_the_configs_rules(deen):
    _, config, sources, graphs = deen
    runner = GraphDecoder(graphs["float32"], config)
    free = runner.decode(sources[0])
    forced = runner.decode(sources[0], force=[*free.tokens[:2], 7, 8, 9])
    assert forced.tokens == [*free.tokens[:2], 7, 8, 9]  # eos or not, as many steps as tokens forced
    for a, b in zip(free.steps[:3], forced.steps[:3]):  # the same prefix reads the same
        np.testing.assert_allclose(a.outputs["cross"], b.outputs["cross"], atol=1e-6)
        np.testing.assert_allclose(a.logits, b.logits, atol=1e-5)
    np.testing.assert_allclose(free.encoder["encoder"], forced.encoder["encoder"])
    eos, first = config["eos_id"], free.tokens[1]
    rules = {"forced_first": first, "eos_ids": [eos], "min_length": 6, "forced_last": eos}
    ruled = GraphDecoder(graphs["float32"], {**config, "rules": rules, "max_new_tokens": 8}).decode(sources[0])
    assert ruled.tokens[0] == first and eos not in ruled.tokens[:5] and len(ruled.tokens) <= 8
    assert ruled.tokens[-1] == eos and np.isneginf(ruled.steps[0].logits).sum() == len(ruled.steps[0].logits) - 1


def test_a_transformers_marians_tied_embedding_is_stored_once_in_int8(tmp_path_factory, monkeypatch):
    pytest.importorskip("transformers")
    import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
    from attention_lab.page_copy import explanations
    from tests.hf_models import marian

    monkeypatch.setattr(explanations, "ANALYSES", ())  # the two graphs that decode hold the table: only they are traced

    # at a trained model's scale: SMALL's init_std of 1 saturates every softmax, where int8 moves attention by 0.9
    pipeline = load_pretrained(str(marian(tmp_path_factory.mktemp("marian"), {"init_std": 0.02})))
    made = exported(pipeline.model.eval())
    int8, c = converted(made, "int8"), pipeline.model.config
    encoder, decoder = (
        [place for place in external(graph).values() if set(place[3]) == {c.tgt_vocab_size, c.d_model}]
        for graph in (int8.encoder, int8.decoder)
    )
    assert len(encoder) == len(decoder) == 1 and encoder[0][:3] == decoder[0][:3], (encoder, decoder)
    assert encoder[0][2] == onnx.TensorProto.INT8
    for graph in (int8.encoder, int8.decoder):
        assert not whole_tables_dequantized(graph, {c.tgt_vocab_size, c.d_model})
    graph = onnx.load_from_string(int8.decoder).graph  # the output layer too reads it, in integers
    constant = {t.name for t in graph.initializer}
    assert not [n.name for n in graph.node if n.op_type in ("MatMul", "Gemm") and n.input[1] in constant]
    config = jsonable(page_config(pipeline, "marian"))
    sources = [pipeline.truncate(pipeline.tokenizer.encode(text)) for text in ("Hallo Welt", "Ein Haus am See")]
    measured = drift(made, int8, config, sources)
    assert measured.n == 2 and 0 < measured.max_attention < 0.01, measured
