"""The page's behaviour over the shared models, as plain Python (tested without a server): an action changes the
user's run under the user's lock, then the page is told only what changed (lab.page.render); what is slow to make is
filled after, by `fill`, outside the lock."""

from __future__ import annotations

from collections.abc import Callable

from ..attention import export, payload
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
        """Redraw for the controls as they are (a new source or option, the slider's step)."""
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

    def fill(self, user: UserState) -> dict:
        """The slow outputs the last action answered with a placeholder, made now as that action's controls asked,
        outside the user's lock: a Step clicked meanwhile is not kept waiting, and what it made stale is not sent."""
        with user.lock:
            c = user.answered
            if c is None:
                return {}
            todo = render.pending(user, c, self.snapshots, self.decoding.max_len(c))
        made = {name: (key, make()) for name, (key, make) in todo.items()}
        with user.lock:
            found = {}
            for name, (key, value) in made.items():
                if user.drawn.get(name) == (render.PENDING, key):
                    found[name], user.drawn[name] = value, key
            return found

    def export_json(self, user: UserState) -> str:
        """The run's attention record written to a JSON file; returns its path."""
        with user.lock:
            run = _decoded(user)
            record = attention_record(run.session, run.pipeline.tokenizer, run.entry.name)
        return export.json_file(record)

    def export_html(self, user: UserState, c: Controls) -> str:
        """The page's views of the user's run, at the shown step, in one HTML file that works offline; its path."""
        with user.lock:
            run = _decoded(user)
            session, tokenizer = run.session, run.pipeline.tokenizer
            data = payload.full(session, tokenizer, run.entry.name, run.original, run.forced_at)
            output = tokenizer.decode(session.tokens)
            shown = shown_step(session, c.shown)
        return export.html_file(data, c, shown, run.entry.name, run.text, output)


def _decoded(user: UserState) -> Run:
    if user.run is None or not user.run.session.steps:
        raise InputError("Nothing to export yet: Run or Step first.")
    return user.run
