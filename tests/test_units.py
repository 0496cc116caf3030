"""The units a view is drawn in (attention_lab/core/units.py): words merged from pieces, piece labels, specials hidden.

Which pieces are special comes with them, one flag each (the app decides it by id, from the model's special_ids).
"""

import numpy as np
import pytest

from attention_lab.core.units import SPACE, piece_label, word_groups
from tests.conftest import tiny_pipelines
from tests.units_reference import Units, in_units

PIECES = ["▁Wir", "▁tre", "ffen", "▁uns", ".", "</s>"]


def marked(pieces):
    """The special flags of test pieces: <s>, </s> and <pad> are, as our models' ids 0-2 are."""
    return [p in ("<s>", "</s>", "<pad>") for p in pieces]


@pytest.mark.parametrize(
    "pieces, groups",
    [
        (PIECES, [[0], [1, 2], [3], [4], [5]]),
        (["▁Ich", "▁habe", "▁", "<", "b", ">", "H", "unger", "<", "/", "b", ">", ".", "</s>"], None),
        (["<s>", "▁Hal", "lo", ",", "▁Welt", "!", "!", "</s>"], [[0], [1, 2], [3], [4], [5], [6], [7]]),
        (["▁Die", "▁Handels", "kette", "."], [[0], [1, 2], [3]]),
        (["▁a", "-", "b", "c"], [[0], [1], [2, 3]]),  # a word starts after punctuation, too
    ],
)
def test_word_groups_follow_the_pre_tokenizer(pieces, groups):
    found = word_groups(pieces, marked(pieces))
    assert sorted(i for g in found for i in g) == list(range(len(pieces)))  # every piece once, in order
    assert all(g == list(range(g[0], g[-1] + 1)) for g in found)
    if groups is not None:
        assert found == groups
    else:  # "<b>Hunger</b>.": every bracket and slash is a word; "H" + "unger" is one
        assert [pieces[g[0]] for g in found if len(g) > 1] == ["H"]
        assert [g for g in found if len(g) > 1] == [[6, 7]]


def test_specials_are_words_of_their_own_by_their_flags_not_their_text():
    pieces = ["</s>", "ab", "<unk>", "cd"]
    assert word_groups(pieces, [True, False, True, False]) == [[0], [1], [2], [3]]
    # <unk> stands for text the tokenizer could not read: not special, it is part of the word around it
    assert word_groups(pieces, [True, False, False, False]) == [[0], [1, 2, 3]]
    assert word_groups(["▁a", "xyz", "▁b"], [False, True, False]) == [[0], [1], [2]]  # a language code, say


def test_character_level_characters_stay_units():
    pieces = ["a", "b", "c", "1", "</s>"]
    assert word_groups(pieces, marked(pieces), character_level=True) == [[0], [1], [2], [3], [4]]
    assert word_groups(pieces, marked(pieces)) == [[0, 1, 2, 3], [4]]  # what a subword model would have merged
    units = Units.of(pieces, marked(pieces), words=True, character_level=True)
    assert units.labels == pieces and units.special == [False] * 4 + [True]


def test_piece_labels_never_show_the_word_boundary():
    assert piece_label("▁Haus", True) == "Haus"
    assert piece_label("unger", False) == "##unger"
    assert piece_label("▁", True) == SPACE
    assert piece_label("</s>", False, special=True) == "</s>"
    units = Units.of(PIECES, marked(PIECES), words=False)
    assert units.labels == ["Wir", "tre", "##ffen", "uns", ".", "</s>"]
    assert units.groups == [[i] for i in range(len(PIECES))]
    words = Units.of(PIECES, marked(PIECES), words=True)
    assert words.labels == ["Wir", "treffen", "uns", ".", "</s>"]
    assert words.special == [False, False, False, False, True]


