"""A feature of the app, as the rest of the app sees it: everything it adds, declared in its folder.

A feature lays out its components (`layout`), names the outputs it shows (`outputs`), says what they show for a
user's run while its tab is open (`view`), and wires its own events (`wire`). It declares its endpoints of the JSON
API (`endpoints`: name, function, queue lane, input limits, a one-line description and the record it answers with),
its stylesheet beside its page modules, the type of what it keeps of a run (`state`) and of a user (`user_state`),
an app-wide store (`store`), and the records its page modules are sent (`messages`, the page's JSON Schema).
attention_lab/tabs.py lists the features, one line each; the app builds the page, the API and the queue's lanes from
that table, and no other module lists every feature or endpoint. A new feature is a new folder and one line there.
Features never read each other's components by name: a feature declares which of its components others may listen
to (`publishes`) and which of theirs it listens to (`listens`), and its `wire` is handed those and its own.

An output's kind says how its value reaches its component (attention_lab.page.wiring):

    TEXT      a string, the component's value
    MARKDOWN  a string of Markdown
    NOTICE    a string, hidden when empty
    BUTTON    a bool: whether it can be clicked now
    TABLE     rows, or None for an empty table
    TITLED    {"value", "label"}: a text with its own label, hidden when empty
    DATA      a record for the feature's page module, which draws it (never shown as it is)

A slow output does not hold up the click: the click is answered with a placeholder that says what is being computed,
the output is begun in the background at once, and it follows the answer on the same stream if it is made within
half a second; otherwise the page asks for it (page/fill.mjs), and a fill in the heavy lane sends it. A view gives a
slow output that is made already (kept from before, or nothing to compute) as `Ready(value)`: it goes out with the
answer, with no placeholder. A slow output is made through `slow_value`, which keeps it and says a failure in one line.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import torch

from transformer.checkpoint import error_line

TEXT, MARKDOWN, NOTICE, BUTTON, TABLE, TITLED, DATA = "text", "markdown", "notice", "button", "table", "titled", "data"
DECODE, HEAVY = "decode", "heavy"  # the queue's lanes: quick decoding, and heavy work one at a time (page/wiring.py)
T = TypeVar("T")
logger = logging.getLogger("attention_lab")
MISSING = object()  # what `slow_value` finds where nothing is kept (None may be a value)


@dataclass(frozen=True)
class Output:
    name: str  # the component's name in the feature's layout, and the key of the changes the page is sent
    kind: str
    slow: str = ""  # what it says while it is computed after the click ("" when it answers with the click)


@dataclass(frozen=True)
class Limits:
    """What one request may ask of an endpoint: its cost grows with both."""

    source: int  # source tokens it takes at most (a longer source is refused with a message, never cut)
    new: int | None = None  # new tokens it decodes at most (the model's own limit, if lower); None: the model's

    def sentence(self) -> str:
        """The limits as the API's documentation states them."""
        new = f" and {self.new} new tokens" if self.new is not None else ""
        return f"At most {self.source} source tokens (a longer text is refused, with a message){new}."


@dataclass(frozen=True)
class Endpoint:
    """One endpoint of the JSON API (gradio_client): `/name`."""

    name: str  # its api_name, without the slash
    fn: Callable[..., Any]  # (request: attention_lab.request.Request, *arguments) -> its answer
    returns: type  # the record it answers with (a dataclass whose JSON is the answer), or str
    description: str  # one line: what it answers
    limits: Limits
    lane: str = HEAVY  # DECODE or HEAVY


@dataclass
class Shared:
    """What every session shares: the models, the app-wide stores features keep (the training snapshots), by their
    type, and the torch threads each request computes on (the count the app was built with: models/devices.py
    use_threads)."""

    registry: Any  # attention_lab.models.registry.Registry
    stores: dict[type, object] = field(default_factory=dict)
    threads: int = field(default_factory=torch.get_num_threads)

    def store(self, kind: type[T]) -> T:
        return self.stores[kind]


