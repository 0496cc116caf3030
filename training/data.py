"""The German-English training data on disk: extracted once into data/de-en as TSV files, then read from there.

python -m training.data ding --out data/de-en          # extract and split the Ding corpus
python -m training.data libreoffice --out data/de-en   # extra training pairs from LibreOffice's help pages
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from .ding import DING_PATH, extract_ding, extract_ding_phrases, split_pairs
from .libreoffice import HELP_PATH, extract_help

logger = logging.getLogger(__name__)

DATA_DIR = Path("data/de-en")


def write_tsv(pairs: Sequence[tuple[str, str]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f"{src}\t{tgt}\n" for src, tgt in pairs)


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


def ding_split(split: str, data_dir: Path = DATA_DIR, source: Path = DING_PATH) -> list[tuple[str, str]]:
    """One split of the Ding corpus (train, valid, test or phrases), extracted on first use into data_dir."""
    path = Path(data_dir) / f"{split}.tsv"
    if not path.is_file():
        logger.info("extracting the Ding corpus into %s", data_dir)
        prepare_ding(data_dir, source)
    return read_tsv(path)


def prepare_libreoffice(out_dir: Path, source: Path | None = None) -> int:
    """Write the help's sentence pairs, minus every Ding valid and test sentence, to out_dir/libreoffice.tsv."""
    held_out = {de for name in ("valid", "test") for de, _ in ding_split(name, out_dir)}
    pairs = extract_help(source or HELP_PATH, exclude=held_out)
    write_tsv(pairs, Path(out_dir) / "libreoffice.tsv")
    return len(pairs)


def libreoffice_pairs(data_dir: Path = DATA_DIR, source: Path | None = None) -> list[tuple[str, str]]:
    """LibreOffice help sentence pairs (training only), extracted on first use into data_dir/libreoffice.tsv."""
    path = Path(data_dir) / "libreoffice.tsv"
    if not path.is_file():
        prepare_libreoffice(data_dir, source)
    return read_tsv(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.data", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ding = sub.add_parser("ding", help="extract the Ding pairs and write train/valid/test.tsv and phrases.tsv")
    ding.add_argument("--out", type=Path, default=DATA_DIR)
    ding.add_argument("--source", type=Path, default=DING_PATH)
    office = sub.add_parser("libreoffice", help="extract LibreOffice help sentence pairs into libreoffice.tsv")
    office.add_argument("--out", type=Path, default=DATA_DIR)
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
