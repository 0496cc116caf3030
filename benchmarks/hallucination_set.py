"""Build benchmarks/sets/hallucination.tsv: a labelled set on which sentence scores are judged as hallucination
detectors for the bundled de-en model (benchmarks/trust_detect.py reads it).

    python -m training.data ding                  # writes data/de-en/test.tsv (the held-out Ding test split)
    python benchmarks/hallucination_set.py        # rebuilds the set from it: same split and seed, same rows

Every row is a German source, an English translation, a label (1 hallucinated, 0 not) and what the label rests on.
All sources come from the test split, which training never saw. Three groups:

- reference (label 0): a test source with its own reference translation.
- detached (label 1): the same sources, each with another test sentence's reference forced on it; the other sentence
  is drawn (seeded) among those whose reference shares no content word (CONTENT_MIN_LETTERS letters or more, not in
  STOPWORDS, lower-cased) with this source or with its own reference. Each source is in both groups, so the two
  differ only in the translation.
- model: the model's own greedy outputs, on unperturbed test sources (kind "in-domain") and on inputs pushed out of
  its domain (PERTURBATIONS: words shuffled, a word repeated REPEATS times, the English reference fed as the source,
  all capitals, three sources run together, a string of digit groups). Each output is labelled by this rule, never
  by judgement per row (label_output):
    chrF (sacrebleu, against the reference of the unperturbed source; for run-together sources their references run
    together, for English the reference itself, for digits the digits) >= HIGH           -> 0, not hallucinated;
    chrF < LOW and chrF against the input < COPY (the output does not merely copy it)  -> 1, hallucinated;
    anything else (LOW <= chrF < HIGH, a copy of the input, an empty output)            -> dropped.
  The rule applies to the in-domain outputs too: they are the group's in-domain rows, mostly negatives.

Rows whose source takes more than MAX_SOURCE_TOKENS tokens or whose translation takes more than MAX_TARGET_TOKENS
(end token included) are left out: /score reads no more. The model's outputs are re-encoded from their text by the
harness, as any pasted translation is.
"""

from __future__ import annotations

import argparse
import csv
import random
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

TEST_SPLIT = REPO / "data" / "de-en" / "test.tsv"  # python -m training.data ding
SET_PATH = Path(__file__).resolve().parent / "sets" / "hallucination.tsv"  # data/ is ignored: the corpus
COLUMNS = ("group", "kind", "source", "translation", "label", "basis")
GROUPS = ("reference", "detached", "model")
SEED = 0
PAIRS = 120  # test sources in the reference group, and the same ones in the detached group
IN_DOMAIN = 75  # unperturbed test sources decoded in the model group (before the rule drops some)
PER_KIND = 20  # test sources decoded per perturbation in the model group
LOW, HIGH, COPY = 20.0, 35.0, 50.0  # chrF thresholds of label_output
REPEATS = 8
MAX_SOURCE_TOKENS, MAX_TARGET_TOKENS = 64, 128
CONTENT_MIN_LETTERS = 3
PERTURBATIONS = ("shuffled", "repeated", "english", "capitals", "run-together", "digits")
_STOPWORDS = """the and for are but not you your yours she her hers his him they them their theirs our ours its this that these
    those there here what which who whom whose when where why how all any both each few more most other some such
    only own same than too very can will just don should now was were been being have has had having does did doing
    would could might must shall may into onto from with without about above below over under again further then once
    off out upon also one two yes"""
STOPWORDS = frozenset(_STOPWORDS.split())


@dataclass(frozen=True)
class Row:
    group: str  # "reference", "detached" or "model"
    kind: str  # what the source is: "test" (reference, detached), "in-domain" or a perturbation (model)
    source: str
    translation: str
    label: int  # 1 hallucinated, 0 not
    basis: str  # what the label rests on


