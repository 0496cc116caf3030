"""The figure builders, the drawing of a decoding and the JSON record: pure functions, no server."""

import json

import numpy as np
import pytest
import torch

from lab.attention.drawing import Drawing, Look
from lab.attention.figures import (
    FOCUS_LINE,
    HIGHLIGHT,
    MAX_LABEL,
    Focus,
    Scale,
    axis_labels,
    empty_figure,
    escape_token,
    kind_figure,
    now_html,
    percent,
    side_by_side,
    top_k,
    unique,
)
from lab.attention.record import attention_record
from lab.attention.units import Units, in_units
from tests.conftest import tiny_pipelines
from transformer import DecodingSession

HOSTILE_TOKEN = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def decoded():
    pipeline = tiny_pipelines()["de-en"]
    ids = pipeline.tokenizer.encode("Ich habe <b>Hunger</b>.")
    session = DecodingSession(pipeline.model, ids, top_k=5, max_new_tokens=6)
    session.run()
    return session, pipeline.tokenizer


def drawing(decoded, **look) -> Drawing:
    session, tokenizer = decoded
    return Drawing.of(session, tokenizer, Look(**look))


LINEAR = Scale()


def figure_of(weights, rows, cols, scale=LINEAR, row=None, focus=None):
    head = Focus(weights.mean(axis=(0, 1)), rows, cols, "mean of all heads")
    return kind_figure(weights, head, scale, "title", row, focus)


def test_a_kind_is_one_tiled_heatmap_with_gaps_and_the_focused_head():
    n_layers, n_heads, n_q, n_k = 2, 4, 3, 9
    weights = np.random.default_rng(0).random((n_layers, n_heads, n_q, n_k)).astype(np.float32)
    fig = figure_of(weights, ["a", "b", "c"], list("stuvwxyz!"))
    assert len(fig.data) == 2 and [t.type for t in fig.data] == ["heatmap", "heatmap"]
    z = np.array(fig.data[0].z, dtype=float)  # None (a gap) becomes NaN
    gap_q, gap_k = 1, 1  # round(0.12 * 3), round(0.12 * 9), at least 1
    assert z.shape == (n_layers * (n_q + gap_q) - gap_q, n_heads * (n_k + gap_k) - gap_k)
    assert np.isnan(z[n_q]).all() and np.isnan(z[:, n_k]).all()  # the gaps between tiles are null
    assert sum(v is None for row in fig.data[0].z for v in row) == z.size - n_layers * n_heads * n_q * n_k
    top, left = 1 * (n_q + gap_q), 2 * (n_k + gap_k)
    np.testing.assert_allclose(z[top : top + n_q, left : left + n_k], weights[1, 2], atol=1e-3)  # layer 2, head 3
    focus = fig.data[1]
    assert (focus.xaxis, focus.yaxis) == ("x2", "y2")
    assert list(focus.y) == ["a", "b", "c"] and list(focus.x) == list("stuvwxyz!")
    np.testing.assert_allclose(focus.z, weights.mean(axis=(0, 1)), atol=1e-3)
    assert {t.coloraxis for t in fig.data} == {"coloraxis"}
    scale = fig.to_dict()["layout"]["coloraxis"]["colorscale"]  # explicit, light for 0 and dark for 1
    assert scale[0][0] == 0 and scale[-1][0] == 1 and scale[0][1] == "rgb(247,251,255)"
    assert list(fig.layout.xaxis.ticktext) == [f"head {h}" for h in range(1, 5)]
    assert list(fig.layout.yaxis.ticktext) == ["layer 1", "layer 2"]


def test_bigger_tiles_get_bigger_gaps():
    fig = figure_of(np.zeros((3, 2, 20, 30)), [str(i) for i in range(20)], [str(i) for i in range(30)])
    gap_q, gap_k = round(0.12 * 20), round(0.12 * 30)
    assert np.array(fig.data[0].z, dtype=float).shape == (3 * (20 + gap_q) - gap_q, 2 * (30 + gap_k) - gap_k)


