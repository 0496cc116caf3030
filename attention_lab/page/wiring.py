"""How the page's events reach the Lab: every decoding event sends the user's state and every control, answers with
what changed (attention_lab.page.render), then, on the same stream, what was slow to make if it is made within
SOON_S; the page asks for what is still missing (page/fill.mjs), and the fill answers in the heavy lane.

Two lanes of the queue: decoding, CONCURRENCY requests at once, app-wide (Run, Step, a what-if, /translate...); and
the heavy work, one at a time, so that it never keeps a Step or a /translate waiting (the slow outputs' fill, the
head tests, /attribute...). What the page draws for itself (Show step, Focus head, the kind, the look, a tile, the
training film) never reaches the server. A user's mistake becomes a warning toast and one line in the server log;
the page keeps every view it had.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import ClassVar

import gradio as gr

from ..assets.components import as_text
from ..checks import InputError
from ..controls import DECODING_CONTROLS, Controls
from ..decoding.from_page import sent_by_page
from ..feature import BUTTON, DATA, DECODE, HEAVY, NOTICE, TABLE, TITLED, Feature, Output
from ..models.devices import use_threads
from .lab import ASK, Action, Lab

logger = logging.getLogger("attention_lab")
CONCURRENCY = 2  # decoding requests served at once; more would only share the same cores
SOON_S = 0.5  # how long an answer's stream waits for the slow outputs it began, before the page asks for them
LANES = {  # a lane's name (attention_lab.feature: DECODE, HEAVY) -> what gradio's queue is told
    DECODE: {"concurrency_id": DECODE, "concurrency_limit": CONCURRENCY},
    HEAVY: {"concurrency_id": HEAVY, "concurrency_limit": 1},
}
PRIVATE, QUIET = {"api_visibility": "private"}, {"show_progress": "hidden"}
# What the page adds to every decoding event it sends: the decoding it shows, when it decodes itself (the control
# `page`, at this position of the event's inputs; decoding/in_page.mjs and attention_lab.decoding.from_page); and the
# event's number, with which the page knows the answer when it has come whole (ANSWERED, decoding/answers.mjs: an
# answer to an event sent before the page wrote the step loop's outputs itself does not stand over them).
SENDS_PAGE = (
    "(...args) => {{ const road = window.attentionLabRoad; "
    "if (road) {{ args[{0}] = road.sent(); road.answers?.sending({1}); }} "
    "return args; }}"
)
ANSWERED = "() => {{ window.attentionLabRoad?.answers?.answered({0}); }}"
# How a value from the Lab becomes its component's update, by the output's kind (attention_lab.feature).
UPDATES = {
    DATA: as_text,  # a drawn component's: JSON text (assets/components.py says why)
    BUTTON: lambda value: gr.update(interactive=bool(value)),
    NOTICE: lambda value: gr.update(value=value, visible=bool(value)),
    TABLE: lambda value: gr.update(value=value or None),
    TITLED: lambda value: gr.update(
        value=(value or {}).get("value") or "",
        label=(value or {}).get("label"),
        visible=bool((value or {}).get("value")),
    ),
}


class NotListened(KeyError):
    def __str__(self) -> str:
        return self.args[0]


class Handed(dict):
    """What a feature's `wire` is handed: its own components and those it listens to (Feature.listens), by name; any
    other name fails at once."""

    def __init__(self, feature: str, components: dict):
        super().__init__(components)
        self.feature = feature

    def __missing__(self, name: str):
        raise NotListened(
            f"{self.feature} reads the component {name!r}, which is neither its own nor one it listens to "
            "(Feature.listens: a component another feature publishes)"
        )


def handed(feature: Feature, laid: dict[str, dict], publishers: dict[str, Feature]) -> Handed:
    """The components `feature`'s wire is handed, from each feature's own (`laid`, by feature id) and the features
    that publish what it listens to (`publishers`, by event name)."""
    heard = {}
    for name in feature.listens:
        if name not in publishers:
            raise ValueError(f"{feature.id} listens to {name}, which no feature of the table publishes")
        if name not in laid[publishers[name].id]:
            raise ValueError(f"{publishers[name].id} publishes {name}, which its layout does not make")
        heard[name] = laid[publishers[name].id][name]
    return Handed(feature.id, {**heard, **laid[feature.id]})


class Wiring:
    """What a feature's `wire` uses: the components by name, and `on`, which wires an event to an action."""

    # An endpoint left off the API page that the benchmarks and the load test still drive by name (the buttons').
    UNDOCUMENTED: ClassVar[dict] = {"api_visibility": "undocumented"}

    def __init__(self, lab: Lab, components: dict, state: gr.State, options: list[str], outputs: list[Output]):
        self.lab, self.components, self.state = lab, components, state
        self.options, self.outputs = options, [*outputs, ASK]  # the features' controls, after the step loop's
        self.controls = [*DECODING_CONTROLS, *options]
        self.slow = [o for o in outputs if o.slow]
        self.numbers = itertools.count(1)  # the events that send the page's decoding, numbered (SENDS_PAGE)
        components[ASK.name].fill(self.fill, [state], self.targets(self.slow), **PRIVATE, **QUIET, **LANES[HEAVY])

    @property
    def inputs(self) -> list:
        """The user's state, then every control, in the order Controls.of reads them."""
        return [self.state, *(self.components[name] for name in self.controls)]

    def targets(self, outputs: list[Output] | None = None) -> list:
        """The user's state, then the components of `outputs` (every output by default)."""
        return [self.state, *(self.components[o.name] for o in (self.outputs if outputs is None else outputs))]

    def controls_of(self, values) -> Controls:
        return Controls.of(values, self.options)

    def answer(self, user, make: Callable[..., dict], *args, outputs: list[Output] | None = None) -> tuple:
        """(user, the update of each output) for the changes `make(*args)` gives; a user's mistake changes nothing."""
        return self.updates(user, self.made(make, *args), outputs)

    def made(self, make: Callable[..., dict], *args) -> dict:
        """The changes `make(*args)` gives, name -> new value, computed on the app's threads; none for a user's
        mistake, said in a warning."""
        use_threads(self.lab.shared.threads)
        try:
            return make(*args)
        except InputError as err:
            logger.info("user error: %s", err)
            gr.Warning(str(err))
            return {}

    def updates(self, user, changes: dict, outputs: list[Output] | None = None) -> tuple:
        """(user, the update of each output) for `changes`; gr.skip() for each output they leave as it is."""
        chosen = self.outputs if outputs is None else outputs
        updates = (
            UPDATES.get(o.kind, lambda value: value)(changes[o.name]) if o.name in changes else gr.skip()
            for o in chosen
        )
        return (user, *updates)

    def streamed(self, user, make: Callable[..., dict], c: Controls, *args):
        """The answer (as `make(*args)` gives it), then, on the same stream, the slow outputs it began if they are
        made within SOON_S: a quick one needs no request of its own; for a slower one the page is told to ask (ASK),
        and its fill, in the heavy lane, sends it when it is made. `c`: the controls the event was sent with.

        gradio ends a stream by sending its last part again, whole, once the function returns, and on a loaded
        server that copy can come after another answer (a click's after this one) has changed what that part sent.
        So a stream to the page ends on a part that changes nothing; a script through the API (gradio_client), which
        reads that last part as the answer, gets the answer's last part. (Each part after the first goes to the page
        as whole values: page/streams.py.)"""
        yield self.updates(user, self.made(make, *args))
        soon = self.lab.after(user, SOON_S)
        if soon:
            yield self.updates(user, soon)
        if sent_by_page(c):
            yield self.updates(user, {})

    def fill(self, user) -> tuple:
        """What a click answered with a placeholder (the head summary, an ablation's effects, the film), made now."""
        return self.answer(user, self.lab.fill, user, outputs=self.slow)

    def on(self, trigger, action: Action, extra: list | tuple = (), data: Callable | None = None, **options):
        """Wire `trigger` (a component's event, such as button.click) to `action` on the user's run: it sends the
        state, every control and the `extra` components (their values follow the controls' as the action's extra
        arguments); with `data`, the event's data (gr.EventData) goes through data(c, evt) -> extra arguments first.
        The answer comes at once, and the slow outputs after it (see `streamed`). Returns the event."""
        n = len(self.controls)

        def event(evt: gr.EventData, user, *values):
            c = self.controls_of(values[:n])
            more = [*(data(c, evt._data or {}) if data else ()), *values[n:]]
            yield from self.streamed(user, self.lab.do, c, action, user, c, *more)

        return self.listen(trigger, event, [*self.inputs, *extra], self.targets(), from_page=True, **options)

    @staticmethod
    def picked(name: str) -> Callable[[Controls, dict], list]:
        """For `on`'s `data`: a click in the page (a candidate, a source word) sends `name` and the step it was shown
        at; the action gets `name`, and the controls the step."""

        def read(c: Controls, data: dict) -> list:
            c.shown = data.get("shown")
            return [data.get(name)]

        return read

    def listen(self, trigger, fn, inputs: list, outputs: list, heavy: bool = False, from_page: bool = False, **options):
        """Wire `trigger` to `fn` in the decoding lane (the heavy one with `heavy`), private and quiet unless
        `options` say otherwise. With `from_page`, the event's inputs are `inputs` (then anything): it sends the
        decoding the page shows, and tells the page when its answer has come whole (SENDS_PAGE, ANSWERED). Returns
        the event."""
        if from_page:
            number = next(self.numbers)
            options = {"js": SENDS_PAGE.format(1 + self.controls.index("page"), number), **options}
        event = trigger(fn, inputs, outputs, **{**PRIVATE, **QUIET, **LANES[HEAVY if heavy else DECODE], **options})
        if from_page:
            event.then(None, None, None, js=ANSWERED.format(number), show_progress="hidden", queue=False)
        return event
