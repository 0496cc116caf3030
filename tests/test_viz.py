"""The figures the page draws (lab/assets/views.js, run by Node), the server's own figure helpers and the JSON
record: pure functions, no server."""

import json
import re

import numpy as np
import pytest
import torch

from lab.attention import payload
from lab.attention.export import page_config
from lab.attention.figures import COLORSCALE, FOCUS_LINE, HIGHLIGHT, empty_figure, escape_token, percent
from lab.attention.record import attention_record
from tests.conftest import tiny_pipelines
from tests.test_views_js import NODE, run_js
from transformer import DecodingSession

HOSTILE_TOKEN = "<img src=x onerror=alert(1)>"
needs_node = pytest.mark.skipif(NODE is None, reason="Node.js is not installed (tests/run.sh installs it)")


@pytest.fixture(scope="module")
def decoded():
    pipeline = tiny_pipelines()["de-en"]
    ids = pipeline.tokenizer.encode("Ich habe <b>Hunger</b>.")
    session = DecodingSession(pipeline.model, ids, top_k=5, max_new_tokens=6)
    session.run()
    return session, pipeline.tokenizer


def drawn(body: str, **data) -> object:
    """`body` run in Node with V = AttentionViews told the page's configuration, as the page tells it."""
    return run_js(f"V.configure(data.config);\n{body}", {**data, "config": page_config()})


FIGURE = """
const [L, H, Q, K] = data.shape;
const stack = {L, H, Q, K, data: Float32Array.from(data.weights)};
const mean = V.head(stack, null, false);
const focused = {...mean, rows: data.rows, cols: data.cols};
const look = {scale: data.scale || "linear", reading: "weights", hideSpecials: false, focus: data.focus || null};
return V.kindFigure(stack, focused, look, "title", data.row ?? null, ["rows", "cols"]);
"""


def figure_of(weights: np.ndarray, rows, cols, **options) -> dict:
    return drawn(FIGURE, shape=list(weights.shape), weights=weights.ravel().tolist(), rows=rows, cols=cols, **options)


@needs_node
def test_a_kind_is_one_tiled_heatmap_with_gaps_and_the_focused_head():
    n_layers, n_heads, n_q, n_k = 2, 4, 3, 9
    weights = np.random.default_rng(0).random((n_layers, n_heads, n_q, n_k)).astype(np.float32)
    fig = figure_of(weights, ["a", "b", "c"], list("stuvwxyz!"))
    assert len(fig["data"]) == 2 and [t["type"] for t in fig["data"]] == ["heatmap", "heatmap"]
    z = np.array(fig["data"][0]["z"], dtype=float)  # null (a gap) becomes NaN
    gap_q, gap_k = 1, 1  # round(0.12 * 3), round(0.12 * 9), at least 1
    assert z.shape == (n_layers * (n_q + gap_q) - gap_q, n_heads * (n_k + gap_k) - gap_k)
    assert np.isnan(z[n_q]).all() and np.isnan(z[:, n_k]).all()  # the gaps between tiles are null
    assert np.isnan(z).sum() == z.size - n_layers * n_heads * n_q * n_k
    top, left = 1 * (n_q + gap_q), 2 * (n_k + gap_k)
    np.testing.assert_allclose(z[top : top + n_q, left : left + n_k], weights[1, 2], atol=1e-3)  # layer 2, head 3
    focus = fig["data"][1]
    assert (focus["xaxis"], focus["yaxis"]) == ("x2", "y2")
    assert focus["y"] == ["a", "b", "c"] and focus["x"] == list("stuvwxyz!")
    np.testing.assert_allclose(focus["z"], weights.mean(axis=(0, 1)), atol=1e-3)
    assert {t["coloraxis"] for t in fig["data"]} == {"coloraxis"}
    assert fig["layout"]["coloraxis"]["colorscale"] == COLORSCALE  # the server's, light for 0 and dark for 1
    assert fig["layout"]["xaxis"]["ticktext"] == [f"head {h}" for h in range(1, 5)]
    assert fig["layout"]["yaxis"]["ticktext"] == ["layer 1", "layer 2"]


@needs_node
def test_bigger_tiles_get_bigger_gaps():
    fig = figure_of(np.zeros((3, 2, 20, 30)), [str(i) for i in range(20)], [str(i) for i in range(30)])
    gap_q, gap_k = round(0.12 * 20), round(0.12 * 30)
    assert np.array(fig["data"][0]["z"], dtype=float).shape == (3 * (20 + gap_q) - gap_q, 2 * (30 + gap_k) - gap_k)


