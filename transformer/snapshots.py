"""A checkpoint's training snapshots: the same model at roughly log-spaced steps of its training run.

    checkpoints/reverse/snapshots/index.json            step, folder and metrics of each, in training order
    checkpoints/reverse/snapshots/step-000012/          a checkpoint of its own (float16 weights)
    ...                                                 the last entry's folder is ".." : the checkpoint itself

>>> from transformer.snapshots import list_snapshots
>>> [s.step for s in list_snapshots("checkpoints/reverse")][:3]
[0, 12, 26]
>>> list_snapshots("checkpoints/reverse")[-1].folder.resolve() == Path("checkpoints/reverse").resolve()
True

A Hub repo id works alike: the snapshots are downloaded (or found in the cache) with the checkpoint.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from . import checkpoint
from .checkpoint import CheckpointError

SNAPSHOTS_DIR = "snapshots"
INDEX_FILE = "index.json"
# The files of the snapshots, for downloading and uploading: the index and each snapshot's checkpoint files (so a
# pickle put beside them is never fetched nor sent).
PATTERNS = (
    f"{SNAPSHOTS_DIR}/{INDEX_FILE}",
    *(
        f"{SNAPSHOTS_DIR}/*/{name}"
        for name in (checkpoint.CONFIG_FILE, checkpoint.WEIGHTS_FILE, checkpoint.TOKENIZER_FILE)
    ),
)
FOLDER_NAME = re.compile(r"step-\d{6,}")  # or ".." for the checkpoint itself; nothing else, so no path escapes


class NoSnapshots(CheckpointError):
    """The checkpoint has no training snapshots: there is no snapshots/index.json."""


@dataclass(frozen=True)
class Snapshot:
    """One point of the run: its step, where its checkpoint is, and what was measured there."""

    step: int
    folder: Path
    metrics: dict[str, float | None] = field(default_factory=dict)  # train_loss, valid_loss, exact_match or bleu
    is_checkpoint: bool = False  # the last: the checkpoint's own weights, not a copy

    @property
    def label(self) -> str:
        return f"step {self.step:,}"


def list_snapshots(
    name_or_path: str | Path, *, revision: str | None = None, local_files_only: bool = False
) -> list[Snapshot]:
    """The snapshots of a local checkpoint folder or Hub repo, in training order.

    Raises NoSnapshots (a CheckpointError) when there are none, CheckpointError when the index cannot be read. A snapshot whose folder is missing or
    broken is still listed: loading it (load_pretrained(snapshot.folder)) names what is wrong with it.
    """
    root = checkpoint.resolve(
        name_or_path, revision=revision, local_files_only=local_files_only, extra_patterns=PATTERNS
    )
    path = root / SNAPSHOTS_DIR / INDEX_FILE
    if not path.is_file():
        raise NoSnapshots(f"{name_or_path}: no training snapshots (there is no {SNAPSHOTS_DIR}/{INDEX_FILE})")
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
        snapshots = [_snapshot(root, entry) for entry in entries]
    except (UnicodeDecodeError, json.JSONDecodeError, TypeError, KeyError, ValueError) as err:
        raise CheckpointError(f"{path}: not a readable snapshot index ({type(err).__name__}: {err})") from err
    steps = [s.step for s in snapshots]
    if not snapshots or steps != sorted(set(steps)):
        raise CheckpointError(f"{path}: the snapshots must be listed once each, in training order (steps {steps})")
    if any(s.is_checkpoint for s in snapshots[:-1]):
        raise CheckpointError(f'{path}: only the last snapshot can be the checkpoint itself (folder "..")')
    return snapshots


def _snapshot(root: Path, entry: dict) -> Snapshot:
    folder = entry["folder"]
    if not (folder == ".." or FOLDER_NAME.fullmatch(folder)):
        raise ValueError(f'folder {folder!r} is neither ".." nor step-NNNNNN')
    step = entry["step"]
    if not isinstance(step, int) or step < 0:
        raise ValueError(f"step {step!r} is not a count of updates")
    metrics = {k: v for k, v in entry.items() if k not in ("step", "folder")}
    if not all(v is None or isinstance(v, (int, float)) for v in metrics.values()):
        raise ValueError(f"the metrics of step {step} are not all numbers")
    if folder == "..":
        return Snapshot(step, root, metrics, is_checkpoint=True)
    return Snapshot(step, root / SNAPSHOTS_DIR / folder, metrics)
