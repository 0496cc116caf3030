"""Two models on one sentence (/compare_models): each model's word rows are its own /attention merged as the views
merge it (tests/units_reference.py); the shared words of hand-made outputs (identical, one word inserted, none in
common) and their distances; source words of two tokenizers lined up by their characters; the same model twice;
ours against a transformers Marian; a training snapshot against the shipped reversal model; and one-line messages
for what cannot be compared."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from attention_lab.attention.api import ATTENTION_EXPORT
from attention_lab.checks import InputError
from attention_lab.core.attention_export import AttentionExport, attention_record
from attention_lab.feature import Shared
from attention_lab.messages import jsonable
from attention_lab.models.registry import Registry
from attention_lab.request import Request
from attention_lab.run.state import new_run
from attention_lab.training.decodings import Snapshots
from attention_lab.two_models.align import distance, shared_words
from attention_lab.two_models.api import ENDPOINTS
from attention_lab.two_models.feature import message_of, second_side, side_of
from attention_lab.two_models.messages import two_models_record
from attention_lab.two_models.words import WordAttention, character_map
from tests import hf_models
from tests.units_reference import Units, in_units
from transformer import DecodingSession, load_pretrained

SENTENCE = "Die Datei wurde gestern von einem anderen Benutzer geändert und gespeichert."
READABLE = "Das Haus ist alt und klein."  # every character known to the tiny Marian's vocabulary
COMPARE = ENDPOINTS[0]


def compare(registry: Registry, model_a: str, model_b: str, text: str) -> dict:
    return jsonable(COMPARE.fn(Request(COMPARE, Shared(registry)), model_a, model_b, text))


def own_attention(registry: Registry, model: str, text: str) -> AttentionExport:
    """The model's own /attention of `text` (greedy)."""
    return ATTENTION_EXPORT.fn(Request(ATTENTION_EXPORT, Shared(registry)), model, text)


def views_words(record: AttentionExport, pipeline) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """(source words, output words, attention (W, V), layers (L, W, V)) as the views draw the record's cross-attention
    with words merged and specials hidden (the numpy reference of the page's merge)."""
    tokenizer = pipeline.tokenizer
    specials = {tokenizer.id_to_token(i) for i in pipeline.model.special_ids}
    character_level = tokenizer.is_character_level
    src = Units.of(record.source_tokens, [t in specials for t in record.source_tokens], True, character_level)
    out = Units.of(record.output_tokens, [t in specials for t in record.output_tokens], True, character_level)
    cross = np.array([step.cross for step in record.steps])  # (T, L, H, S)
    L, H = cross.shape[1:3]
    heads = np.array([[in_units(cross[:, layer, head], out, src, True) for head in range(H)] for layer in range(L)])
    # The mean of all heads as the views take it (units.mjs: each head renormalised, then averaged)
    return (
        src.without_specials()[0].labels,
        out.without_specials()[0].labels,
        heads.mean(axis=(0, 1)),
        heads.mean(axis=1),
    )


def assert_is_the_views_merge(answered: dict, source_words: list[str], record: AttentionExport, pipeline) -> None:
    src, out, attention, layers = views_words(record, pipeline)
    assert source_words == src and answered["output_words"] == out
    assert answered["output_tokens"] == record.output_tokens
    assert np.array(answered["attention"]) == pytest.approx(attention, abs=1e-4)
    assert np.array(answered["layers"]) == pytest.approx(layers, abs=1e-4)
    assert np.array(answered["attention"]).sum(axis=-1) == pytest.approx(1, abs=1e-5)
    assert np.array(answered["layers"]).sum(axis=-1) == pytest.approx(1, abs=1e-5)


# Each model's words: its own /attention, merged as the views merge it -----------------------------------------------


@pytest.mark.parametrize(("model", "text"), [("de-en", SENTENCE), ("reverse", "abcdef12")])
def test_each_models_rows_are_its_own_attention_merged_as_the_views_merge_it(bundled, model, text):
    answer = compare(bundled, model, model, text)
    record = own_attention(bundled, model, text)
    for answered in answer["models"]:
        assert answered["model"] == model
        assert_is_the_views_merge(answered, answer["source_words"], record, bundled.entry(model).pipeline)
    assert len(answer["models"][0]["layers"]) == bundled.entry(model).pipeline.model.config.n_decoder_layers


def test_the_same_model_twice_shares_every_word_at_distance_0(bundled):
    answer = compare(bundled, "de-en", "de-en", SENTENCE)
    words = answer["models"][0]["output_words"]
    assert len(words) > 5 and "</s>" not in words
    assert [(s["word"], s["a"], s["b"]) for s in answer["shared"]] == [(w, i, i) for i, w in enumerate(words)]
    assert all(s["distance"] == 0 for s in answer["shared"])


