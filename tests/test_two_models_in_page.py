"""The Two models tab's message made in the page (two_models/in_page.mjs: side A the page's decoding, side B another
model's page copy decoding the same source with ONNX Runtime) equals the server's (two_models/feature.py: the
library's decodings, words.py and align.py): both sides' words, tokens and labels, every row of every head (within
two steps of their 16-bit rounding), the words the outputs share and the distance at each (within 1e-4), and the one
line that says why there is nothing to compare. Cases: the same model twice (every distance 0), a what-if as side A,
two models whose tokenizers read other words (B's rows lined up by the characters they share; a tiny random Marian
as B too), a source B cannot read, one over /compare_models's length, and no side B chosen."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from attention_lab.decoding.messages import Key
from attention_lab.feature import Shared
from attention_lab.messages import jsonable
from attention_lab.models.registry import Registry, entry_of
from attention_lab.run.state import new_run
from attention_lab.two_models.feature import CHOOSE, message_of, second_side, side_of
from tests.node import needs_node
from tests.test_explain_in_page import in_page

pytestmark = [pytest.mark.slow, needs_node]
GERMAN = "Das Haus ist alt und klein."
# (model A, source, what-if at step 2 (its candidate of this rank), side B)
CASES = {
    "de-en": [
        (GERMAN, None, "de-en"),
        (GERMAN, 1, "de-en"),
        ("dasistgut42", None, "reverse"),  # reverse reads it too: its characters lined up on de-en's words
        (GERMAN, None, "reverse"),  # a capital letter: the reversal model's own message
        ("Das ist ein sehr langer Satz. " * 8, None, "de-en"),  # over /compare_models's 64 tokens
        (GERMAN, None, ""),  # no side B chosen
        (GERMAN, None, "marian"),  # a tiny random Marian (transformers): its pieces lined up on de-en's words
    ],
    "reverse": [("abcdef12", None, "de-en"), ("helloworld", 2, "reverse")],
}


def unpacked(side: dict) -> np.ndarray:
    return np.frombuffer(base64.b64decode(side["rows"]), dtype="<u2").astype(int)


def servers(registry, model: str, text: str, what_if: int | None, second: str, serial: int) -> tuple[dict, list[int]]:
    """The server's message for the run of `text` on `model` (its step 2 forced to its candidate of rank `what_if`),
    and the run's tokens."""
    run = new_run(registry.entry(model), text)
    if what_if is not None:
        run.session.step()
        candidates = run.session.step().top_ids  # the second step's candidates, best first
        run.session.rewind(1)
        run.session.step(force=int(candidates[what_if]))
    run.session.run()
    tokens = list(run.session.tokens)
    b = second_side(Shared(registry), second, text) if second else CHOOSE
    return jsonable(message_of(Key(serial, 0), tokens, side_of(run), b)), tokens


@pytest.mark.parametrize("model", list(CASES))
def test_the_pages_message_is_the_servers(bundled, explained_models, tmp_path, model):
    pipeline, folder = explained_models[model]
    marian, _ = explained_models["marian"]
    registry = Registry({**bundled.entries, "marian": entry_of("marian", marian, marian.folder)})
    copies = {name: copy for name, (_, copy) in explained_models.items()}
    theirs, cases, asked = [], [], []
    for serial, (text, what_if, second) in enumerate(CASES[model]):
        message, tokens = servers(registry, model, text, what_if, second, serial)
        theirs.append(message)
        ids = pipeline.tokenizer.encode(text)[: pipeline.model.config.max_len]
        cases.append({"ids": ids, "tokens": tokens, "more": {"text": text}})
        asked.append({"two_models": {"second": second, "writes": "own"}})
    answers = in_page(folder, cases, tmp_path, asked, copies=copies)
    errors = 0
    for (text, what_if, second), answer, wanted in zip(CASES[model], answers, theirs, strict=True):
        ours, where = answer["two_models"], f"{model} → {second or 'none'}: {text[:30]!r}"
        errors += "error" in wanted
        for mine, server in zip(ours.pop("models"), wanted.pop("models"), strict=True):
            worst = np.abs(unpacked(mine) - unpacked(server)).max(initial=0)
            assert worst <= 2, f"{where}: a row differs by {worst} / 65535"
            assert {**mine, "rows": None} == {**server, "rows": None}, where
        for mine, server in zip(ours.pop("shared"), wanted.pop("shared"), strict=True):
            assert mine.pop("distance") == pytest.approx(server.pop("distance"), abs=1e-4), where
            assert mine == server, where
        assert ours == wanted, where  # the key, A's tokens, the source words, the line that says why not
    assert errors == (3 if model == "de-en" else 0)  # each case reached what it was written for