@needs_node
def test_the_current_row_is_outlined_in_every_tile_and_in_the_focus():
    fig = figure_of(np.zeros((2, 2, 4, 4)), list("abcd"), list("abcd"), row=2, focus=[1, 0])
    rows = [s for s in fig["layout"]["shapes"] if s["line"]["color"] == HIGHLIGHT]
    overview, in_focus = [s for s in rows if s.get("xref") != "x2"], [s for s in rows if s.get("xref") == "x2"]
    assert len(overview) == 1 and len(in_focus) == 1  # one path of a rectangle per tile, one in the focus
    gap = 1  # round(0.12 * 4)
    corners = [tuple(map(float, m)) for m in re.findall(r"M([-\d.]+),([-\d.]+)", overview[0]["path"])]
    assert corners == [(h * (4 + gap) - 0.5, layer * (4 + gap) + 2 - 0.5) for layer in range(2) for h in range(2)]
    assert overview[0]["path"].count("Z") == 4 and "V" in overview[0]["path"]
    assert in_focus[0]["y0"] == 1.5 and in_focus[0]["yref"] == "y2" and in_focus[0]["y1"] - in_focus[0]["y0"] == 1
    tile = [s for s in fig["layout"]["shapes"] if s["line"]["color"] == FOCUS_LINE]
    assert len(tile) == 1 and tile[0]["y0"] == 4 + 1 - 0.5 and tile[0]["x0"] == -0.5  # layer 2, head 1
    assert not figure_of(np.zeros((2, 2, 4, 4)), list("abcd"), list("abcd"))["layout"]["shapes"]


LABELS = """
return {hostile: V.axisLabels([data.hostile, "b"]), repeated: V.axisLabels(["a", "a", "<script>alert(1)</script>", "a"]),
  bold: V.axisLabels(["<b>x</b>"]), long: V.axisLabels(data.long), unique: V.unique(["x", "x", "y"]),
  escaped: V.escapeToken(data.hostile), empty: V.escapeToken(""), note: V.emptyFigure("<b>no</b>").layout.annotations[0].text,
  max: V.MAX_LABEL};
"""


@needs_node
def test_token_labels_are_escaped_cut_and_kept_apart():
    long = ["a" * 20 + "x", "a" * 20 + "y", "short"]
    got = drawn(LABELS, hostile=HOSTILE_TOKEN, long=long)
    assert got["hostile"][0] == "&lt;img src=x oner…" and got["bold"] == ["&lt;b&gt;x&lt;/b&gt;"]
    assert got["escaped"] == escape_token(HOSTILE_TOKEN) == "&lt;img src=x onerror=alert(1)&gt;"
    assert got["empty"] == escape_token("") == "∅" and got["note"] == "&lt;b&gt;no&lt;/b&gt;"
    repeated = got["repeated"]
    assert len(set(repeated)) == 4 and repeated[2] == "&lt;script&gt;alert(1…"  # cut, then escaped
    assert all(label.replace("\u200b", "") == "a" for label in (repeated[0], repeated[1], repeated[3]))
    assert got["unique"] == ["x", "x\u200b", "y"]
    assert len(set(got["long"])) == 3 and got["long"][2] == "short"
    assert all(
        len(label.replace("\u200b", "")) == got["max"] and label.endswith(("…", "…\u200b")) for label in got["long"][:2]
    )


SCALES = """
const z = Float32Array.from(data.z);
const axes = Object.fromEntries(["linear", "log", "row"].map(s => [s, V.colourAxis({scale: s, reading: "weights"})]));
return {linear: Array.from(V.scaled(z, 2, 3, "linear")), log: Array.from(V.scaled(z, 2, 3, "log")),
  row: Array.from(V.scaled(z, 2, 3, "row")), axes,
  hidden: V.colourAxis({scale: "linear", reading: "weights", hideSpecials: true}).colorbar.title.text,
  value: V.colourAxis({scale: "linear", reading: "value"}).colorbar.title.text};
"""


@needs_node
def test_scales_transform_the_weights_and_say_so_in_the_legend():
    z = np.array([[0.5, 0.25, 0.0], [0.1, 0.1, 0.8]], dtype=np.float32)
    got = drawn(SCALES, z=z.ravel().tolist())
    np.testing.assert_allclose(got["linear"], z.ravel(), atol=1e-6)
    np.testing.assert_allclose(got["log"], np.log10(np.maximum(z, 1e-4)).ravel(), atol=1e-6)
    np.testing.assert_allclose(got["row"], [1, 0.5, 0, 0.125, 0.125, 1], atol=1e-6)
    titles = {name: axis["colorbar"]["title"]["text"] for name, axis in got["axes"].items()}
    assert len(set(titles.values())) == 3 and "log" in titles["log"] and "row max" in titles["row"]
    assert (got["axes"]["log"]["cmin"], got["axes"]["log"]["cmax"]) == (-4, 0)
    assert (got["axes"]["row"]["cmin"], got["axes"]["row"]["cmax"]) == (0, 1)
    assert "renormalised" in got["hidden"] and "value-weighted" in got["value"]
    fig = figure_of(np.stack([[z]]), ["a", "b"], list("xyz"), scale="log")
    np.testing.assert_allclose(np.array(fig["data"][1]["z"], dtype=float), np.log10(np.maximum(z, 1e-4)), atol=1e-3)
    np.testing.assert_allclose(fig["data"][1]["customdata"], z, atol=1e-4)  # hover gives the weight itself


