"""What the Training tab shows, and the /training API's answer: a model's snapshots decoding the user's source."""

from __future__ import annotations

from .checks import InputError
from .drawing import Drawing, Look
from .film import Films, Frame
from .film_views import training_chart
from .views import empty_figure

OUTPUTS = ("snapshot", "snapshot_info", "snapshot_output", "snapshot_view", "snapshot_chart")


def record(films: Films, model: str, text: str) -> dict:
    """{"snapshots": [{"step", "output_text", "alignment", "loss"}]} in training order; a snapshot that could not be
    loaded has null output and alignment, and an "error" naming it."""
    return {"snapshots": [frame.record() for frame in films.frames(model, text)]}


def at_end(films: Films, c) -> bool:
    """Whether the controls show the last snapshot (or the model has none to play)."""
    try:
        n = len(films.snapshots(c.model))
    except InputError:
        return True
    try:
        return int(c.snapshot) >= n - 1
    except (TypeError, ValueError):
        return True


def chosen(frames: list[Frame], index: object) -> int:
    """The slider's snapshot, within range; none yet: the first (step 0), where the film starts."""
    try:
        wanted = int(index)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0
    return max(0, min(wanted, len(frames) - 1))


def outputs(films: Films, model: str, text: str, max_len: int | None, index: object, look: Look) -> dict:
    """The Training tab's outputs as name -> (key, how to make it), as Lab.page gives them."""
    try:
        frames = films.frames(model, text, max_len)
    except InputError as err:
        return _unavailable(model, str(err))
    n, i = len(frames), chosen(frames, index)
    frame = frames[i]
    label = f"Snapshot {i + 1} of {n}: step {frame.snapshot.step:,}"
    at = (model, text, max_len, i)
    slider = {"value": i, "maximum": max(n - 1, 1), "interactive": n > 1, "label": label}
    info = describe(frames, i, model)
    wanted = {
        "snapshot": ((model, n, i), lambda: slider),
        "snapshot_info": (info, lambda: info),
        "snapshot_output": ((*at, frame.output_text), lambda: frame.output_text or ""),
        # Drawn once per film: a move of the slider moves its mark in the browser (lab/assets/tile_click.js)
        "snapshot_chart": (at[:3], lambda: training_chart(frames, i, model)),
    }
    wanted["snapshot_view"] = ((*at, look), lambda: view(films, model, frame, look))
    return wanted


def view(films: Films, model: str, frame: Frame, look: Look):
    """The snapshot's cross-attention over its whole decoding, drawn as the Cross-attention tab draws it."""
    if frame.session is None:
        return empty_figure(frame.error)
    tokenizer = films.registry.models[model].tokenizer  # every snapshot shares the checkpoint's tokenizer
    shown = len(frame.session.steps)
    return Drawing.of(frame.session, tokenizer, look).view("cross", shown)


def describe(frames: list[Frame], i: int, model: str) -> str:
    """One line on the shown snapshot: its step and what was measured there, or why it cannot be shown."""
    frame = frames[i]
    shown = frame.snapshot.is_checkpoint
    head = f"**Step {frame.snapshot.step:,}**" + (f" (the {model} model the other tabs show)" if shown else "")
    if frame.error:
        return f"{head}: {frame.error}"
    metrics = frame.snapshot.metrics
    parts = [head, "it writes nothing: `</s>` comes first"] if frame.output_text == "" else [head]
    if frame.loss is not None:
        parts.append(f"validation loss {frame.loss:.3f}")
    if metrics.get("exact_match") is not None:
        parts.append(f"validation exact match {metrics['exact_match']:.1%}")
    if metrics.get("bleu") is not None:
        parts.append(f"validation BLEU {metrics['bleu']:.2f}")
    if frame.alignment is not None:
        parts.append(f"best cross head's alignment on this source {frame.alignment:.0%}")
    return " · ".join(parts)


def _unavailable(model: str, message: str) -> dict:
    slider = {"value": 0, "maximum": 1, "interactive": False, "label": "Snapshot"}
    return {
        "snapshot": ((model, 0, 0), lambda: slider),
        "snapshot_info": (message, lambda: message),
        "snapshot_output": (("", message), lambda: ""),
        "snapshot_view": (("none", message), lambda: empty_figure(message)),
        "snapshot_chart": (None, lambda: None),
    }
