"""The Why tab through the Lab (as the page's events drive it) and in the page's drawing code (why/why.mjs, in Node):
the message holds every step's attribution and the lens, a Step attributes only the new step, the deletion test
answers after the click, and what the page draws (words, each head's agreement) equals the Python definitions."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import spearmanr

from attention_lab.app import make_lab
from attention_lab.attribution.methods import attribute
from attention_lab.checks import InputError
from attention_lab.controls import Controls
from attention_lab.core import payload
from attention_lab.heads.actions import HeadTests
from attention_lab.models.registry import Registry
from attention_lab.run.state import UserState
from attention_lab.why import feature as why_tab
from attention_lab.why.deletion import RANDOM
from attention_lab.why.feature import ask_deletion
from tests.conftest import tiny_pipelines
from tests.node import NODE, run_modules
from tests.test_page_modules import oracle
from tests.test_why import CACHE_ULPS
from tests.tolerance import tolerance
from tests.units_reference import Units
from transformer.lens import decoder_lens

SOURCE = "Ich habe <b>Hunger</b>."  # words of several pieces


@pytest.fixture(scope="module")
def lab():
    return make_lab(Registry.of(tiny_pipelines()))


def opened(lab, method: str = "input_x_gradient", max_len: int = 6):
    """A run of SOURCE with the Why tab open, its message filled: (user, controls, message)."""
    user, c = UserState(), Controls("de-en", SOURCE, max_len=max_len, options={"method": method})
    lab.do(lab.decoding.run, user, c)
    answered = lab.open_tab(user, c, "why")
    assert answered["why"] == {"op": "computing", "text": why_tab_slow()}  # the click does not wait for it
    return user, c, lab.fill(user)["why"]


def why_tab_slow() -> str:
    return next(output.slow for output in why_tab.OUTPUTS if output.name == "why")


def test_the_message_holds_every_steps_attribution_and_the_lens(lab):
    user, _, message = opened(lab)
    session = user.run.session
    n, S = len(session.steps), len(session.src_ids)
    assert message["op"] == "why" and message["tokens"] == session.tokens and len(message["steps"]) == n == 6
    expected = attribute(session.model, session.src_ids, session.tokens, "input_x_gradient", limit=6)
    for t, (record, a) in enumerate(zip(message["steps"], expected)):
        assert len(record["source"]) == S and len(record["prefix"]) == t + 1
        # four significant figures (rtol), from values the tab made through the KV cache (atol: tests/tolerance.py)
        np.testing.assert_allclose(record["source"], a.source, rtol=1e-3, atol=tolerance(a.source, ulps=CACHE_ULPS))
        np.testing.assert_allclose(record["prefix"], a.prefix, rtol=1e-3, atol=tolerance(a.prefix, ulps=CACHE_ULPS))
        assert record["source_share"] == pytest.approx(a.source_share, abs=1e-3) and "gap" not in record
    lens = message["lens"]
    reading = decoder_lens(session.model, session.src_ids, session.tokens, 5, 6)
    assert lens["layers"] == session.model.config.n_decoder_layers == len(lens["top"][0])
    assert len(lens["top"]) == n and len(lens["top"][0][0]) == 5
    np.testing.assert_allclose(lens["written"], reading.written_probs.T.numpy(), atol=1e-4)
    assert lens["settled"] == [None if s is None else s + 1 for s in reading.settled]
    labels = [s.label for s in payload.full(session, user.run.pipeline.tokenizer, "tiny").steps]
    assert [layers[-1][0][0] for layers in lens["top"]] == labels  # the last layer writes what greedy wrote
    assert message["notes"]["method"].startswith("Input × gradient")


def test_integrated_gradients_says_how_far_it_is_from_complete(lab):
    _, _, message = opened(lab, "integrated_gradients", max_len=2)
    record = message["steps"][0]
    total = sum(record["source"]) + sum(record["prefix"])
    assert record["total"] == pytest.approx(total, abs=1e-3) and isinstance(record["gap"], float)


def test_a_step_with_the_tab_open_attributes_only_the_new_step(lab, monkeypatch):
    user, c = UserState(), Controls("de-en", SOURCE, max_len=6, options={"method": "input_x_gradient"})
    lab.do(lab.decoding.step, user, c)
    lab.do(lab.decoding.step, user, c)
    lab.open_tab(user, c, "why")
    assert len(lab.fill(user)["why"]["steps"]) == 2
    made = []
    real = why_tab.attribute_step
    monkeypatch.setattr(
        why_tab,
        "attribute_step",
        lambda scorer, step, method, **kw: made.append(step) or real(scorer, step, method, **kw),
    )
    lab.decoding.step_ahead(user)  # as the page asks while it shows a step: Step then takes that fork
    answered = lab.do(lab.decoding.step, user, c)
    assert answered["why"]["op"] == "computing"
    filled = lab.fill(user)["why"]
    assert made == [3] and len(filled["steps"]) == 3  # the two before were kept
    c.options["method"] = "occlusion"  # another method: its own attribution of every step
    lab.show(user, c)
    assert len(lab.fill(user)["why"]["steps"]) == 3 and made == [3, 1, 2, 3]


def test_after_a_what_if_the_steps_it_changed_are_attributed_anew(lab):
    user, _, before = opened(lab, max_len=4)
    session = user.run.session
    other = next(t for t in range(5, 50) if t != session.tokens[1] and session.can_write(t, 2))
    asked = {"method": "input_x_gradient"}  # as opened asked
    lab.do(lab.decoding.force, user, Controls("de-en", SOURCE, max_len=4, shown=2, options=asked), str(other))
    after = lab.fill(user)["why"]
    tokens = user.run.session.tokens
    assert tokens[1] == other and after["tokens"] == tokens
    fresh = attribute(session.model, session.src_ids, tokens, "input_x_gradient", limit=4)
    for record, a in zip(after["steps"], fresh):
        np.testing.assert_allclose(record["source"], a.source, rtol=1e-3, atol=tolerance(a.source, ulps=CACHE_ULPS))
    assert after["steps"][0] == before["steps"][0] and after["steps"][1] != before["steps"][1]


def test_the_decoderlens_comes_after_the_click_and_a_step_neither_sends_nor_makes_it_again(lab, monkeypatch):
    user, c = UserState(), Controls("reverse", "abc123", max_len=10)
    lab.do(lab.decoding.run, user, c)
    answered = lab.open_tab(user, c, "why")
    assert answered["decoderlens"] == {"op": "computing", "text": why_tab.DECODERLENS_SLOW}
    message = lab.fill(user)["decoderlens"]
    session, tokenizer = user.run.session, user.run.pipeline.tokenizer
    labels = [s.label for s in payload.full(session, tokenizer, "tiny").steps]
    assert message["op"] == "decoderlens" and message["limit"] == 10
    assert [layer["layer"] for layer in message["layers"]] == list(range(session.model.config.n_encoder_layers + 1))
    assert message["layers"][-1]["tokens"] == labels  # the last layer: the model's own output, as the page labels it
    assert message["layers"][-1]["ended"] == (session.tokens[-1] == session.model.config.eos_id)
    made = []
    real = why_tab.decoderlens_data
    monkeypatch.setattr(why_tab, "decoderlens_data", lambda *args: made.append(args) or real(*args))
    for action in (lab.decoding.back, lab.decoding.back, lab.decoding.step):
        assert "decoderlens" not in lab.do(action, user, c)  # nothing sent: the page keeps what it has
        assert "decoderlens" not in lab.fill(user)
    assert made == []
    lab.do(HeadTests(lab.decoding).ablate, user, c, ["cross:*:*"])  # other interventions: made anew
    blind = lab.fill(user)["decoderlens"]
    assert len(made) == 1 and blind != message
    assert all(layer["tokens"] == blind["layers"][-1]["tokens"] for layer in blind["layers"])  # the source unseen


def test_the_deletion_test_answers_after_the_click(lab):
    user, c = UserState(), Controls("reverse", "abc123", max_len=10)
    with pytest.raises(InputError, match="Run a source first"):
        lab.do(ask_deletion, user, c)
    lab.do(lab.decoding.run, user, c)
    assert lab.open_tab(user, c, "why")["deletion"] == why_tab.DELETION_ASK
    lab.fill(user)
    answered = lab.do(ask_deletion, user, c)
    assert answered["deletion"] == f"*{why_tab.DELETION_SLOW}*" and "why" not in answered  # the rest stays
    table = lab.fill(user)["deletion"]
    assert "| ranking |" in table and RANDOM in table and "Occlusion" in table


# ---- what the page draws ---------------------------------------------------------------------------------------

MODULES = {"D": "assets/decoding.mjs", "W": "why/why.mjs", "R": "why/rank.mjs"}
DRAWN = """
const d = new D.Decoding(data.payload);
return data.looks.map(([shown, words, hide, reading]) => {
  const look = {words, hideSpecials: hide, reading, scale: "linear", focus: null};
  const s = W.why(d, data.message, shown, look);
  return {source: s.source.map(u => [u.label, u.value]), prefix: s.prefix.map(u => [u.label, u.value]),
    agreement: s.agreement, share: s.share};
});
"""


def rank_correlation(a, b) -> float:
    """SciPy's Spearman correlation; nan where it is undefined (a constant list, fewer than two values)."""
    if len(a) < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy warns of a constant input, and answers nan
        return float(spearmanr(a, b).statistic)


