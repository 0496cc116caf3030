"""Sentence scores as hallucination detectors: the AUROC of each score of attention_lab.trust.score on the labelled set
benchmarks/sets/hallucination.tsv (built by benchmarks/hallucination_set.py), for the bundled de-en model.

    python benchmarks/trust_detect.py [--method alti] [--write]   # --write: into benchmarks/RESULTS.md's trust block
    python benchmarks/trust_detect.py --quick                     # 10 rows of each group: that it runs

Needs scikit-learn (roc_auc_score), pinned in tests/requirements.txt.

Each row's translation is forced through the model (score(pipeline, src_ids, tokens, method)) and every sentence score
in SCORES is read from the result; a score with a value per decoder layer (Wass-to-Unif, Wass-to-Data) gives one
column per layer ("wass_to_unif L1", ...). Each score has its reading: "lower" = more suspicious for mean log p (a
hallucination is expected to be unlikely), the source share (ALTI+: written from the prefix) and coverage (source
words left unread); "higher" = more suspicious for Guerreiro et al. 2023's distances (attention far from uniform, or
from correct translations'). AUROC is computed with a "lower" score negated, so 1.0 means every hallucinated row
scores on the suspicious side of every other row, 0.5 is chance, and below 0.5 the score points the wrong way.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.hallucination_set import COPY, HIGH, LOW, SET_PATH, Row, read_set

# score name -> its reading: "lower" or "higher" = more suspicious
SCORES = {
    "mean_logp": "lower",
    "source_share": "lower",
    "coverage": "lower",
    "wass_to_unif": "higher",  # one value per decoder layer
    "wass_to_data": "higher",  # one value per decoder layer
    "wass_combo": "higher",
}

# comparison -> which rows it takes; the label of each row is its own
COMPARISONS: dict[str, Callable[[Row], bool]] = {
    "reference vs detached": lambda r: r.group in ("reference", "detached"),
    "model: in-domain kept vs out-of-domain hallucinated": lambda r: (
        r.group == "model" and (r.label == 0 if r.kind == "in-domain" else r.label == 1)
    ),
    "model: every output, by the rule": lambda r: r.group == "model",
    "all rows": lambda r: True,
}

# Dale et al. 2023 (ACL), Table 1, ROC AUC x 100 as their released notebook prints it
# (facebookresearch/stopes, demo/alti/detecting_hallucinations/experiments/02_Detection_analysis.ipynb)
DALE_2023 = {
    "Seq-Logprob (mean log p)": (82.98, 93.48),
    "ALTI+ source contribution": (84.92, 98.66),
    "LaBSE similarity (external)": (91.72, 98.47),
    "XNLI (external)": (90.92, 98.67),
    "COMET-QE (external)": (70.17, 66.10),
}


def auroc(labels: Sequence[int], values: Sequence[float], lower_is_suspicious: bool = True) -> float:
    """Area under the ROC curve of `values` as a detector of label 1; NaN when only one label is present."""
    from sklearn.metrics import roc_auc_score

    if len(set(labels)) < 2:
        return math.nan
    return float(roc_auc_score(list(labels), [-v if lower_is_suspicious else v for v in values]))


def reading(column: str) -> str:
    """The reading of a column: its score's ("wass_to_unif L2" reads as "wass_to_unif")."""
    return SCORES[column.split(" ")[0]]


def evaluate(rows: Sequence[Row], values: Sequence[dict[str, float]]) -> dict[tuple[str, str], float]:
    """AUROC per (comparison, column); values[i] holds row i's sentence scores by column, every row the same."""
    results = {}
    for comparison, takes in COMPARISONS.items():
        picked = [i for i, row in enumerate(rows) if takes(row)]
        labels = [rows[i].label for i in picked]
        for column in values[0]:
            results[comparison, column] = auroc(labels, [values[i][column] for i in picked], reading(column) == "lower")
    return results


def columns(result) -> dict[str, float]:
    """A scored translation's sentence scores by column: one per score, or one per decoder layer ("... L1")."""
    found = {}
    for name in SCORES:
        value = getattr(result, name)
        if isinstance(value, list):
            found.update({f"{name} L{layer}": float(v) for layer, v in enumerate(value, 1)})
        else:
            found[name] = float(value)
    return found


def forced_scorer(
    pipeline, method: str = "alti", score: Callable | None = None, targets: Callable | None = None
) -> Callable[[Row], dict[str, float]]:
    """A row's sentence scores from `score` (by default attention_lab.trust.score.score), the translation forced
    through the model: score(pipeline, source ids, translation ids with the end token last, method=method). The
    translation's ids are `targets`(pipeline, text), by default the trust feature's target_ids (the model's target
    side)."""
    from attention_lab.trust.messages import target_ids  # the translation as the model's target side reads it
    from attention_lab.trust.score import score as trust_score

    score, targets = score or trust_score, targets or target_ids
    tokenizer = pipeline.tokenizer

    def scores(row: Row) -> dict[str, float]:
        return columns(score(pipeline, tokenizer.encode(row.source), targets(pipeline, row.translation), method=method))

    return scores


def sizes(rows: Iterable[Row]) -> dict[str, tuple[int, int]]:
    """Per comparison: (rows labelled 0, rows labelled 1)."""
    rows = list(rows)
    return {
        c: (sum(takes(r) and r.label == 0 for r in rows), sum(takes(r) and r.label == 1 for r in rows))
        for c, takes in COMPARISONS.items()
    }


