"""Hostile input through the path a user takes: every case gets a valid output or a clear message, and the app
still answers a normal request afterwards. Markup in tokens is shown as text, never interpreted."""

import json
import re

import pytest

from attention_lab.app import endpoints, make_lab
from attention_lab.assets import in_script
from attention_lab.checks import InputError
from attention_lab.controls import Controls
from attention_lab.models.registry import Registry
from attention_lab.run.state import UserState
from tests.conftest import tiny_pipelines
from tests.node import NODE, run_modules

HOSTILE = {
    "empty": "",
    "spaces": "     ",
    "tabs and newlines": "\t\n\r\n",
    "10,000 characters": "Haus " * 2000,
    "10,000 letters": "a" * 10_000,
    "one character": "a",
    "emoji": "Ich 😀 habe 🍕 Hunger 🇩🇪.",
    "only emoji": "😀😀😀",
    "skin-tone emoji sequence": "👋🏽 Hallo",
    "zero-width joiner family": "👨‍👩‍👧",
    "right-to-left Hebrew": "שלום עולם",
    "right-to-left Arabic": "مرحبا بالعالم",
    "right-to-left override": "Ich\u202ehabe Hunger",
    "left-to-right mark": "\u200eHallo",
    "combining characters": "e\u0301e\u0301e\u0301",
    "zalgo": "H̸̡̪̯ͨ͊̽̅̾̎Ȩ̬̩̾͛ͪ̈́̀́͘ ̶̧̨̱̹̭̯ͧ̾ͬC̷̙̲̝͖ͭ̏ͥͮ͟Oͮ͏̮̪̝͍",
    "decomposed umlaut": "Gru\u0308n ist schön.",
    "NUL": "a\x00b",
    "only NUL": "\x00",
    "control characters": "\x01\x02\x03abc\x1b[31m",
    "bell and backspace": "ab\x07\x08c",
    "zero-width spaces": "\u200b\u200b\u200b",
    "BOM": "\ufeffHallo Welt.",
    "mixed scripts": "Hallo мир 世界 κόσμος",
    "CJK": "我饿了",
    "mathematical letters": "𝐇𝐚𝐥𝐥𝐨",
    "fullwidth": "ＡＢＣ１２３",
    "surrogate-free astral": "𓀀𓀁𓀂",
    "symbols outside the reversal alphabet": "abc-def_ghi!",
    "uppercase for reversal": "ABC",
    "punctuation only": "?!.,;:",
    "script tag": "<script>alert(1)</script>",
    "img onerror": "<img src=x onerror=alert(1)>",
    "svg onload": "<svg onload=alert(1)>",
    "link": "<a href='javascript:alert(1)'>klick</a>",
    "plotly link markup": '<a href="https://example.invalid">x</a> Haus',
    "bold markup": "<b>fett</b> und <i>kursiv</i>",
    "html entities": "&lt;b&gt; &amp; &#60;script&#62;",
    "markdown": "**fett** _kursiv_ [link](http://example.invalid) `code`",
    "template injection": "{{7*7}} ${7*7} %{x} ${alert(1)} `${document.cookie}`",
    "backslash-u sequence": "\\u003cscript\\u003e \\u0041 \\x3c",
    "script end": "</script><script>alert(1)</script> <!-- x",
    "plotly hover syntax": "%{customdata} <extra>x</extra>",
    "format string": "%s %d %(x)s {0} {}",
    "path traversal": "../../etc/passwd",
    "SQL": "'; DROP TABLE users; --",
    "very long word": "Donaudampfschifffahrtsgesellschaftskapitän" * 20,
    "many lines": "Haus.\n" * 300,
    "lone surrogate escaped": "\\ud800",
    "unicode specials": "\ufffd\ufffe",
    "digits only": "0123456789",
}


@pytest.fixture(scope="module")
def lab():
    return make_lab(Registry.of(tiny_pipelines()))


@pytest.fixture(scope="module")
def api(lab):
    return endpoints(lab)


def test_there_are_at_least_40_hostile_cases():
    assert len(HOSTILE) >= 40


MODULES = {"D": "assets/decoding.mjs", "F": "core/figures.mjs", "C": "compare/compare.mjs"}
DRAW_EVERY_TAB = """
return data.map((one) => {
  const d = new D.Decoding(one.decoding);
  const look = {...one.look, scale: "linear", focus: null, reading: "weights"};
  const size = {focusHeight: 500, gridWidth: 400, gridHeight: 300};
  // plotly's figures (the grid of every head is painted, with no token text, its title set as text)
  const figures = ["encoder", "decoder_self", "cross"].flatMap((kind) => Object.values(F.kindFigures(d, kind, one.shown, look, size)))
    .filter((f) => f && f.data);
  const compared = C.compareFigure(d, look);
  if (compared) figures.push(compared);
  // every piece of token text plotly is given: axis labels, titles and notes (its own templates hold <br> on purpose)
  return figures.flatMap((f) => [...f.data.flatMap((t) => [...(t.x || []), ...(t.y || [])]), f.layout.title ? f.layout.title.text : "",
    ...(f.layout.annotations || []).map((a) => a.text)]).join(" ");
});
"""


