"""Training data: the synthetic reversal task, the Ding German-English sentence pairs, and length-bucketed batches.

python -m transformer.data ding --out data/de-en          # extract and split the Ding corpus into TSV files
python -m transformer.data libreoffice --out data/de-en   # extra training pairs from LibreOffice's help pages
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import random
import re
import string
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

logger = logging.getLogger(__name__)

# Reversal ------------------------------------------------------------------------------------------------------------

REVERSAL_ALPHABET = string.ascii_lowercase + string.digits


def reversal_pairs(n: int, min_len: int = 1, max_len: int = 24, seed: int = 0) -> list[tuple[str, str]]:
    """n seeded random strings of lowercase letters and digits, each paired with its reverse."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        text = "".join(rng.choices(REVERSAL_ALPHABET, k=rng.randint(min_len, max_len)))
        pairs.append((text, text[::-1]))
    return pairs


# Ding ----------------------------------------------------------------------------------------------------------------

DING_PATH = Path("/usr/share/trans/de-en")
DING_MISSING = (
    f"The Ding dictionary was not found at {DING_PATH}. It comes with Debian's trans-de-en package:\n"
    "    sudo apt-get update && sudo apt-get install -y trans-de-en"
)
_ANNOTATION = re.compile(r"\s*(\{[^}]*\}|\[[^\]]*\]|<[^>]*>)")
_SPACES = re.compile(r"\s+")
_SENTENCE_END = ".!?"


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

    Lines read `German :: English`; sub-entries split by ' | ' line up on both sides (lines where they do not are
    skipped).
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


_PLACEHOLDER = re.compile(r"\b(etw|jdm|jdn|jds|jd|sb|sth)\.(?:'s)?(?=\s|$)")  # "jdn. anrufen" :: "to call sb."


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


def write_tsv(pairs: Sequence[tuple[str, str]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for src, tgt in pairs:
            f.write(f"{src}\t{tgt}\n")


def read_tsv(path: Path) -> list[tuple[str, str]]:
    with open(path, encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t", 1)) for line in f if "\t" in line]


def prepare_ding(out_dir: Path, source: Path = DING_PATH) -> dict[str, int]:
    """Extract, split and write train/valid/test.tsv (and the word/phrase pairs, phrases.tsv) under out_dir;
    returns the size of each."""
    splits = split_pairs(extract_ding(source))
    held_out = {de for name in ("valid", "test") for de, _ in splits[name]}
    splits["phrases"] = extract_ding_phrases(source, exclude=held_out)
    for name, pairs in splits.items():
        write_tsv(pairs, Path(out_dir) / f"{name}.tsv")
    return {name: len(pairs) for name, pairs in splits.items()}


def ding_split(split: str, data_dir: Path = Path("data/de-en"), source: Path = DING_PATH) -> list[tuple[str, str]]:
    """One split of the Ding corpus, extracted on first use into data_dir."""
    path = Path(data_dir) / f"{split}.tsv"
    if not path.is_file():
        logger.info("extracting the Ding corpus into %s", data_dir)
        prepare_ding(data_dir, source)
    return read_tsv(path)


def libreoffice_pairs(data_dir: Path = Path("data/de-en"), source: Path | None = None) -> list[tuple[str, str]]:
    """LibreOffice help sentence pairs (training only), extracted on first use into data_dir/libreoffice.tsv."""
    path = Path(data_dir) / "libreoffice.tsv"
    if not path.is_file():
        prepare_libreoffice(data_dir, source)
    return read_tsv(path)


def prepare_libreoffice(out_dir: Path, source: Path | None = None) -> int:
    """Write the help's sentence pairs, minus every Ding valid and test sentence, to out_dir/libreoffice.tsv."""
    from .libreoffice import HELP_PATH, extract_help

    held_out = {de for name in ("valid", "test") for de, _ in ding_split(name, out_dir)}
    pairs = extract_help(source or HELP_PATH, exclude=held_out)
    write_tsv(pairs, Path(out_dir) / "libreoffice.tsv")
    return len(pairs)


# Batching ------------------------------------------------------------------------------------------------------------


def token_batches(lengths: Sequence[int], max_tokens: int, shuffle: bool = True, seed: int = 0) -> Iterator[list[int]]:
    """Indices grouped into batches of similar length holding at most max_tokens (padded) tokens each.

    Sorting by length keeps padding low; with shuffle, examples of equal length and the batch order are shuffled
    (seeded), so every epoch sees different batches.
    """
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    if shuffle:
        rng.shuffle(order)
    order.sort(key=lambda i: lengths[i])  # stable: ties keep their shuffled order
    batches, batch, longest = [], [], 0
    for i in order:
        longest_if_added = max(longest, lengths[i])
        if batch and longest_if_added * (len(batch) + 1) > max_tokens:
            batches.append(batch)
            batch, longest_if_added = [], lengths[i]
        batch.append(i)
        longest = longest_if_added
    if batch:
        batches.append(batch)
    if shuffle:
        rng.shuffle(batches)
    yield from batches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m transformer.data", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ding = sub.add_parser("ding", help="extract the Ding pairs and write train/valid/test.tsv and phrases.tsv")
    ding.add_argument("--out", type=Path, default=Path("data/de-en"))
    ding.add_argument("--source", type=Path, default=DING_PATH)
    office = sub.add_parser("libreoffice", help="extract LibreOffice help sentence pairs into libreoffice.tsv")
    office.add_argument("--out", type=Path, default=Path("data/de-en"))
    office.add_argument("--source", type=Path, default=None, help="the help's root, holding de/ and en-US/")
    args = parser.parse_args(argv)
    try:
        if args.command == "ding":
            sizes = prepare_ding(args.out, args.source)
        else:
            sizes = {"libreoffice": prepare_libreoffice(args.out, args.source)}
    except FileNotFoundError as err:
        print(err, file=sys.stderr)
        return 1
    print(", ".join(f"{name}: {n} pairs" for name, n in sizes.items()) + f" -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
