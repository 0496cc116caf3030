"""The page's behaviour over the shared models, as plain Python (tested without a server): an action changes the
user's run under the user's lock, then the page is told only what changed (attention_lab.page.render); what is slow
to make is filled after, by `fill`, outside the lock; and the next greedy step is decoded ahead in the background
while the user looks at this one."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Executor

from ..controls import Controls
from ..decoding.actions import Decoding
from ..decoding.state import UserState
from ..decoding.view import goes_on
from ..feature import Feature, Shared
from ..models.registry import Registry
from ..records import jsonable
from .render import PENDING, Views

Action = Callable[..., int | None]  # (user, controls, *extra) -> the step to show, or None for the latest
logger = logging.getLogger("attention_lab")


class Lab:
    """Runs what the page's controls do (`decoding`: Run, Step, Back, Reset, what-if; a feature's own actions) on a
    user's run: `do` runs one and says what the page must change; `fill` makes what was left to fill."""

    def __init__(
        self,
        registry: Registry,
        loop: Feature,
        tabs: tuple[Feature, ...],
        shared: Shared,
        ahead: Executor | None = None,
    ) -> None:
        if not registry.entries:
            raise SystemExit("no model could be loaded:\n" + "\n".join(registry.errors.values()))
        self.registry, self.shared, self.ahead = registry, shared, ahead
        self.default = "de-en" if "de-en" in registry.entries else registry.names[0]
        self.views = Views(loop, tabs, shared)
        self.decoding = Decoding(registry)

    def do(self, action: Action, user: UserState, c: Controls, *extra) -> dict:
        """Run `action` on the user's run under the user's lock; the page's changes, name -> new value."""
        with user.lock:
            shown = action(user, c, *extra)
            max_len = self.decoding.max_len(c)
            found, _ = self.views.changes(user, c, shown, max_len)
            ahead = goes_on(user.run, c, max_len)
        if ahead and self.ahead is not None:  # decoded while the user looks at this step: Step then takes it
            self.ahead.submit(self._step_ahead, user)
        return found

    def _step_ahead(self, user: UserState) -> None:
        try:
            self.decoding.step_ahead(user)
        except Exception:
            logger.exception("decoding a step ahead failed")

    def show(self, user: UserState, c: Controls) -> dict:
        """Redraw for the controls as they are (a new source or option), at the step the page shows."""
        return self.do(lambda user, c: user.shown, user, c)

    def open_tab(self, user: UserState, c: Controls, tab: str) -> dict:
        """Draw a tab as it opens; it keeps the step the page shows."""
        with user.lock:
            if tab == user.tab or tab not in self.views.tabs:  # gradio selects the open tab as the page opens
                return {}
            user.tab = tab
            found, _ = self.views.changes(user, c, user.shown, self.decoding.max_len(c))
            return found

    def fill(self, user: UserState) -> dict:
        """The slow outputs the last action answered with a placeholder, made now as that action's controls asked,
        outside the user's lock: a Step clicked meanwhile is not kept waiting, and what it made stale is not sent."""
        with user.lock:
            c = user.answered
            if c is None:
                return {}
            todo = self.views.pending(user, c, self.decoding.max_len(c))
        made = {name: (key, jsonable(make())) for name, (key, make) in todo.items()}
        with user.lock:
            found = {}
            for name, (key, value) in made.items():
                if user.drawn.get(name) == (PENDING, key):
                    found[name], user.drawn[name] = value, key
            return found