def test_the_current_row_is_outlined_in_every_tile_and_in_the_focus():
    fig = figure_of(np.zeros((2, 2, 4, 4)), list("abcd"), list("abcd"), row=2, focus=(1, 0))
    rows = [s for s in fig.layout.shapes if s.line.color == HIGHLIGHT]
    assert len(rows) == 2 * 2 + 1
    in_focus = [s for s in rows if s.xref == "x2"]
    assert len(in_focus) == 1 and in_focus[0].y0 == 1.5 and in_focus[0].yref == "y2"
    assert {s.y1 - s.y0 for s in rows} == {1.0}
    tile = [s for s in fig.layout.shapes if s.line.color == FOCUS_LINE]
    assert len(tile) == 1 and tile[0].y0 == 4 + 1 - 0.5 and tile[0].x0 == -0.5  # layer 2, head 1
    assert not [s for s in figure_of(np.zeros((2, 2, 4, 4)), list("abcd"), list("abcd")).layout.shapes]


def test_markup_in_tokens_is_shown_as_text():
    fig = figure_of(np.zeros((1, 1, 2, 2)), [HOSTILE_TOKEN, "b"], ["<b>x</b>", "a"])
    text = fig.to_json()
    assert "<img" not in text and "<b>" not in text
    assert fig.data[1].y[0] == "&lt;img src=x oner…" and fig.data[1].x[0] == "&lt;b&gt;x&lt;/b&gt;"
    assert escape_token(HOSTILE_TOKEN) == "&lt;img src=x onerror=alert(1)&gt;"
    assert escape_token("") == "∅"
    page = now_html([HOSTILE_TOKEN, "Haus"], [0.9, 0.1], [1.0, 0.1], "heading", "note")
    assert "&lt;img src=x onerror=alert(1)&gt;" in page and "<img" not in page
    assert page.count('class="word"') == 2 and 'title="weight 0.900"' in page


def test_repeated_tokens_stay_apart_and_markup_is_escaped():
    labels = axis_labels(["a", "a", "<script>alert(1)</script>", "a"])
    assert len(set(labels)) == 4
    assert labels[2] == "&lt;script&gt;alert(1…"  # cut to MAX_LABEL characters, then escaped
    assert axis_labels(["<b>x</b>"]) == ["&lt;b&gt;x&lt;/b&gt;"]
    assert all(label.replace("\u200b", "") == "a" for label in (labels[0], labels[1], labels[3]))
    assert unique(["x", "x", "y"]) == ["x", "x\u200b", "y"]


def test_long_tokens_are_cut_and_still_kept_apart():
    long = ["a" * 20 + "x", "a" * 20 + "y", "short"]
    labels = axis_labels(long)
    assert len(set(labels)) == 3 and labels[2] == "short"
    assert all(
        len(label.replace("\u200b", "")) == MAX_LABEL and label.endswith(("…", "…\u200b")) for label in labels[:2]
    )


def test_scales_transform_the_weights_and_say_so_in_the_legend():
    z = np.array([[0.5, 0.25, 0.0], [0.1, 0.1, 0.8]], dtype=np.float32)
    np.testing.assert_allclose(Scale("linear").apply(z), z)
    np.testing.assert_allclose(Scale("log").apply(z), np.log10(np.maximum(z, 1e-4)), atol=1e-6)
    np.testing.assert_allclose(Scale("row").apply(z), [[1, 0.5, 0], [0.125, 0.125, 1]], atol=1e-6)
    np.testing.assert_allclose(Scale("log").unit(np.array([1.0, 1e-4, 1e-2])), [1, 0, 0.5], atol=1e-6)
    axes = {name: Scale(name).colour_axis() for name in ("linear", "log", "row")}
    titles = {name: axis["colorbar"]["title"]["text"] for name, axis in axes.items()}
    assert len(set(titles.values())) == 3 and "log" in titles["log"] and "row max" in titles["row"]
    assert (axes["log"]["cmin"], axes["log"]["cmax"]) == (-4, 0) and (axes["row"]["cmin"], axes["row"]["cmax"]) == (
        0,
        1,
    )
    assert "renormalised" in Scale("linear", renormalised=True).colour_axis()["colorbar"]["title"]["text"]
    fig = figure_of(np.stack([[z]]), ["a", "b"], list("xyz"), scale=Scale("log"))
    np.testing.assert_allclose(np.array(fig.data[1].z, dtype=float), np.log10(np.maximum(z, 1e-4)), atol=1e-3)
    np.testing.assert_allclose(fig.data[1].customdata, z, atol=1e-4)  # hover gives the weight itself


@pytest.mark.parametrize("p, text", [(0.42, "42%"), (0.1, "10%"), (0.003, "0.3%"), (0.0123, "1.2%"), (1e-6, "<0.01%")])
def test_percent_is_as_people_read_it(p, text):
    assert percent(p) == text


