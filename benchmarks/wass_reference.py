"""Build attention_lab/trust/reference-de-en.npz: the correct translations that Wass-to-Data measures against for the
bundled de-en model (attention_lab.trust.reference), and each decoder layer's Wass-Combo rule.

    python -m training.data ding              # writes data/de-en/valid.tsv (the held-out Ding valid split)
    python benchmarks/wass_reference.py       # about a minute on one thread

Which translations: every pair of the Ding valid split (487), held out of training like the test split and apart from
it (benchmarks/sets/hallucination.tsv draws its sources from the test split only; a source in both stops the build).
Each pair's reference translation is forced through the model (attention_lab.trust.score.forced, as /score forces a
pasted one) and its source attention mass per decoder layer kept (float32). Nothing is sampled: the same split and
weights give the same file. Pairs longer than /score reads (MAX_SOURCE_TOKENS source tokens, MAX_TRANSLATION target
tokens) are left out. Each layer's Wass-Combo rule comes from the set itself: every member's Wass-to-Unif, and its
Wass-to-Data against the others (attention_lab.trust.wasserstein.ComboRule.fit).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from attention_lab.trust.reference import FILES, Reference, save, weights_of
from attention_lab.trust.wasserstein import ComboRule, source_mass, to_unif
from benchmarks.hallucination_set import MAX_SOURCE_TOKENS, SET_PATH, read_pairs, read_set

VALID_SPLIT = REPO / "data" / "de-en" / "valid.tsv"  # python -m training.data ding


def build(pipeline, pairs: list[tuple[str, str]]) -> Reference:
    """The reference set of `pipeline` from (source, reference translation) pairs, in their order."""
    import numpy as np

    from attention_lab.checks import InputError
    from attention_lab.trust.messages import target_ids
    from attention_lab.trust.score import forced

    model, masses, lengths = pipeline.model, [], []
    for source, translation in pairs:
        src_ids = pipeline.tokenizer.encode(source)
        try:
            tokens = target_ids(pipeline, translation)
        except InputError:
            continue
        if len(src_ids) > MAX_SOURCE_TOKENS:
            continue
        _, cross = forced(model, src_ids, tokens, model.config.max_new_tokens)
        masses.append(source_mass(cross).astype(np.float32).astype(np.float64))  # as the file keeps it
        lengths.append(len(tokens))
    draft = Reference(masses, np.array(lengths), [], weights_of(pipeline.folder))
    rules = []
    for layer in range(len(masses[0])):
        unif = [to_unif(m[layer]) for m in masses]
        data = [draft.to_data(m, n, leave_out=i)[layer] for i, (m, n) in enumerate(zip(masses, lengths))]
        rules.append(ComboRule.fit(unif, data))
    return Reference(masses, draft.lengths, rules, draft.weights)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", type=Path, default=VALID_SPLIT)
    parser.add_argument("--out", type=Path, default=FILES[0])
    args = parser.parse_args(argv)
    import torch

    from transformer import bundled, load_pretrained

    torch.set_num_threads(1)
    if not args.split.is_file():
        print(f"{args.split} is missing: run `python -m training.data ding` first", file=sys.stderr)
        return 1
    pairs = read_pairs(args.split)
    shared = {source for source, _ in pairs} & {row.source for row in read_set(SET_PATH)}
    if shared:
        print(f"{len(shared)} sources are also in {SET_PATH.name}, e.g. {min(shared)!r}", file=sys.stderr)
        return 1
    start = time.perf_counter()
    reference = build(load_pretrained(str(bundled("de-en"))), pairs)
    save(reference, args.out)
    print(
        f"{len(reference.masses)} of {len(pairs)} pairs -> {args.out} ({args.out.stat().st_size / 1000:.0f} kB, "
        f"{time.perf_counter() - start:.0f} s)"
    )
    for layer, rule in enumerate(reference.rules, 1):
        print(f"layer {layer}: {rule}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