def drawn_for_every_tab(sent: list[tuple[dict, dict]]) -> list[str]:
    """The token text in the figures of every tab, as the page draws them from each decoding it was sent (one Node
    process for them all)."""
    data = [{"decoding": m["steps"]["data"], "shown": m["steps"]["shown"], "look": look} for m, look in sent]
    return run_modules(MODULES, DRAW_EVERY_TAB, data)


def look_of(name: str) -> dict:
    return {"words": len(name) % 2 == 0, "hideSpecials": len(name) % 3 == 0}


@pytest.mark.parametrize("model", ["de-en", "reverse"])
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_input_gets_an_output_or_a_clear_message(lab, model, name, api):
    user = UserState()
    c = Controls(model, HOSTILE[name], max_len=8)
    try:
        changes = lab.do(lab.decoding.run, user, c)
    except InputError as err:  # a clear message, not a traceback
        message = str(err)
        assert message and "Traceback" not in message
        assert any(word in message for word in ("empty", "only knows lowercase letters and digits"))
        if model == "reverse" and "only knows" in message:
            assert "remove" in message
        assert user.run is None and user.drawn == {}  # nothing half done
    else:
        assert isinstance(changes["output"], str) and len(user.run.session.steps) >= 1
        try:  # the API copes too: an answer, or past its cap a one-line message that states it
            json.dumps(api.attention(model, HOSTILE[name]))
        except InputError as err:
            assert re.fullmatch(r"The source is \d+ tokens; /attention takes at most \d+ .*", str(err))
        assert "<" not in in_script(changes["steps"])  # nothing in it can end a script element
    # the app still answers a normal request
    assert (
        lab.do(lab.decoding.run, UserState(), Controls("reverse", "abc", max_len=5))["output"]
        == api.translate("reverse", "abc")[:5]
    )


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed (tests/run.sh installs it)")
def test_hostile_token_text_is_escaped_before_plotly_sees_it(lab):
    sent = []
    for model in ("de-en", "reverse"):
        for name, text in HOSTILE.items():
            try:
                sent.append((lab.do(lab.decoding.run, UserState(), Controls(model, text, max_len=8)), look_of(name)))
            except InputError:
                continue
    drawn = drawn_for_every_tab(sent)
    assert len(drawn) == len(sent) > 40
    assert not [text for text in drawn if "<" in text]


@pytest.mark.parametrize(
    "call",
    [
        lambda api: api.translate("<img src=x onerror=alert(1)>", "abc"),
        lambda api: api.translate("reverse", "abc", strategy="<b>beam</b>"),
        lambda api: api.translate("reverse", "abc", strategy="beam", beam_size="<i>9</i>"),
        lambda api: api.translate("reverse", "abc", strategy="beam", beam_size="²<i>"),
    ],
)
def test_messages_quote_what_the_user_sent_as_text(api, call):
    """Error toasts render HTML, so anything the user sent is escaped in them."""
    with pytest.raises(InputError) as err:
        call(api)
    message = str(err.value)
    assert "&lt;" in message and "<img" not in message and "<b>" not in message and "<i>" not in message


def test_a_character_model_names_its_own_alphabet():
    from attention_lab.checks import check_source
    from tests.conftest import tiny_config
    from transformer import Transformer
    from transformer.hub import Seq2SeqPipeline
    from transformer.tokenizer import Tokenizer

    model = Transformer(tiny_config(src_vocab_size=8, tgt_vocab_size=8, share_embeddings=True))
    pipeline = Seq2SeqPipeline(model, Tokenizer.characters("ACGT"), name="dna")
    with pytest.raises(InputError, match="only knows the characters ACGT; remove 'x'"):
        check_source(pipeline, "ACxGT")


@pytest.mark.parametrize("size", ["²", float("nan"), float("inf"), 2.5, -1, 0, 99, None, "4.0x"])
def test_an_unusable_beam_size_is_a_clear_message(lab, size, api):
    with pytest.raises(InputError, match="Beam size must be a whole number from 1 to 16"):
        api.translate("reverse", "abc", strategy="beam", beam_size=size)
