"""The Patch tab: which parts of the model carry the difference between the source and a corrupted one.

The corrupted source starts as the clean one; the user edits it, or clicks a source word to swap it for a close
word or to add noise to it. The whole decoding is patched at once (a few batched passes: transformer.patching), and
the page draws the shown step's grids from that one message (patch/patch.mjs), so Show step and the keys redraw
with no request. It is slow: it answers a click with a placeholder and is filled after it. While the page decodes,
the page makes the message itself (in_page.mjs, from the page copy's patching graph: page_copy/patching.py) for
what it can corrupt the same way, a typed source and noise; a swap needs the close word the server finds, so the
server makes the message while one is shown (patch.mjs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

import gradio as gr

from ..assets.components import drawn
from ..checks import InputError
from ..controls import Controls
from ..core.kinds import NAMES
from ..core.naming import HEADS_SAID
from ..core.payload import Word
from ..core.units import source_words, token_label, word_label
from ..feature import DATA, TEXT, Feature, Output, Screen
from ..messages import OMITTED
from ..run.state import ABLATED, Run, UserState, interventions_text
from .api import PATCH_ENDPOINT
from .corruption import NO_SUCH_WORD, NOTHING_CORRUPTED, OTHER_LENGTH, corruption, swapped
from .messages import PatchedStep, steps_record, sweep

NOTE = (
    "Attention shows where a head looked; **patching** tests what carries the answer (Meng et al. 2022, causal "
    "tracing). The model reads the corrupted source below with its decoder input forced to this decoding's output; "
    "then one part at a time (an encoder layer's output at one source position, one head, a decoder layer's output "
    "at one target position) is **restored** from the clean run. r = 1: that part alone brings the clean token's "
    "log-probability back; r = 0: it changes nothing. Change a word of the corrupted source, or click a source word."
)
NOISE, SWAP = "noise", "swap"
CLICKS = [("adds noise to it", NOISE), ("swaps it for a close word", SWAP)]
OUTPUTS = (
    Output("corrupted", TEXT),
    Output("patch", DATA, slow="Restoring every layer, position and head from the clean run…"),
)
NOTHING = "Nothing written yet: Step or Run, and each step is patched here."
SAME = "The corrupted source is the clean one: change a word, or click a source word above."
HELD = "Patched without the output's interventions ({holding}): the model as it is."
# What the page writes into the Patch message it makes itself (patch/in_page.mjs), the server's texts, each written
# once, here or where this imports it from; and what its clicks do (patch/patch.mjs keeps what the tab asks)
TEXTS = {
    "nothing": NOTHING,
    "same": SAME,
    "held": HELD,
    "ablated": ABLATED,
    "heads": HEADS_SAID,
    "kinds": {kind: names.name for kind, names in NAMES.items()},  # in the library's order (describe_heads)
    "corruption": {"nothing": NOTHING_CORRUPTED, "lengths": OTHER_LENGTH, "word": NO_SUCH_WORD},
    "clicks": {"noise": NOISE, "swap": SWAP, "first": NOISE},  # the radio's values, and the one it starts at
}
# The page's copy of what the tab asks, kept as its controls are used, for the message it makes itself: the js of
# listeners that send nothing to the server (patch/patch.mjs attentionLabPatch)
TYPED = "(text) => { window.attentionLabPatch?.typed(text); }"
STARTED_AGAIN = "(text) => window.attentionLabPatch?.startAgain() ?? text"  # the textbox shows the clean source
CLICKS_DO = "(how) => { window.attentionLabPatch?.clicks(how); }"
SHOWN_CLEAN = "(text) => window.attentionLabPatch?.clean() ?? text"
BROWSER_ONLY = (TYPED, STARTED_AGAIN, CLICKS_DO, SHOWN_CLEAN)  # what the page does alone (patch/in_page.mjs)


@dataclass
class PatchState:
    """What the Patch tab keeps of a run: the corrupted source as typed or swapped (None: the clean one), the words
    (0-based) with noise, and how often each word was swapped (the next swap takes the next closest word)."""

    corrupted: str | None = None
    noise: set[int] = field(default_factory=set)
    swaps: dict[int, int] = field(default_factory=dict)


def view(s: Screen) -> dict:
    run = s.run
    state = run.states.get(PatchState)
    corrupted = run.text if state.corrupted is None else state.corrupted
    tokens = tuple(run.session.tokens)
    key = (run.entry.name, run.text, tokens, corrupted, tuple(sorted(state.noise)), run.session.max_new_tokens)
    return {"corrupted": ((run.serial, corrupted), lambda: corrupted), "patch": (key, patched(run, corrupted))}


@dataclass
class Patch:
    """The whole decoding patched, as the tab draws it, or a hint why it is not."""

    tokens: list[int]  # the output's, when it was asked
    source: list[str]  # the clean source's tokens, as labelled
    words: list[Word]
    noise: list[int]  # the words (0-based) with noise
    steps: list[PatchedStep] = field(default_factory=list)
    hint: Annotated[str | None, OMITTED] = None
    corrupted: Annotated[list[str] | None, OMITTED] = None  # the corrupted source's tokens, as labelled
    changed: Annotated[list[bool] | None, OMITTED] = None  # per source position: corrupted
    prefix: Annotated[list[str] | None, OMITTED] = None  # the decoder's inputs, as labelled
    corrupted_output: Annotated[str | None, OMITTED] = None  # what the model writes from the corrupted source
    held: Annotated[str | None, OMITTED] = None  # the interventions the output was written with (not patched)
    op: Literal["patch"] = "patch"


def patched(run: Run, corrupted: str) -> Callable[[], Patch]:
    """How to make the Patch message of the run as it stands now."""
    pipeline, text, limit = run.pipeline, run.text, run.session.max_new_tokens
    tokens, noise, src_ids = list(run.session.tokens), sorted(run.states.get(PatchState).noise), run.session.src_ids
    holding = interventions_text(run)

    def make() -> Patch:
        tokenizer, special = pipeline.tokenizer, pipeline.model.special_ids
        words = [
            Word(word_label(tokenizer.tokens([src_ids[p] for p in g])), g) for g in source_words(pipeline, src_ids)
        ]
        message = Patch(tokens, [token_label(tokenizer, i, special) for i in src_ids], words, noise)
        if not tokens:
            message.hint = NOTHING
            return message
        try:
            asked = corruption(pipeline, text, corrupted, noise)
        except InputError as err:
            message.hint = str(err)
            return message
        if asked.corrupted == asked.clean and not asked.noise:
            message.hint = SAME
            return message
        pair, patching = sweep(pipeline, asked, tokens, limit)
        labels = [token_label(tokenizer, i, special) for i in tokens]
        message.corrupted = [token_label(tokenizer, i, special) for i in asked.corrupted]
        message.changed = [a != b or p in asked.noise for p, (a, b) in enumerate(zip(asked.clean, asked.corrupted))]
        message.prefix = [token_label(tokenizer, pipeline.model.config.bos_id, special), *labels[:-1]]
        message.corrupted_output = tokenizer.decode(pair.corrupted_output())
        message.steps = steps_record(patching, labels)
        if holding:
            message.held = HELD.format(holding=holding)
        return message

    return make


def state_of(user: UserState) -> PatchState:
    if user.run is None:
        raise InputError("Run a source first, then corrupt it here.")
    return user.run.states.get(PatchState)


def set_corrupted(user: UserState, c: Controls, text: str) -> int | None:
    """Patch with the corrupted source as typed."""
    state_of(user).corrupted = text or ""
    return user.shown


def start_again(user: UserState, c: Controls) -> int | None:
    """The corrupted source back to the clean one, with no noise."""
    state_of(user)
    user.run.states.clear(PatchState)
    return user.shown


def pick(user: UserState, c: Controls, word, how: str, typed: str) -> int | None:
    """A click on source word `word` (0-based): noise on it, on or off, or the word swapped in the corrupted source
    (as typed, when it has the clean source's number of tokens) for the clean word's next closest: the first click
    takes the closest, the next the second closest, and so on."""
    state, run = state_of(user), user.run
    index = int(word)
    if how == NOISE:
        state.noise ^= {index}
        return user.shown
    pipeline = run.pipeline
    base = run.session.src_ids
    if typed and typed.strip():
        ids = pipeline.tokenizer.encode(typed)
        base = ids if len(ids) == len(base) else base
    nth = state.swaps.get(index, 0)
    clean = list(run.session.src_ids)
    groups = source_words(pipeline, clean)
    if not 0 <= index < len(groups):
        raise InputError(f"There is no word {index + 1}: the source has {len(groups)}.")
    text = swapped(pipeline, list(base), index, nth, like=clean[groups[index][0]])
    if text is None:
        raise InputError("No close word keeps the source's number of tokens here: type the corrupted source instead.")
    state.swaps[index] = nth + 1
    state.corrupted = text
    return user.shown


def layout(registry, default: str) -> dict:
    c = {}
    gr.Markdown(NOTE, elem_classes="note")
    with gr.Row(elem_classes="patch-controls"):
        # Neither label nor info says "source": "Source" is the step loop's box, and a script finds it by that label
        c["corrupted"] = gr.Textbox(label="Corrupted", lines=1, scale=4,
                                    info="The text to compare with, as many tokens long; Enter or Patch uses it.")  # fmt: skip
        with gr.Column(scale=1, min_width=160):
            c["patch_run"] = gr.Button("Patch", size="md", variant="primary")
            c["patch_reset"] = gr.Button("Start again", size="md")
    c["patch_click"] = gr.Radio(CLICKS, value=NOISE, label="What a click on a word does")
    c["patch"] = drawn("patch/patch.mjs", "patch-view", classes=("lab-slow",), events=("clean",))
    return c


def wire(c: dict, wiring) -> None:
    wiring.on(c["patch_run"].click, set_corrupted, extra=[c["corrupted"]])
    wiring.on(c["corrupted"].submit, set_corrupted, extra=[c["corrupted"]])
    wiring.on(c["patch_reset"].click, start_again)
    wiring.on(c["patch"].select, pick, extra=[c["patch_click"], c["corrupted"]], data=wiring.picked("word"))
    quiet = {"queue": False, "show_progress": "hidden"}
    for typed in (c["patch_run"].click, c["corrupted"].submit):
        typed(None, [c["corrupted"]], None, js=TYPED, **quiet)
    c["patch_reset"].click(None, [c["corrupted"]], [c["corrupted"]], js=STARTED_AGAIN, **quiet)
    c["patch_click"].change(None, [c["patch_click"]], None, js=CLICKS_DO, **quiet)
    c["patch"].clean(None, [c["corrupted"]], [c["corrupted"]], js=SHOWN_CLEAN, **quiet)  # a new run, made here


PATCH = Feature(
    "patch",
    "Patch",
    layout=layout,
    outputs=OUTPUTS,
    view=view,
    wire=wire,
    endpoints=(PATCH_ENDPOINT,),
    state=PatchState,
    messages=(Patch,),
    in_page=True,
    texts=TEXTS,
    stylesheet=Path(__file__).with_name("patch.css"),
)
