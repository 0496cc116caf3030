"""The tokenizer.json that the page's tokenizer (@huggingface/tokenizers) loads for a transformers model, checked to
give the transformers tokenizer's ids.

A fast tokenizer is written as it stands (its post-processor included: mBART's and NLLB's follow src_lang), with each
WhitespaceSplit spelt out as a Split on Unicode's whitespace (the page's library reads whitespace as JavaScript does).
A sentencepiece-only one (Marian: source.spm + vocab.json; M2M100: sentencepiece.bpe.model + vocab.json) is converted
with transformers' convert_slow_tokenizer machinery, an SpmConverter whose vocabulary is sentencepiece's pieces and
scores at vocab.json's ids, decoded and stripped as the transformers tokenizer decodes. Either way the result is read
back with `tokenizers` and must give the transformers tokenizer's ids on PROBES and on texts made of the model's own
special and language tokens; otherwise CheckpointError says in one line which text differs and where.

Three rules of those tokenizers that sentencepiece does not know are written into the converted normalizer with marks,
noncharacters that text does not hold (the normalizer first turns any in the text into STAND_IN):
- vocab.json entries that sentencepiece never gives (control symbols, the target side's pieces, M2M100's language
  tokens) start with UNREACHABLE, so that no text matches them;
- a run of characters that sentencepiece does not know comes out as one piece, which vocab.json then reads whole:
  such runs are fenced with RUN_MARK, and an entry made of such characters is fenced too, so it matches a whole run;
- Marian reads a leading ">>code<<" as one token (its id in vocab.json, else <unk>): the code is marked with
  CODE_MARK and split from the text after it, and a known code's entry is its marked form.
The decoder drops the marks, so decoded text never shows them; the page's id_to_token does.
"""

from __future__ import annotations

import json
import re

from transformer.checkpoint import CheckpointError

# Texts on which a tokenizer.json must give the transformers tokenizer's ids: umlauts and ß, digits, punctuation and
# quotes, characters most vocabularies lack, language-code-like strings, odd whitespace, the special tokens' own text.
PROBES = (
    "Wo ist der Bahnhof? Where is the station?",
    "Über Äpfel, Öl und Süßigkeiten: 'Grüße' aus Köln!",
    "STRASSE straße Maße ÄÖÜäöüß",
    "Am 3. Oktober 2024 um 14:30 kostete es 1.234,56 € (ca. 7 %).",
    "0123456789 42 3.14159 -17 1e10 1/2",
    '"Hallo", sagte sie – „wirklich?“ … «oui» ‚ja‘ (x) [y] {z} <a> & | ~ ^ @ # $ % * + = _ \\ /',
    "Emoji 😀🙂 and 👍🏽 and 🇩🇪 flags",
    "中文字符 日本語のテキスト 한국어 中 文",
    "Привет, как дела? Ελληνικά",
    "rare ∮ ≠ ∞ ℵ ♠ ☃ ß̈ é e\u0301 ﬁ Ⅻ ①",
    "de_DE en_XX __de__ __en__ >>fra<< >>deu<<",
    ">>fra<< Wo ist der Bahnhof?",
    ">>deu<<Ich habe Hunger.",
    ">> fra << >><< >>>x<<<",
    "__de__ Ich habe Hunger. en_XX",
    "  leading and trailing spaces  ",
    "many     spaces\tand\ttabs\nand\nnew lines\r\n",
    "non\u00a0breaking\u2009thin\u3000ideographic",
    "zero\u200bwidth\u200djoiner\ufeffbom",
    "</s> <s> <pad> <unk> <mask> inside the text",
    "a</s>b<unk>c",
    "▁already▁marked ▁ ▁▁",
    "noncharacters \ufdd0\ufdd1\ufdd2 \ufdef",
    "",
    " ",
    ".",
    "x" * 40,
)
CODE_MARK, RUN_MARK, UNREACHABLE = "\ufdd0", "\ufdd1", "\ufdd2"
STAND_IN = "\ufdef"  # what a mark in the text becomes: a noncharacter too, which no vocabulary has
LEADING_CODE = r"\A>>[\s\S]*?<<"  # MarianTokenizer.remove_language_code's code: from a leading >> to the first <<
CODE = r">>.+<<"  # a Marian language code in vocab.json
WHITE_SPACE = r"\x{9}-\x{D}\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}"