NOW = """
const d = new V.Decoding(data.decoding);
const look = {words: true, hideSpecials: false, reading: "weights", scale: "linear", focus: null};
const hidden = V.weights(d, "encoder", 1, {...look, hideSpecials: true});
return {view0: V.view(d, "cross", 0, look).data.length, now0: V.now(d, 0, look), now1: V.now(d, 1, look),
  hiddenNow: V.now(d, 1, {...look, hideSpecials: true}).hidden, focused: V.now(d, 1, {...look, focus: [1, 0]}).name,
  hiddenCols: hidden.cols.labels, hiddenRows: hidden.rows.labels, hiddenSums: (() => {
    const {Q, K, data} = hidden.stack, sums = [];
    for (let r = 0; r < data.length / K; r++) sums.push(data.subarray(r * K, (r + 1) * K).reduce((a, b) => a + b, 0));
    return sums; })()};
"""


@needs_node
def test_step_0_the_now_view_and_hidden_specials(decoded):
    session, tokenizer = decoded
    data = payload.full(session, tokenizer, "tiny")
    got = drawn(NOW, decoding=data)
    assert got["view0"] == 0 and got["now0"] == {"empty": True}  # an empty figure and a view that say why
    now = got["now1"]
    assert now["step"] == 1 and now["name"] == "mean of all heads" and not now["hidden"]
    assert now["token"] == data["steps"][0]["label"] and now["token"]
    np.testing.assert_allclose(sum(w["weight"] for w in now["words"]), 1, atol=1e-3)
    assert got["hiddenNow"] and got["focused"] == "layer 2, head 1"
    assert "</s>" not in got["hiddenCols"] and "</s>" not in got["hiddenRows"]
    np.testing.assert_allclose(got["hiddenSums"], 1, atol=1e-5)  # renormalised without the specials


COMPARE = """
const d = new V.Decoding(data.decoding);
const fig = V.compare(d, {words: false, hideSpecials: false, reading: "value", scale: "linear", focus: null});
return {traces: fig.data.length, shapes: fig.layout.shapes.length, y: fig.data.map(t => t.y[0]), x: fig.data[0].x,
  none: V.compare(new V.Decoding(data.plain), {words: false, reading: "weights", focus: null})};
"""


@needs_node
def test_compare_draws_the_decoding_before_beside_this_one(decoded):
    session, tokenizer = decoded
    original = list(session.steps)
    whatif = DecodingSession(session.model, session.src_ids, top_k=5, max_new_tokens=6)
    whatif.step(force=session.steps[0].top_ids[1])
    whatif.run()
    data = payload.full(whatif, tokenizer, "tiny", original, 1)
    got = drawn(COMPARE, decoding=data, plain=payload.full(session, tokenizer, "tiny"))
    assert got["traces"] == 2 and got["shapes"] == 2 and got["none"] is None
    assert got["y"][0].startswith("original 1: ") and got["y"][1].startswith("what-if 1: ")
    assert "<" not in "".join(got["x"])  # the source's "<b>" pieces, escaped


@pytest.mark.parametrize("p, text", [(0.42, "42%"), (0.1, "10%"), (0.003, "0.3%"), (0.0123, "1.2%"), (1e-6, "<0.01%")])
def test_percent_is_as_people_read_it(p, text):
    assert percent(p) == text


def test_the_server_figures_escape_their_text():
    assert "&lt;b&gt;" in empty_figure("<b>no</b>").to_json() and "<b>no" not in empty_figure("<b>no</b>").to_json()
    assert escape_token(HOSTILE_TOKEN) == "&lt;img src=x onerror=alert(1)&gt;"


def test_candidates_leave_out_what_the_model_may_not_write(decoded):
    session, tokenizer = decoded
    step = session.steps[0]
    listed = payload.candidates(step, tokenizer, session.model.special_ids)
    assert [token for _, token, _, _ in listed] == [t for t, p in zip(step.top_ids, step.top_probs) if p > 0]
    assert listed[0][3] == percent(step.top_probs[0])


def test_attention_record_is_json_with_every_head(decoded):
    session, tokenizer = decoded
    record = json.loads(json.dumps(attention_record(session, tokenizer, "tiny")))
    cfg = session.model.config
    assert record["source_tokens"] == tokenizer.tokens(session.src_ids)
    assert len(record["steps"]) == len(session.steps)
    step = record["steps"][1]
    assert len(step["cross"]) == cfg.n_decoder_layers and len(step["cross"][0]) == cfg.n_heads
    assert len(step["decoder_self"][0][0]) == 2 and len(record["encoder"][0][0]) == len(session.src_ids)
    assert abs(sum(step["cross"][0][0]) - 1) < 1e-3
    torch.testing.assert_close(torch.tensor(step["cross"][1]), session.steps[1].cross_attention[1], atol=1e-5, rtol=0)
