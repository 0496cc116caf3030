"""Snapshots of a run at roughly log-spaced steps, so that the app can show attention forming (its Training view).

Beside the checkpoint in --out:

    snapshots/index.json        the snapshots in training order: step, folder, train_loss, valid_loss, and
                                exact_match (reversal) or bleu and chrf (translation)
    snapshots/step-000012/      config.json, model.safetensors (float16), tokenizer.json: a checkpoint of its own

The index's last entry is the checkpoint itself (folder ".."): the shipped weights, not a float16 copy of them.
"""

from __future__ import annotations

import copy
import json
import math
import shutil
from pathlib import Path

from transformer import Seq2SeqPipeline, load_pretrained
from transformer.snapshots import FOLDER_NAME, INDEX_FILE, SNAPSHOTS_DIR

from .log import report
from .state import TrainState
from .validation import evaluate_state, selection_metric


def plan(total: int, count: int) -> list[int]:
    """`count` steps from 0 to `total`, roughly log-spaced: step 0, then a geometric series that ends at `total`.

    >>> plan(6000, 10)
    [0, 12, 26, 57, 123, 268, 583, 1269, 2759, 6000]
    >>> plan(6000, 2)
    [0, 6000]
    """
    if count < 2 or total < 1:
        raise ValueError(f"snapshots need at least 2 points and 1 step (got {count} over {total} steps)")
    if count == 2:
        return [0, total]
    first = max(1, round(total / 500))
    ratio = (total / first) ** (1 / max(count - 2, 1))
    steps = {0, total} | {round(first * ratio**i) for i in range(count - 1)}
    return sorted(s for s in steps if s <= total)


def folder_name(step: int) -> str:
    return f"step-{step:06d}"


def start(state: TrainState) -> None:
    """A fresh run begins with no snapshots (an older run's would mix with this one's, and the last would name this
    run's checkpoint). A resumed run keeps its snapshots; the one that was the checkpoint itself becomes a float16
    copy of it, since training goes on and --out may change."""
    out = state.args.out
    if not state.args.resume:
        shutil.rmtree(out / SNAPSHOTS_DIR, ignore_errors=True)
        return
    index = _read(out)
    entries = [e for e in index if FOLDER_NAME.fullmatch(str(e.get("folder")))]
    final = [e for e in index if e.get("folder") == ".."]
    if final and (out / "model.safetensors").is_file():
        step = final[-1]["step"]
        pipeline = load_pretrained(out)
        Seq2SeqPipeline(pipeline.model.half(), pipeline.tokenizer).save_pretrained(
            out / SNAPSHOTS_DIR / folder_name(step)
        )
        entries = [e for e in entries if e["step"] < step] + [{**final[-1], "folder": folder_name(step)}]
    if entries or final:
        _write(out, entries)


def _read(out: Path) -> list[dict]:
    path = out / SNAPSHOTS_DIR / INDEX_FILE
    return json.loads(path.read_text()) if path.is_file() else []


def _write(out: Path, entries: list[dict]) -> None:
    path = out / SNAPSHOTS_DIR / INDEX_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entries, indent=1) + "\n")


def take(state: TrainState, train_loss: float | None = None) -> None:
    """Validate the current weights and save them in float16 as the snapshot of this step (main process only);
    `train_loss` stands in for the last updates' mean where there were none yet (step 0)."""
    step = state.progress.step
    metrics = evaluate_state(state)
    if train_loss is not None:
        metrics["train_loss"] = train_loss
    metrics = _rounded(metrics)
    folder = state.args.out / SNAPSHOTS_DIR / folder_name(step)
    half = copy.deepcopy(state.model).half()
    Seq2SeqPipeline(half, state.tokenizer).save_pretrained(folder)
    entries = [e for e in _read(state.args.out) if e["step"] < step and e["folder"] != ".."]
    _write(state.args.out, [*entries, {"step": step, "folder": folder.name, **metrics}])
    report(f"snapshot at step {step}: {json.dumps(metrics)}")


def finish(state: TrainState) -> None:
    """The last snapshot is the checkpoint in --out, at the step its weights come from; snapshots taken after that
    step (weights that were not kept) are dropped. Also after a resumed stage without --snapshots, if the run has
    them: the checkpoint has moved on."""
    out, progress = state.args.out, state.progress
    if not state.args.snapshots and not (out / SNAPSHOTS_DIR / INDEX_FILE).is_file():
        return  # a run without snapshots
    best = progress.best_metrics or next(  # a run resumed from a state saved before best_metrics was kept
        (h for h in reversed(progress.history) if selection_metric(state.args.task, h) == progress.best), None
    )
    if not best:
        return
    step = best["step"]
    kept = []
    for entry in _read(out):
        if not FOLDER_NAME.fullmatch(str(entry["folder"])):
            continue  # never "..": that is the checkpoint
        if entry["step"] < step:
            kept.append(entry)
        else:
            shutil.rmtree(out / SNAPSHOTS_DIR / entry["folder"], ignore_errors=True)
    final = {k: v for k, v in best.items() if k not in ("step", "epoch", "minutes", "averaged")}
    _write(out, [*kept, {"step": step, "folder": "..", **_rounded(final)}])
    report(f"{len(kept) + 1} snapshots in {out / SNAPSHOTS_DIR}, the last being the checkpoint itself")


def _rounded(metrics: dict) -> dict:
    return {k: round(v, 4) if isinstance(v, float) and math.isfinite(v) else v for k, v in metrics.items()}
