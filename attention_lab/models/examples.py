"""The examples the page offers: sentences the model gets right (checked against the held-out test split), a few
labelled failures that the views help explain, and, for any other model, the examples of its card."""

from __future__ import annotations

from ..checks import InputError, check_source
from .registry import Registry

# (text, label). de-en: sentences of the held-out Ding test split; "✓" the greedy output is the reference or a
# correct paraphrase of it, "✗" a failure that the views help explain. tests/test_examples.py checks each claim.
CURATED: dict[str, list[tuple[str, str]]] = {
    "de-en": [
        ("Ist es wahr, dass er einen Unfall hatte?", "✓ question; the verb comes last in German"),
        ("Ich habe seinen Namen (akustisch) nicht verstanden.", "✓ negation and a perfect tense around the object"),
        ("Die Beschreibung stimmt mit dem Produkt nicht überein.", "✓ separable verb split around the object"),
        ("Sandra sieht wie ihre Mutter aus.", "✓ separable verb: sieht … aus = looks"),
        ("Ich habe den Verdacht, dass er lügt.", "✓ a noun phrase becomes one verb (suspect)"),
        ("Sie meint es ernst mit ihm.", "✓ idiom: es ernst meinen = be serious"),
        ("Das musst du ja nicht gleich jedem auf die Nase binden.", "✗ idiom translated word by word"),
        ("Der Supermarkt ist Teil einer Handelskette.", "✗ rare compound split into pieces and guessed"),
        ("Ich muss den Rasen mähen.", "✗ rare words split into pieces: Rasen becomes nose"),
    ],
    "reverse": [
        ("attention", "✓ each character looks at its mirror"),
        ("transformer2026", "✓ letters and digits"),
        ("racecar", "✓ a palindrome, still read backwards"),
        ("attentionisallyouneed", "✓ 21 characters"),
        ("abcdefghijklmnopqrstuvwx", "✓ 24 characters, the longest in training"),
        ("abcdefghijklmnopqrstuvwxyz0123456789", "✗ 36 characters, beyond training: degrades"),
    ],
}


def model_examples(registry: Registry, name: str) -> list[tuple[str, str]]:
    """A model's (text, label) examples: the curated ones, else those of its card (labelled by their text)."""
    entry = registry.entries.get(name)
    return CURATED.get(name) or [(t, t) for t in (entry.examples if entry else [])]


def examples_for_page(registry: Registry) -> tuple[list[list[str]], list[str]]:
    """The page's examples as [model, text] rows, and a label for each."""
    rows, labels = [], []
    for name in registry.entries:
        for text, label in model_examples(registry, name):
            rows.append([name, text])
            labels.append(f"{name} · {label}")
    return rows, labels


def first_example(registry: Registry, name: str) -> str:
    """The example a model starts with: its first curated one, else the first of its card."""
    examples = model_examples(registry, name)
    return examples[0][0] if examples else ""


def example_for(registry: Registry, name: str, text: str) -> str:
    """`text` if the model can read it as it is (a new model keeps the source), else the model's first example."""
    try:
        _, notice = check_source(registry.entry(name).pipeline, text)
    except InputError:
        notice = "unusable"
    return text if not notice else first_example(registry, name)
