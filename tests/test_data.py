"""Corpus extraction and splits, batching, and tokenizers."""

import pytest

from training.batching import token_batches
from training.ding import DING_PATH, clean, extract_ding, extract_ding_phrases, is_sentence, split_of, split_pairs
from training.reversal import reversal_pairs
from transformer.tokenizer import Tokenizer

DING_SAMPLE = """\
# Version :: test
Hunger {m} | Ich habe Hunger. | Hunger haben :: hunger | I am hungry. | to be hungry
Abend {m} | Guten Abend allerseits! [formal] :: evening | Good evening, everyone! [formal]
gehen {vi} | Wie geht es dir?; Wie geht's? | Er geht {geht}. :: to go | How are you?; How's it going? | He goes.
Haus {n} | Das ist ein Haus. :: house | This is a house.
kaputt | Das ist ein Haus. :: broken | That is a house.
ungleich | Ein Satz hier. :: unequal
klein | das ist klein. :: small | that is small.
anrufen | jdn. anrufen :: to call | to call sb.
"""


@pytest.fixture
def ding_file(tmp_path):
    path = tmp_path / "de-en"
    path.write_text(DING_SAMPLE, encoding="utf-8")
    return path


def test_extraction_follows_the_dictionary_format(ding_file):
    pairs = extract_ding(ding_file)
    assert pairs == [
        ("Ich habe Hunger.", "I am hungry."),  # aligned ' | ' sub-entries
        ("Guten Abend allerseits!", "Good evening, everyone!"),  # [...] stripped
        ("Wie geht es dir?", "How are you?"),  # first '; ' alternative
        ("Das ist ein Haus.", "This is a house."),  # the German side is de-duplicated: the later one is dropped
    ]  # misaligned lines, non-sentences, lower-case starts and 2-word sentences are left out


def test_phrase_pairs_skip_sentences_placeholders_and_held_out_entries(ding_file):
    phrases = extract_ding_phrases(ding_file, exclude={"Das ist ein Haus."})
    assert ("Hunger", "hunger") in phrases and ("Hunger haben", "to be hungry") in phrases
    assert ("gehen", "to go") in phrases and ("klein", "small") in phrases
    assert all(not is_sentence(de) for de, _ in phrases)
    # both lines holding the held-out sentence are skipped whole: nothing of those entries is trained on
    assert not any(de in ("Haus", "kaputt") for de, _ in phrases)
    assert ("jdn. anrufen", "to call sb.") not in extract_ding_phrases(ding_file)


def test_clean_and_sentence_rules():
    assert clean("Er geht {geht} [ugs.] <Geht>  nach Hause .") == "Er geht nach Hause."
    assert is_sentence("Ich bin da.") and not is_sentence("Ich bin") and not is_sentence("ich bin da.")
    assert not is_sentence("Hallo Welt!")  # two words


def test_missing_corpus_says_how_to_get_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="apt-get install -y trans-de-en"):
        extract_ding(tmp_path / "nothing")


def test_split_is_a_stable_function_of_the_german_sentence():
    sentences = [f"Satz Nummer {i} ist hier." for i in range(5000)]
    first = [split_of(s) for s in sentences]
    assert first == [split_of(s) for s in sentences]
    shares = {name: first.count(name) / len(first) for name in ("train", "valid", "test")}
    assert 0.04 < shares["test"] < 0.065 and 0.017 < shares["valid"] < 0.035


@pytest.mark.slow
@pytest.mark.skipif(not DING_PATH.is_file(), reason="the trans-de-en package is not installed")
def test_real_ding_corpus_sizes_and_disjoint_splits():
    pairs = extract_ding()
    assert 18_000 <= len(pairs) <= 25_000
    splits = split_pairs(pairs)
    assert 900 <= len(splits["test"]) <= 1100 and 400 <= len(splits["valid"]) <= 600
    german = [{de for de, _ in splits[name]} for name in ("train", "valid", "test")]
    assert not (german[0] & german[1] or german[0] & german[2] or german[1] & german[2])


def test_reversal_pairs_are_seeded_and_reversed():
    pairs = reversal_pairs(200, 1, 24, seed=3)
    assert pairs == reversal_pairs(200, 1, 24, seed=3) and pairs != reversal_pairs(200, 1, 24, seed=4)
    assert all(t == s[::-1] and 1 <= len(s) <= 24 and s.isalnum() and s == s.lower() for s, t in pairs)


def test_token_batches_respect_the_budget_and_cover_everything_once():
    lengths = [(i * 7919) % 37 + 1 for i in range(1000)]
    batches = list(token_batches(lengths, max_tokens=200, seed=1))
    assert sorted(i for b in batches for i in b) == list(range(1000))
    assert all(max(lengths[i] for i in b) * len(b) <= 200 for b in batches)
    assert batches == list(token_batches(lengths, max_tokens=200, seed=1))
    assert batches != list(token_batches(lengths, max_tokens=200, seed=2))
    # length bucketing keeps padding low
    padded = sum(max(lengths[i] for i in b) * len(b) for b in batches)
    assert padded < 1.15 * sum(lengths)


def test_character_tokenizer(tmp_path):
    tok = Tokenizer.characters("abc123")
    ids = tok.encode("c1a")
    assert ids[-1] == tok.eos_id and tok.decode(ids) == "c1a" and tok.tokens(ids[:3]) == ["c", "1", "a"]
    assert tok.unknown_characters("ab?c!?") == ["?", "!"]
    tok.save(tmp_path / "tokenizer.json")
    again = Tokenizer.load(tmp_path / "tokenizer.json")
    assert again.encode("cab1") == tok.encode("cab1") and again.is_character_level


def test_bpe_tokenizer_round_trips_text_exactly(tmp_path):
    texts = ["Ich habe Hunger.", "I am hungry.", "Wie geht’s? Gut, danke!", "Das Haus ist groß."] * 20
    tok = Tokenizer.train_bpe(texts, vocab_size=120, min_frequency=1)
    for text in texts[:4] + ["Hunger ist groß."]:
        assert tok.decode(tok.encode(text)) == text
    assert tok.encode_target("Gut.")[0] == tok.bos_id and tok.encode("Gut.")[-1] == tok.eos_id
    assert "." in tok.tokens(tok.encode("Gut."))  # punctuation is split off words
    assert [tok.id_to_token(i) for i in range(4)] == ["<pad>", "<s>", "</s>", "<unk>"]
    tok.save(tmp_path / "t.json")
    assert Tokenizer.load(tmp_path / "t.json").encode("Das Haus.") == tok.encode("Das Haus.")
