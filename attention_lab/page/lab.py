"""The page's behaviour over the shared models, as plain Python (tested without a server): an action changes the
user's run under the user's lock, then the page is told only what changed (attention_lab.page.render); what is slow
to make is filled after, by `fill`, outside the lock, and is begun in the background as soon as the action is
answered (`early`), so that the fill the page then asks for finds it made or under way; and the next greedy step is
decoded ahead in the background while the user looks at this one."""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Callable
from concurrent.futures import Executor, Future, wait

from ..controls import Controls
from ..decoding.actions import DecodingActions
from ..decoding.from_page import open_tab_of
from ..decoding.view import goes_on
from ..feature import DATA, Feature, Output, Shared
from ..messages import Ask, jsonable
from ..models.devices import use_threads
from ..models.registry import Registry
from ..run.state import UserState
from .render import PENDING, Views

Action = Callable[..., int | None]  # (user, controls, *extra) -> the step to show, or None for the latest
logger = logging.getLogger("attention_lab")
ASK = Output("ask", DATA)  # the page's own: it asks for the slow outputs it still waits for (page/fill.mjs)


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
        early: Executor | None = None,
    ) -> None:
        if not registry.entries:
            raise SystemExit("no model could be loaded:\n" + "\n".join(registry.errors.values()))
        self.registry, self.shared, self.ahead, self.early = registry, shared, ahead, early
        self.asked = itertools.count(1)
        self.default = "de-en" if "de-en" in registry.entries else registry.names[0]
        self.views = Views(loop, tabs, shared)
        self.decoding = DecodingActions(registry)

    def do(self, action: Action, user: UserState, c: Controls, *extra) -> dict:
        """Run `action` on the user's run under the user's lock; the page's changes, name -> new value."""
        with user.lock:
            older, before = self.take(user, c), made_of(user)
            shown = action(user, c, *extra)
            max_len = self.decoding.max_len(c)
            # made for an older decoding of the page's, an answer that changed nothing of the run leaves the step
            # loop's outputs as the page wrote them since (for the decoding taken, and the controls it was sent with)
            loop = not older or made_of(user) != before
            found, waiting = self.views.changes(user, c, shown, max_len, loop=loop)
            ahead = goes_on(user.run, c, max_len)
            if waiting:
                self._begin(user)
            self._prepare(user, self.views.aheads(user, c, max_len) if self.early is not None else [])
        if ahead and self.ahead is not None:  # decoded while the user looks at this step: Step then takes it
            self.ahead.submit(self._working, self._step_ahead, user)
        return found

    def take(self, user: UserState, c: Controls) -> bool:
        """The decoding the page shows, when it decoded it itself, as the user's run (decoding/from_page.py); the step
        loop's outputs as the page wrote them, for the controls it decoded with. Whether the page sent an older
        decoding than one taken already (which is not taken)."""
        older = self.decoding.road.older(user, c)
        tab = open_tab_of(c.page)
        if not older and tab in self.views.tabs:  # opened in the page with no request of its own
            user.tab = tab
            user.seen.add(tab)
        sent = self.decoding.road.take(user, c)
        if sent is not None:
            run, c = user.run, dataclasses.replace(c, strategy=sent.strategy)
            if run is not None:
                c = dataclasses.replace(c, model=run.entry.name, source=run.text, top_k=run.top_k, max_len=run.max_len)
            self.views.drawn_by_page(user, c, self.decoding.max_len(c))
        return older

    def _working(self, work: Callable, *args):
        """`work(*args)` in a background thread, on the app's threads (models/devices.py use_threads)."""
        use_threads(self.shared.threads)
        return work(*args)

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
            older = self.take(user, c)
            user.tab = tab
            user.seen.add(tab)
            found, waiting = self.views.changes(user, c, user.shown, self.decoding.max_len(c), loop=not older)
            if waiting:
                self._begin(user)
            return found

    def _prepare(self, user: UserState, jobs: list) -> None:
        """Make what shut tabs the user opened before would show, in the background (features' `ahead`); what was
        prepared for an earlier action and has not started is dropped."""
        for prepared in user.prepared:
            prepared.cancel()
        user.prepared = [self.early.submit(self._working, quietly, job) for job in jobs]

    def _begin(self, user: UserState) -> None:
        """Begin making the slow outputs the user's page waits for, in the background (under the user's lock: what
        they need is taken now); what an earlier action began and has not started is dropped."""
        if self.early is None:
            return
        c = user.answered
        todo = self.views.pending(user, c, self.decoding.max_len(c))
        if user.early is not None:
            user.early.cancel()
        user.early = self.early.submit(self._working, made, todo)

    def soon(self, user: UserState, wait_s: float) -> dict:
        """The slow outputs begun with the last answer, if they are made within `wait_s` seconds (they then go out
        on that answer's own stream, with no request of their own); {} otherwise, and the fill sends them."""
        begun = user.early
        if begun is None or not wait([begun], timeout=wait_s).done:
            return {}
        return self.fill(user)

    def after(self, user: UserState, wait_s: float) -> dict:
        """What follows an answer on its stream: the slow outputs begun with it, if they are made within `wait_s`
        seconds, and, while the page still waits for one, its cue to ask for them (ASK)."""
        found = self.soon(user, wait_s)
        if self.waiting(user):
            found[ASK.name] = jsonable(Ask(next(self.asked)))
        return found

    def waiting(self, user: UserState) -> bool:
        """Whether the user's page waits for a slow output (it was answered with its placeholder)."""
        with user.lock:
            return any(isinstance(drawn, tuple) and drawn[:1] == (PENDING,) for drawn in user.drawn.values())

    def fill(self, user: UserState) -> dict:
        """The slow outputs the last action answered with a placeholder, made now as that action's controls asked,
        outside the user's lock: a Step clicked meanwhile is not kept waiting, and what it made stale is not sent."""
        with user.lock:
            c = user.answered
            if c is None:
                return {}
            todo = self.views.pending(user, c, self.decoding.max_len(c))
            begun, user.early = user.early, None
        found = begun_made(begun)
        found = {name: found[name] for name in todo if name in found and found[name][0] == todo[name][0]}
        missing = {name: pair for name, pair in todo.items() if name not in found}
        made_now = {**found, **made(missing)}
        with user.lock:
            found = {}
            for name, (key, value) in made_now.items():
                if user.drawn.get(name) == (PENDING, key):
                    found[name], user.drawn[name] = value, key
            return found


def made_of(user: UserState) -> tuple | None:
    """What the user's run is now: the run, by identity, and its key (an action that changes it changes this)."""
    run = user.run
    return None if run is None else (id(run), run.serial, run.version)


def quietly(job) -> None:
    """A job made ahead: its failure is logged (the tab says it when it is opened, making it again)."""
    try:
        job()
    except Exception:
        logger.exception("making ahead failed")


def made(todo: dict) -> dict:
    """Each slow output of `todo` (name -> (key, how to make it)) made, as JSON: name -> (key, value)."""
    return {name: (key, jsonable(make())) for name, (key, make) in todo.items()}


def begun_made(begun: Future | None) -> dict:
    """What a background making gave (waiting for it to end); nothing if there was none, or it failed (the fill
    then makes it, and says what went wrong as it would have)."""
    if begun is None or begun.cancelled():
        return {}
    try:
        return begun.result()
    except Exception:
        logger.exception("making the slow outputs early failed")
        return {}