def test_two_tokenizers_source_words_are_lined_up_by_their_characters(bundled):
    """reverse reads "abcdef12" as 8 characters, de-en as pieces of one word: each one's rows over the other's
    words are its own, split (or gathered) by the characters the words share."""
    on_chars = compare(bundled, "reverse", "de-en", "abcdef12")
    assert on_chars["source_words"] == list("abcdef12")
    gathered = compare(bundled, "de-en", "reverse", "abcdef12")
    de_en_words = gathered["source_words"]
    assert "".join(de_en_words) == "abcdef12" and len(de_en_words) < 8
    spans = np.repeat(np.arange(len(de_en_words)), [len(w) for w in de_en_words])  # de-en's word of each character
    shares = np.array(on_chars["models"][1]["attention"])  # de-en's rows over reverse's characters
    assert shares.sum(axis=-1) == pytest.approx(1, abs=1e-5)
    for word in range(len(de_en_words)):  # a word's weight is split evenly over its characters
        chars = shares[:, spans == word]
        assert chars == pytest.approx(np.repeat(chars[:, :1], chars.shape[1], axis=1), abs=2e-6)
    own = np.array(gathered["models"][0]["attention"])
    assert np.stack([shares[:, spans == w].sum(axis=1) for w in range(len(de_en_words))], axis=1) == pytest.approx(
        own, abs=1e-5
    )
    reverse_own = np.array(gathered["models"][1]["attention"])  # reverse's rows gathered onto de-en's words
    chars = np.array(on_chars["models"][0]["attention"])
    assert reverse_own == pytest.approx(np.stack([chars[:, spans == w].sum(axis=1) for w in range(len(de_en_words))], 1), abs=1e-5)  # fmt: skip


# The shared words, on hand-made outputs ------------------------------------------------------------------------------


def rows(n: int, width: int = 4) -> np.ndarray:
    """n distinct rows over `width` source words, each summing to 1."""
    grid = np.arange(1, n * width + 1, dtype=float).reshape(n, width) ** 2
    return grid / grid.sum(axis=1, keepdims=True)


def words(output: list[str], attention: np.ndarray) -> WordAttention:
    tokens = [*output, "</s>"]
    return WordAttention(["a", "b", "c", "d"], tokens, output, attention, attention[None], attention[None, None],
                         [*range(len(output)), -1])  # fmt: skip


def test_identical_outputs_share_every_word_in_order():
    assert shared_words(["the", "house", "is", "old"], ["the", "house", "is", "old"]) == [
        (0, 0),
        (1, 1),
        (2, 2),
        (3, 3),
    ]
    assert shared_words(["a", "a", "b"], ["a", "a", "b"]) == [(0, 0), (1, 1), (2, 2)]  # repeated words, each once


def test_one_inserted_word_shifts_the_indices_after_it():
    a, b = ["the", "house", "is", "old"], ["the", "big", "house", "is", "old"]
    assert shared_words(a, b) == [(0, 0), (1, 2), (2, 3), (3, 4)]
    assert shared_words(b, a) == [(0, 0), (2, 1), (3, 2), (4, 3)]
    found_a, found_b = rows(4), rows(5)
    found_b[[0, 2, 3]] = found_a[[0, 1, 2]]  # the same rows at "the", "house", "is"; another at "old"
    answer = jsonable(two_models_record("A", words(a, found_a), "B", words(b, found_b)))
    assert [(s["word"], s["a"], s["b"]) for s in answer["shared"]] == [
        ("the", 0, 0), ("house", 1, 2), ("is", 2, 3), ("old", 3, 4)]  # fmt: skip
    assert [s["distance"] for s in answer["shared"][:3]] == [0, 0, 0]
    assert answer["shared"][3]["distance"] == pytest.approx(distance(found_a[3], found_b[4]), abs=1e-6)
    assert answer["shared"][3]["distance"] > 0.01
    assert [m["model"] for m in answer["models"]] == ["A", "B"] and answer["models"][1]["output_words"] == b


def test_outputs_with_no_word_in_common_share_nothing():
    assert shared_words(["the", "house"], ["das", "Haus"]) == []
    assert shared_words([], ["das"]) == [] and shared_words([], []) == []
    answer = jsonable(two_models_record("A", words(["x"], rows(1)), "B", words(["y", "z"], rows(2))))
    assert answer["shared"] == []


