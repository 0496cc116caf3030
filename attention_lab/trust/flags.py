"""What a scored translation's flags point at, each with a kind, a place (`at`, 1-based: a step, or a source word for
"uncovered") and one line for the reader. The thresholds are named here (coverage's in .sentence), each with why it is where it is."""

from __future__ import annotations

import math

from transformer import Seq2SeqPipeline

from ..core.units import token_label, word_label
from .sentence import COVERED, Flag, Score

# A token that takes less than a fifth of its prediction from the source is written from the prefix; Dale et al.
# 2023 find hallucinated sentences' source contribution low, and a faithful token's share is well above this.
LOW_SOURCE = 0.2
# Half of a step's cross-attention, averaged over layers and heads, on the source's end token: the model reads no
# word of the source at that step (the end token is where attention rests when it has nothing to look at). Only
# steps that start a word are flagged: a piece that continues a word, and the end token, are written from the
# prefix, and their attention rests on the end token in correct translations too.
COLLAPSE = 0.5

# Each kind's line, as a format string: the server fills it here, the page in trust/in_page.mjs (Feature.texts)
MESSAGES = {
    "forbidden": 'The model would never write "{label}" at step {step}: its rules forbid it there (log p = −∞).',
    "uncovered": 'The source word "{word}" is barely read: cross-attention gives it {read:.2f} of a step over the '
    f"whole translation (under {COVERED}), so its meaning may be missing.",
    "low_source": 'Step {step} ("{label}") takes {share:.0%} of its prediction from the source (under '
    f"{LOW_SOURCE:.0%}): it is written mostly from the prefix.",
    "end_collapse": 'At step {step} ("{label}") cross-attention puts {weight:.0%} of its weight on the source\'s end '
    "token: the model reads none of its words there.",
}
KINDS = {
    "forbidden": "a token the model would never write there",
    "uncovered": "a source word barely read",
    "low_source": "a token written mostly from the prefix",
    "end_collapse": "attention collapsed onto the source's end token",
}


def find_flags(pipeline: Seq2SeqPipeline, score: Score) -> list[Flag]:
    """Every flag of `score`: forbidden tokens, uncovered source words, low source shares and attention collapsed
    onto the source's end token, in that order (steps in order within each kind). The end token is never flagged
    for its source share or its attention: writing it depends on what was written already."""
    tokenizer, special, eos = pipeline.tokenizer, pipeline.model.special_ids, pipeline.model.config.eos_id
    labels = [token_label(tokenizer, token, special) for token in score.tokens]
    pieces = tokenizer.tokens(score.src_ids)
    end = score.cross[:, end_position(pipeline, score.src_ids)]
    word = lambda w: word_label([pieces[p] for p in score.words[w]])
    found = [
        Flag("forbidden", s.step, MESSAGES["forbidden"].format(label=labels[s.step - 1], step=s.step))
        for s in score.steps
        if not math.isfinite(s.logp)
    ]
    found += [
        Flag("uncovered", w + 1, MESSAGES["uncovered"].format(word=word(w), read=score.reads[w]))
        for w in score.uncovered
    ]
    found += [
        Flag(
            "low_source",
            s.step,
            MESSAGES["low_source"].format(step=s.step, label=labels[s.step - 1], share=s.source_share),
        )
        for s in score.steps
        if s.token != eos and s.source_share < LOW_SOURCE  # nan (no values) compares False
    ]
    found += [
        Flag("end_collapse", t + 1, MESSAGES["end_collapse"].format(step=t + 1, label=labels[t], weight=weight))
        for t, weight in enumerate(end)
        if weight >= COLLAPSE and score.tokens[t] != eos and not labels[t].startswith("##")
    ]
    return found


def end_position(pipeline: Seq2SeqPipeline, src_ids: list[int]) -> int:
    """The position of the source's end token (its last eos; the last position if it has none)."""
    eos = pipeline.model.config.eos_id
    return max((i for i, token in enumerate(src_ids) if token == eos), default=len(src_ids) - 1)
