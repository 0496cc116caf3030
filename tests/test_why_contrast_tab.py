"""A candidate's "why not this?" through the Lab (as the page's click drives it): the contrast is asked for at the
shown step, the Why tab opens on it, the click answers with a placeholder and the fill brings the contrast; asking
again sends nothing; a what-if that rewrites the step drops it. And what the page draws of it (why/contrast.mjs, in
Node) equals the Python definition of words."""

from __future__ import annotations

import numpy as np
import pytest

from attention_lab.app import make_lab
from attention_lab.checks import InputError
from attention_lab.controls import Controls
from attention_lab.core import payload
from attention_lab.models.registry import Registry
from attention_lab.run.state import UserState
from attention_lab.why.contrast import contrast_step
from attention_lab.why.contrasting import SLOW
from attention_lab.why.feature import ask_contrast
from tests.conftest import tiny_pipelines
from tests.node import NODE, run_modules
from tests.test_why_tab import SOURCE, in_units

LIMIT = 5


@pytest.fixture(scope="module")
def lab():
    return make_lab(Registry.of(tiny_pipelines()))


def controls(shown: int | None = None, aggregate: str = "l2") -> Controls:
    options = {"method": "input_x_gradient", "aggregate": aggregate}
    return Controls("de-en", SOURCE, max_len=LIMIT, shown=shown, options=options)


def asked(lab, step: int = 2, aggregate: str = "l2"):
    """A run of SOURCE, with the Why tab shut, and a "why not this?" at `step` on the runner-up: (user, the click's
    answer, the fill's contrast message, the alternative)."""
    user = UserState()
    lab.do(lab.decoding.run, user, controls())
    session = user.run.session
    other = next(t for t in session.steps[step - 1].top_ids if t != session.tokens[step - 1])
    answered = lab.do(ask_contrast, user, controls(step, aggregate), other)
    return user, answered, lab.fill(user), other


def test_why_not_this_opens_the_why_tab_and_the_fill_brings_the_contrast(lab):
    user, answered, filled, other = asked(lab)
    assert user.tab == "why" and answered["contrast"] == {"op": "computing", "text": SLOW}  # the click does not wait
    message, session = filled["contrast"], user.run.session
    assert message["op"] == "contrast" and message["step"] == 2 and message["token_id"] == other
    assert message["tokens"] == session.tokens[:2] and message["aggregate"] == "l2"
    expected = contrast_step(session.model, session.src_ids, session.tokens, 2, other, "input_x_gradient", "l2", LIMIT)
    np.testing.assert_allclose(message["source"], expected.source, rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(message["prefix"], expected.prefix, rtol=1e-3, atol=1e-6)
    assert message["difference"] == pytest.approx(expected.difference, abs=1e-4) and message["difference"] > 0
    assert "why" in filled  # the tab opened with it: its attribution came in the same fill


def test_asking_again_sends_nothing_and_another_aggregate_is_attributed_anew(lab):
    user, _, _, other = asked(lab)
    assert "contrast" not in lab.do(ask_contrast, user, controls(2), other)  # the page holds it: drawn again there
    answered = lab.do(lambda user, c: user.shown, user, controls(2, "sum"))
    assert answered["contrast"]["op"] == "computing"
    assert lab.fill(user)["contrast"]["aggregate"] == "sum"


def test_a_what_if_that_rewrites_the_step_drops_the_contrast(lab):
    user, _, _, _ = asked(lab)
    session = user.run.session
    first = next(t for t in session.steps[0].top_ids if t != session.tokens[0] and session.can_write(t, 1))
    answered = lab.do(lab.decoding.force, user, controls(1), str(first))
    assert "contrast" in answered and answered["contrast"] is None  # cleared in the page at once


def test_why_not_the_token_written_or_before_any_step_is_refused(lab):
    user = UserState()
    with pytest.raises(InputError, match="Decode a step first"):
        ask_contrast(user, controls(1), 5)
    lab.do(lab.decoding.run, user, controls())
    with pytest.raises(InputError, match="That is the token written"):
        ask_contrast(user, controls(1), user.run.session.tokens[0])


DRAWN = """
const d = new D.Decoding(data.payload);
return data.looks.map(([words, hide]) => {
  const look = {words, hideSpecials: hide, reading: "weights", scale: "linear", focus: null};
  const s = C.contrastState(d, data.message, data.message.step, look);
  return {title: C.contrastTitle(s), source: s.source.map(u => [u.label, u.value]),
    prefix: s.prefix.map(u => u.value), elsewhere: C.contrastState(d, data.message, 1, look)};
});
"""


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (tests/run.sh installs it)")
def test_the_page_draws_the_contrast_in_words_as_python_defines_them(lab):
    user, _, filled, _ = asked(lab)
    message, session, tokenizer = filled["contrast"], user.run.session, user.run.pipeline.tokenizer
    data = {"payload": payload.full(session, tokenizer, "tiny"), "message": message}
    data["looks"] = [[words, hide] for words in (True, False) for hide in (True, False)]
    drawn = run_modules({"D": "assets/decoding.mjs", "C": "why/contrast.mjs"}, DRAWN, data)
    special = session.model.special_ids
    written = payload.full(session, tokenizer, "tiny").steps[1].label
    for (words, hide), page in zip(data["looks"], drawn):
        labels, source = in_units(message["source"], tokenizer, session.src_ids, special, words, hide)
        inputs = [session.model.config.bos_id, session.tokens[0]]
        _, prefix = in_units(message["prefix"], tokenizer, inputs, special, words, hide)
        assert [u[0] for u in page["source"]] == labels
        np.testing.assert_allclose([u[1] for u in page["source"]], source, atol=1e-4)
        np.testing.assert_allclose(page["prefix"], prefix, atol=1e-4)
        assert page["title"] == f"Why “{written}” and not “{message['alternative']}”?"
        assert page["elsewhere"] is None  # another step shown: nothing drawn
