"""The Trust tab: the current output, or a pasted translation, scored by the model that reads the source.

Per token, a bar of the source's share of its prediction against the prefix's; the source words that cross-attention
barely read, marked; the flags, each pointing at a step or a word (a click shows that step); and the sentence scores,
each with a line on how to read it. The whole translation is scored in one message after the click (it is slow:
attention_lab.page.render sends a placeholder first), and trust/trust.mjs draws it. A page that decodes with its
page copy makes the ALTI+ message itself (trust/in_page.mjs, writing TEXTS); the attribution methods are the server's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

import gradio as gr

from ..assets.components import drawn
from ..attribution.methods import no_gradients
from ..checks import InputError, is_blank
from ..controls import Controls
from ..core.kinds import NAMES
from ..core.naming import HEADS_SAID
from ..core.payload import Word
from ..core.units import source_words, token_label, word_label
from ..feature import DATA, Feature, Output, Screen
from ..messages import OMITTED
from ..run import target
from ..run.state import ABLATED, Run, UserState, interventions_key, interventions_text
from .api import SCORE
from .flags import COLLAPSE, LOW_SOURCE, MESSAGES
from .messages import MAX_TRANSLATION, NOTES, TITLES, WHO, FlagRecord, ScoredStep, Sentence, record, target_ids
from .reference import NEAREST, PAGE_FILE
from .score import ALTI, score
from .sentence import COVERED
from .wasserstein import K

logger = logging.getLogger("attention_lab")
NOTE = (
    "Which output to trust? The model reads its source and scores a translation token by token: how likely it finds "
    "each token (log p), and how much of each prediction comes from the source rather than from the tokens written "
    "before (Ferrando et al. 2022's ALTI+, or an attribution method). A hallucinated translation is written from its "
    "own prefix (Dale et al. 2023). Scores the output as it stands, or paste another translation below."
)
READING = {
    "mean_logp": "how sure the model is of these tokens, on average (0 is certain; the model's own "
    "greedy output is usually above −1; a translation of another sentence falls far below).",
    "source_share": f"the mean share of each prediction taken from the source; a token under "
    f"{LOW_SOURCE:.0%} is flagged as written from the prefix.",
    "coverage": f"the share of source words that cross-attention (mean of every layer and head) reads for at "
    f"least {COVERED} of a step over the whole translation; a word read less may be missing.",
    "wass_to_unif": "per decoder layer, how far its cross-attention over the whole translation is from spread evenly "
    "over the source (0: even; near 1: all on one token). Higher is more suspicious; on de-en's own outputs, "
    "only the first layer's reads that way.",
    "wass_to_data": "per decoder layer, how far it is from the cross-attention of the nearest correct translations "
    "(the de-en model's held-out ones; other models have none). Higher is more suspicious.",
    "wass_combo": "the last layer's distance to the correct translations, or its distance to even when that is "
    "beyond any of theirs (Guerreiro et al. 2023). Higher is more suspicious.",
}
NOTHING = "Nothing written yet: Step or Run, or paste a translation to score."
HELD = "Scored as the output was written, with its interventions ({held})."
OUTPUTS = (Output("trust", DATA, slow="Forcing the translation on the decoder and scoring every step…"),)
# What the page writes into the Trust message it makes itself (trust/in_page.mjs: ALTI+ only; the attribution
# methods are the server's): the server's texts and the numbers its scores are defined by, each written once, here
# or where this imports it from
TEXTS = {
    "method": ALTI,
    "title": TITLES[ALTI],
    "note": NOTES[ALTI],
    "reading": READING,
    "nothing": NOTHING,
    "held": HELD,
    "ablated": ABLATED,
    "heads": HEADS_SAID,
    "kinds": {kind: names.name for kind, names in NAMES.items()},  # in the library's order (describe_heads)
    "flags": MESSAGES,
    "reference": PAGE_FILE,  # the page copy's file of correct translations, where the model has them
    "pasted": {"what": target.TRANSLATION, "who": WHO, "unknown": target.UNKNOWN, "too_long": target.TOO_LONG},
    "numbers": {"covered": COVERED, "low_source": LOW_SOURCE, "collapse": COLLAPSE, "k": K, "nearest": NEAREST,
                "most": MAX_TRANSLATION},
}  # fmt: skip


@dataclass
class Reading:
    """How to read each sentence score, in one line."""

    mean_logp: str
    source_share: str
    coverage: str
    wass_to_unif: str
    wass_to_data: str
    wass_combo: str


@dataclass
class Trust:
    """A translation scored, as the tab draws it: what was asked, and the score (or a hint why there is none)."""

    pasted: str | None  # the translation pasted, or null: the output as it stands
    method: str
    title: str
    tokens: list[int]  # the output's, when it was asked
    note: str
    reading: Reading
    words: list[Word]
    source: list[str]  # the source tokens, as labelled
    hint: Annotated[str | None, OMITTED] = None
    source_tokens: Annotated[list[str] | None, OMITTED] = None  # the rest: /score's answer, and what the tab adds
    target_tokens: Annotated[list[str] | None, OMITTED] = None
    steps: Annotated[list[ScoredStep] | None, OMITTED] = None
    sentence: Annotated[Sentence | None, OMITTED] = None
    flags: Annotated[list[FlagRecord] | None, OMITTED] = None
    labels: Annotated[list[str] | None, OMITTED] = None  # the scored tokens, as labelled
    reads: Annotated[list[float] | None, OMITTED] = None  # each source word's cross-attention over the translation
    uncovered_words: Annotated[list[int] | None, OMITTED] = None
    held: Annotated[str | None, OMITTED] = None  # the interventions it was scored with
    op: Literal["trust"] = "trust"


@dataclass
class TrustState:
    """What the Trust tab keeps of a run: the translation pasted to score (None: the output as it stands)."""

    translation: str | None = None


def view(s: Screen) -> dict:
    run = s.run
    method = s.controls.option("trust_method", ALTI)
    method = method if method in TITLES else ALTI
    pasted = run.states.get(TrustState).translation
    scored = tuple(run.session.tokens) if pasted is None else pasted
    holding = interventions_key(run.session)
    key = (run.entry.name, tuple(run.session.src_ids), scored, method, holding, run.session.max_new_tokens)
    return {"trust": (key, scored_message(run, pasted, method))}


def scored_message(run: Run, pasted: str | None, method: str) -> Callable[[], Trust]:
    """How to make the Trust message of the run as it stands now: the output (or `pasted`) scored by `method`."""
    pipeline, session = run.pipeline, run.session
    src_ids, tokens, limit = list(session.src_ids), list(session.tokens), session.max_new_tokens
    interventions, holding = session.interventions, interventions_text(run)

    def make() -> Trust:
        tokenizer, special = pipeline.tokenizer, pipeline.model.special_ids
        source = [token_label(tokenizer, i, special) for i in src_ids]
        message = Trust(pasted, method, TITLES[method], tokens, NOTES[method], Reading(**READING), score_words(pipeline, src_ids),
                        source)  # fmt: skip
        try:
            forced = tokens if pasted is None else target_ids(pipeline, pasted)
            if not forced:
                message.hint = NOTHING
                return message
            own = pasted is None
            scored = score(pipeline, src_ids, forced, method, limit if own else None, interventions if own else None)
        except InputError as err:
            message.hint = str(err)
            return message
        except RuntimeError as err:  # a model whose forward pass autograd cannot differentiate
            message.hint = no_gradients(err)
            return message
        except (ValueError, TypeError) as err:  # a model whose sublayers ALTI+ cannot read
            message.hint = f"This model cannot be scored by ALTI+: {err}"
            return message
        answer = record(pipeline, scored)
        message.source_tokens, message.target_tokens = answer.source_tokens, answer.target_tokens
        message.steps, message.sentence, message.flags = answer.steps, answer.sentence, answer.flags
        message.labels = [token_label(tokenizer, i, special) for i in forced]
        message.reads = [round(float(r), 4) for r in scored.reads]
        message.uncovered_words = scored.uncovered
        if holding and pasted is None:
            message.held = HELD.format(held=holding)
        return message

    return make


def score_words(pipeline, src_ids: list[int]) -> list[Word]:
    """The source's words as the tab shows them: a label and the token positions of its pieces."""
    pieces = pipeline.tokenizer.tokens(src_ids)
    return [Word(word_label([pieces[p] for p in g]), g) for g in source_words(pipeline, src_ids)]