def content_words(text: str) -> set[str]:
    """Lower-cased words of CONTENT_MIN_LETTERS letters or more that are not stop words."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    return {w for w in words if len(w) >= CONTENT_MIN_LETTERS and w not in STOPWORDS}


def chrf(hypothesis: str, reference: str) -> float:
    import sacrebleu

    return sacrebleu.sentence_chrf(hypothesis, [reference]).score


def label_output(output: str, reference: str, source: str) -> tuple[int | None, str]:
    """The rule for the model's own outputs (see the module's docstring): (label or None when dropped, its basis)."""
    if not output.strip():
        return None, "empty output"
    to_reference, to_source = chrf(output, reference), chrf(output, source)
    basis = f"chrF {to_reference:.1f} vs reference, {to_source:.1f} vs input"
    if to_reference >= HIGH:
        return 0, f"{basis}: >= {HIGH:g}"
    if to_reference < LOW and to_source < COPY:
        return 1, f"{basis}: < {LOW:g}, not a copy (< {COPY:g})"
    return None, f"{basis}: {'a copy' if to_source >= COPY else 'between the thresholds'}"


def usable(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Test pairs with one reading (no "a / b" alternatives) of 4 to 20 words, in a fixed order."""
    return [
        (de, en)
        for de, en in pairs
        if "/" not in de + en and 4 <= len(de.split()) <= 20 and 4 <= len(en.split()) <= 20 and "(" not in de + en
    ]


def detached_partner(i: int, pairs: list[tuple[str, str]], rng: random.Random) -> int:
    """The index of another pair whose reference shares no content word with pair i's source or reference."""
    own = content_words(pairs[i][0]) | content_words(pairs[i][1])
    candidates = [j for j, (_, en) in enumerate(pairs) if j != i and not own & content_words(en)]
    return rng.choice(candidates)


def pair_rows(pairs: list[tuple[str, str]], chosen: list[int], rng: random.Random) -> list[Row]:
    rows = []
    for i in chosen:
        de, en = pairs[i]
        j = detached_partner(i, pairs, rng)
        rows.append(Row("reference", "test", de, en, 0, "its own reference"))
        rows.append(
            Row("detached", "test", de, pairs[j][1], 1, "another test sentence's reference, no content word shared")
        )
    return rows


def perturb(kind: str, pairs: list[tuple[str, str]], i: int, rng: random.Random) -> tuple[str, str]:
    """(input, reference) for pair i pushed out of the model's domain by `kind`."""
    de, en = pairs[i]
    words = de.split()
    if kind == "in-domain":
        return de, en
    if kind == "shuffled":
        rng.shuffle(words)
        return " ".join(words), en
    if kind == "repeated":
        at = rng.randrange(len(words))
        return " ".join(words[:at] + [words[at]] * REPEATS + words[at + 1 :]), en
    if kind == "english":
        return en, en
    if kind == "capitals":
        return de.upper(), en
    if kind == "run-together":
        more = [pairs[(i + k) % len(pairs)] for k in (1, 2)]
        return " ".join([de, *(p[0] for p in more)]), " ".join([en, *(p[1] for p in more)])
    if kind == "digits":
        digits = " ".join(str(rng.randrange(10 ** rng.randint(1, 5))) for _ in range(rng.randint(4, 9)))
        return digits, digits
    raise ValueError(f"unknown perturbation {kind!r}")


def fits(pipeline, source: str, translation: str) -> bool:
    """Whether /score could read the pair: at most MAX_SOURCE_TOKENS and MAX_TARGET_TOKENS tokens, end included."""
    tok = pipeline.tokenizer
    return len(tok.encode(source)) <= MAX_SOURCE_TOKENS and len(tok.encode(translation)) <= MAX_TARGET_TOKENS


def model_rows(pipeline, pairs: list[tuple[str, str]], chosen: list[int], rng: random.Random) -> tuple[list, Counter]:
    """The model group's rows, and how many outputs of each kind the rule labelled 0, 1 or dropped."""
    rows, counts = [], Counter()
    kinds = ["in-domain"] * IN_DOMAIN + [kind for kind in PERTURBATIONS for _ in range(PER_KIND)]
    for kind in dict.fromkeys(kinds):
        inputs = [perturb(kind, pairs, i, rng) for i, k in zip(chosen, kinds) if k == kind]
        inputs = [(src, ref) for src, ref in inputs if len(pipeline.tokenizer.encode(src)) <= MAX_SOURCE_TOKENS]
        outputs = pipeline.generate([src for src, _ in inputs])
        for (src, ref), out in zip(inputs, outputs):
            label, basis = label_output(out, ref, src)
            if label is not None and not fits(pipeline, src, out):
                label, basis = None, "too long for /score"
            counts[kind, "dropped" if label is None else label] += 1
            if label is not None:
                rows.append(Row("model", kind, src, out, label, basis))
    return rows, counts


