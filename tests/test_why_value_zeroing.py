"""Value zeroing as an attribution method of the app: /attribute(model, text, "value_zeroing") in the answer's
existing shape (one value per source token, one per decoder input), equal to the library's value zeroing; a choice
of the Why tab, whose message it fills; a contrast, which it cannot make, refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from attention_lab.app import endpoints, make_lab
from attention_lab.checks import InputError
from attention_lab.controls import Controls
from attention_lab.models.registry import Registry
from attention_lab.run.state import UserState
from attention_lab.why import feature as why_tab
from transformer import DecodingSession, bundled, load_pretrained
from transformer.value_zeroing import value_zeroing

TEXT = "attention"


@pytest.fixture(scope="module")
def reverse():
    return load_pretrained(bundled("reverse"))


@pytest.fixture(scope="module")
def lab(reverse):
    return make_lab(Registry.of({"reverse": reverse}))


def test_attribute_by_value_zeroing_reads_each_character_from_its_mirror(lab, reverse):
    answer = endpoints(lab).attribute("reverse", TEXT, "value_zeroing")
    ids = reverse.tokenizer.encode(TEXT)  # the characters, then </s>
    assert answer["method"] == "value_zeroing" and answer["source_tokens"] == reverse.tokenizer.tokens(ids)
    copied = [s for s in answer["steps"] if s["token"] != "</s>"]
    assert [s["token"] for s in copied] == list(reversed(TEXT))
    for s in answer["steps"]:
        assert len(s["source"]) == len(ids) and len(s["prefix"]) == s["step"]
    mirrors = [int(np.argmax(s["source"])) for s in copied]
    assert mirrors == [len(TEXT) - s["step"] for s in copied]  # step t copies character n - t + 1


def test_the_answer_is_the_librarys_value_zeroing(lab, reverse):
    answer = endpoints(lab).attribute("reverse", "abc12", "value_zeroing", "l2")
    session = DecodingSession(reverse.model, reverse.tokenizer.encode("abc12"))
    session.run()
    library = value_zeroing(reverse.model, session.src_ids, session.tokens, limit=session.max_new_tokens)
    assert answer["aggregate"] == "l2" and len(answer["steps"]) == len(library)
    for step, zeroed in zip(answer["steps"], library):
        assert np.allclose(step["source"], np.abs(zeroed.source_fall.numpy()), atol=1e-6)  # l2: the fall's size
        assert np.allclose(step["prefix"], np.abs(zeroed.prefix_fall.numpy()), atol=1e-6)


def test_the_why_tab_offers_it_and_its_message_holds_every_step(lab):
    layout_choices = [value for _, value in why_tab_choices()]
    assert "value_zeroing" in layout_choices
    user, c = UserState(), Controls("reverse", "abc", options={"method": "value_zeroing"})
    lab.do(lab.decoding.run, user, c)
    lab.open_tab(user, c, "why")
    message = lab.fill(user)["why"]
    assert message["method"] == "value_zeroing" and message["title"] == "Value zeroing (sum)"
    assert [len(s["source"]) for s in message["steps"]] == [4] * len(user.run.session.steps)


def test_a_contrast_by_value_zeroing_is_refused_in_one_line(lab):
    with pytest.raises(InputError, match=r"^Value zeroing reads log p, not the difference of two logits"):
        endpoints(lab).contrast("reverse", "abc", 1, "a", "value_zeroing", "sum")


def why_tab_choices() -> list[tuple[str, str]]:
    import gradio as gr

    with gr.Blocks():
        components = why_tab.layout(None, "reverse")
    return components["method"].choices