def state_of(user: UserState) -> TrustState:
    if user.run is None:
        raise InputError("Run a source first, then score its translation here.")
    return user.run.states.get(TrustState)


def score_translation(user: UserState, c: Controls, text: str) -> int | None:
    """Score `text` as a translation of the source (blank: the output)."""
    state_of(user).translation = None if text is None or is_blank(text) else text
    return user.shown


def score_output(user: UserState, c: Controls) -> int | None:
    """Score the output as it stands again."""
    state_of(user).translation = None
    return user.shown


def layout(registry, default: str) -> dict:
    c = {}
    gr.Markdown(NOTE, elem_classes="note")
    methods = [(title, name) for name, title in TITLES.items()]
    info = "ALTI+ is one pass per step; integrated gradients takes about ten times as long as the others."
    c["trust_method"] = gr.Radio(methods, value=ALTI, label="Where each prediction comes from, by", info=info,
                                 elem_id="trust-method")  # fmt: skip
    with gr.Row(elem_classes="trust-controls"):
        # Neither label nor info says "source" or "output": scripts find the step loop's boxes by those labels
        c["translation"] = gr.Textbox(label="Translation to score", lines=1, scale=4, elem_id="trust-translation",
                                      info="Paste any translation of the text above; Enter or Score scores it.")  # fmt: skip
        with gr.Column(scale=1, min_width=160):  # the page reads these by their ids (trust.mjs)
            c["trust_run"] = gr.Button("Score", size="md", variant="primary", elem_id="trust-score")
            c["trust_own"] = gr.Button("Score the model's translation", size="md", elem_id="trust-own")
    c["trust"] = drawn("trust/trust.mjs", "trust-view", classes=("lab-slow",))
    return c


def wire(c: dict, wiring) -> None:
    wiring.on(c["trust_run"].click, score_translation, extra=[c["translation"]])
    wiring.on(c["translation"].submit, score_translation, extra=[c["translation"]])
    wiring.on(c["trust_own"].click, score_output)
    wiring.on(c["trust_method"].change, lambda user, controls: user.shown)


TRUST = Feature(
    "trust",
    "Trust",
    layout=layout,
    outputs=OUTPUTS,
    view=view,
    wire=wire,
    controls=("trust_method",),
    endpoints=(SCORE,),
    state=TrustState,
    messages=(Trust,),
    in_page=True,
    texts=TEXTS,
    stylesheet=Path(__file__).with_name("trust.css"),
)