def test_nearly_equal_rows_are_at_a_distance_near_0_never_nan():
    """scipy's jensenshannon answers NaN for two rows whose divergence rounds a hair below 0."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        row = rng.random(8)
        row /= row.sum()
        other = np.abs(row + rng.normal(0, 1e-9, 8))
        found = distance(row, other / other.sum())
        assert np.isfinite(found) and 0 <= found < 1e-3


def test_the_distance_is_jensen_shannon_in_base_2():
    assert distance(np.array([0.2, 0.8]), np.array([0.2, 0.8])) == 0
    assert distance(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == pytest.approx(1)  # nothing in common
    jsd = (np.log2(4 / 3) + (np.log2(2 / 3) + 1) / 2) / 2  # JSD([1, 0], [.5, .5]) = 0.311278
    assert distance(np.array([1.0, 0.0]), np.array([0.5, 0.5])) == pytest.approx(np.sqrt(jsd), abs=1e-9)


def test_source_words_map_by_the_characters_they_share():
    assert character_map(["Haus", "tür", "."], ["Haustür", "."]) == pytest.approx(np.array([[1, 0], [1, 0], [0, 1]]))
    assert character_map(["Haustür", "."], ["Haus", "tür", "."]) == pytest.approx(np.array([[4 / 7, 3 / 7, 0], [0, 0, 1]]))  # fmt: skip
    assert character_map(["haus", "␣", "."], ["Haus", "."]) == pytest.approx(np.array([[1, 0], [0, 1], [0, 1]]))
    assert character_map(["a", "b"], ["a", "b"]) == pytest.approx(np.eye(2))
    with pytest.raises(InputError, match="different characters") as caught:
        character_map(["<unk>", "."], ["Haus", "."])
    assert "\n" not in str(caught.value)


# What cannot be compared gets one line -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_a", "model_b", "message"),
    [
        ("nope", "de-en", "Unknown model 'nope'; choose one of: de-en, reverse."),
        ("reverse", "nope", "Unknown model 'nope'; choose one of: de-en, reverse."),
        ("nope@step 0", "reverse", "Unknown model 'nope'; choose one of: de-en, reverse."),
        ("reverse@step 13", "reverse", "reverse has no snapshot 'step 13'; choose one of: step 0, step 12, "),
        ("reverse", "reverse@", "reverse has no snapshot ''; choose one of: step 0, "),
        ("de-en@step 0", "reverse", "de-en has no training snapshots"),
    ],
)
def test_an_unknown_model_or_snapshot_gets_one_line(bundled, model_a, model_b, message):
    with pytest.raises(InputError) as caught:
        compare(bundled, model_a, model_b, "abc")
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_a_source_a_model_cannot_read_gets_its_usual_message(bundled):
    with pytest.raises(InputError, match="This model only knows lowercase letters and digits"):
        compare(bundled, "de-en", "reverse", "Das Haus")
    with pytest.raises(InputError, match="/compare_models takes at most 64"):
        compare(bundled, "reverse", "reverse", "ab" * 40)


# The tab's message: each side's rows of the mean, each layer and each head -------------------------------------------


def unpacked(side: dict, n_source: int) -> np.ndarray:
    """A side's rows as the page reads them: (1 + L + L·H, W, V)."""
    values = np.frombuffer(base64.b64decode(side["rows"]), dtype="<u2") / 65535
    return values.reshape(-1, len(side["words"]), n_source)