@pytest.mark.parametrize("text", ["Ich habe <b>Hunger</b>. Das Haus", "Das ist ein Haus.", "I am hungry."])
def test_real_tokenizer_labels_have_no_boundary_mark(text):
    tokenizer = tiny_pipelines()["de-en"].tokenizer
    pieces = tokenizer.tokens(tokenizer.encode(text))
    for words in (True, False):
        labels = Units.of(pieces, marked(pieces), words=words).labels
        assert not any("▁" in label for label in labels), labels
    continuing = [piece_label(p, False) for p in pieces if not p.startswith("▁") and p not in ("</s>",)]
    assert all(label.startswith("##") for label in continuing)


def random_rows(rng, shape):
    weights = rng.random(shape).astype(np.float32)
    return weights / weights.sum(axis=-1, keepdims=True)


def test_to_a_word_is_the_sum_and_from_a_word_the_mean_over_its_pieces():
    rows = Units.of(["▁Wir", "▁tre", "ffen", "</s>"], [False, False, False, True])  # words: Wir, treffen, </s>
    cols = Units.of(["▁Das", "▁Hau", "s", "."], [False] * 4)  # words: Das, Haus, .
    weights = random_rows(np.random.default_rng(0), (4, 4))
    merged = in_units(weights, rows, cols)
    expected = np.array(
        [
            [weights[0, 0], weights[0, 1] + weights[0, 2], weights[0, 3]],
            [
                (weights[1, 0] + weights[2, 0]) / 2,
                (weights[1, 1] + weights[1, 2] + weights[2, 1] + weights[2, 2]) / 2,
                (weights[1, 3] + weights[2, 3]) / 2,
            ],
            [weights[3, 0], weights[3, 1] + weights[3, 2], weights[3, 3]],
        ]
    )
    np.testing.assert_allclose(merged, expected, atol=1e-6)
    np.testing.assert_allclose(merged.sum(axis=-1), 1, atol=1e-5)


@pytest.mark.parametrize("words", [True, False])
def test_rows_still_sum_to_1_over_layers_and_heads(words):
    pieces = ["▁Ich", "▁habe", "▁Hun", "ger", ".", "</s>"]
    units = Units.of(pieces, marked(pieces), words=words)
    weights = random_rows(np.random.default_rng(1), (2, 4, len(pieces), len(pieces)))
    merged = in_units(weights, units, units)
    assert merged.shape == (2, 4, len(units), len(units))
    np.testing.assert_allclose(merged.sum(axis=-1), 1, atol=1e-5)
    if not words:
        np.testing.assert_allclose(merged, weights, atol=1e-6)  # pieces: nothing merged


def test_hiding_specials_drops_them_and_renormalises_every_row():
    pieces = ["▁Wir", "▁tre", "ffen", ".", "</s>"]
    units = Units.of(pieces, marked(pieces))
    weights = random_rows(np.random.default_rng(2), (1, 2, 5, 5))
    weights[..., 4] += 3.0  # most of the attention on </s>, as trained models do
    weights /= weights.sum(axis=-1, keepdims=True)
    hidden = in_units(weights, units, units, hide_specials=True)
    shown, kept = units.without_specials()
    assert shown.labels == ["Wir", "treffen", "."] and kept == [0, 1, 2]
    assert hidden.shape == (1, 2, 3, 3)
    np.testing.assert_allclose(hidden.sum(axis=-1), 1, atol=1e-5)
    merged = in_units(weights, units, units)
    first = merged[0, 0, 0, :3]
    np.testing.assert_allclose(hidden[0, 0, 0], first / first.sum(), atol=1e-6)


def test_a_row_of_only_specials_stays_zero_rather_than_nan():
    units = Units.of(["▁a", "</s>"], [False, True])
    weights = np.array([[0.0, 1.0], [0.0, 1.0]], dtype=np.float32)  # everything on </s>
    hidden = in_units(weights, units, units, hide_specials=True)
    assert hidden.shape == (1, 1) and hidden[0, 0] == 0 and not np.isnan(hidden).any()
