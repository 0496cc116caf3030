"""The models the app serves, by name: loaded once at start and shared by every session."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import ModelCard

from adapters import load_pretrained
from transformer import CheckpointError, Seq2SeqPipeline

from .checks import InputError, quoted
from .lens import ALIGNMENTS

logger = logging.getLogger(__name__)

BUNDLED = Path(__file__).resolve().parent.parent / "checkpoints"


@dataclass
class Registry:
    models: dict[str, Seq2SeqPipeline] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)  # example inputs per model, from its card
    errors: dict[str, str] = field(default_factory=dict)  # models that failed to load, with the reason
    trained_lengths: dict[str, int] = field(default_factory=dict)  # the longest training source, in tokens (no eos)
    alignments: dict[str, str] = field(default_factory=dict)  # a known gold alignment ("reversal"), from the card
    sources: dict[str, str | Path] = field(default_factory=dict)  # where each model came from: folder or Hub repo id

    def pipeline(self, name: str) -> Seq2SeqPipeline:
        """The model called `name`; InputError naming the models there are."""
        if name not in self.models:
            raise InputError(f"Unknown model {quoted(name)}; choose one of: {', '.join(self.models)}.")
        return self.models[name]

    def length_notice(self, name: str, text: str, ids: list[int]) -> str:
        """A warning when the source is longer than anything the model saw in training ("" otherwise)."""
        longest = self.trained_lengths.get(name)
        n_tokens = len(ids) - 1  # without eos
        if not longest or n_tokens <= longest:
            return ""
        unit = "characters" if self.models[name].tokenizer.is_character_level else "tokens"
        return (
            f"This source is {n_tokens} {unit}, longer than any the model saw in training (up to {longest}): "
            "expect the output to degrade."
        )


def card_metadata(folder: Path) -> dict:
    """The model card's YAML metadata, or {} when there is no card or it cannot be read."""
    readme = Path(folder) / "README.md"
    if not readme.is_file():
        return {}
    try:
        return ModelCard.load(readme).data.to_dict()
    except Exception as err:  # noqa: BLE001 - a card is documentation: a broken one costs the examples, not the model
        logger.warning("%s: not read (%s)", readme, err)
        return {}


def card_examples(metadata: dict, limit: int = 8) -> list[str]:
    """Example inputs from the model card's `widget` metadata (taken from each model's test data)."""
    widget = metadata.get("widget") or []
    texts = [item.get("text") for item in widget if isinstance(item, dict)] if isinstance(widget, list) else []
    return [t for t in texts if isinstance(t, str) and t.strip()][:limit]


def load_models(hub_models: list[str], bundled: Path = BUNDLED) -> Registry:
    """The bundled checkpoints (offline) plus any Hub repos; a model that fails to load is reported, not fatal."""
    registry = Registry()
    specs = []
    if bundled.is_dir():
        specs = [(p.name, p) for p in sorted(bundled.iterdir()) if (p / "config.json").is_file()]
    specs += [(repo_id, repo_id) for repo_id in hub_models]
    for name, spec in specs:
        try:
            pipeline = load_pretrained(spec)
        except CheckpointError as err:
            registry.errors[name] = str(err)
            logger.warning("not loaded: %s", err)
            continue
        registry.models[name] = pipeline
        registry.sources[name] = spec
        metadata = card_metadata(pipeline.folder) if pipeline.folder else {}
        registry.examples[name] = card_examples(metadata)
        longest = metadata.get("trained_source_tokens")
        if isinstance(longest, int) and longest > 0:
            registry.trained_lengths[name] = longest
        if metadata.get("gold_alignment") in ALIGNMENTS:
            registry.alignments[name] = metadata["gold_alignment"]
    return registry