def test_the_tabs_message_holds_each_sides_rows_for_the_mean_each_layer_and_each_head(bundled):
    """Model A is a what-if (its second step forced to another token), model B a training snapshot: A's rows are
    its own session's cross-attention merged as the views merge it, head by head; B's are /compare_models's."""
    run = new_run(bundled.entry("reverse"), "abcdef12")
    pipeline = run.pipeline
    run.session.step()
    run.session.step(force=pipeline.tokenizer.token_to_id("x"))
    run.session.run()
    snapshot = f"reverse@{bundled.snapshots.listed('reverse')[6].label}"
    message = jsonable(message_of(None, list(run.session.tokens), side_of(run), second_side(Shared(bundled), snapshot, "abcdef12")))  # fmt: skip
    side_a, side_b = message["models"]
    assert side_a["words"][1] == "x" and side_b["model"] == snapshot
    record = attention_record(run.session, pipeline.tokenizer, "reverse")
    specials = {pipeline.tokenizer.id_to_token(i) for i in pipeline.model.special_ids}
    src = Units.of(record.source_tokens, [t in specials for t in record.source_tokens], True, True)
    out = Units.of(record.output_tokens, [t in specials for t in record.output_tokens], True, True)
    cross = np.array([step.cross for step in record.steps])  # (T, L, H, S)
    L, H = cross.shape[1:3]
    heads = [in_units(cross[:, layer, head], out, src, True) for layer in range(L) for head in range(H)]
    rows_a = unpacked(side_a, len(message["source_words"]))
    assert rows_a.shape[0] == 1 + L + L * H
    assert rows_a[1 + L :] == pytest.approx(np.stack(heads), abs=1e-4)
    src_words, out_words, attention, layers = views_words(record, pipeline)
    assert message["source_words"] == src_words and side_a["words"] == out_words
    assert rows_a[0] == pytest.approx(attention, abs=1e-4) and rows_a[1 : 1 + L] == pytest.approx(layers, abs=1e-4)
    assert side_a["token_words"] == [*range(len(out_words)), -1]  # a character model: a word a token, the end last
    answer = compare(bundled, "reverse", snapshot, "abcdef12")["models"][1]
    rows_b = unpacked(side_b, len(message["source_words"]))
    assert side_b["words"] == answer["output_words"]
    assert rows_b[0] == pytest.approx(np.array(answer["attention"]), abs=1e-4)
    assert rows_b[1 : 1 + L] == pytest.approx(np.array(answer["layers"]), abs=1e-4)
    assert [(s["a"], s["b"]) for s in message["shared"]] == shared_words(side_a["words"], side_b["words"])


def test_the_tab_says_in_one_line_why_there_is_nothing_to_compare(bundled):
    run = new_run(bundled.entry("de-en"), READABLE)
    run.session.run()
    for second, said in [("nope", "Unknown model 'nope'"), ("reverse", "This model only knows lowercase letters")]:
        message = message_of(None, [], side_of(run), second_side(Shared(bundled), second, READABLE))
        assert message.error.startswith(said) and "\n" not in message.error and not message.models


# A training snapshot against the shipped model -----------------------------------------------------------------------


def test_a_snapshot_compares_with_the_shipped_reversal_model(bundled):
    snapshots = bundled.snapshots.listed("reverse")
    early = snapshots[1]
    answer = compare(bundled, f"reverse@{early.label}", "reverse", "abcdef12")
    snapshot, shipped = answer["models"]
    assert snapshot["model"] == f"reverse@{early.label}" and shipped["model"] == "reverse"
    assert shipped["output_words"] == list("21fedcba") and snapshot["output_words"] != shipped["output_words"]
    pipeline = load_pretrained(early.folder)  # the snapshot's own attention, decoded apart from the app
    ids = pipeline.tokenizer.encode("abcdef12")
    session = DecodingSession(pipeline.model, ids, max_new_tokens=COMPARE.limits.new)
    session.run()
    record = attention_record(session, pipeline.tokenizer, snapshot["model"])
    assert_is_the_views_merge(snapshot, answer["source_words"], record, pipeline)
    assert_is_the_views_merge(shipped, answer["source_words"], own_attention(bundled, "reverse", "abcdef12"),
                              bundled.entry("reverse").pipeline)  # fmt: skip
    assert any(s["distance"] > 0.1 for s in answer["shared"])
    last = compare(bundled, f"reverse@{snapshots[-1].label.replace(',', '')}", "reverse", "abcdef12")
    assert last["models"][0]["model"] == f"reverse@{snapshots[-1].label}"  # the shipped weights themselves
    assert last["shared"] and all(s["distance"] == 0 for s in last["shared"])
    assert Snapshots(bundled).pipeline("reverse", early) is bundled.snapshots.pipeline("reverse", early)  # loaded once


# Ours against a transformers model -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def with_marian(bundled, tmp_path_factory):
    marian = hf_models.loaded("marian", tmp_path_factory)
    return Registry.of({"de-en": bundled.entry("de-en").pipeline, "marian": marian})