def set_note(rows: Sequence[Row]) -> str:
    """What the set holds and the rule that labels the model's outputs, with its counts per input."""
    kinds = sorted({r.kind for r in rows if r.group == "model"})
    per_kind = ", ".join(
        f"{k} {sum(r.kind == k and r.label == 0 for r in rows)}/{sum(r.kind == k and r.label == 1 for r in rows)}"
        for k in kinds
    )
    return (
        "The set (benchmarks/hallucination_set.py, seed 0, sources from the held-out Ding test split): reference "
        "pairs (a source with its own reference, 0) and detached pairs (the same sources, each with another test "
        "reference that shares no content word with it, 1); and the model's greedy outputs, labelled by a rule: "
        f"chrF against the unperturbed source's reference ≥ {HIGH:g} gives 0; chrF < {LOW:g} with chrF against the "
        f"input < {COPY:g} (not a copy) gives 1; the rest is dropped. Model rows kept, 0/1 by input: {per_kind}."
    )


WASS_NOTE = (
    "Wass-to-Unif, Wass-to-Data and Wass-Combo (Guerreiro et al. 2023, ACL; attention_lab/trust/wasserstein.py): per "
    "decoder layer, the source attention mass (cross-attention, mean over heads, then over the steps) against the "
    "uniform distribution (0/1 cost: the total variation) and against correct translations (the mean of the 4 "
    "smallest distances, tokens at relative positions on [0, 1]): the Ding valid split's 487 reference translations, "
    "none of them in this set (attention_lab/trust/reference-de-en.npz, built by benchmarks/wass_reference.py). "
    "Wass-Combo reads the last layer: its Wass-to-Data, or its Wass-to-Unif rescaled onto Wass-to-Data's range "
    "once that reaches the valid split's 99.9th percentile."
)

DALE_NOTE = (
    'For context, other data: Dale et al. 2023 (ACL, "Detecting and Mitigating Hallucinations in Machine '
    'Translation: Model Internal Workings Alone Do Well, Sentence Similarity Even Better"), ROC AUC × 100 on '
    "Guerreiro et al. 2023's 3,415 human-annotated translations of a WMT18 de-en Transformer (as their released "
    'notebook prints it); "any" = any hallucination (repetition, strong or full detachment) against the rest, '
    '"fully detached" = full detachment against the rest. Their set holds natural hallucinations of a larger '
    "model, ours forced and provoked ones of a small one: compare at most the order of the detectors."
)


def table(rows: Sequence[Row], results: dict[tuple[str, str], float] | None, method: str) -> str:
    """The Markdown block for RESULTS.md: the AUROC table (or why it is missing), the set, the rule and Dale et
    al.'s numbers."""
    title = (
        f"Sentence scores as hallucination detectors (`python benchmarks/trust_detect.py --write`, method {method}): "
        "AUROC on benchmarks/sets/hallucination.tsv for the bundled de-en model, each score read on its suspicious "
        "side (1.0: each hallucinated row there beyond each other row; 0.5: chance; below 0.5: the wrong way). L1, L2, "
        "... are the decoder layers, from the embeddings up. The rows (0 / 1) of each comparison are in its header."
    )
    lines = [title, ""]
    if results is None:
        lines.append("Not measured yet: the scores come from attention_lab.trust.score.")
    else:
        counts = sizes(rows)
        names = list(dict.fromkeys(column for _, column in results))
        lines += [
            "| score | suspicious when | "
            + " | ".join(f"{c} ({counts[c][0]} / {counts[c][1]})" for c in COMPARISONS)
            + " |",
            "|---|---|" + "---|" * len(COMPARISONS),
        ]
        for name in names:
            cells = " | ".join(f"{results[comparison, name]:.3f}" for comparison in COMPARISONS)
            lines.append(f"| {name} | {reading(name)} | {cells} |")
    lines += [
        "",
        set_note(rows),
        "",
        WASS_NOTE,
        "",
        DALE_NOTE,
        "",
        "| Dale et al. 2023 detector | any | fully detached |",
        "|---|---|---|",
    ]
    lines += [f"| {name} | {any_:.2f} | {full:.2f} |" for name, (any_, full) in DALE_2023.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", type=Path, default=SET_PATH)
    parser.add_argument(
        "--method", default="alti", help="how the source share is computed (alti or an /attribute method)"
    )
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    parser.add_argument("--quick", action="store_true", help="10 rows of each group, spread over it")
    args = parser.parse_args(argv)
    import torch

    from benchmarks.results import put_block
    from transformer import bundled, load_pretrained

    torch.set_num_threads(1)
    rows = read_set(args.set)
    if args.quick:
        groups = [[r for r in rows if r.group == g] for g in ("reference", "detached", "model")]
        rows = [r for group in groups for r in group[:: max(1, len(group) // 10)][:10]]  # spread over each group
    scorer = forced_scorer(load_pretrained(str(bundled("de-en"))), args.method)
    values = [scorer(row) for row in rows]
    block = table(rows, evaluate(rows, values), args.method)
    print(block)
    if args.write and not args.quick:
        put_block("trust", block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
