"""Attention across training, as an endpoint: /training, a model's snapshots decoding a source."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from ..feature import Endpoint, Limits
from ..messages import OMITTED
from ..request import Request
from .decodings import SnapshotDecoding, Snapshots


@dataclass
class SnapshotRecord:
    step: int  # the training step it was taken at
    output_text: str | None  # null: it could not be loaded or decoded (see error)
    alignment: float | None  # the best cross head's alignment accuracy for the source, or null where none is known
    loss: float | None  # its validation loss
    error: Annotated[str | None, OMITTED] = None  # what is wrong with a snapshot that could not be loaded


@dataclass
class Training:
    snapshots: list[SnapshotRecord]  # in training order


def snapshot_record(decoded: SnapshotDecoding) -> SnapshotRecord:
    alignment = None if decoded.alignment is None else round(decoded.alignment, 6)
    return SnapshotRecord(decoded.snapshot.step, decoded.output_text, alignment, decoded.loss, decoded.error or None)


def training(request: Request, model: str, text: str) -> Training:
    """Decode `text` greedily with each training snapshot of `model`: {"snapshots": [{"step", "output_text",
    "alignment", "loss"}]} in training order. alignment: the best cross head's alignment accuracy for `text`, or
    null where no gold alignment is known; loss: the snapshot's validation loss. A snapshot that could not be loaded
    has null output and alignment, and an "error" naming it. Each snapshot decodes to its model's own limit."""
    snapshots = request.store(Snapshots)
    snapshots.listed(model)  # a model without snapshots says so first
    request.within(model, text)
    return Training([snapshot_record(decoded) for decoded in snapshots.decodings(model, text)])


TRAINING_ENDPOINT = Endpoint(
    "training", training, Training, "A model's training snapshots decoding `text`.", Limits(64)
)
