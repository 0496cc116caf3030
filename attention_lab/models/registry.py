"""The models the app serves, by name: loaded once at start and shared by every session, one entry each."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import ModelCard

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from transformer import CheckpointError, Seq2SeqPipeline, load_pretrained
from transformer.bundled import BUNDLED, bundled_names
from transformer.checkpoint import model_type

from ..checks import InputError, quoted
from .alignments import ALIGNMENTS
from .devices import pick_device
from .snapshots import SnapshotModels

logger = logging.getLogger(__name__)


@dataclass
class ModelEntry:
    """One model the app serves: its pipeline, where it came from, and what its model card says."""

    name: str
    pipeline: Seq2SeqPipeline
    source: str | Path = ""  # a folder or a Hub repo id
    examples: list[str] = field(default_factory=list)  # example inputs, from its card
    trained_length: int | None = None  # the longest training source, in tokens (no eos), from its card
    alignment: str | None = None  # a gold alignment it is known to follow (one of ALIGNMENTS), from its card
    family: str | None = None  # another library's model type ("marian"), read from its folder; None for ours

    def __post_init__(self) -> None:
        if self.family is None and self.pipeline.folder is not None:
            self.family = model_type(self.pipeline.folder)

    def length_notice(self, ids: list[int]) -> str:
        """A warning when the source is longer than anything the model saw in training ("" otherwise)."""
        n_tokens = len(ids) - 1  # without eos
        if not self.trained_length or n_tokens <= self.trained_length:
            return ""
        unit = "characters" if self.pipeline.tokenizer.is_character_level else "tokens"
        return (
            f"This source is {n_tokens} {unit}, longer than any the model saw in training (up to "
            f"{self.trained_length}): expect the output to degrade."
        )


@dataclass
class Registry:
    entries: dict[str, ModelEntry] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # models that failed to load, with the reason
    # Their training snapshots, listed and loaded on first use and shared by every feature that reads them
    snapshots: SnapshotModels = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.snapshots = SnapshotModels(self)

    @classmethod
    def of(cls, pipelines: dict[str, Seq2SeqPipeline], **cards: dict) -> Registry:
        """Entries for pipelines made in code (tests, benchmarks); `cards` give per-model fields of ModelEntry, such
        as trained_length={"reverse": 6}."""
        entries = {}
        for name, pipeline in pipelines.items():
            known = {key: values[name] for key, values in cards.items() if name in values}
            entries[name] = ModelEntry(name, pipeline, **known)
        return cls(entries)

    @property
    def names(self) -> list[str]:
        return list(self.entries)

    def entry(self, name: str) -> ModelEntry:
        """The model called `name`; InputError naming the models there are."""
        if name not in self.entries:
            raise InputError(f"Unknown model {quoted(name)}; choose one of: {', '.join(self.entries)}.")
        return self.entries[name]


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


def entry_of(name: str, pipeline: Seq2SeqPipeline, source: str | Path) -> ModelEntry:
    """A loaded model's entry, with what its card says."""
    metadata = card_metadata(pipeline.folder) if pipeline.folder else {}
    longest = metadata.get("trained_source_tokens")
    return ModelEntry(
        name,
        pipeline,
        source,
        examples=card_examples(metadata),
        trained_length=longest if isinstance(longest, int) and longest > 0 else None,
        alignment=metadata["gold_alignment"] if metadata.get("gold_alignment") in ALIGNMENTS else None,
    )


def load_models(hub_models: list[str], bundled: Path = BUNDLED, device: str = "cpu") -> Registry:
    """The bundled checkpoints (offline) plus any Hub repos or folders, each loaded by the loader its config.json
    asks for, on `device` (attention_lab.models.devices: cpu, cuda or auto); a model that fails to load is reported, not
    fatal."""
    where = pick_device(device)
    registry = Registry()
    specs = [(name, bundled / name) for name in bundled_names(bundled)]
    specs += [(repo_id, repo_id) for repo_id in hub_models]
    for name, spec in specs:
        try:
            pipeline = load_pretrained(spec)
        except CheckpointError as err:
            registry.errors[name] = str(err)
            logger.warning("not loaded: %s", err)
            continue
        pipeline.model.to(where)
        registry.entries[name] = entry_of(name, pipeline, spec)
    return registry
