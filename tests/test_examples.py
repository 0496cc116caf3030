"""The page's examples are what they claim: held-out test sentences, with the outputs their labels describe."""

import pytest

from attention_lab.models.examples import CURATED
from training.data import ding_split

# The greedy outputs the labels were written for ("✓": the reference or a correct paraphrase of it; "✗": wrong).
EXPECTED = {
    "Ist es wahr, dass er einen Unfall hatte?": "Is it true he had an accident?",
    "Ich habe seinen Namen (akustisch) nicht verstanden.": "I didn’t catch his name.",
    "Die Beschreibung stimmt mit dem Produkt nicht überein.": "The description does not agree with the product.",
    "Sandra sieht wie ihre Mutter aus.": "Sandra looks like her mother.",
    "Ich habe den Verdacht, dass er lügt.": "I suspect that he is lying.",
    "Sie meint es ernst mit ihm.": "She’s serious about him.",
    "Das musst du ja nicht gleich jedem auf die Nase binden.": "You don’t have to do that anywhere to the nose.",
    "Der Supermarkt ist Teil einer Handelskette.": "The supermarket is part of a handwriting.",
    "Ich muss den Rasen mähen.": "I have to mask the nose.",
}


@pytest.mark.slow  # the Ding corpus, extracted (about 10 s, once per test process)
def test_de_en_examples_are_held_out_test_sentences_with_the_outputs_their_labels_describe(bundled, ding):
    held_out = dict(ding_split("test", ding))
    examples = CURATED["de-en"]
    assert {text for text, _ in examples} == set(EXPECTED)
    assert sum(label.startswith("✓") for _, label in examples) >= 5
    assert 2 <= sum(label.startswith("✗") for _, label in examples) <= 3
    for text, _ in examples:
        assert text in held_out, text
    outputs = bundled.entry("de-en").pipeline.generate([t for t, _ in examples], max_new_tokens=64)
    assert dict(zip([t for t, _ in examples], outputs)) == EXPECTED


def test_reversal_examples_reverse_exactly_within_the_training_length_and_one_goes_beyond(bundled):
    examples = CURATED["reverse"]
    outputs = bundled.entry("reverse").pipeline.generate([t for t, _ in examples])
    longest = bundled.entry("reverse").trained_length
    for (text, label), output in zip(examples, outputs):
        if len(text) <= longest:
            assert 5 <= len(text) and label.startswith("✓") and output == text[::-1], (text, output)
        else:
            assert label.startswith("✗") and output != text[::-1], (text, output)
    assert sum(len(t) > longest for t, _ in examples) == 1