def in_units(values, tokenizer, ids, special, words: bool, hide: bool) -> tuple[list[str], np.ndarray]:
    """Attribution per piece in the units tests/units_reference.py defines: a unit's value is its pieces' sum (as a
    column of attention is)."""
    units = Units.of(tokenizer.tokens(ids), [i in special for i in ids], words, tokenizer.is_character_level)
    summed = np.asarray(values) @ units.key_matrix(len(ids))
    if hide:
        units, kept = units.without_specials()
        summed = summed[kept]
    return units.labels, summed


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (tests/run.sh installs it)")
def test_the_page_draws_words_and_agreement_as_python_defines_them(lab):
    user, _, message = opened(lab)
    session, tokenizer = user.run.session, user.run.pipeline.tokenizer
    special, n = session.model.special_ids, len(session.steps)
    looks = [
        [shown, words, hide, reading]
        for shown in (1, n)
        for words in (True, False)
        for hide in (True, False)
        for reading in ("weights", "value")
    ]
    data = {"payload": payload.full(session, tokenizer, "tiny"), "message": message, "looks": looks}
    drawn = run_modules(MODULES, DRAWN, data)
    for look, page in zip(looks, drawn):
        shown, words, hide, reading = look
        record = message["steps"][shown - 1]
        labels, source = in_units(record["source"], tokenizer, session.src_ids, special, words, hide)
        inputs = [session.model.config.bos_id, *session.tokens[: shown - 1]]
        _, prefix = in_units(record["prefix"], tokenizer, inputs, special, words, hide)
        assert [u[0] for u in page["source"]] == labels, look
        np.testing.assert_allclose([u[1] for u in page["source"]], source, atol=1e-4)
        np.testing.assert_allclose([u[1] for u in page["prefix"]], prefix, atol=1e-4)
        for kind, values, ids in (("cross", source, session.src_ids), ("decoder_self", prefix, inputs)):
            rows = step_rows(session, tokenizer, kind, shown, reading, ids, words, hide)
            for layer in range(rows.shape[0]):
                for head in range(rows.shape[1]):
                    expected = rank_correlation(rows[layer, head], values)
                    got = page["agreement"][kind][layer][head]
                    if np.isnan(expected):
                        assert got is None, (look, kind, layer, head)
                    else:
                        assert got == pytest.approx(expected, abs=1e-3), (look, kind, layer, head)