def tokenizer_json(tokenizer, name: str) -> str:
    """The tokenizer.json text for a loaded TransformersTokenizer (`.hf`: the transformers tokenizer); CheckpointError
    naming `name` when no tokenizer.json gives its ids."""
    from tokenizers import Tokenizer

    hf = tokenizer.hf
    backend = getattr(hf, "backend_tokenizer", None)
    if backend is not None:
        converted, what = backend, "its tokenizer.json"
    else:
        converted, what = _converted(hf, name), "its sentencepiece tokenizer"
    converted = Tokenizer.from_str(json.dumps(_for_the_page(json.loads(converted.to_str()))))
    for text in (*PROBES, *_own_texts(hf)):
        ids, expected = converted.encode(text).ids, list(hf(text)["input_ids"])
        if ids != expected:
            at = next(
                (i for i, pair in enumerate(zip(ids, expected)) if pair[0] != pair[1]), min(len(ids), len(expected))
            )
            raise CheckpointError(
                f"{name}: {what} cannot be converted to a tokenizer.json that gives the same ids ({text!r}: from "
                f"token {at} on it reads {ids[at : at + 4]} there, {expected[at : at + 4]} in transformers)"
            )
    return converted.to_str()


def _for_the_page(node):
    """A tokenizer.json's parts, with each WhitespaceSplit written as the Split it is: @huggingface/tokenizers reads
    whitespace as JavaScript's \\s does (U+FEFF too, U+0085 not), `tokenizers` as Unicode's White_Space."""
    if isinstance(node, list):
        return [_for_the_page(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("type") == "WhitespaceSplit":
        return {"type": "Split", "pattern": {"Regex": f"[{WHITE_SPACE}]+"}, "behavior": "Removed", "invert": False}
    return {key: _for_the_page(value) for key, value in node.items()}


def _own_texts(hf, most: int = 200) -> list[str]:
    """Texts with the tokenizer's own special and language tokens at the start, inside, at the end and glued on."""
    own = [str(t) for t in hf.all_special_tokens] + list(getattr(hf, "lang_token_to_id", {}))
    own += [t for t in getattr(hf, "encoder", {}) if re.fullmatch(CODE, t)]
    return [f"{t} Wo ist {t} der Bahnhof? {t}" for t in own[:most]] + [f"{t}x x{t}" for t in own[:most]]


def _converted(hf, name: str):
    """A sentencepiece tokenizer with its own vocab.json as a `tokenizers` Tokenizer."""
    from tokenizers import AddedToken, processors
    from transformers.convert_slow_tokenizer import import_protobuf

    spm_file = getattr(hf, "spm_file", None) or (getattr(hf, "spm_files", None) or [None])[0]
    if spm_file is None or not isinstance(getattr(hf, "encoder", None), dict):
        raise CheckpointError(
            f"{name}: its tokenizer ({type(hf).__name__}) has neither a tokenizer.json nor a sentencepiece model with "
            "a vocab.json, so the page has no tokenizer for it"
        )
    proto = import_protobuf().ModelProto()
    with open(spm_file, "rb") as f:
        proto.ParseFromString(f.read())
    converted = _converter(hf, proto, _vocab(proto, hf, name)).converted()
    converted.add_special_tokens([AddedToken(str(t), normalized=False, special=True) for t in hf.all_special_tokens])
    around = hf.build_inputs_with_special_tokens([-1])  # the special ids before and after a text's pieces
    at = around.index(-1)
    names = {i: converted.id_to_token(i) for i in around if i != -1}
    converted.post_processor = processors.TemplateProcessing(
        single=[*(names[i] for i in around[:at]), "$A", *(names[i] for i in around[at + 1 :])],
        special_tokens=[(t, i) for i, t in names.items()],
    )
    return converted


def _vocab(proto, hf, name: str) -> list[tuple[str, float]]:
    """(entry, score) at each id the tokenizer gives, the entries not marked yet (_converter marks them)."""
    ids: dict[str, int] = hf.encoder
    lang: dict[str, int] = getattr(hf, "lang_token_to_id", {})
    if sorted([*ids.values(), *lang.values()]) != list(range(len(ids) + len(lang))):
        raise CheckpointError(f"{name}: its vocab.json and language tokens do not number 0, 1, 2, ... without gaps")
    normal = {p.piece: p.score for p in proto.pieces if p.type == 1}
    missing = [piece for piece in normal if piece not in ids]
    if missing:
        raise CheckpointError(
            f"{name}: {len(missing)} pieces of its sentencepiece model are not in its vocab.json (such as "
            f"{missing[0]!r}), which transformers reads as <unk> and a tokenizer.json cannot"
        )
    return [(piece, normal.get(piece, 0.0)) for piece in sorted([*ids, *lang], key=lambda t: ids.get(t, lang.get(t)))]


def _converter(hf, proto, vocab: list[tuple[str, float]]):
    """transformers' SpmConverter for sentencepiece model `proto` with `vocab`, and the marks for the rules above."""
    from tokenizers import Regex, decoders, normalizers, pre_tokenizers
    from transformers.convert_slow_tokenizer import SpmConverter

    normal = {p.piece for p in proto.pieces if p.type == 1}
    added = {str(t) for t in hf.all_special_tokens} | {p.piece for p in proto.pieces if p.type == 4}  # never modelled
    known = {char for piece in normal for char in piece} | {" ", "▁", CODE_MARK}
    unknown = f"[^{_char_class(known)}]"
    codes = hasattr(hf, "remove_language_code")  # Marian's rule
    runs = any(entry not in normal | added and all(c not in known for c in entry) for entry, _ in vocab)

    class VocabJsonConverter(SpmConverter):
        def __init__(self, original):
            self.original_tokenizer, self.proto = original, proto
            self.normalized = self.normalizer(proto).normalize_str

        def tokenizer(self, proto):
            return _model(proto, [(self.entry(e), s) for e, s in vocab], hf.convert_tokens_to_ids(str(hf.unk_token)))

        def entry(self, piece: str) -> str:
            """The text that a vocabulary entry matches after this normalizer."""
            if piece in normal or piece in added:
                return piece
            if codes and re.fullmatch(CODE, piece):
                return self.normalized(piece)[1:]  # as it starts a text, less the mark that pre_tokenizer removes
            if runs and all(c not in known for c in piece):
                return RUN_MARK + piece + RUN_MARK
            return UNREACHABLE + piece

        def normalizer(self, proto):
            steps = [normalizers.Replace(Regex(f"[{CODE_MARK}{RUN_MARK}{UNREACHABLE}]"), STAND_IN)]
            if codes:  # a known code keeps a mark unless a run reaches it anyway; an unknown one is a mark, <unk>
                for c in _codes(vocab):
                    marks = CODE_MARK * (1 if all(char not in known for char in c) else 2)
                    steps.append(normalizers.Replace(Regex(rf"\A{re.escape(c)}"), f"{marks}{c} "))
                steps.append(normalizers.Replace(Regex(LEADING_CODE), f"{CODE_MARK * 2} "))
            steps.append(super().normalizer(proto))
            if runs:  # a run of unknown characters, fenced at both ends
                edges = rf"(?<={unknown})(?!{unknown})|(?<!{unknown})(?={unknown})"
                steps.append(normalizers.Replace(Regex(edges), RUN_MARK))
            return normalizers.Sequence(steps)

        def pre_tokenizer(self, replacement, add_prefix_space):
            spm = super().pre_tokenizer(replacement, add_prefix_space)
            if not codes:
                return spm
            # a code starts its text without "▁": it was never part of the sentence
            return pre_tokenizers.Sequence([spm, pre_tokenizers.Split(Regex(f"▁{CODE_MARK}"), "removed")])

        def decoder(self, replacement, add_prefix_space):
            marks = decoders.Replace(Regex(f"[{CODE_MARK}{RUN_MARK}{UNREACHABLE}]"), "")
            spm = super().decoder(replacement, add_prefix_space)
            # the text stripped at both ends, as the transformers tokenizer's convert_tokens_to_string strips it
            return decoders.Sequence([marks, spm, decoders.Fuse(), decoders.Strip(" ", 10**4, 10**4)])

    return VocabJsonConverter(hf)


def _codes(vocab: list[tuple[str, float]]) -> list[str]:
    return sorted((t for t, _ in vocab if re.fullmatch(CODE, t)), key=len, reverse=True)


def _char_class(chars: set[str]) -> str:
    """A regex character class's body holding exactly `chars`, as ranges of \\x{...} code points."""
    points = sorted(ord(c) for c in chars)
    ranges: list[list[int]] = []
    for p in points:
        if ranges and p == ranges[-1][1] + 1:
            ranges[-1][1] = p
        else:
            ranges.append([p, p])
    return "".join(f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges)


def _model(proto, vocab: list[tuple[str, float]], unk_id: int):
    """SpmConverter.tokenizer's model on `vocab`: sentencepiece's unigram or BPE model, and its user-defined symbols as
    added tokens (its control symbols are special only where the transformers tokenizer says so)."""
    from tokenizers import AddedToken, Tokenizer
    from tokenizers.models import BPE, Unigram
    from transformers.convert_slow_tokenizer import generate_merges

    if proto.trainer_spec.model_type == 1:
        converted = Tokenizer(Unigram(vocab, unk_id=unk_id, byte_fallback=False))
    else:
        normal = {p.piece: p.score for p in proto.pieces if p.type == 1}
        ids = {piece: i for i, (piece, _) in enumerate(vocab)}
        merges = generate_merges({p: ids[p] for p in normal}, normal)
        converted = Tokenizer(BPE(ids, merges, unk_token=vocab[unk_id][0], fuse_unk=True, byte_fallback=False))
    converted.add_tokens([AddedToken(p.piece, normalized=False, special=False) for p in proto.pieces if p.type == 4])
    return converted