def gathered(words: list[str], attention: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Source words and rows (..., W, V) with each lone word boundary ("␣", a word of its own in the views) gathered
    into the word after it."""
    kept, columns, pending = [], [], 0
    for i, word in enumerate(words):
        pending = pending + attention[..., i]
        if word != "␣":
            kept.append(word)
            columns.append(pending)
            pending = 0
    return kept, np.stack(columns, axis=-1)


@pytest.mark.slow
def test_ours_against_a_transformers_marian(with_marian):
    answer = compare(with_marian, "de-en", "marian", READABLE)
    ours, marian = answer["models"]
    assert answer["source_words"] == ["Das", "Haus", "ist", "alt", "und", "klein", "."]
    assert [ours["model"], marian["model"]] == ["de-en", "marian"]
    assert_is_the_views_merge(ours, answer["source_words"], own_attention(with_marian, "de-en", READABLE),
                              with_marian.entry("de-en").pipeline)  # fmt: skip
    # Marian's own words: "alt", "und", "klein" each after a lone "▁", a word of its own in the views
    src, out, attention, layers = views_words(
        own_attention(with_marian, "marian", READABLE), with_marian.entry("marian").pipeline
    )
    assert src.count("␣") == 3 and gathered(src, attention)[0] == answer["source_words"]
    assert marian["output_words"] == out
    assert np.array(marian["attention"]) == pytest.approx(gathered(src, attention)[1], abs=1e-4)
    assert np.array(marian["layers"]) == pytest.approx(gathered(src, layers)[1], abs=1e-4)
    assert np.array(marian["attention"]).sum(axis=-1) == pytest.approx(1, abs=1e-5)
    assert len(marian["layers"]) == 2 and len(ours["layers"]) == 3
    assert all(0 <= s["distance"] <= 1 for s in answer["shared"])


@pytest.mark.slow
def test_a_source_the_marian_reads_as_unknown_tokens_is_refused_in_one_line(with_marian):
    with pytest.raises(InputError, match="read this source as different characters") as caught:
        compare(with_marian, "de-en", "marian", SENTENCE)  # "v" and "ä" are <unk> to the tiny Marian
    assert "\n" not in str(caught.value)


def test_the_readmes_reversal_example_says_what_the_endpoint_answers(bundled):
    """docs/findings.md, "Two models on one sentence" (its figures in RESULTS.md): the snapshot at step 583 reads the mirror position at every shared word,
    with less of its weight; the distances' range and mean; at step 1,269 the whole reversal, and a smaller mean."""
    answer = compare(bundled, "reverse", "reverse@step 583", "abcdef12")
    shipped, snapshot = answer["models"]
    assert "".join(snapshot["output_words"]) == "21dceba" and len(answer["shared"]) == 6
    n = len(answer["source_words"])
    for pair in answer["shared"]:
        mirror = n - 1 - pair["a"]  # the shipped model's word a copies the source's character n - 1 - a
        row_a, row_b = np.array(shipped["attention"][pair["a"]]), np.array(snapshot["attention"][pair["b"]])
        assert row_a.argmax() == mirror and row_b.argmax() == mirror
        assert 0.86 <= round(row_a.max(), 2) <= 0.99 and 0.23 <= round(row_b.max(), 2) <= 0.72
    distances = [pair["distance"] for pair in answer["shared"]]
    assert (round(min(distances), 2), round(max(distances), 2), round(np.mean(distances), 2)) == (0.37, 0.60, 0.51)
    later = compare(bundled, "reverse", "reverse@step 1,269", "abcdef12")
    assert later["models"][1]["output_words"] == shipped["output_words"]
    assert round(np.mean([pair["distance"] for pair in later["shared"]]), 2) == 0.35


def test_model_b_writing_model_as_words_shares_every_word_and_reads_its_own_prefix_as_it_did(bundled):
    """Model A's output forced on model B (a what-if in B): B writes A's words, so every word is shared; a row that
    reads the same words as B's own greedy output did before it is the same (the step that writes word t reads the
    words before t only), and the first that reads another differs."""
    run = new_run(bundled.entry("reverse"), "abcdef12")
    run.session.run()
    words = run.pipeline.tokenizer.decode(run.session.tokens)
    snapshot = "reverse@step 583"
    own = second_side(Shared(bundled), snapshot, "abcdef12")
    made = second_side(Shared(bundled), snapshot, "abcdef12", words)
    assert made[0] == f"{snapshot}, writing A's words" and made[1].output_words == list(words)
    message = jsonable(message_of(None, list(run.session.tokens), side_of(run), made))
    assert [(s["a"], s["b"]) for s in message["shared"]] == [(i, i) for i in range(len(words))]
    same = 0
    while own[1].output_words[same] == words[same]:
        same += 1
    assert same == 2  # "21", then the snapshot's own output goes another way
    assert made[1].heads[:, :, : same + 1] == pytest.approx(own[1].heads[:, :, : same + 1], abs=1e-6)
    assert made[1].attention[same + 1] != pytest.approx(own[1].attention[same + 1], abs=1e-3)
    refused = second_side(Shared(bundled), "de-en", "abcdef12", "Das ist " + "sehr " * 70)
    assert refused.startswith("Model A's output is") and "model B takes at most 64" in refused
