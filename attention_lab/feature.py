"""A feature of the app, as the rest of the app sees it: the small face every feature folder offers.

A feature lays out its components (`layout`), names the outputs it shows (`outputs`), says what they show for a
user's run while its tab is open (`view`), and wires its own events (`wire`). attention_lab/tabs.py lists the
features, one line each; attention_lab/page builds the page from that table, wires it, and redraws only what changed.
A new tab is a new folder and one line there.

An output's kind says how its value reaches its component (attention_lab.page.wiring):

    TEXT      a string, the component's value
    MARKDOWN  a string of Markdown
    NOTICE    a string, hidden when empty
    BUTTON    a bool: whether it can be clicked now
    TABLE     rows, or None for an empty table
    TITLED    {"value", "label"}: a text with its own label, hidden when empty
    DATA      JSON for the feature's page module, which draws it (never shown as it is)

A slow output answers a click with a placeholder that says what is being computed, and is filled by the event
chained after the click, so that the click does not wait for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

TEXT, MARKDOWN, NOTICE, BUTTON, TABLE, TITLED, DATA = "text", "markdown", "notice", "button", "table", "titled", "data"


@dataclass(frozen=True)
class Output:
    name: str  # the component's name in the feature's layout, and the key of the changes the page is sent
    kind: str
    slow: str = ""  # what it says while it is computed after the click ("" when it answers with the click)


@dataclass
class Shared:
    """What every session shares: the models, and the app-wide stores features keep (the training snapshots)."""

    registry: Any  # attention_lab.models.registry.Registry
    snapshots: Any = None  # attention_lab.snapshots.decodings.Snapshots


@dataclass
class Screen:
    """A user's run at the shown step, as the controls ask for it: what a view reads."""

    controls: Any  # attention_lab.controls.Controls
    user: Any  # attention_lab.decoding.state.UserState
    run: Any  # attention_lab.decoding.state.Run, or None before any decoding
    shown: int  # the step shown (0: before any output)
    max_len: int | None  # the max length the controls ask for
    shared: Shared


View = Callable[[Screen], dict]  # -> {output name: (key, how to make its value)}: equal keys, equal values


@dataclass(frozen=True)
class Feature:
    id: str  # its tab's id, and the name its per-run and per-user state is kept under
    title: str = ""  # its tab's title
    layout: Callable[..., dict] | None = None  # (page) -> its components by name (every output's among them)
    outputs: tuple[Output, ...] = ()
    view: View | None = None  # what its outputs show while its tab is open (None: drawn in the page alone)
    wire: Callable[..., None] | None = None  # (components, wiring): its own events
    controls: tuple[str, ...] = ()  # its components every decoding event sends (read from Controls.options)
    needs_run: bool = True  # with no run, its outputs are blank (the Training tab decodes the source itself)
    parts: tuple[Feature, ...] = field(default=())  # features laid out, drawn and wired inside this one's tab

    def every(self) -> tuple[Feature, ...]:
        """This feature and its parts."""
        return (self, *self.parts)
