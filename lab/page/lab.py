"""The page's behaviour over the shared models, as plain Python (tested without a server): an action changes the
user's run under the user's lock, then the page is told only what changed (lab.page.render)."""

from __future__ import annotations

from collections.abc import Callable

from ..attention import export
from ..attention.drawing import Drawing, Look
from ..attention.record import attention_record
from ..checks import InputError
from ..controls import Controls
from ..decoding.actions import Decoding
from ..decoding.run import Run, UserState, shown_step
from ..heads.actions import HeadTests
from ..models.registry import Registry
from ..snapshots.decodings import Snapshots
from . import render
from .tabs import BY_ID

Action = Callable[..., int | None]  # (user, controls, *extra) -> the step to show, or None for the latest


class Lab:
    """What the page's controls do: `decoding` (Run, Step, Back, Reset, what-if) and `heads` (Ablate, edit) change the
    user's run; `do` runs one of them and says what the page must change."""

    def __init__(self, registry: Registry) -> None:
        if not registry.entries:
            raise SystemExit("no model could be loaded:\n" + "\n".join(registry.errors.values()))
        self.registry = registry
        self.default = "de-en" if "de-en" in registry.entries else registry.names[0]
        self.snapshots = Snapshots(registry)
        self.decoding = Decoding(registry)
        self.heads = HeadTests(self.decoding)

    def do(self, action: Action, user: UserState, c: Controls, *extra) -> dict:
        """Run `action` on the user's run under the user's lock; the page's changes, name -> new value."""
        with user.lock:
            shown = action(user, c, *extra)
            return render.changes(user, c, shown, self.snapshots, self.decoding.max_len(c))

    def show(self, user: UserState, c: Controls) -> dict:
        """Redraw at the slider's step (with other view options)."""
        return self.do(lambda user, c: c.shown, user, c)

    def open_tab(self, user: UserState, c: Controls, tab: str) -> dict:
        """Draw a tab as it opens; it keeps the step the page shows (the slider may not have caught up with it)."""
        if tab not in BY_ID:
            return self.show(user, c)
        with user.lock:
            if tab == user.tab:  # gradio selects the open tab as the page opens: nothing to draw, and an answer
                return {}  # sent beside the opening Run's could reach the page after it and blank its views
            user.tab = tab
            return render.changes(user, c, user.shown, self.snapshots, self.decoding.max_len(c))

    def export_json(self, user: UserState) -> str:
        """The run's attention record written to a JSON file; returns its path."""
        with user.lock:
            run = _decoded(user)
            record = attention_record(run.session, run.pipeline.tokenizer, run.entry.name)
        return export.json_file(record)

    def export_html(self, user: UserState, c: Controls) -> str:
        """Every view of the user's run at the shown step, written to an HTML file that works offline; its path."""
        with user.lock:
            run = _decoded(user)
            session, tokenizer = run.session, run.pipeline.tokenizer
            drawing = Drawing.of(session, tokenizer, Look.of(c))
            output = tokenizer.decode(session.tokens)
            return export.html_file(drawing, shown_step(session, c.shown), run.entry.name, run.text, output)


def _decoded(user: UserState) -> Run:
    if user.run is None or not user.run.session.steps:
        raise InputError("Nothing to export yet: Run or Step first.")
    return user.run
