"""Sentence and phrase pairs from the Ding German-English dictionary (Debian's trans-de-en, GPL-2.0-or-later).

Lines read `German :: English`. Sub-entries split by ' | ' line up on both sides, alternatives are split by '; ',
and {…} […] <…> are annotations.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

DING_PATH = Path("/usr/share/trans/de-en")
DING_MISSING = (
    f"The Ding dictionary was not found at {DING_PATH}. It comes with Debian's trans-de-en package:\n"
    "    sudo apt-get update && sudo apt-get install -y trans-de-en"
)
_ANNOTATION = re.compile(r"\s*(\{[^}]*\}|\[[^\]]*\]|<[^>]*>)")
_SPACES = re.compile(r"\s+")
_SENTENCE_END = ".!?"
_PLACEHOLDER = re.compile(r"\b(etw|jdm|jdn|jds|jd|sb|sth)\.(?:'s)?(?=\s|$)")  # "jdn. anrufen" :: "to call sb."


def clean(text: str) -> str:
    """Strip {…} [...] <…> annotations, keep the first '; ' alternative, and tidy the spacing."""
    text = _ANNOTATION.sub("", text)
    text = text.split("; ")[0]
    text = _SPACES.sub(" ", text).strip()
    return re.sub(r"\s+([.!?,;:])", r"\1", text)


def is_sentence(text: str) -> bool:
    return len(text) > 1 and text[0].isupper() and text[-1] in _SENTENCE_END and len(text.split()) >= 3


def ding_entries(path: Path = DING_PATH) -> Iterator[list[tuple[str, str]]]:
    """Each dictionary line as its cleaned, aligned (German, English) sub-entries.

    Lines where the ' | ' sub-entries do not line up on both sides are skipped.
    """
    if not Path(path).is_file():
        raise FileNotFoundError(DING_MISSING)
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("#") or " :: " not in line:
                continue
            german, english = line.rstrip("\n").split(" :: ", 1)
            de_parts, en_parts = german.split(" | "), english.split(" | ")
            if len(de_parts) == len(en_parts):
                yield [(clean(de), clean(en)) for de, en in zip(de_parts, en_parts)]


def extract_ding(path: Path = DING_PATH) -> list[tuple[str, str]]:
    """Sentence pairs from the Ding dictionary, one per aligned sub-entry, de-duplicated on the German side."""
    pairs, seen = [], set()
    for entry in ding_entries(path):
        for de, en in entry:
            if is_sentence(de) and is_sentence(en) and de not in seen:
                seen.add(de)
                pairs.append((de, en))
    return pairs


def extract_ding_phrases(path: Path = DING_PATH, exclude: set[str] = frozenset()) -> list[tuple[str, str]]:
    """The dictionary's word and phrase pairs (every aligned sub-entry that is not a sentence), cleaned like the
    sentences, with the placeholders jdn./etw./sb./sth. dropped. Whole lines that hold a sentence in `exclude` (the
    valid and test splits) are skipped, so nothing from those entries reaches training."""
    phrases = []
    for entry in ding_entries(path):
        if any(de in exclude for de, _ in entry):
            continue
        for de, en in entry:
            if is_sentence(de) or is_sentence(en):
                continue
            de, en = (_SPACES.sub(" ", _PLACEHOLDER.sub("", text)).strip() for text in (de, en))
            if de and en:
                phrases.append((de, en))
    return phrases


def split_of(german: str, test_per_mille: int = 52, valid_per_mille: int = 26) -> str:
    """A stable split by a hash of the German sentence: the same sentence always lands in the same split."""
    bucket = int(hashlib.sha256(german.encode("utf-8")).hexdigest(), 16) % 1000
    if bucket < test_per_mille:
        return "test"
    if bucket < test_per_mille + valid_per_mille:
        return "valid"
    return "train"


def split_pairs(pairs: Sequence[tuple[str, str]]) -> dict[str, list[tuple[str, str]]]:
    splits: dict[str, list[tuple[str, str]]] = {"train": [], "valid": [], "test": []}
    for de, en in pairs:
        splits[split_of(de)].append((de, en))
    return splits
