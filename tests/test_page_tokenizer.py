"""The page's tokenizer for transformers models: @huggingface/tokenizers (the copy the page carries) on the
tokenizer.json that page_tokenizer makes gives the transformers tokenizer's ids, five families over.

Each family is a tiny model saved as a Hub repo holds it (tests/hf_models), loaded through the adapter: mBART, BART and
T5 bring a tokenizer.json, Marian and M2M100 only sentencepiece files and a vocab.json. One Node process per family
reads 1,200 seeded texts (umlauts and ß, numbers, punctuation and quotes, characters the tiny vocabularies lack,
language codes, odd whitespace, special tokens' text). The ids, read as the page's model.mjs reads them (a null id as
<unk>), must equal `tokenizer.hf(text)["input_ids"]` on every text, and the page's decoding of those ids with special
tokens skipped must equal transformers' decode(skip_special_tokens=True) on every text.

Two things the page's tokenizer library reads otherwise are left out of the seeded texts, and
test_where_the_page_reads_otherwise holds them: a combining mark right after a compatibility character (its
Precompiled normalizer is NFKC over the whole text, which makes "ﬁ" + U+0301 into "fí", where sentencepiece's map gives
"fi" + U+0301), and U+FEFF before a token that strips the whitespace on its left (mBART's <mask>: JavaScript's trim
takes U+FEFF, Unicode's White_Space does not hold it).
"""

from __future__ import annotations

import json
import random
import re
from types import SimpleNamespace

import pytest

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from attention_lab.adapters.hf.page_tokenizer import tokenizer_json
from tests import hf_models
from tests.node import needs_node, run_modules
from transformer import load_pretrained
from transformer.checkpoint import CheckpointError

TEXTS = 1200
WORDS = (
    "Bahnhof Straße Grüße Äpfel Öl Süßigkeiten Mädchen Fußgängerübergang weiß heißen Übermut Köln München ÄRGER "
    "the station hungry children garden please tomorrow naïve café résumé coöperate Zürich Groß "
    "Wo ist der Bahnhof Ich habe Hunger Das Haus alt klein Kinder spielen im Garten Wetter schön"
)
PUNCTUATION = [*".,;:!?¿¡'\"„“”‚‘’«»‹›()[]{}-–—…/\\@#%&*+=<>|~^`$€£¥§°", "...", "?!", "--", "''", '""']
UNKNOWN = [  # characters the tiny vocabularies lack; a combining mark only after the letter it belongs to
    *"😀🙂👍🏽🇩🇪🎉中文字符日本語のテキスト한국어ПриветмирΕλληνικάمرحباשלום∮≠∞ℵ♠☃ⅫⅣ①²ﬁﬂ™…㍿ｅｶﾞ\ufdd0\ufdef",
    *("e\u0301", "ß\u0308", "A\u030a", "n\u0303", "o\u0308"),
]
CODES = (  # language codes, and what looks like them, of the five families; special tokens' text
    "de_DE en_XX fr_XX ro_RO __de__ __en__ __fr__ __jv__ >>fra<< >>deu<< >>eng<< >>x<< >><< >>fra fra<< "
    "eng_Latn deu_Latn <s> </s> <pad> <unk> <mask> ▁ ▁▁"
)
SPACES = ("", " ", " ", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u2009", "\u3000", "\u200b", "\ufeff")
READ_OTHERWISE = re.compile("\ufeff[\\s\ufeff]*<mask>")  # see the module's docstring


def number(rng: random.Random) -> str:
    return rng.choice(
        [
            str(rng.randint(0, 10 ** rng.randint(1, 9))),
            f"{rng.randint(0, 9999)},{rng.randint(0, 99):02d}",
            f"{rng.randint(1, 999)}.{rng.randint(0, 999):03d}.{rng.randint(0, 999):03d}",
            f"{rng.randint(1, 31)}.{rng.randint(1, 12)}.{rng.randint(1900, 2100)}",
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}",
            f"-{rng.random() * 100:.3f}",
            f"{rng.randint(1, 9)}e{rng.randint(-9, 9)}",
            f"{rng.randint(1, 99)} %",
        ]
    )


