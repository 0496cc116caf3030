"""The figure builders and the JSON record: pure functions, no server."""

import json

import numpy as np
import pytest
import torch

from lab.record import attention_record
from lab.views import (
    MAX_LABEL,
    View,
    attention_grid,
    axis_labels,
    decoder_matrices,
    session_figures,
    step_cross_attention,
)
from tests.conftest import tiny_pipelines
from transformer import DecodingSession


@pytest.fixture(scope="module")
def session_and_tokenizer():
    pipeline = tiny_pipelines()["de-en"]
    ids = pipeline.tokenizer.encode("Ich habe <b>Hunger</b>.")
    session = DecodingSession(pipeline.model, ids, top_k=5, max_new_tokens=6)
    session.run()
    return session, pipeline.tokenizer


def heatmaps(fig):
    return [t for t in fig.data if t.type == "heatmap"]


def test_grid_is_layers_by_heads_with_one_colour_scale_from_0_to_1():
    weights = np.random.default_rng(0).random((2, 4, 3, 5)).astype(np.float32)
    fig = attention_grid(weights, ["a", "b", "c"], list("vwxyz"))
    assert len(heatmaps(fig)) == 8
    assert {t.coloraxis for t in fig.data} == {"coloraxis"}
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1
    scale = fig.to_dict()["layout"]["coloraxis"]["colorscale"]  # explicit, light for 0 and dark for 1
    assert scale[0][0] == 0 and scale[-1][0] == 1 and scale[0][1] == "rgb(247,251,255)"
    np.testing.assert_allclose(fig.data[5].z, weights[1, 1], atol=1e-4)  # row-major: layer 2, head 2
    assert [a.text for a in fig.layout.annotations][:2] == ["layer 1 · head 1", "layer 1 · head 2"]
    hover = fig.data[0].hovertemplate
    assert "%{y}" in hover and "%{x}" in hover and "%{z" in hover


@pytest.mark.parametrize(
    "view, cells, first",
    [
        (View(heads="mean"), 2, lambda w: w[0].mean(0)),
        (View(layers=1, heads=2), 1, lambda w: w[1, 2]),
        (View(layers=0), 4, lambda w: w[0, 0]),
    ],
)
def test_view_selects_layers_and_heads(view, cells, first):
    weights = np.random.default_rng(1).random((2, 4, 3, 3)).astype(np.float32)
    fig = attention_grid(weights, list("abc"), list("abc"), view)
    assert len(heatmaps(fig)) == cells
    np.testing.assert_allclose(fig.data[0].z, first(weights), atol=1e-4)


def test_repeated_tokens_stay_apart_and_markup_is_escaped():
    labels = axis_labels(["a", "a", "<script>alert(1)</script>", "a"])
    assert len(set(labels)) == 4
    assert labels[2] == "&lt;script&gt;alert(1…"  # cut to MAX_LABEL characters, then escaped
    assert axis_labels(["<b>x</b>"]) == ["&lt;b&gt;x&lt;/b&gt;"]
    assert all(label.replace("\u200b", "") == "a" for label in (labels[0], labels[1], labels[3]))
    fig = attention_grid(np.zeros((1, 1, 2, 2)), ["<img src=x onerror=alert(1)>", "b"], ["a", "a"])
    assert "<img" not in fig.to_json()


def test_long_tokens_are_cut_and_still_kept_apart():
    long = ["a" * 20 + "x", "a" * 20 + "y", "short"]
    labels = axis_labels(long)
    assert len(set(labels)) == 3 and labels[2] == "short"
    assert all(
        len(label.replace("\u200b", "")) == MAX_LABEL and label.endswith(("…", "…\u200b")) for label in labels[:2]
    )


def test_highlighted_row_is_outlined_in_every_cell():
    fig = attention_grid(np.zeros((2, 2, 4, 4)), list("abcd"), list("abcd"), highlight_row=2)
    assert len(fig.layout.shapes) == 4 and {s.y0 for s in fig.layout.shapes} == {1.5}


def test_decoder_matrices_are_the_recorded_rows(session_and_tokenizer):
    session, _ = session_and_tokenizer
    self_attn, cross = decoder_matrices(session, len(session.steps) - 1)
    for i, step in enumerate(session.steps):
        for layer in range(len(step.self_attention)):
            assert np.array_equal(self_attn[layer, :, i, : i + 1], step.self_attention[layer].numpy())
            assert np.all(self_attn[layer, :, i, i + 1 :] == 0)
            assert np.array_equal(cross[layer, :, i], step.cross_attention[layer].numpy())


def test_figures_draw_exactly_what_the_session_recorded(session_and_tokenizer):
    """Honesty: the spotlight and grids show the session's own weights, not a second forward pass."""
    session, tokenizer = session_and_tokenizer
    step = 2
    figures = session_figures(session, tokenizer, step, View())
    assert set(figures) == {"encoder", "decoder_self", "cross", "spotlight", "top_k"}
    spotlight = figures["spotlight"].data[0].z
    expected = np.concatenate([w.numpy() for w in session.steps[step].cross_attention])  # (L*H, S)
    np.testing.assert_allclose(spotlight, expected, atol=1e-4)
    assert heatmaps(figures["cross"])[0].z.shape == (step + 1, len(session.src_ids))
    np.testing.assert_allclose(heatmaps(figures["encoder"])[0].z, session.encoder_attention[0][0].numpy(), atol=1e-4)
    bars = figures["top_k"].data[0]
    assert list(bars.x) == session.steps[step].top_probs


def test_attention_record_is_json_with_every_head(session_and_tokenizer):
    session, tokenizer = session_and_tokenizer
    record = json.loads(json.dumps(attention_record(session, tokenizer, "tiny")))
    cfg = session.model.config
    assert record["source_tokens"] == tokenizer.tokens(session.src_ids)
    assert len(record["steps"]) == len(session.steps)
    step = record["steps"][1]
    assert len(step["cross"]) == cfg.n_decoder_layers and len(step["cross"][0]) == cfg.n_heads
    assert len(step["decoder_self"][0][0]) == 2 and len(record["encoder"][0][0]) == len(session.src_ids)
    assert abs(sum(step["cross"][0][0]) - 1) < 1e-3
    torch.testing.assert_close(torch.tensor(step["cross"][1]), session.steps[1].cross_attention[1], atol=1e-5, rtol=0)


def test_a_token_in_a_hover_template_stays_text(session_and_tokenizer):
    """Plotly fills %{...} in hover templates: a token like "%{x}" must not be filled in."""
    session, tokenizer = session_and_tokenizer

    class Hostile:
        def __getattr__(self, name):
            return getattr(tokenizer, name)

        def id_to_token(self, token_id):
            return "%{x}<b>"

        def tokens(self, ids):
            return ["a" for _ in ids]

    fig = step_cross_attention(session, Hostile(), 0)
    template = fig.data[0].hovertemplate
    assert template.count("%{x}") == 1 and "<b>" not in template  # the source placeholder only; markup escaped
    assert "&#37;{x}&lt;b&gt;" in template
