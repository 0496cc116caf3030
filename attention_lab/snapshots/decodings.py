"""Attention across training: a model's training snapshots decoding the user's source, one decoding per snapshot.

The snapshots are listed on first use (a Hub model's are downloaded then) and each is loaded once, then shared by
every session. A snapshot that cannot be loaded is a decoding with its error: the others, and every model, keep
working.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from transformer import CheckpointError, DecodingSession, Seq2SeqPipeline, load_pretrained
from transformer.hub import check_compatible
from transformer.snapshots import NoSnapshots, Snapshot, list_snapshots

from ..attention.summaries import head_summaries
from ..checks import InputError, check_source
from ..models.registry import Registry

logger = logging.getLogger(__name__)
KEPT = 16  # sources decoded by every snapshot kept, by (model, source, max length): a slider move decodes nothing


class NoTraining(InputError):
    """The model has no training to show (kept: it will not have it later either)."""


@dataclass
class SnapshotDecoding:
    """One snapshot decoding the source: its output and the best cross head's alignment, or why it could not."""

    snapshot: Snapshot
    session: DecodingSession | None = None
    output_text: str | None = None
    alignment: float | None = None  # the best cross head's alignment accuracy, where a gold alignment is known
    error: str = ""

    @property
    def loss(self) -> float | None:
        return self.snapshot.metrics.get("valid_loss")


class Snapshots:
    """The snapshots of the registry's models, loaded on first use, and their decodings of recent sources."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._listed: dict[str, list[Snapshot] | InputError] = {}  # per model: its snapshots, or why it has none
        self._pipelines: dict[tuple[str, int], Seq2SeqPipeline | str] = {}  # per snapshot step: loaded, or the error
        self._decoded: OrderedDict[tuple, list[SnapshotDecoding]] = OrderedDict()
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

    def kept(self, name: str, text: str, max_len: int | None = None) -> bool:
        """Whether every snapshot has decoded `text` already (the next `decodings` of it takes no time)."""
        ids = self.registry.entry(name).pipeline.tokenizer.encode(text)
        with self._lock:
            return (name, tuple(self.registry.entries[name].pipeline.truncate(ids)), max_len) in self._decoded

    def decodings(self, name: str, text: str, max_len: int | None = None) -> list[SnapshotDecoding]:
        """Every snapshot decoding `text` greedily, in training order (kept for the next call with the same source)."""
        ids, _ = check_source(self.registry.entry(name).pipeline, text)  # the main view's message for a bad source
        snapshots = self.listed(name)
        key = (name, tuple(ids), max_len)
        with self._lock:
            if key in self._decoded:
                self._decoded.move_to_end(key)
                return self._decoded[key]
        alignment = self.registry.entries[name].alignment
        decoded = [self._decode(name, s, ids, max_len, alignment) for s in snapshots]
        with self._lock:
            self._decoded[key] = decoded
            while len(self._decoded) > KEPT:
                self._decoded.popitem(last=False)
        return decoded

    def _decode(
        self, name: str, snapshot: Snapshot, ids: list[int], max_len: int | None, alignment: str | None
    ) -> SnapshotDecoding:
        pipeline = self.pipeline(name, snapshot)
        if isinstance(pipeline, str):
            return SnapshotDecoding(snapshot, error=pipeline)
        try:
            # As long as validation let it write (Seq2SeqPipeline.generate's limit): an untrained model babbles.
            limit = min(max_len or pipeline.model.config.max_new_tokens, 2 * len(ids) + 10)
            session = DecodingSession(pipeline.model, ids, max_new_tokens=limit)
            session.run()
        except Exception as err:  # noqa: BLE001 - one broken snapshot must not take the others down
            logger.warning("snapshot %s of %s failed to decode: %s", snapshot.label, name, err)
            return SnapshotDecoding(
                snapshot, error=f"The snapshot at {snapshot.label} of {name} failed to decode: {err}"
            )
        best = None
        if alignment:
            cross = head_summaries(session, alignment)["cross"]
            best = max(head["alignment"] for layer in cross for head in layer)
        return SnapshotDecoding(snapshot, session, pipeline.tokenizer.decode(session.tokens), best)
