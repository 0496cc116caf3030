"""Guerreiro et al. 2023's attention-based detectors (attention_lab.trust.wasserstein and .reference): each distance on
hand-made distributions with answers worked out by hand, Wass-Combo's rule, the de-en reference set, and /score's
sentence with a value per decoder layer."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch
from scipy.stats import wasserstein_distance

from attention_lab.messages import jsonable
from attention_lab.trust import reference as ref
from attention_lab.trust.wasserstein import (
    ComboRule,
    combo,
    distance,
    relative_positions,
    source_mass,
    to_data,
    to_unif,
)
from transformer import bundled, load_pretrained


def one_hot(n: int, i: int) -> np.ndarray:
    mass = np.zeros(n)
    mass[i] = 1.0
    return mass


def uniform(n: int) -> np.ndarray:
    return np.full(n, 1 / n)


def test_the_source_mass_is_the_mean_over_steps_of_each_layers_attention():
    cross = np.array([[[1.0, 0.0], [0.5, 0.5]], [[0.0, 1.0], [0.5, 0.5]]])  # (T=2, L=2, S=2)
    np.testing.assert_allclose(source_mass(cross), [[0.5, 0.5], [0.5, 0.5]])


def test_wass_to_unif_is_zero_for_uniform_and_one_minus_one_over_n_on_one_token():
    for n in (1, 2, 5, 17):
        assert to_unif(uniform(n)) == pytest.approx(0, abs=1e-12)
    # all the mass on the first of 4 tokens: ½ (|1 − ¼| + 3 |0 − ¼|) = ½ (¾ + ¾) = ¾ = 1 − 1/4
    assert to_unif(one_hot(4, 0)) == pytest.approx(0.75)
    # under the 0/1 cost every token is as far as any other: the last token's weight costs the same as the first's
    assert to_unif(one_hot(4, 3)) == pytest.approx(0.75)
    # half on each of the first two of 4: ½ (2 |½ − ¼| + 2 |0 − ¼|) = ½
    assert to_unif(np.array([0.5, 0.5, 0, 0])) == pytest.approx(0.5)


def test_wass_to_unif_on_two_tokens_is_the_librarys_distance_between_two_points_one_apart():
    """With two tokens, 0/1 cost and |x − y| between positions 0 and 1 are the same cost."""
    for p in (0.0, 0.2, 0.5, 0.9):
        mass = np.array([p, 1 - p])
        assert to_unif(mass) == pytest.approx(wasserstein_distance([0, 1], [0, 1], mass, [0.5, 0.5]))


def test_tokens_sit_at_the_centres_of_their_share_of_the_unit_interval():
    np.testing.assert_allclose(relative_positions(4), [1 / 8, 3 / 8, 5 / 8, 7 / 8])
    np.testing.assert_allclose(relative_positions(1), [0.5])


def test_the_distance_between_attention_masses_on_relative_positions():
    # all on the first of 4 tokens (at 1/8) against uniform over 4 (¼ at each of 1/8, 3/8, 5/8, 7/8): each quarter
    # moves to 1/8, ¼ (0 + 2/8 + 4/8 + 6/8) = ¼ · 12/8 = 3/8, which is (n − 1)/(2n) for n = 4
    assert distance(one_hot(4, 0), uniform(4)) == pytest.approx(3 / 8)
    assert distance(uniform(4), one_hot(4, 0)) == pytest.approx(3 / 8)
    assert distance(uniform(7), uniform(7)) == pytest.approx(0, abs=1e-12)
    # from one end to the other of 2 tokens: all the mass moves from ¼ to ¾
    assert distance(one_hot(2, 0), one_hot(2, 1)) == pytest.approx(0.5)
    # lengths differ, places compare: the middle of 3 tokens and the middle of 5 are both at ½; the end of 2 (¾)
    # and the third of 4 (5/8) are 1/8 apart
    assert distance(one_hot(3, 1), one_hot(5, 2)) == pytest.approx(0, abs=1e-12)
    assert distance(one_hot(2, 1), one_hot(4, 2)) == pytest.approx(1 / 8)


def test_wass_to_data_is_the_mean_of_the_k_smallest_distances():
    mass = one_hot(4, 0)
    references = [one_hot(4, 3), uniform(4), one_hot(4, 0)]  # at 6/8, 3/8 and 0 from it
    assert to_data(mass, references, k=1) == pytest.approx(0, abs=1e-12)  # a member of the set, against itself
    assert to_data(mass, references, k=2) == pytest.approx((0 + 3 / 8) / 2)
    assert to_data(mass, references, k=4) == pytest.approx((0 + 3 / 8 + 6 / 8) / 3)  # fewer than k: all of them
    with pytest.raises(ValueError, match="at least one reference"):
        to_data(mass, [])


def test_wass_combo_reads_wass_to_data_below_the_threshold_and_rescaled_wass_to_unif_from_it():
    rule = ComboRule(threshold=0.5, unif=(0.1, 0.6), data=(0.01, 0.11))
    assert combo(0.45, 0.03, rule) == 0.03  # below τ: Wass-to-Data as it is
    # from τ on: 0.01 + (0.5 − 0.1) · (0.11 − 0.01) / (0.6 − 0.1) = 0.01 + 0.4 · 0.2 = 0.09, whatever Wass-to-Data
    assert combo(0.5, 0.03, rule) == pytest.approx(0.09)
    assert combo(0.6, 0.0, rule) == pytest.approx(0.11)  # the greatest Wass-to-Unif lands on the greatest Wass-to-Data
    assert combo(0.85, 0.0, rule) == pytest.approx(0.16)  # beyond every correct translation: beyond their range too


def test_the_combo_rule_is_fitted_on_correct_translations():
    unif = np.arange(1001) / 1000  # the 99.9th percentile of 0, 0.001, ..., 1 is 0.999
    rule = ComboRule.fit(unif, np.linspace(0.02, 0.3, 1001))
    assert rule.threshold == pytest.approx(0.999)
    assert rule.unif == (0.0, 1.0) and rule.data == pytest.approx((0.02, 0.3))


@pytest.fixture(scope="module")
def de_en():
    return load_pretrained(str(bundled("de-en")))


def test_the_de_en_reference_set_is_small_and_belongs_to_the_bundled_weights(de_en):
    path = ref.FILES[0]
    assert path.stat().st_size < 150_000
    reference = ref.reference_for(de_en)
    assert reference is not None and reference.weights == ref.weights_of(de_en.folder)
    layers = de_en.model.config.n_decoder_layers
    assert len(reference.masses) == len(reference.lengths) == 487 and len(reference.rules) == layers
    for mass in reference.masses[:50]:
        assert mass.shape[0] == layers and np.allclose(mass.sum(axis=1), 1, atol=1e-5)
    # a member of the set against the set (k = 1) is at 0, in every layer
    for layer in range(layers):
        assert to_data(reference.masses[7][layer], [m[layer] for m in reference.masses], k=1) == pytest.approx(0)
    # and left out of its own comparison, it is not
    assert min(reference.to_data(reference.masses[7], int(reference.lengths[7]), leave_out=7)) > 0


def test_other_weights_get_no_reference_set(de_en, tmp_path):
    shutil.copytree(de_en.folder, tmp_path / "same", ignore=shutil.ignore_patterns("snapshots"))
    assert ref.reference_for(load_pretrained(str(tmp_path / "same"))) is not None  # the same weights, elsewhere
    changed = load_pretrained(str(tmp_path / "same"))
    with torch.no_grad():
        next(changed.model.parameters()).add_(1e-3)  # retrained, say
    changed.save_pretrained(tmp_path / "changed")
    assert ref.reference_for(load_pretrained(str(tmp_path / "changed"))) is None
    assert ref.reference_for(load_pretrained(str(bundled("reverse")))) is None


def test_score_gives_each_decoder_layers_distances_and_nulls_without_a_reference_set(bundled):
    from attention_lab.app import endpoints, make_lab

    api = endpoints(make_lab(bundled))
    sentence = jsonable(api.score("de-en", "Ich habe Hunger.", "I am hungry.", "input_x_gradient"))["sentence"]
    assert len(sentence["wass_to_unif"]) == len(sentence["wass_to_data"]) == 3  # de-en's decoder layers
    assert all(0 < v < 1 for v in sentence["wass_to_unif"] + sentence["wass_to_data"])
    assert sentence["wass_combo"] == sentence["wass_to_data"][-1]  # a correct translation: below the threshold
    reverse = jsonable(api.score("reverse", "abcdef", "fedcba", "input_x_gradient"))["sentence"]
    assert len(reverse["wass_to_unif"]) == 2 and all(v is not None for v in reverse["wass_to_unif"])
    assert reverse["wass_to_data"] == [None, None] and reverse["wass_combo"] is None


def test_a_translation_whose_attention_collapses_scores_far_from_the_data(de_en):
    """The model's reading of a correct translation against its reading of a string of one repeated word."""
    from attention_lab.trust.messages import target_ids
    from attention_lab.trust.score import score

    ids = de_en.tokenizer.encode("Ich muss den Rasen mähen.")
    own = score(de_en, ids, target_ids(de_en, "I have to mow the lawn."), "alti")
    stuck = score(de_en, ids, target_ids(de_en, " ".join(["the"] * 12)), "alti")
    assert stuck.wass_combo > own.wass_combo


@pytest.mark.slow
def test_the_reference_set_rebuilds_to_the_committed_file(de_en, ding):
    """From the Ding valid split, extracted as `python -m training.data ding` does (tests/conftest.py's `ding`): its
    first 40 pairs give the committed file's first distributions (the whole build, `python
    benchmarks/wass_reference.py`, takes a minute)."""
    from benchmarks.hallucination_set import read_pairs
    from benchmarks.wass_reference import build

    built, committed = build(de_en, read_pairs(ding / "valid.tsv")[:40]), ref.load(ref.FILES[0])
    assert built.weights == committed.weights and len(built.masses) >= 35
    assert np.array_equal(built.lengths, committed.lengths[: len(built.masses)])
    for a, b in zip(built.masses, committed.masses, strict=False):
        np.testing.assert_allclose(a, b, atol=1e-6)