def step_rows(session, tokenizer, kind: str, shown: int, reading: str, ids, words: bool, hide: bool) -> np.ndarray:
    """Every head's attention at step `shown` alone (L, H, units), as tests/units_reference.py merges a column: the
    step's own row of pieces, its columns summed into words, specials dropped and the row renormalised."""
    pieces, _, _ = oracle(session, tokenizer, kind, shown, False, False, reading)
    special = session.model.special_ids
    units = Units.of(tokenizer.tokens(ids), [i in special for i in ids], words, tokenizer.is_character_level)
    rows = pieces[:, :, shown - 1] @ units.key_matrix(len(ids))
    if hide:
        rows = rows[..., units.without_specials()[1]]
        rows = rows / np.clip(rows.sum(-1, keepdims=True), 1e-30, None)
    return rows


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (tests/run.sh installs it)")
def test_rank_correlation_with_ties_equals_scipys():
    rng = np.random.default_rng(0)
    pairs = [(rng.integers(0, 4, n).tolist(), rng.normal(size=n).round(1).tolist()) for n in (2, 3, 7, 20)]
    pairs += [([1, 1, 1], [1, 2, 3]), ([0.5], [0.2])]  # undefined: a constant list, one value
    got = run_modules(MODULES, "return data.map(([a, b]) => R.spearman(a, b));", pairs)
    for (a, b), value in zip(pairs, got):
        expected = rank_correlation(a, b)
        assert (value is None) if np.isnan(expected) else value == pytest.approx(expected, abs=1e-9), (a, b)


def test_while_the_page_makes_the_attribution_the_server_makes_the_tabs_other_outputs(lab):
    """The page draws the Why tab (UserState.here) when it makes the attribution, the lens and the DecoderLens itself
    (in_page.mjs): the server leaves those outputs alone and still makes the contrast and the deletion test."""
    user, c = UserState(), Controls("reverse", "abc", max_len=6)
    lab.do(lab.decoding.run, user, c)
    user.tab, user.here = "why", frozenset({"why"})
    told = lab.views.wanted(lab.views.screen(user, c, None, 6))
    assert not {"why", "decoderlens"} & set(told) and {"contrast", "deletion"} <= set(told)
    user.here = frozenset()  # a gradient method, or a page that does not decode: the server makes them all
    assert {"why", "contrast", "decoderlens", "deletion"} <= set(lab.views.wanted(lab.views.screen(user, c, None, 6)))
