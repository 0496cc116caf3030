"""The Trust tab through the Lab (as the page's events drive it) and in the page's drawing code (trust/trust.mjs, in
Node): the output as it stands is scored after the click, a pasted translation is scored in its place, and what the
tab says is where the reversal model leaves a character unread."""

from __future__ import annotations

import pytest

from attention_lab.app import make_lab
from attention_lab.checks import InputError
from attention_lab.controls import Controls
from attention_lab.models.registry import load_models
from attention_lab.run.state import UserState
from attention_lab.trust import feature as trust_tab
from attention_lab.trust.feature import score_output, score_translation
from tests.node import needs_node, run_modules

SLOW = next(output.slow for output in trust_tab.OUTPUTS if output.name == "trust")


@pytest.fixture(scope="module")
def lab():
    return make_lab(load_models([]))


def opened(lab, source: str = "abcdef", model: str = "reverse", method: str = "input_x_gradient"):
    """A run of `source` with the Trust tab open: (user, controls, the message filled after the click)."""
    user, c = UserState(), Controls(model, source, options={"trust_method": method})
    lab.do(lab.decoding.run, user, c)
    answered = lab.open_tab(user, c, "trust")
    assert answered["trust"] == {"op": "computing", "text": SLOW}  # the click does not wait for it
    return user, c, lab.fill(user)["trust"]


def test_the_output_is_scored_as_it_stands(lab):
    user, _, message = opened(lab)
    assert message["op"] == "trust" and message["pasted"] is None and message["method"] == "input_x_gradient"
    assert message["tokens"] == user.run.session.tokens and message["target_tokens"] == [*"fedcba", "</s>"]
    assert [s["step"] for s in message["steps"]] == list(range(1, 8)) and message["flags"] == []
    assert [w["label"] for w in message["words"]] == list("abcdef") and message["uncovered_words"] == []
    probs = [step.prob for step in user.run.session.steps]
    assert [round(2.718281828 ** s["logp"], 4) for s in message["steps"]] == [round(p, 4) for p in probs]


def test_a_pasted_translation_is_scored_in_place_of_the_output_and_its_unread_words_are_flagged(lab):
    user, c, _ = opened(lab)
    lab.do(score_translation, user, c, "fed")
    message = lab.fill(user)["trust"]
    assert message["pasted"] == "fed" and message["labels"] == [*"fed", "</s>"]
    assert message["uncovered_words"] == [0, 1] and message["sentence"]["uncovered"] == ["a", "b"]
    assert [(f["kind"], f["at"]) for f in message["flags"]] == [("uncovered", 1), ("uncovered", 2)]
    lab.do(score_output, user, c)
    assert lab.fill(user)["trust"]["pasted"] is None


def test_a_translation_the_model_cannot_read_is_said_in_the_tab(lab):
    user, c, _ = opened(lab)
    lab.do(score_translation, user, c, "FED")
    message = lab.fill(user)["trust"]
    assert "only knows lowercase letters and digits" in message["hint"] and "steps" not in message


def test_alti_is_the_default_method(lab):
    _, _, message = opened(lab, method=None)
    assert message["method"] == "alti" and message["title"] == "ALTI+"
    for s in message["steps"]:
        assert sum(s["source"]) + sum(s["prefix"]) == pytest.approx(1, abs=1e-4)


@needs_node
def test_the_page_reads_the_scores_and_points_each_flag_at_its_place(lab):
    user, c, _ = opened(lab)
    lab.do(score_translation, user, c, "fed")
    message = lab.fill(user)["trust"]
    decoding = {"steps": [{"token": t} for t in user.run.session.tokens]}
    got = run_modules(
        {"trust": "trust/trust.mjs"},
        "return [trust.trustRows(data.m), trust.trustScores(data.m), data.m.flags.map(trust.flagPlace),"
        " trust.scoresOutput(data.m, data.d), trust.trustFocus(data.m, data.d, 5, 2)];",
        {"m": message, "d": decoding},
    )
    rows, scores, places, scores_output, focus = got
    assert [r["label"] for r in rows] == [*"fed", "</s>"] and all(r["flags"] == [] for r in rows)
    assert scores[2][0] == "Coverage" and scores[2][1] == "67% (barely read: “a”, “b”)"
    assert places == [{"word": 0}, {"word": 1}] and scores_output is False and focus == 2  # its own step, not 5


def test_before_any_run_the_actions_ask_for_one():
    with pytest.raises(InputError, match="Run a source first"):
        score_translation(UserState(), Controls("reverse", "abc"), "cba")
