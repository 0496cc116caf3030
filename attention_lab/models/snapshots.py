"""The served models' training snapshots, as models: listed on first use (a Hub model's are downloaded then) and
each loaded once, then shared by every session and every feature that reads them (the Training tab's film, a
snapshot compared with another model). A snapshot that cannot be loaded is named in a message; the others, and every
model, keep working.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from transformer import CheckpointError, Seq2SeqPipeline, load_pretrained
from transformer.hub import check_compatible
from transformer.snapshots import NoSnapshots, Snapshot, list_snapshots

from ..checks import InputError, quoted

logger = logging.getLogger(__name__)


class NoTraining(InputError):
    """The model has no training to show (kept: it will not have it later either)."""


class SnapshotModels:
    """The snapshots of a registry's models (attention_lab.models.registry.Registry), listed and loaded on first
    use."""

    def __init__(self, registry) -> None:
        self.registry = registry
        self._listed: dict[str, list[Snapshot] | InputError] = {}  # per model: its snapshots, or why it has none
        self._pipelines: dict[tuple[str, int], Seq2SeqPipeline | str] = {}  # per snapshot step: loaded, or the error
        self._lock = threading.Lock()

    def listed(self, name: str) -> list[Snapshot]:
        """The model's snapshots in training order; InputError saying how to make them where it has none."""
        self.registry.entry(name)  # a model the app serves
        with self._lock:
            found = self._listed.get(name)
        if found is None:
            found = self._list(name)  # a Hub model's are downloaded now: outside the lock
            if isinstance(found, (list, NoTraining)):  # an unreachable Hub is tried again next time
                with self._lock:
                    found = self._listed.setdefault(name, found)
        if isinstance(found, InputError):
            raise type(found)(str(found))  # a fresh one: a kept exception would gather every traceback
        return found

    def _list(self, name: str) -> list[Snapshot] | InputError:
        entry = self.registry.entries[name]
        if entry.family:  # another library's model: the Hub keeps its final weights only
            return NoTraining(
                f"{name} is a transformers model, published with its final weights only, so there is no training "
                "to show. The bundled reversal model has its training snapshots."
            )
        source, folder = entry.source or name, entry.pipeline.folder
        # A Hub model's snapshots come from the very commit its checkpoint was loaded from (the cache's folder name).
        from_hub = not Path(source).is_dir() and folder is not None and folder.parent.name == "snapshots"
        try:
            return list_snapshots(source, revision=folder.name if from_hub else None)
        except NoSnapshots:
            return NoTraining(
                f"{name} has no training snapshots, so there is no training to show. Add `--snapshots 10` to "
                "its training command (`python -m training.train`) to save them beside the checkpoint."
            )
        except CheckpointError as err:
            logger.info("no snapshots for %s: %s", name, err)
            return InputError(f"The training snapshots of {name} cannot be read: {err}")

    def pipeline(self, name: str, snapshot: Snapshot) -> Seq2SeqPipeline | str:
        """The snapshot's model, loaded once (the last is the model itself); or the message that names what is wrong
        with it."""
        main = self.registry.entries[name].pipeline
        if snapshot.is_checkpoint:
            return main
        key = (name, snapshot.step)
        with self._lock:
            loaded = self._pipelines.get(key)
        if loaded is None:
            try:
                loaded = load_pretrained(snapshot.folder)
                check_compatible(loaded.model.config, main.tokenizer, f"{snapshot.folder}")
            except CheckpointError as err:
                logger.warning("snapshot %s of %s not loaded: %s", snapshot.label, name, err)
                loaded = f"The snapshot at {snapshot.label} of {name} could not be loaded: {err}"
            with self._lock:
                loaded = self._pipelines.setdefault(key, loaded)
        return loaded

    def named(self, name: str, label: str) -> Snapshot:
        """The snapshot of model `name` that the Training tab labels `label` ("step 1,200"; "step 1200" or "1200"
        too); InputError listing the labels there are, for any other."""
        snapshots = self.listed(name)
        wanted = label.strip().lower().removeprefix("step").strip().replace(",", "")
        for snapshot in snapshots:
            if wanted == str(snapshot.step):
                return snapshot
        labels = ", ".join(s.label for s in snapshots)
        raise InputError(f"{name} has no snapshot {quoted(label)}; choose one of: {labels}.")
