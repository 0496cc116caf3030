"""What the page must change after an action: every output it shows now, by name, with a key that says when two
values are equal; only the outputs whose key differs from what the user's page shows are sent.

The step loop's outputs (attention_lab.decoding.view) are always shown; a tab's only while it is open. A slow
output answers with a placeholder, and is made after the answer (`pending`, then Lab.fill), so the click does not
wait for it; one the view gives as Ready (made already) goes out with the answer.

An answer's stream ends on a part that changes nothing (page/wiring.py: gradio sends a stream's last part again as
it ends, when another answer may have changed the page since).
"""

from __future__ import annotations

from ..controls import Controls
from ..feature import DATA, MARKDOWN, Feature, Ready, Screen, Shared
from ..messages import Computing, jsonable
from ..run.state import UserState, shown_step

PENDING = "pending"  # what the page shows of a slow output until the fill sends it


class Views:
    """The features the page shows: the step loop always, and the open tab's (with its parts)."""

    def __init__(self, loop: Feature, tabs: tuple[Feature, ...], shared: Shared) -> None:
        self.loop, self.shared = loop, shared
        self.tabs = {tab.id: tab for tab in tabs}
        self.outputs = {o.name: o for f in (loop, *(part for t in tabs for part in t.every())) for o in f.outputs}
        self.loop_outputs = frozenset(o.name for o in loop.outputs)

    def screen(self, user: UserState, c: Controls, shown: int | None, max_len: int | None) -> Screen:
        run = user.run
        if run is not None:
            shown = user.shown = shown_step(run.session, shown)
        return Screen(c, user, run, shown or 0, max_len, self.shared)

    def wanted(self, screen: Screen) -> dict:
        """Every output the page shows now, as name -> (key, how to make it): the step loop's, and the open tab's
        but those the page makes from its own computation while it draws the tab (UserState.here,
        Feature.in_page_outputs)."""
        found = dict(self.loop.view(screen))
        tab = self.tabs.get(screen.user.tab)
        here = tab is not None and tab.id in screen.user.here
        for feature in tab.every() if tab is not None else ():
            names = {o.name for o in feature.outputs}
            page_made = set(names if feature.in_page_outputs is None else feature.in_page_outputs) if here else set()
            if feature.view is None or (here and names <= page_made):
                continue
            if screen.run is None and feature.needs_run:
                made = {o.name: (None, lambda: None) for o in feature.outputs}
            else:
                made = feature.view(screen)
            found.update((name, value) for name, value in made.items() if name not in page_made)
        return found

    def drawn_by_page(self, user: UserState, c: Controls, max_len: int | None) -> None:
        """The page decoded the user's run itself and wrote the step loop's outputs for it: they are drawn."""
        for name, (key, _) in self.loop.view(self.screen(user, c, user.shown, max_len)).items():
            user.drawn[name] = key

    def aheads(self, user: UserState, c: Controls, max_len: int | None) -> list:
        """What the features of the tabs the user opened before, and shut, would have made ahead now (none for a tab
        the page makes)."""
        screen = self.screen(user, c, user.shown, max_len)
        shut = [self.tabs[tab] for tab in sorted(user.seen) if tab != user.tab and tab in self.tabs]
        shut = [tab for tab in shut if tab.id not in user.here]  # the page makes what these show
        jobs = [feature.ahead(screen) for tab in shut for feature in tab.every() if feature.ahead is not None]
        return [job for job in jobs if job is not None]

    def placeholder(self, name: str):
        """What a slow output shows while it is computed."""
        output = self.outputs[name]
        if output.kind == DATA:
            return Computing(output.slow)
        return f"*{output.slow}*" if output.kind == MARKDOWN else output.slow

    def changes(
        self, user: UserState, c: Controls, shown: int | None, max_len: int | None, loop: bool = True
    ) -> tuple[dict, bool]:
        """The outputs whose value changed, name -> new value, for the user's run at step `shown` (None: the
        latest), a slow one as its placeholder; and whether a slow one waits to be filled. `loop` False: the step
        loop's outputs are left as the page shows them (neither sent nor taken as drawn)."""
        found, waiting = {}, False
        for name, (key, make) in self.wanted(self.screen(user, c, shown, max_len)).items():
            drawn = user.drawn.get(name, ())
            if drawn == key or (not loop and name in self.loop_outputs):
                continue
            if self.outputs[name].slow and key is not None and not isinstance(make, Ready):  # else: sent at once
                # Already waiting for this very value: its placeholder is not sent again (it could reach the page
                # after the fill that answers it, and stay), but it is filled again (a fill made while the tab was
                # shut left it waiting).
                if drawn != (PENDING, key):
                    found[name], user.drawn[name] = jsonable(self.placeholder(name)), (PENDING, key)
                waiting = True
            else:
                found[name], user.drawn[name] = jsonable(make()), key
        user.answered = c
        return found, waiting

    def pending(self, user: UserState, c: Controls, max_len: int | None) -> dict:
        """The slow outputs still to send, name -> (key, how to make it); taken under the user's lock, made after."""
        now = self.wanted(self.screen(user, c, user.shown, max_len))
        return {
            name: now[name]
            for name, drawn in user.drawn.items()
            if self.outputs.get(name) and self.outputs[name].slow and name in now and drawn == (PENDING, now[name][0])
        }
