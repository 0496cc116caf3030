"""Attention across training: a model's training snapshots decoding the user's source, one decoding per snapshot.

The snapshots are listed on first use (a Hub model's are downloaded then) and each is loaded once, then shared by
every session (attention_lab.models.snapshots). A snapshot that cannot be loaded is a decoding with its error: the
others, and every model, keep working.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass

from transformer import DecodingSession, Seq2SeqPipeline
from transformer.checkpoint import error_line
from transformer.snapshots import Snapshot

from ..checks import check_source
from ..core.summaries import head_summaries
from ..models.registry import Registry

logger = logging.getLogger(__name__)
KEPT = 16  # sources decoded by every snapshot kept, by (model, source, max length): a slider move decodes nothing


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
    """The snapshots of the registry's models (attention_lab.models.snapshots, loaded on first use), and their
    decodings of recent sources."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.models = registry.snapshots  # listed and loaded once, shared with every feature that reads them
        self._decoded: OrderedDict[tuple, list[SnapshotDecoding]] = OrderedDict()
        self._lock = threading.Lock()

    def listed(self, name: str) -> list[Snapshot]:
        """The model's snapshots in training order; InputError saying how to make them where it has none."""
        return self.models.listed(name)

    def pipeline(self, name: str, snapshot: Snapshot) -> Seq2SeqPipeline | str:
        """The snapshot's model, loaded once (the last is the model itself); or the message that names what is wrong
        with it."""
        return self.models.pipeline(name, snapshot)

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
                snapshot, error=f"The snapshot at {snapshot.label} of {name} failed to decode: {error_line(err)}"
            )
        best = None
        if alignment:
            cross = head_summaries(session, alignment)["cross"]
            best = max(head["alignment"] for layer in cross for head in layer)
        return SnapshotDecoding(snapshot, session, pipeline.tokenizer.decode(session.tokens), best)
