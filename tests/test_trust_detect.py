"""The hallucination-detection harness (benchmarks/trust_detect.py) and its set (benchmarks/hallucination_set.py):
AUROC against known answers and a hand count, the committed set's shape, and the labelling rule on crafted cases."""

import math
import random
from itertools import product
from types import SimpleNamespace

import pytest

from benchmarks import hallucination_set as hs
from benchmarks import trust_detect as td


def hand_auroc(labels, values):
    """Share of (hallucinated, other) pairs where the hallucinated row scores lower; a tie counts half."""
    bad = [v for v, y in zip(values, labels) if y == 1]
    good = [v for v, y in zip(values, labels) if y == 0]
    wins = sum(1.0 if b < g else 0.5 if b == g else 0.0 for b, g in product(bad, good))
    return wins / (len(bad) * len(good))


def test_a_score_that_separates_perfectly_gives_one_and_its_reverse_zero():
    labels = [0, 0, 1, 1, 0, 1]
    values = [3.0, 4.0, 1.0, 2.0, 2.5, -1.0]  # every hallucinated row below every other
    assert td.auroc(labels, values) == 1.0
    assert td.auroc(labels, [-v for v in values]) == 0.0
    assert td.auroc(labels, values, lower_is_suspicious=False) == 0.0


def test_auroc_matches_a_hand_count_of_pairs():
    # hallucinated 0.1, 0.35, 0.5 against fine 0.4, 0.8: 0.5 > 0.4 is the one pair of six ranked wrong
    labels, values = [1, 0, 1, 0, 1], [0.1, 0.4, 0.35, 0.8, 0.5]
    assert td.auroc(labels, values) == pytest.approx(5 / 6)
    ties = [1, 0, 1, 0], [0.2, 0.2, 0.1, 0.3]  # 0.2 vs 0.2 counts half: (1 + 0.5 + 1 + 1) / 4
    assert td.auroc(*ties) == pytest.approx(3.5 / 4)
    rng = random.Random(1)
    for _ in range(20):
        labels = [rng.randint(0, 1) for _ in range(30)] + [0, 1]
        values = [float(rng.randint(0, 8)) for _ in labels]  # many ties
        assert td.auroc(labels, values) == pytest.approx(hand_auroc(labels, values))


def test_auroc_with_one_label_only_is_nan():
    assert math.isnan(td.auroc([1, 1, 1], [0.1, 0.2, 0.3]))


def rows_of(*specs):
    return [hs.Row(group, kind, f"src {i}", f"tgt {i}", label, "") for i, (group, kind, label) in enumerate(specs)]


def test_each_comparison_takes_its_own_rows():
    rows = rows_of(
        ("reference", "test", 0),
        ("detached", "test", 1),
        ("model", "in-domain", 0),
        ("model", "in-domain", 1),  # an in-domain hallucination: in "every output", not in "kept vs out-of-domain"
        ("model", "capitals", 1),
        ("model", "capitals", 0),  # a perturbed input the model still got right: likewise
    )
    # mean_logp separates the pairs and is reversed on the model's rows; source_share the other way round
    values = [
        {"mean_logp": 1.0, "source_share": 0.0, "coverage": 1.0},
        {"mean_logp": 0.0, "source_share": 1.0, "coverage": 1.0},
        {"mean_logp": 0.0, "source_share": 1.0, "coverage": 1.0},
        {"mean_logp": 2.0, "source_share": 0.5, "coverage": 1.0},
        {"mean_logp": 1.0, "source_share": 0.0, "coverage": 1.0},
        {"mean_logp": 3.0, "source_share": 0.0, "coverage": 1.0},
    ]
    results = td.evaluate(rows, values)
    assert results["reference vs detached", "mean_logp"] == 1.0
    assert results["reference vs detached", "source_share"] == 0.0
    kept = "model: in-domain kept vs out-of-domain hallucinated"
    assert results[kept, "mean_logp"] == 0.0 and results[kept, "source_share"] == 1.0
    # every model output: hallucinated 2.0, 1.0 against fine 0.0, 3.0 -> two of four pairs ranked right
    assert results["model: every output, by the rule", "mean_logp"] == 0.5
    assert results["all rows", "coverage"] == 0.5  # a constant score is chance
    assert td.sizes(rows)[kept] == (1, 1)


def test_the_harness_calls_the_score_with_ids_that_end_with_the_end_token():
    calls = []
    tokenizer = SimpleNamespace(encode=lambda text: [len(w) + 3 for w in text.split()] + [2])

    def score(pipeline, src_ids, tokens, method="alti"):
        calls.append((src_ids, tokens, method))
        return SimpleNamespace(mean_logp=-1.5, source_share=0.25, coverage=0.75, wass_to_unif=[0.3, 0.4],
                               wass_to_data=[0.02, 0.05], wass_combo=0.05)  # fmt: skip

    targets = lambda pipeline, text: tokenizer.encode(text)
    scorer = td.forced_scorer(SimpleNamespace(tokenizer=tokenizer), "occlusion", score=score, targets=targets)
    row = hs.Row("reference", "test", "Guten Morgen", "Good morning all", 0, "")
    assert scorer(row) == {"mean_logp": -1.5, "source_share": 0.25, "coverage": 0.75, "wass_to_unif L1": 0.3,
                           "wass_to_unif L2": 0.4, "wass_to_data L1": 0.02, "wass_to_data L2": 0.05,
                           "wass_combo": 0.05}  # fmt: skip
    assert calls == [([8, 9, 2], [7, 10, 6, 2], "occlusion")]


