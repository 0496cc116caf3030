"""Hostile input through the path a user takes: every case gets a valid output or a clear message, and the app
still answers a normal request afterwards. Markup in tokens is shown as text, never interpreted."""

import json

import pytest

from lab.checks import InputError
from lab.controls import Controls
from lab.decoding.run import UserState
from lab.models.registry import Registry
from lab.page.lab import Lab
from lab.serving.api import Api
from tests.conftest import tiny_pipelines

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
    "template injection": "{{7*7}} ${7*7} %{x}",
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
    return Lab(Registry.of(tiny_pipelines()))


@pytest.fixture(scope="module")
def api(lab):
    return Api(lab.registry, lab.snapshots)


def test_there_are_at_least_40_hostile_cases():
    assert len(HOSTILE) >= 40


def drawn_for_every_tab(lab: Lab, user: UserState, c: Controls, first: dict) -> str:
    """The figures and the now view of every tab, as the page would get them, in one string."""
    texts = [first["now"], *(first[k].to_json() for k in ("cross",) if k in first)]
    for tab in ("encoder", "decoder_self", "compare"):
        texts += [v.to_json() if hasattr(v, "to_json") else str(v) for v in lab.open_tab(user, c, tab).values()]
    return "".join(texts)


@pytest.mark.parametrize("model", ["de-en", "reverse"])
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_input_gets_an_output_or_a_clear_message(lab, model, name, api):
    user = UserState()
    c = Controls(model, HOSTILE[name], max_len=8, words=len(name) % 2 == 0, hide_specials=len(name) % 3 == 0)
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
        json.dumps(api.attention(model, HOSTILE[name]))  # the export path copes too
        drawn = drawn_for_every_tab(lab, user, c, changes)
        for markup in ("<script", "<img", "<svg", "<a href", "<i>"):
            assert markup not in drawn  # tokens are escaped before plotly or the page sees them
    # the app still answers a normal request
    assert (
        lab.do(lab.decoding.run, UserState(), Controls("reverse", "abc", max_len=5))["output"]
        == api.translate("reverse", "abc")[:5]
    )


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
    from lab.checks import check_source
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
    with pytest.raises(InputError, match="Beam size must be between 1 and 8"):
        api.translate("reverse", "abc", strategy="beam", beam_size=size)
