"""A page copy's training snapshots (page_copy/snapshots.py) when something is wrong: a snapshot that could not be
loaded, or whose graphs cannot be made, is listed with why and carries no files; snapshots that cannot be listed
leave the copy without them (the server films them), and never take the copy down. What a good snapshot's graphs
decode is held equal to the library's in tests/test_training_in_page.py."""

from __future__ import annotations

from pathlib import Path

from attention_lab.checks import InputError
from attention_lab.page_copy.snapshots import loaded, snapshot_files
from transformer.snapshots import Snapshot

EARLY = Snapshot(12, Path("/nowhere/snapshots/step-000012"), {"valid_loss": 6.1})
FINAL = Snapshot(500, Path("/nowhere"), {"valid_loss": 0.1}, is_checkpoint=True)


class Models:
    """A registry's snapshots (models/snapshots.py SnapshotModels), listing what it is given, or failing as told."""

    def __init__(self, listed=None, error: Exception | None = None) -> None:
        self.given, self.error = listed or [], error

    def listed(self, name):
        if self.error is not None:
            raise self.error
        return self.given

    def pipeline(self, name, snapshot):
        return f"The snapshot at {snapshot.label} of {name} could not be loaded: broken"


def test_a_snapshot_that_cannot_be_loaded_or_made_is_listed_with_why_and_carries_no_files():
    class Unreadable:  # a model whose graphs cannot be made: its state is read, the model's graphs are not ONNX
        model = type("Model", (), {"state_dict": lambda self: {}})()

    listed, files = snapshot_files(
        b"not onnx", b"not onnx", b"", [(EARLY, "could not be loaded: broken"), (EARLY, Unreadable()), (FINAL, "")]
    )
    assert files == {}
    assert listed[0]["error"] == "could not be loaded: broken"
    assert listed[1]["error"].startswith("The snapshot at step 12 cannot be made for the page: ")
    assert listed[1]["folder"] is None and listed[1]["metrics"] == {"valid_loss": 6.1}
    assert listed[2] == {"step": 500, "metrics": {"valid_loss": 0.1}, "model": True, "folder": None, "error": ""}


def test_snapshots_that_cannot_be_listed_leave_the_copy_without_them():
    assert loaded(Models(error=InputError("reverse has no training snapshots")), "reverse") == (
        "reverse has no training snapshots"  # the server's words, which the page says too
    )
    assert loaded(Models(error=RuntimeError("the Hub cannot be reached")), "reverse") == []
    found = loaded(Models([EARLY, FINAL]), "reverse")
    assert [snapshot for snapshot, _ in found] == [EARLY, FINAL] and "broken" in found[0][1]
