"""Attention across training: a model's snapshots decoding the user's source, one frame per snapshot.

The snapshots are listed on first use (a Hub model's are downloaded then) and each is loaded once, then shared by
every session. A snapshot that cannot be loaded is a frame with its error: the others, and every model, keep working.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from transformer import CheckpointError, DecodingSession, Seq2SeqPipeline, Transformer, load_pretrained
from transformer.hub import check_compatible
from transformer.snapshots import Snapshot, list_snapshots

from . import lens
from .checks import InputError, check_source
from .registry import Registry

logger = logging.getLogger(__name__)
FRAMES_KEPT = 16  # decoded films kept, by (model, source, max length): a slider move redraws without decoding


class NoSnapshots(InputError):
    """The model has no training snapshots (kept: it will not have them later either)."""


@dataclass
class Frame:
    """One snapshot decoding the source: its output and the best cross head's alignment, or why it could not."""

    snapshot: Snapshot
    session: DecodingSession | None = None
    output_text: str | None = None
    alignment: float | None = None  # the best cross head's alignment accuracy, where a gold alignment is known
    error: str = ""

    @property
    def loss(self) -> float | None:
        return self.snapshot.metrics.get("valid_loss")

    def record(self) -> dict:
        """The API's entry for this frame."""
        entry = {
            "step": self.snapshot.step,
            "output_text": self.output_text,
            "alignment": None if self.alignment is None else round(self.alignment, 6),
            "loss": self.loss,
        }
        return {**entry, "error": self.error} if self.error else entry


class Films:
    """The snapshots of the registry's models, loaded on first use, and the films of recent sources."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._snapshots: dict[str, list[Snapshot] | InputError] = {}  # per model: its snapshots, or why it has none
        self._pipelines: dict[tuple[str, int], Seq2SeqPipeline | str] = {}  # per snapshot step: loaded, or the error
        self._films: OrderedDict[tuple, list[Frame]] = OrderedDict()
        self._lock = threading.Lock()

    def snapshots(self, name: str) -> list[Snapshot]:
        """The model's snapshots in training order; InputError saying how to make them where it has none."""
        self.registry.pipeline(name)  # a model the app serves
        with self._lock:
            found = self._snapshots.get(name)
        if found is None:
            found = self._list(name)  # a Hub model's are downloaded now: outside the lock
            if isinstance(found, (list, NoSnapshots)):  # an unreachable Hub is tried again next time
                with self._lock:
                    found = self._snapshots.setdefault(name, found)
        if isinstance(found, InputError):
            raise type(found)(str(found))  # a fresh one: a kept exception would gather every traceback
        return found

    def _list(self, name: str) -> list[Snapshot] | InputError:
        if not isinstance(self.registry.models[name].model, Transformer):  # a transformers model: final weights only
            return NoSnapshots(
                f"{name} is a transformers model, published with its final weights only, so there is no training "
                "to show. The bundled reversal model has its training snapshots."
            )
        source = self.registry.sources.get(name, name)
        folder = self.registry.models[name].folder
        # A Hub model's snapshots come from the very commit its checkpoint was loaded from (the cache's folder name).
        from_hub = not Path(source).is_dir() and folder is not None and folder.parent.name == "snapshots"
        try:
            return list_snapshots(source, revision=folder.name if from_hub else None)
        except CheckpointError as err:
            logger.info("no snapshots for %s: %s", name, err)
            if "no training snapshots" in str(err):
                return NoSnapshots(
                    f"{name} has no training snapshots, so there is no training to show. Add `--snapshots 10` to "
                    "its training command (`python -m training.train`) to save them beside the checkpoint."
                )
            return InputError(f"The training snapshots of {name} cannot be read: {err}")

    def pipeline(self, name: str, snapshot: Snapshot) -> Seq2SeqPipeline | str:
        """The snapshot's model, loaded once (the last is the model itself); or the message that names what is wrong
        with it."""
        main = self.registry.models[name]
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

    def frames(self, name: str, text: str, max_len: int | None = None) -> list[Frame]:
        """Every snapshot decoding `text` greedily, in training order (kept for the next call with the same source)."""
        ids, _ = check_source(self.registry.pipeline(name), text)  # the main view's message for a bad source
        snapshots = self.snapshots(name)
        key = (name, tuple(ids), max_len)
        with self._lock:
            if key in self._films:
                self._films.move_to_end(key)
                return self._films[key]
        alignment = self.registry.alignments.get(name)
        films = [self._frame(name, s, ids, max_len, alignment) for s in snapshots]
        with self._lock:
            self._films[key] = films
            while len(self._films) > FRAMES_KEPT:
                self._films.popitem(last=False)
        return films

    def _frame(
        self, name: str, snapshot: Snapshot, ids: list[int], max_len: int | None, alignment: str | None
    ) -> Frame:
        pipeline = self.pipeline(name, snapshot)
        if isinstance(pipeline, str):
            return Frame(snapshot, error=pipeline)
        try:
            # As long as validation let it write (Seq2SeqPipeline.generate's limit): an untrained model babbles.
            limit = min(max_len or pipeline.model.config.max_len, 2 * len(ids) + 10)
            session = DecodingSession(pipeline.model, ids, max_new_tokens=limit)
            session.run()
        except Exception as err:  # noqa: BLE001 - one broken snapshot must not take the film down
            logger.warning("snapshot %s of %s failed to decode: %s", snapshot.label, name, err)
            return Frame(snapshot, error=f"The snapshot at {snapshot.label} of {name} failed to decode: {err}")
        best = None
        if alignment:
            cross = lens.head_summaries(session, alignment)["cross"]
            best = max(head["alignment"] for layer in cross for head in layer)
        return Frame(snapshot, session, pipeline.tokenizer.decode(session.tokens), best)
