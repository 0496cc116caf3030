"""The Why tab: every step's written token attributed by the chosen method, the decoder's lens, the DecoderLens of
the source (what the decoder writes from each encoder layer), and, when asked for, the deletion test on this sentence.

The page holds the whole decoding's attribution and lens (one message, like the decoding itself), so Show step,
Focus head, words or pieces and hiding special tokens redraw it with no request; the page works out each head's
agreement with the attribution from the attention it already holds (why/why.mjs). Both are slow: they answer a click
with a placeholder and are filled after it (attention_lab.page.render), and a step already attributed on this
decoding is not attributed again, so a Step with the tab open costs one step's attribution. The DecoderLens depends
only on the source, the model, the length limit and the interventions, not on the steps: its own slow output, keyed on
those, so a Step neither sends nor computes it again, and kept on the run's WhyState.

While the page decodes, it makes the attribution and lens itself for occlusion and value zeroing (in_page.mjs, over
the page copy's attribution graph, with TEXTS, the server's words), and the DecoderLens (over its DecoderLens graph,
decoding with its own decoder); the server makes the tab's other outputs: the gradient methods, the contrast and the
deletion test are the server's (a person asks for the last two).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import gradio as gr

from transformer import DecodingSession

from ..assets.components import drawn
from ..attribution.methods import (
    AGGREGATES,
    IG_STEPS,
    METHODS,
    WORDS_NOTE,
    Scorer,
    StepAttribution,
    attribute_step,
    no_gradients,
    titled,
)
from ..checks import InputError, as_int
from ..controls import Controls
from ..decoding.messages import key as decoding_key
from ..feature import DATA, MARKDOWN, Feature, Output, Screen, slow_value
from ..page_copy.attribution import METHODS as FALL_METHODS
from ..page_copy.gradients import METHODS as GRADIENT_METHODS
from ..page_copy.gradients import integration_points
from ..run.state import Run, UserState, interventions_key, opened
from .api import ENDPOINTS
from .contrasting import SLOW as CONTRAST_SLOW
from .contrasting import Asked, contrast_view
from .deletion import deletion_table
from .messages import ContrastMessage, DecoderLensData, Notes, Why, decoderlens_data, lens_data, why_step

# Occlusion: the method the deletion test trusts most (it leads there, docs/findings.md), one that contrasts (a
# candidate's "why not this?"), and one the page makes itself (in_page.mjs), with value zeroing
DEFAULT_METHOD, DEFAULT_AGGREGATE = "occlusion", "sum"
NOTE = (
    "Why did the model write this token? Attention says where a head read from; **attribution** says what the "
    "written token's probability depends on, and the two can disagree (Jain & Wallace 2019). At the shown step: the "
    "source words shaded by attribution (blue raised the token, red lowered it) beside the same words shaded by "
    "attention, the prefix with its share, and how far each head's attention ranks the words as the attribution does. "
    "Below, the **lens**: what the decoder would write if it stopped after each layer; then the **DecoderLens**: "
    "what the whole decoder writes when it reads an earlier encoder layer's output. The deletion test says which "
    "ranking to trust on this sentence."
)
DECODERLENS_SLOW = "Decoding the source from each encoder layer…"
METHOD_INFO = (
    "Each runs in this page once the model's copy has loaded (integrated gradients takes longest); input × gradient "
    "and integrated gradients run on the server for a model whose copy has no gradients graph."
)
PAGE_METHODS = (*FALL_METHODS, *GRADIENT_METHODS)  # the methods the page makes from its copy's graphs (in_page.mjs)
ASKED_AGAIN = "() => { window.attentionLabWhy?.changed(); }"  # the page makes the message again (why/why.mjs)
AGREEMENT_NOTE = (
    "Agreement: Spearman's rank correlation, per head, between its attention at this step (in the Reading chosen "
    "above) and the attribution, over the source words (cross heads) or the prefix (decoder self heads); 1 ranks them "
    "as the attribution does (over two units it can only be 1 or -1). Click a head to focus it."
)
DELETION_ASK = "Run the deletion test to see, on this sentence, which ranking of the source words to trust."
DELETION_MEANING = (
    "A ranking that knows what the output depends on makes it fall more; random is the floor. Occlusion leads at 1 "
    "by construction (its values are that fall). One sentence is a small sample: docs/findings.md gives the table "
    "over a test set."
)
DELETION_SLOW = "Removing each ranking's top source tokens at every step of this sentence…"

OUTPUTS = (
    Output("why", DATA, slow="Attributing every step and reading every layer…"),
    Output("deletion", MARKDOWN, slow=DELETION_SLOW),
    Output("contrast", DATA, slow=CONTRAST_SLOW),
    Output("decoderlens", DATA, slow=DECODERLENS_SLOW),
)


@dataclass
class WhyState:
    """What the Why tab keeps of a run: whether the deletion test was asked for on its source, the step
    attributions made on it (`_attributions`), the contrast asked for (a candidate's "why not this?"), and the
    DecoderLens made for it (by decoderlens_key)."""

    deletion_asked: bool = False
    attributions: dict = field(default_factory=dict)
    contrast: Asked | None = None
    decoderlens: dict = field(default_factory=dict)


def view(s: Screen) -> dict:
    """The Why tab's outputs as name -> (key, how to make it): the run's attribution and lens (for the page to
    draw), and the deletion test's table (a hint until it is asked for)."""
    run, method = s.run, s.controls.option("method", DEFAULT_METHOD)
    aggregate = s.controls.option("aggregate", DEFAULT_AGGREGATE)
    method = method if method in METHODS else DEFAULT_METHOD
    aggregate = aggregate if aggregate in AGGREGATES else DEFAULT_AGGREGATE
    state = run.states.get(WhyState)
    asked = state.deletion_asked
    return {
        "why": ((decoding_key(run), len(run.session.steps), method, aggregate), explain(run, method, aggregate)),
        "deletion": ((run.entry.name, run.text) if asked else None, deletion(run) if asked else lambda: DELETION_ASK),
        "contrast": contrast_view(run, method, aggregate, state.contrast),
        "decoderlens": (decoderlens_key(run), decoderlens(run)),
    }


def explain(run: Run, method: str, aggregate: str = DEFAULT_AGGREGATE) -> Callable[[], Why]:
    """How to make the Why message of the run as it stands now (what it needs is taken now, under the user's lock;
    the making can run after, while the user goes on)."""
    session, tokenizer, key = run.session, run.pipeline.tokenizer, decoding_key(run)
    made = run.states.get(WhyState).attributions
    src_ids, tokens = list(session.src_ids), list(session.tokens)
    model, limit, interventions = session.model, session.max_new_tokens, session.interventions

    def make() -> Why:
        notes = Notes(method_note(method, aggregate), WORDS_NOTE, AGREEMENT_NOTE)
        message = Why(key, method, aggregate, titled(method, aggregate), notes, tokens)
        if not tokens:
            return message

        def attributed() -> Why:
            message.steps = [why_step(a) for a in _attributions(made, session, src_ids, tokens, method, aggregate)]
            message.lens = lens_data(model, tokenizer, src_ids, tokens, limit, interventions)
            return message

        # a RuntimeError: a model whose forward pass autograd cannot differentiate
        told = {RuntimeError: no_gradients}
        return slow_value("Attribution", attributed, lambda line: replace(message, error=line), told)

    return make


def method_note(method: str, aggregate: str) -> str:
    """What the Why message says of its method and aggregate (Notes.method)."""
    return f"{METHODS[method].note} {AGGREGATES[aggregate]}"


def decoderlens_key(run: Run) -> tuple:
    """What the DecoderLens of a run depends on: the model, the source, the length limit and the interventions (not
    the steps: a Step, a Back or a what-if leaves it as it is)."""
    session = run.session
    return (run.entry.name, tuple(session.src_ids), session.max_new_tokens, interventions_key(session))


def decoderlens(run: Run) -> Callable[[], DecoderLensData]:
    """How to make the DecoderLens message of the run (the one made before for the same key, if any)."""
    session, tokenizer, key = run.session, run.pipeline.tokenizer, decoderlens_key(run)
    made = run.states.get(WhyState).decoderlens
    model, src_ids = session.model, list(session.src_ids)
    limit, interventions = session.max_new_tokens, session.interventions

    def make() -> DecoderLensData:
        return slow_value(
            "The DecoderLens",
            lambda: decoderlens_data(model, tokenizer, src_ids, limit, interventions),
            lambda line: DecoderLensData([], limit, error=line),
            kept=made,  # one run keeps one: its source and model do not change, only an edit or the limit
            key=key,
        )

    return make


def _attributions(
    made: dict, session: DecodingSession, src_ids: list[int], tokens: list[int], method: str, aggregate: str
) -> list:
    """Every step's attribution, the ones this run already made (`made`) taken as they are. A step's attribution
    depends on the source, the tokens up to it, and the session's model, limit and interventions: the run keeps one
    session's (and its forks', which share them: a step decoded ahead) and starts again after an edit."""
    held = (interventions_key(session), session.max_new_tokens)
    if made.get("held") != held:
        made.clear()
        made["held"] = held
    scorer = None
    found: list[StepAttribution] = []
    for step in range(1, len(tokens) + 1):
        key = (method, aggregate, tuple(tokens[:step]))
        if key not in made:
            scorer = scorer or Scorer(session.model, src_ids, tokens, session.max_new_tokens, session.interventions)
            made[key] = attribute_step(scorer, step, method, aggregate=aggregate)
        found.append(made[key])
    return found


def deletion(run: Run) -> Callable[[], str]:
    """How to make the deletion test's table for the run's source, decoded greedily as those of docs/findings.md are."""
    pipeline, text = run.pipeline, run.text

    def make() -> str:
        try:
            table = deletion_table(pipeline, [text])
        except RuntimeError as err:  # said where the table would be: the fill has no one else to tell
            return no_gradients(err)
        if not table.steps:
            return "No step of this sentence could be tested: every token it wrote was certain (probability 1)."
        intro = (
            f"The written token's probability fell this much, on average over the {table.steps} steps of this "
            "sentence, when each ranking's top source tokens were removed (their embeddings zeroed):"
        )
        return "\n".join([intro, "", *table.lines(), "", DELETION_MEANING])

    return make


def ask_deletion(user: UserState, c: Controls) -> int | None:
    """Ask for the deletion test on the run's source (the tab then shows it, filled after the click); the step
    shown stays."""
    if user.run is None:
        raise InputError("Run a source first, then run the deletion test on it.")
    user.run.states.get(WhyState).deletion_asked = True
    return user.shown


def ask_contrast(user: UserState, c: Controls, alternative: object) -> int | None:
    """Why the shown step's token and not `alternative` (a candidate's id, from its "why not this?"): the contrast is
    drawn in this tab, which the page opens as it sends the click."""
    run, token = user.run, as_int(alternative)
    if run is None or not run.session.steps or token is None:
        raise InputError("Decode a step first, then ask why not another candidate.")
    step = max(1, min(int(c.shown or 1), len(run.session.steps)))
    if token == run.session.tokens[step - 1]:
        raise InputError("That is the token written: ask about another candidate.")
    run.states.get(WhyState).contrast = Asked(step, token, tuple(run.session.tokens[:step]))
    opened(user, "why")  # the tab's outputs are drawn with this answer, whichever of it and its own event is first
    return step


def layout(registry, default: str) -> dict:
    c = {}
    gr.Markdown(NOTE, elem_classes="note")
    methods = [(method.title, name) for name, method in METHODS.items()]
    c["method"] = gr.Radio(
        methods, value=DEFAULT_METHOD, label="Attribution method", info=METHOD_INFO, elem_id="why-method"
    )
    aggregates = [("Sum (signed)", "sum"), ("L2 norm (unsigned)", "l2")]
    info = "How a token's one number is made of its embedding's values: their sum keeps the sign, their norm the size."
    c["aggregate"] = gr.Radio(
        aggregates, value=DEFAULT_AGGREGATE, label="Aggregate", info=info, elem_id="why-aggregate"
    )
    c["contrast"] = drawn("why/contrast.mjs", "why-contrast", classes=("lab-slow",))
    c["why"] = drawn("why/why.mjs", "why-view", classes=("lab-slow",))
    c["decoderlens"] = drawn("why/decoderlens.mjs", "why-decoderlens", classes=("lab-slow",))
    with gr.Row(elem_classes="deletion"):
        c["deletion_run"] = gr.Button("Run the deletion test on this sentence", size="md", min_width=300, scale=0)
    c["deletion"] = gr.Markdown(elem_classes=["why-deletion", "lab-slow"])
    return c


def wire(c: dict, wiring) -> None:
    for control in ("method", "aggregate"):  # first: the page knows what the tab asks before the event is sent
        c[control].change(None, None, None, js=ASKED_AGAIN, queue=False, show_progress="hidden")
    wiring.on(c["deletion_run"].click, ask_deletion)
    wiring.on(c["method"].change, lambda user, controls: user.shown)
    wiring.on(c["aggregate"].change, lambda user, controls: user.shown)
    wiring.on(c["candidates"].click, ask_contrast, data=wiring.picked("alternative"))  # its "why not this?"


# What the page writes into the Why messages it makes (in_page.mjs), the server's own words: per method it makes and
# aggregate, the title and the note; the controls' first values
TEXTS = {
    "method": DEFAULT_METHOD,
    "aggregate": DEFAULT_AGGREGATE,
    "titles": {method: {a: titled(method, a) for a in AGGREGATES} for method in PAGE_METHODS},
    "notes": {method: {a: method_note(method, a) for a in AGGREGATES} for method in PAGE_METHODS},
    "words": WORDS_NOTE,
    "agreement": AGREEMENT_NOTE,
    "gradients": list(GRADIENT_METHODS),  # made from the copy's gradients graph, where it has one
    "integration": dict(zip(("alphas", "weights"), integration_points(IG_STEPS))),  # integrated gradients' points
}

WHY = Feature(
    "why",
    "Why",
    layout=layout,
    outputs=OUTPUTS,
    view=view,
    wire=wire,
    controls=("method", "aggregate"),
    listens=("candidates",),  # a candidate's "why not this?"
    endpoints=ENDPOINTS,
    state=WhyState,
    messages=(Why, ContrastMessage, DecoderLensData),
    stylesheet=Path(__file__).with_name("why.css"),
    in_page=True,
    in_page_outputs=("why", "decoderlens"),
    texts=TEXTS,
)
