"""A user's input, checked before anything is decoded: a clear message for what cannot be used, never a stack trace.

Messages may reach the page as HTML (gradio's toasts render it), so whatever the user sent is quoted and escaped.
"""

from __future__ import annotations

import html
import string
import unicodedata

from transformer import Seq2SeqPipeline, Seq2SeqTokenizer


class InputError(ValueError):
    """Input the app cannot use, with a message meant for the person who sent it."""


def check_source(pipeline: Seq2SeqPipeline, text: str | None) -> tuple[list[int], str]:
    """Source ids for `text`, and a notice for the user; raises InputError with a clear message for unusable input."""
    if text is None or is_blank(text):
        raise InputError("Type a source text first: it is empty.")
    tokenizer = pipeline.tokenizer
    unknown = tokenizer.unknown_characters(text)
    notice = ""
    if unknown:
        names = ", ".join(describe_char(c) for c in unknown[:10]) + (" …" if len(unknown) > 10 else "")
        alphabet = known_characters(tokenizer)
        if alphabet:  # a character-level model has no use for <unk>: ask for the text it can read
            raise InputError(f"This model only knows {alphabet}; remove {names}.")
        notice = f"Not in the vocabulary (read as <unk>): {names}. "
    full = tokenizer.encode(text)
    ids = pipeline.truncate(full)
    if len(ids) < len(full):
        notice += f"The source was {len(full)} tokens; only the first {len(ids) - 1} are used."
    return ids, notice.strip()


def known_characters(tokenizer: Seq2SeqTokenizer) -> str:
    """The alphabet of a character-level model, in words where it is a familiar one; "" for other models."""
    if not tokenizer.is_character_level:
        return ""
    markers = {tokenizer.pad_id, tokenizer.bos_id, tokenizer.eos_id, tokenizer.unk_id}
    chars = sorted(piece for piece, i in tokenizer.get_vocab().items() if i not in markers)
    if any(len(c) != 1 for c in chars):  # a word-level vocabulary
        return ""
    if set(chars) == set(string.ascii_lowercase + string.digits):
        return "lowercase letters and digits"
    if len(chars) <= 40 and all(c.isalnum() for c in chars):
        return "the characters " + "".join(chars)
    return f"the {len(chars)} characters of its vocabulary"


def as_int(value: object) -> int | None:
    """A whole number the user sent (5, 5.0 or "5"), or None for anything else."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() else None


def quoted(value: object, limit: int = 60) -> str:
    """A value the user sent, for an error message: quoted, cut short, and with markup escaped (toasts render HTML)."""
    text = repr(value)
    return html.escape(text if len(text) <= limit else text[:limit] + "…", quote=False)


def describe_char(char: str) -> str:
    """A character named so that any reader can tell what it is, without printing markup or invisible characters."""
    code = f"U+{ord(char):04X}"
    name = unicodedata.name(char, code).lower()
    if char.isalnum():
        return f"'{char}' ({name})"
    return f"{name} ({code})" if name != code.lower() else code


def is_blank(text: str) -> bool:
    """Nothing visible: only white space, control or format characters (such as zero-width spaces)."""
    return all(c.isspace() or unicodedata.category(c) in ("Cc", "Cf", "Zs", "Zl", "Zp") for c in text)
