"""The Two models tab: the page's decoding (model A, greedy or a what-if) beside a second model's decoding of the same
source (model B), word by word: both outputs, and the cross-attention of the shown word in each over the source's
words, for each model's focused head or the mean.

The page is sent both sides once per decoding (record.TwoModelsMessage, every head's rows in words), so Show step, the
keys, the heads and a word clicked redraw it with no request (two_models/pair.mjs says how one side follows the
other). Model B's greedy decoding is kept per run and second model: a Step decodes nothing more with it. Made to
write model A's words, it is forced again whenever those change, and only the latest is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import gradio as gr

from transformer import DecodingSession

from ..assets.components import drawn
from ..checks import InputError
from ..core.units import token_label
from ..decoding.messages import Key
from ..decoding.messages import key as decoding_key
from ..feature import DATA, Feature, Output, Ready, Screen, Shared, slow_value
from ..request import TOO_LONG, Request
from ..run.search import forced
from ..run.state import Run, interventions_key
from ..run.target import target_ids
from .api import COMPARE, SNAPSHOT, decoded, fresh
from .messages import TwoModelsMessage, two_models_message
from .words import DIFFERENT, word_attention

SECOND, WRITES = "second_model", "second_writes"
OWN, A_WORDS = "own", "a_words"  # what model B writes: its own greedy output, or model A's words forced on it
NOTE = (
    "Two models on one sentence. Model A is the page's model and its decoding as it stands (greedy, or a what-if); "
    "model B, chosen here, decodes the same source greedily (or writes model A's words, forced on it: how it would "
    "read to write them): another model, a transformers model, or a training snapshot of the same model "
    "(MODEL@step). Both outputs are lined up word by word, and for the shown word each "
    "bar says how much that model's cross-attention looked at each source word, for the head chosen on its side or "
    "the mean. Show step and the keys move model A; model B shows the same word where its output has it. Click a "
    "word of either output to show it."
)
OUTPUTS = (Output("two_models", DATA, slow="Decoding with the second model…"),)
CHOOSE = "Choose one for side B above, to see it beside this model."
# what the page's maker (two_models/in_page.mjs) writes, in the server's words, and /compare_models's limits
TEXTS = {
    "choose": CHOOSE,
    "own": OWN,
    "too_long": TOO_LONG,
    "different": DIFFERENT,
    "endpoint": COMPARE.name,
    "limits": [COMPARE.limits.source, COMPARE.limits.new],
}

Side = tuple  # (model name, WordAttention, token labels): one model's decoding in words


class Failed(str):
    """A message for an unexpected failure: said, and not kept (the next view tries again)."""


@dataclass
class TwoModelsState:
    """What the tab keeps of a run: model B's decoding of its source, by the second model's name and what it
    writes (None: its own output; or model A's words as they stood), or the message that says why there is none."""

    second: dict[tuple, Side | str] = field(default_factory=dict)

    def keep(self, kept: tuple, side: Side | str) -> Side | str:
        """`side` kept under `kept` (the one already kept there, if another thread was first); a forced decoding
        replaces the one kept before for the same model (model A's words changed since)."""
        model, words = kept
        if words is not None:
            for old in [k for k in self.second if k[0] == model and k[1] is not None and k != kept]:
                self.second.pop(old, None)
        return self.second.setdefault(kept, side)


def side_of(run: Run, session: DecodingSession | None = None, name: str | None = None) -> Side:
    """A run's decoding (or `session`, one of its model's) in words, as it stands now."""
    session = session or run.session
    tokenizer, special = run.pipeline.tokenizer, run.pipeline.model.special_ids
    labels = [token_label(tokenizer, i, special) for i in session.tokens]
    return name or run.entry.name, word_attention(session, run.pipeline), labels


def second_side(shared: Shared, model: str, text: str, words: str | None = None) -> Side | str:
    """Model B's greedy decoding of `text` in words, within /compare_models's limits, or with `words` (model A's
    output) forced on it; or why there is none."""
    try:
        request = Request(COMPARE, shared)
        if words is None:
            return side_of(decoded(request, model, text))
        run = fresh(request, model, text)
        ids = target_ids(run.pipeline, words, COMPARE.limits.new, what="Model A's output", who="model B")
        tokenizer = run.pipeline.tokenizer
        session = forced(run.session, ids, lambda i: token_label(tokenizer, i, run.pipeline.model.special_ids))
        return side_of(run, session, f"{run.entry.name}, writing A's words")
    except InputError as err:
        return str(err)


def message_of(key: Key | None, tokens: list[int], a: Side, b: Side | str) -> TwoModelsMessage:
    if isinstance(b, str):
        return TwoModelsMessage(key, tokens, a[1].source_words, [], [], error=b)
    try:
        return two_models_message(key, tokens, a, b)
    except InputError as err:  # the two read the source as different characters
        return TwoModelsMessage(key, tokens, a[1].source_words, [], [], error=str(err))


def view(s: Screen) -> dict:
    run, second = s.run, str(s.controls.option(SECOND, "") or "")
    key, tokens = decoding_key(run), list(run.session.tokens)
    words = run.pipeline.tokenizer.decode(tokens) if s.controls.option(WRITES, OWN) == A_WORDS else None
    shown = (key, tuple(tokens), interventions_key(run.session), second, words)
    a = side_of(run)  # quick: what the page holds already, in words; taken now, as the run may change
    if not second:
        return {"two_models": (shown, Ready(TwoModelsMessage(key, tokens, a[1].source_words, [], [], error=CHOOSE)))}
    state, kept = run.states.get(TwoModelsState), (second, words)
    if kept in state.second:
        return {"two_models": (shown, Ready(message_of(key, tokens, a, state.second[kept])))}
    return {"two_models": (shown, second_message(s.shared, run.text, state, kept, (key, tokens, a)))}


def second_message(shared: Shared, text: str, state: TwoModelsState, kept: tuple, now: tuple) -> Callable[[], object]:
    """How to decode with the second model (`kept`: its name, and the words forced on it or None) and make the
    message (what model A shows is taken now: `now`)."""

    def make() -> TwoModelsMessage:
        model, words = kept
        b = slow_value("The second model", lambda: second_side(shared, model, text, words), Failed)
        return message_of(*now, b if isinstance(b, Failed) else state.keep(kept, b))

    return make


def choices(registry) -> list[str]:
    """The models to choose from: every model the app serves, then the training snapshots of those whose snapshots
    are on this machine (MODEL@SNAPSHOT, as the Training tab labels them). A Hub model's are not downloaded to list
    them: its snapshots can be typed (MODEL@step N)."""
    names = list(registry.names)
    for name, entry in registry.entries.items():
        if entry.family or not Path(entry.source or name).is_dir():
            continue  # a transformers model (no snapshots), or one from the Hub
        try:
            names += [f"{name}{SNAPSHOT}{s.label}" for s in registry.snapshots.listed(name) if not s.is_checkpoint]
        except InputError:  # no training to show: the model itself is listed
            continue
    return names


def layout(registry, default: str) -> dict:
    c = {}
    gr.Markdown(NOTE, elem_classes="note")
    # No label or info here says "model", "source" or "output": scripts find the step loop's boxes by those labels
    info = "Another checkpoint the app serves, or a training snapshot of one (NAME@step N, typed or chosen)."
    with gr.Row(elem_classes="two-models-controls"):
        c[SECOND] = gr.Dropdown(
            choices(registry),
            value=None,
            label="Side B",
            info=info,
            scale=2,
            min_width=260,
            allow_custom_value=True,
            elem_id="two-models-second",
        )
        writes = [("its own translation (greedy)", OWN), ("A's words (forced on it)", A_WORDS)]
        c[WRITES] = gr.Radio(writes, value=OWN, label="B writes", scale=2, min_width=260, elem_id="two-models-writes")
    c["two_models"] = drawn("two_models/two_models.mjs", "two-models-view", classes=("lab-slow",))
    return c


def wire(c: dict, wiring) -> None:
    for control in (c[SECOND], c[WRITES]):
        wiring.on(control.change, lambda user, controls: user.shown)


TWO_MODELS = Feature(
    "two_models",
    "Two models",
    layout=layout,
    outputs=OUTPUTS,
    view=view,
    wire=wire,
    controls=(SECOND, WRITES),
    endpoints=(COMPARE,),
    state=TwoModelsState,
    messages=(TwoModelsMessage,),
    stylesheet=Path(__file__).with_name("two_models.css"),
    in_page=True,
    texts=TEXTS,
)