def test_top_k_keeps_repeated_labels_apart():
    assert top_k(["a", "a", "b"], [0.5, 0.3, 0.2]) == {"a": 0.5, "a\u200b": 0.3, "b": 0.2}


def test_the_views_draw_exactly_what_the_session_recorded(decoded):
    """Honesty: the figures show the session's own weights, not a second forward pass."""
    session, _ = decoded
    pieces = drawing(decoded, words=False)
    shown = 2
    weights, rows, cols, current = pieces.weights("cross", shown)
    expected = np.stack([np.stack([w.numpy() for w in s.cross_attention]) for s in session.steps[:shown]], axis=2)
    np.testing.assert_allclose(weights, expected, atol=1e-6)
    assert len(rows) == shown and len(cols) == len(session.src_ids) and current == shown - 1
    fig = pieces.view("cross", shown)
    np.testing.assert_allclose(fig.data[1].customdata, expected.mean(axis=(0, 1)), atol=1e-4)
    encoder, _, _, none = pieces.weights("encoder", shown)
    np.testing.assert_allclose(encoder, np.stack([w.numpy() for w in session.encoder_attention]), atol=1e-6)
    assert none is None
    decoder, _, _, _ = pieces.weights("decoder_self", shown)
    for i, step in enumerate(session.steps[:shown]):
        for layer, row in enumerate(step.self_attention):
            np.testing.assert_allclose(decoder[layer, :, i, : i + 1], row.numpy(), atol=1e-6)
            assert np.all(decoder[layer, :, i, i + 1 :] == 0)
    focused = drawing(decoded, words=False, focus=(1, 2)).view("cross", shown)
    np.testing.assert_allclose(focused.data[1].customdata, expected[1, 2], atol=1e-4)


def test_words_merge_the_source_pieces_in_the_views(decoded):
    session, tokenizer = decoded
    words = drawing(decoded, words=True)
    weights, _, cols, _ = words.weights("cross", 1)
    pieces = tokenizer.tokens(session.src_ids)
    units = Units.of(pieces, [i in session.model.special_ids for i in session.src_ids])
    assert cols.labels == units.labels and len(cols) < len(pieces)
    step = np.stack([w.numpy() for w in session.steps[0].cross_attention])[:, :, None, :]
    np.testing.assert_allclose(weights, in_units(step, Units(["x"], [[0]], [False]), units), atol=1e-6)
    fig = words.view("encoder", 1)
    assert list(fig.data[1].x) == axis_labels(units.labels) and "<b>" not in fig.to_json()


def test_hidden_specials_leave_rows_that_sum_to_1(decoded):
    hidden = drawing(decoded, hide_specials=True)
    weights, rows, cols, _ = hidden.weights("encoder", 1)
    assert "</s>" not in cols.labels and "</s>" not in rows.labels
    np.testing.assert_allclose(weights.sum(axis=-1), 1, atol=1e-5)


def test_step_0_and_the_now_view(decoded):
    session, _ = decoded
    look = drawing(decoded)
    assert "nothing written yet" in look.now(0) and look.top_k(0) is None and look.candidates(0) == []
    assert look.view("cross", 0).data == ()  # an empty figure that says why
    page = look.now(1)
    assert "Step 1 wrote" in page and "mean of all heads" in page and "<img" not in page
    assert list(look.top_k(1).values()) == [round(p, 4) for p in session.steps[0].top_probs]
    assert [token for _, token in look.candidates(1)] == session.steps[0].top_ids
    assert "Special tokens hidden" in drawing(decoded, hide_specials=True).now(1)
    assert "layer 2, head 1" in drawing(decoded, focus=(1, 0)).now(1)


def test_empty_figure_and_side_by_side_escape_their_text():
    assert "&lt;b&gt;" in empty_figure("<b>no</b>").to_json()
    left, right = np.full((2, 3), 1 / 3), np.full((3, 3), 1 / 3)
    fig = side_by_side(left, right, (["a", "b"], ["a", HOSTILE_TOKEN, "c"]), ["x", "y", "z"], 1)
    assert len(fig.data) == 2 and len(fig.layout.shapes) == 2 and "<img" not in fig.to_json()
    assert fig.data[0].y[0] == "original 1: a" and fig.data[1].y[0] == "what-if 1: a"


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