@dataclass
class Screen:
    """A user's run at the shown step, as the controls ask for it: what a view reads."""

    controls: Any  # attention_lab.controls.Controls
    user: Any  # attention_lab.run.state.UserState
    run: Any  # attention_lab.run.state.Run, or None before any decoding
    shown: int  # the step shown (0: before any output)
    max_len: int | None  # the max length the controls ask for
    shared: Shared


View = Callable[[Screen], dict]  # -> {output name: (key, how to make its value)}: equal keys, equal values


@dataclass(frozen=True)
class Ready:
    """How to make a slow output's value when it is made already (kept from before, or nothing to compute): it
    goes out with the answer, with no placeholder."""

    value: Any

    def __call__(self) -> Any:
        return self.value


def slow_value(
    what: str,
    make: Callable[[], T],
    failed: Callable[[str], T],
    told: Mapping[type[Exception] | tuple[type[Exception], ...], Callable[[Exception], str]] | None = None,
    kept: dict | None = None,
    key: Hashable = None,
) -> T:
    """A slow output's value: `make()`, or `failed(line)` when that raises, so that the tab says in one line what
    went wrong instead of its placeholder for good.

    A failure of a kind `told` names (the model's or the input's, not the app's: a model autograd cannot
    differentiate, interventions a probe cannot read) is said as `told` says it; any other is logged with its
    traceback and said as "{what} failed: {its first line}". With `kept` (what the run keeps of this output), the
    value made for `key` is kept there, alone, and found there the next time; a failure is never kept, so the next
    view tries again.
    """
    if kept is not None and (found := kept.get(key, MISSING)) is not MISSING:
        return found
    try:
        value = make()
    except Exception as err:
        say = next((say for kinds, say in (told or {}).items() if isinstance(err, kinds)), None)
        if say is not None:
            return failed(say(err))
        logger.exception("%s failed", what)
        return failed(f"{what} failed: {error_line(err)}")
    if kept is not None:
        kept.clear()
        kept[key] = value
    return value


@dataclass(frozen=True)
class Feature:
    id: str  # its tab's id
    title: str = ""  # its tab's title
    layout: Callable[..., dict] | None = None  # (registry, default model) -> its components by name
    outputs: tuple[Output, ...] = ()
    view: View | None = None  # what its outputs show while its tab is open (None: drawn in the page alone)
    wire: Callable[..., None] | None = None  # (its components and those it listens to, wiring): its own events
    controls: tuple[str, ...] = ()  # its components every decoding event sends (read from Controls.options)
    # The page's events between features, by the name of the component that fires them: those of its components
    # other features may listen to, and the other features' components its `wire` listens to (it is handed those
    # and its own, nothing else)
    publishes: tuple[str, ...] = ()
    listens: tuple[str, ...] = ()
    needs_run: bool = True  # with no run, its outputs are blank (the Training tab decodes the source itself)
    parts: tuple[Feature, ...] = field(default=())  # features laid out, drawn and wired inside this one's tab
    endpoints: tuple[Endpoint, ...] = ()
    stylesheet: Path | None = None  # its CSS, beside its page modules
    state: type | None = None  # what it keeps of a run (Run.states), made empty when first asked for
    user_state: type | None = None  # what it keeps for a user across runs (UserState.states)
    store: Callable[[Any], object] | None = None  # an app-wide store, a type made once from the registry
    messages: tuple[type, ...] = ()  # the records its page modules are sent
    # its messages can be made in the page too, from the page copy's explanations' graph (assets/here.mjs): while the
    # page decodes, it makes them, and the server makes them only for a page that cannot
    in_page: bool = False
    # with in_page, the outputs the page makes (None: all of them); the server makes the others as before
    in_page_outputs: tuple[str, ...] | None = None
    # the texts the page writes into its messages when it makes them (notes, titles, how to read a score), the
    # server's own, sent to the page once (assets/here.mjs textsOf)
    texts: dict[str, Any] = field(default_factory=dict)
    # What to make in the background while its tab is shut, once the user has opened it (so that opening it again
    # finds it made): (screen) -> how to make it, or None for nothing to make
    ahead: Callable[[Screen], Callable[[], object] | None] | None = None

    def every(self) -> tuple[Feature, ...]:
        """This feature and its parts."""
        return (self, *self.parts)