def build(pipeline, test_pairs: list[tuple[str, str]], seed: int = SEED) -> tuple[list[Row], Counter]:
    """The whole set from the test split, and the rule's counts per kind (the same rows for the same split and seed)."""
    import torch

    torch.manual_seed(seed)
    rng = random.Random(seed)
    pairs = usable(test_pairs)
    order = rng.sample(range(len(pairs)), len(pairs))
    needed = PAIRS + IN_DOMAIN + PER_KIND * len(PERTURBATIONS)
    if len(order) < needed:
        raise ValueError(f"the test split has {len(order)} usable pairs; the set needs {needed}")
    chosen = [i for i in order[:PAIRS] if fits(pipeline, *pairs[i])]
    rows = pair_rows(pairs, chosen, rng)
    rows = [r for r in rows if fits(pipeline, r.source, r.translation)]
    more, counts = model_rows(pipeline, pairs, order[PAIRS:needed], rng)
    return rows + more, counts


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """(German, English) pairs of a split file as training.data writes it: one tab-separated pair per line."""
    with open(path, encoding="utf-8") as f:
        return [tuple(line.rstrip("\n").split("\t", 1)) for line in f if "\t" in line]


def write_set(rows: list[Row], path: Path = SET_PATH) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        out = csv.writer(f, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        out.writerow(COLUMNS)
        out.writerows((r.group, r.kind, r.source, r.translation, r.label, r.basis) for r in rows)


def read_set(path: Path = SET_PATH) -> list[Row]:
    """The rows of a set file; a clear error on a malformed one."""
    with open(path, encoding="utf-8", newline="") as f:
        lines = list(csv.reader(f, delimiter="\t"))
    if not lines or tuple(lines[0]) != COLUMNS:
        raise ValueError(f"{path}: the first line must name the columns {', '.join(COLUMNS)}")
    rows = []
    for n, cells in enumerate(lines[1:], start=2):
        if len(cells) != len(COLUMNS) or cells[0] not in GROUPS or cells[4] not in ("0", "1"):
            raise ValueError(f"{path}, line {n}: expected {len(COLUMNS)} cells, a known group and a label 0 or 1")
        rows.append(Row(cells[0], cells[1], cells[2], cells[3], int(cells[4]), cells[5]))
    return rows


def counts_table(counts: Counter) -> str:
    kinds = sorted({k for k, _ in counts}, key=lambda k: ("in-domain", *PERTURBATIONS).index(k))
    lines = ["| input | 0 (chrF ≥ HIGH) | 1 (chrF < LOW, no copy) | dropped |", "|---|---|---|---|"]
    lines += [f"| {k} | {counts[k, 0]} | {counts[k, 1]} | {counts[k, 'dropped']} |" for k in kinds]
    return "\n".join(lines).replace("HIGH", f"{HIGH:g}").replace("LOW", f"{LOW:g}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=SET_PATH)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--split", type=Path, default=TEST_SPLIT, help="the Ding test split (training.data writes it)")
    args = parser.parse_args(argv)
    if not args.split.is_file():
        parser.error(f"{args.split} is missing: write it with `python -m training.data ding`")
    import torch

    from transformer import bundled, load_pretrained

    torch.set_num_threads(1)
    pipeline = load_pretrained(str(bundled("de-en")))
    rows, counts = build(pipeline, read_pairs(args.split), args.seed)
    write_set(rows, args.out)
    sizes = Counter((r.group, r.label) for r in rows)
    print(f"{len(rows)} rows -> {args.out}: " + ", ".join(f"{g} {lab}: {n}" for (g, lab), n in sorted(sizes.items())))
    print(counts_table(counts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