def test_a_distance_reads_higher_as_more_suspicious_in_each_layers_column():
    rows = rows_of(("reference", "test", 0), ("detached", "test", 1), ("reference", "test", 0), ("detached", "test", 1))
    # layer 1 far for the detached rows, layer 2 far for the references: the one right, the other the wrong way
    values = [{"wass_to_unif L1": u1, "wass_to_unif L2": u2} for u1, u2 in [(0.1, 0.9), (0.8, 0.2), (0.2, 0.7),
                                                                            (0.6, 0.3)]]  # fmt: skip
    results = td.evaluate(rows, values)
    assert results["reference vs detached", "wass_to_unif L1"] == 1.0
    assert results["reference vs detached", "wass_to_unif L2"] == 0.0
    block = td.table(rows, results, "alti")
    assert "| wass_to_unif L1 | higher | 1.000 | nan | nan | 1.000 |" in block


def test_the_committed_set_parses_and_holds_the_three_groups_with_both_labels():
    assert hs.SET_PATH.stat().st_size < 200_000
    rows = hs.read_set(hs.SET_PATH)
    groups = {g: [r for r in rows if r.group == g] for g in hs.GROUPS}
    assert {r.label for r in groups["reference"]} == {0} and {r.label for r in groups["detached"]} == {1}
    assert {r.label for r in groups["model"]} == {0, 1}
    assert all(100 <= len(g) <= 150 for g in groups.values()), {k: len(v) for k, v in groups.items()}
    assert {r.kind for r in groups["model"]} == {"in-domain", *hs.PERTURBATIONS}
    # the detached group has the reference group's sources, each with another test sentence's reference that shares
    # no content word with this source or its own reference
    own = {r.source: r.translation for r in groups["reference"]}
    assert sorted(r.source for r in groups["detached"]) == sorted(own)
    for r in groups["detached"]:
        assert r.translation != own[r.source]
        assert not hs.content_words(r.translation) & (hs.content_words(r.source) | hs.content_words(own[r.source]))


def test_a_malformed_set_is_a_clear_error(tmp_path):
    path = tmp_path / "set.tsv"
    path.write_text("\t".join(hs.COLUMNS) + "\nreference\ttest\tHallo\tHello\tyes\tits own reference\n")
    with pytest.raises(ValueError, match="line 2: .* a label 0 or 1"):
        hs.read_set(path)
    path.write_text("group\tsource\n")
    with pytest.raises(ValueError, match="must name the columns"):
        hs.read_set(path)


def test_the_rule_labels_crafted_outputs():
    reference = "The weather is fine today and we go for a walk."
    source = "Heute ist das Wetter schön und wir gehen spazieren."
    assert hs.label_output(reference, reference, source)[0] == 0  # the reference itself
    assert hs.label_output("The weather is fine today, we go walking.", reference, source)[0] == 0
    label, basis = hs.label_output("My uncle sold his yellow submarine in Boston.", reference, source)
    assert label == 1 and "not a copy" in basis
    label, basis = hs.label_output(source, reference, source)  # the input copied through: not a hallucination
    assert label is None and "a copy" in basis
    assert hs.label_output("   ", reference, source) == (None, "empty output")
    between = "The weather was bad yesterday, so nobody went out."
    assert hs.LOW <= hs.chrf(between, reference) < hs.HIGH
    assert hs.label_output(between, reference, source)[0] is None


def test_the_detached_partner_shares_no_content_word():
    pairs = [
        ("Der Hund bellt laut.", "The dog barks loudly."),
        ("Der Hund schläft.", "The dog is sleeping."),  # shares "dog"
        ("Die Sonne scheint.", "The sun is shining."),  # the only one sharing nothing with pair 0
        ("Ein lauter Tag.", "A loud day, loudly."),  # shares "loudly"
    ]
    rng = random.Random(0)
    assert {hs.detached_partner(0, pairs, rng) for _ in range(20)} == {2}


def test_perturbations_keep_what_they_promise():
    pairs = [("Wir gehen heute in den Park", "We go to the park today")] * 3
    rng = random.Random(0)
    shuffled, reference = hs.perturb("shuffled", pairs, 0, rng)
    assert sorted(shuffled.split()) == sorted(pairs[0][0].split()) and reference == pairs[0][1]
    repeated, _ = hs.perturb("repeated", pairs, 0, rng)
    assert len(repeated.split()) == len(pairs[0][0].split()) + hs.REPEATS - 1
    assert hs.perturb("english", pairs, 0, rng) == (pairs[0][1], pairs[0][1])
    digits, reference = hs.perturb("digits", pairs, 0, rng)
    assert digits == reference and digits.replace(" ", "").isdigit()
    together, references = hs.perturb("run-together", pairs, 0, rng)
    assert together.count("Park") == 3 and references.count("park") == 3
    with pytest.raises(ValueError, match="unknown perturbation"):
        hs.perturb("reversed", pairs, 0, rng)


@pytest.mark.slow
def test_the_set_rebuilds_to_the_committed_rows(tmp_path, ding):
    """From the Ding test split, extracted as `python -m training.data ding` does (tests/conftest.py's `ding`)."""
    split = ding / "test.tsv"
    assert hs.main(["--out", str(tmp_path / "set.tsv"), "--split", str(split)]) == 0
    assert hs.read_set(tmp_path / "set.tsv") == hs.read_set(hs.SET_PATH)