def fragment(rng: random.Random) -> str:
    kind = rng.choices(["word", "number", "punctuation", "unknown", "code"], weights=[6, 2, 3, 2, 1])[0]
    if kind == "word":
        word = rng.choice(WORDS.split())
        return rng.choice([word, word.lower(), word.upper(), word.capitalize()])
    if kind == "number":
        return number(rng)
    if kind == "punctuation":
        return "".join(rng.choices(PUNCTUATION, k=rng.randint(1, 3)))
    if kind == "unknown":
        return "".join(rng.choices(UNKNOWN, k=rng.randint(1, 4)))
    return rng.choice(CODES.split())


def texts(seed: int, n: int = TEXTS) -> list[str]:
    """`n` seeded texts: a few fragments joined by spaces or odd whitespace, or glued together, some starting with a
    language code or whitespace."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        parts = [fragment(rng) for _ in range(rng.randint(1, 12))]
        text = "".join(part + rng.choice(SPACES) for part in parts)
        if rng.random() < 0.15:
            text = rng.choice(CODES.split()) + rng.choice(["", " ", "  "]) + text
        if rng.random() < 0.1:
            text = rng.choice(SPACES) + text
        if not READ_OTHERWISE.search(text):
            out.append(text)
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """family -> (the pipeline's TransformersTokenizer, the tokenizer.json made for it), each made once."""
    cache: dict[str, tuple] = {}

    def make(family: str):
        if family not in cache:
            folder = hf_models.PAGE_FAMILIES[family](tmp_path_factory.mktemp(family))
            tokenizer = load_pretrained(str(folder)).tokenizer
            cache[family] = tokenizer, tokenizer_json(tokenizer, family)
        return cache[family]

    return make


def page_reads(made_json: str, hf, sources: list[str], decode: list[list[int]] = ()) -> dict:
    """In one Node process, with the tokenizer library the page carries, loaded as the page loads it: each source's
    ids (a null id read as <unk>, as the page's model.mjs reads them; `nulls` counts them) and each of `decode`
    decoded with special tokens skipped (spaces cleaned up as `hf` does)."""
    body = """
        const tokenizer = new tokenizers.Tokenizer(JSON.parse(data.json), {});
        const options = {skip_special_tokens: true, clean_up_tokenization_spaces: data.clean_up};
        const encoded = data.sources.map((text) => tokenizer.encode(text).ids);
        return {
          ids: encoded.map((ids) => ids.map((id) => id ?? data.unk_id)),
          nulls: encoded.reduce((n, ids) => n + ids.filter((id) => id == null).length, 0),
          decoded: data.decode.map((ids) => (ids.length ? tokenizer.decode(ids, options) : "")),
        };
    """
    clean_up = bool(getattr(hf, "clean_up_tokenization_spaces", False))
    data = {"json": made_json, "unk_id": hf.unk_token_id, "sources": sources, "decode": decode, "clean_up": clean_up}
    return run_modules({"tokenizers": "page_copy/vendor/tokenizers.min.mjs"}, data=data, body=body)


def assert_the_page_reads_as_transformers(made_json: str, hf, sources: list[str]) -> None:
    expected = [list(hf(text)["input_ids"]) for text in sources]
    page = page_reads(made_json, hf, sources, expected)
    assert page["nulls"] == 0  # the page's `id ?? unk_id` never had to stand in
    differ = [(text, got, want) for text, got, want in zip(sources, page["ids"], expected) if got != want]
    assert not differ, f"{len(differ)} of {len(sources)} differ, the first: {differ[0]}"
    decoded = [hf.decode(ids, skip_special_tokens=True) for ids in expected]
    differ = [(text, got, want) for text, got, want in zip(sources, page["decoded"], decoded) if got != want]
    assert not differ, f"{len(differ)} of {len(sources)} decode otherwise, the first: {differ[0]}"


@needs_node
@pytest.mark.parametrize("family", sorted(hf_models.PAGE_FAMILIES))
def test_the_page_reads_every_text_as_transformers_does(made, family):
    tokenizer, made_json = made(family)
    sources = texts(seed=sorted(hf_models.PAGE_FAMILIES).index(family))
    assert len(sources) >= 1000
    assert_the_page_reads_as_transformers(made_json, tokenizer.hf, sources)


@needs_node
def test_marian_language_codes_read_as_transformers_reads_them(tmp_path):
    """A multilingual Marian's codes (in vocab.json, not in its sentencepiece model) are one token at the start of a
    text and pieces elsewhere, and an unknown code at the start is <unk>."""
    from transformers import MarianTokenizer

    folder = hf_models.marian(tmp_path / "marian")
    vocab = json.loads((folder / "vocab.json").read_text())
    for code in (">>fra<<", ">>deu<<", ">>eng<<", ">>x<<"):
        vocab[code] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    hf = MarianTokenizer(*(str(folder / f) for f in ("source.spm", "target.spm", "vocab.json")))
    assert hf(">>fra<< Wo")["input_ids"][0] == vocab[">>fra<<"] and hf(">>es<< Wo")["input_ids"][0] == hf.unk_token_id
    assert_the_page_reads_as_transformers(tokenizer_json(SimpleNamespace(hf=hf), "opus-mt-mul"), hf, texts(seed=7))


def test_the_texts_hold_what_the_page_must_read():
    sources = texts(seed=0)
    joined = "".join(sources)
    assert len(set(sources)) > 0.95 * len(sources)
    for wanted in ("ß", "ä", "Ü", "😀", "中", "П", "„", "€", ">>fra<<", "__de__", "de_DE", "\t", "  ", "\u00a0", "3"):
        assert wanted in joined, wanted
    assert sum(text.startswith(tuple(CODES.split())) for text in sources) > 0.1 * len(sources)


@needs_node
def test_where_the_page_reads_otherwise(made):
    """What the seeded texts leave out still reads otherwise in the page (when it no longer does, put it back)."""
    for family, text in (("marian", "Tomorrowﬁ\u0301"), ("m2m100", "Ⅻ\u0301 x"), ("mbart", "Garden\ufeff<mask>")):
        tokenizer, made_json = made(family)
        assert page_reads(made_json, tokenizer.hf, [text])["ids"][0] != tokenizer.hf(text)["input_ids"], family


def marian_with_bytes(folder):
    """A Marian tokenizer whose sentencepiece model falls back to bytes for characters it does not know: transformers
    reads "Ü" as two byte pieces, which the converted model (no byte fallback) cannot give."""
    import sentencepiece as spm
    from transformers import MarianTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(hf_models.LINES),
        model_prefix=str(folder / "m"),
        vocab_size=350,
        byte_fallback=True,
        num_threads=1,
        minloglevel=2,
    )
    processor = spm.SentencePieceProcessor(model_file=str(folder / "m.model"))
    vocab = {"</s>": 0, "<unk>": 1}
    for i in range(processor.get_piece_size()):
        vocab.setdefault(processor.id_to_piece(i), len(vocab))
    vocab["<pad>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    return MarianTokenizer(str(folder / "m.model"), str(folder / "m.model"), str(folder / "vocab.json"))


def test_a_tokenizer_that_no_tokenizer_json_matches_is_refused_in_one_line(tmp_path):
    hf = marian_with_bytes(tmp_path / "bytes")
    assert hf.convert_ids_to_tokens(hf("Ü")["input_ids"])[1:3] == ["<0xC3>", "<0x9C>"]
    with pytest.raises(CheckpointError) as refused:
        tokenizer_json(SimpleNamespace(hf=hf), "opus-mt-bytes")
    message = str(refused.value)
    assert "\n" not in message and len(message) < 300
    assert message.startswith("opus-mt-bytes: its sentencepiece tokenizer cannot be converted to a tokenizer.json")
    assert "Über Äpfel" in message and "in transformers" in message  # the first probe that differs, and where
