"""Why this token, as endpoints: /attribute (every written token attributed), /contrast (this token and not that
one), /lens (the decoder's lens) and /decoder_lens (the DecoderLens: the text the decoder writes from each encoder
layer); tokens and steps as in /attention."""

from __future__ import annotations

import math
from dataclasses import dataclass

from transformer import DecodingSession, Seq2SeqTokenizer
from transformer.decoderlens import decoderlens
from transformer.lens import decoder_lens

from ..attribution.methods import AGGREGATES, METHODS, attribute, no_gradients
from ..checks import InputError, as_int, quoted
from ..core.attention_export import TopToken
from ..core.units import token_id
from ..feature import Endpoint, Limits
from ..request import Request
from .contrast import ContrastError, contrast_step
from .messages import LENS_TOP_K


@dataclass
class AttributedStep:
    step: int
    token: str
    source: list[float]  # a value per source token
    prefix: list[float]  # a value per decoder input at that step
    source_share: float | None  # the source's share of the absolute values


@dataclass
class Attribution:
    source_tokens: list[str]
    method: str
    aggregate: str
    note: str  # what the method and the aggregate compute, in one line each
    steps: list[AttributedStep]


@dataclass
class ContrastRecord:
    step: int
    token: str
    alternative: str
    logit_difference: float  # logit(token) - logit(alternative): what is attributed
    source: list[float]
    prefix: list[float]


@dataclass
class LensLayer:
    layer: int  # 1-based
    top_k: list[TopToken]


@dataclass
class LensStep:
    step: int
    token: str
    settled: int | None  # the first layer from which on the written token is the top one (null: none, forced)
    layers: list[LensLayer]


@dataclass
class Lens:
    steps: list[LensStep]


@dataclass
class DecoderLensLayer:
    layer: int  # 0: the embeddings entering encoder layer 1; the last: the model's own greedy output
    output_tokens: list[str]  # as /attention spells them, the end token last if written within the limit
    output_text: str


@dataclass
class DecoderLens:
    layers: list[DecoderLensLayer]


def _rounded(values, decimals: int = 6) -> list[float]:
    return [round(float(v), decimals) for v in values]


def checked(method: object, aggregate: object) -> None:
    """InputError, in one line, for a method or an aggregate attribution does not have."""
    if not isinstance(method, str) or method not in METHODS:
        raise InputError(f"Unknown method {method!r}: use one of {', '.join(METHODS)}.")
    if not isinstance(aggregate, str) or aggregate not in AGGREGATES:
        raise InputError(f"Unknown aggregate {aggregate!r}: use one of {', '.join(AGGREGATES)}.")


def attribution_record(
    session: DecodingSession, tokenizer: Seq2SeqTokenizer, method: str, aggregate: str = "sum"
) -> Attribution:
    """Every step of the session's decoding attributed by `method`, aggregated over the embedding by `aggregate`."""
    checked(method, aggregate)
    try:
        steps = attribute(
            session.model,
            session.src_ids,
            session.tokens,
            method,
            limit=session.max_new_tokens,
            interventions=session.interventions,
            aggregate=aggregate,
        )
    except RuntimeError as err:  # a model whose forward pass autograd cannot differentiate
        raise InputError(no_gradients(err)) from err
    share = lambda a: None if math.isnan(a.source_share) else round(a.source_share, 6)
    return Attribution(
        source_tokens=tokenizer.tokens(session.src_ids),
        method=method,
        aggregate=aggregate,
        note=f"{METHODS[method].note} {AGGREGATES[aggregate]}",
        steps=[
            AttributedStep(a.step, tokenizer.id_to_token(a.token), _rounded(a.source), _rounded(a.prefix), share(a))
            for a in steps
        ],
    )


def lens_record(session: DecodingSession, tokenizer: Seq2SeqTokenizer, k: int = LENS_TOP_K) -> Lens:
    """Per step and decoder layer (1-based, in order), the top k tokens the decoder would write if it stopped after
    that layer."""
    lens = decoder_lens(
        session.model, session.src_ids, session.tokens, k, session.max_new_tokens, session.interventions
    )

    def layer(t: int, number: int) -> LensLayer:
        ids, probs = lens.top_ids[number, t], lens.top_probs[number, t]
        return LensLayer(
            number + 1, [TopToken(tokenizer.id_to_token(int(i)), round(float(p), 6)) for i, p in zip(ids, probs)]
        )

    return Lens(
        [
            LensStep(
                t + 1,
                tokenizer.id_to_token(token),
                None if lens.settled[t] is None else lens.settled[t] + 1,
                [layer(t, number) for number in range(lens.top_ids.size(0))],
            )
            for t, token in enumerate(session.tokens)
        ]
    )


def decoderlens_record(session: DecodingSession, tokenizer: Seq2SeqTokenizer) -> DecoderLens:
    """The DecoderLens of the session's source, with its limit and interventions: per encoder layer (0: the
    embeddings), the text the decoder writes greedily from that layer's output."""
    layers = decoderlens(session.model, session.src_ids, session.max_new_tokens, session.interventions)
    return DecoderLens(
        [DecoderLensLayer(out.layer, tokenizer.tokens(out.tokens), tokenizer.decode(out.tokens)) for out in layers]
    )


def contrast_record(
    session: DecodingSession, tokenizer: Seq2SeqTokenizer, step, alternative, method: str, aggregate: str
) -> ContrastRecord:
    """Why the session's token at `step` (1-based) and not `alternative` (spelled as the candidates spell it)."""
    checked(method, aggregate)
    n = len(session.tokens)
    at = as_int(step)
    if at is None or not 1 <= at <= n:
        raise InputError(f"Step must be a whole number from 1 to {n}, this decoding's steps (got {quoted(step)}).")
    spelled = alternative if isinstance(alternative, str) else ""
    other = token_id(tokenizer, spelled, session.model.config.tgt_vocab_size) if spelled else None
    if other is None:
        raise InputError(
            f"Unknown token {quoted(alternative)}: spell it as the candidates do (top_k in /attention), "
            f"such as {quoted(tokenizer.id_to_token(session.tokens[at - 1]))}."
        )
    try:
        c = contrast_step(
            session.model, session.src_ids, session.tokens, at, other, method, aggregate,
            session.max_new_tokens, session.interventions, name=quoted(spelled),
        )  # fmt: skip
    except ContrastError as err:
        raise InputError(str(err)) from err
    except RuntimeError as err:  # a model whose forward pass autograd cannot differentiate
        raise InputError(no_gradients(err)) from err
    return ContrastRecord(
        step=at,
        token=tokenizer.id_to_token(c.token),
        alternative=tokenizer.id_to_token(c.alternative),
        logit_difference=round(c.difference, 6),
        source=_rounded(c.source),
        prefix=_rounded(c.prefix),
    )


def attribute_endpoint(request: Request, model: str, text: str, method: str, aggregate: str = "sum") -> Attribution:
    """Decode `text` greedily and attribute every written token's log-probability to each source token and to each
    decoder input before it: {"source_tokens", "method", "note", "aggregate", "steps": [{"step", "token", "source":
    [a value per source token], "prefix": [a value per decoder input at that step], "source_share"}]}. `method`:
    one of attention_lab.attribution.methods.METHODS ("input_x_gradient", "integrated_gradients", "occlusion",
    "value_zeroing"); a positive value raised the probability; source_share is the source's share of the absolute
    values. `aggregate`: "sum" (signed, over the embedding's dimensions) or "l2" (their L2 norm, unsigned)."""
    run = request.run(model, text)
    run.session.run()
    return attribution_record(run.session, run.pipeline.tokenizer, method, aggregate)


def contrast_endpoint(
    request: Request,
    model: str,
    text: str,
    step: int,
    alternative: str,
    method: str = "input_x_gradient",
    aggregate: str = "l2",
) -> ContrastRecord:
    """Decode `text` greedily and attribute logit(token written) − logit(`alternative`) at `step` (1-based), the
    logits after the model's next-token rules: {"step", "token", "alternative", "logit_difference", "source": [a
    value per source token], "prefix": [a value per decoder input at that step]}. `alternative` is spelled as the
    candidates (top_k in /attention) spell it, the end token included; `method` and `aggregate` as in /attribute."""
    run = request.run(model, text)
    run.session.run()
    return contrast_record(run.session, run.pipeline.tokenizer, step, alternative, method, aggregate)


def lens_endpoint(request: Request, model: str, text: str) -> Lens:
    """Decode `text` greedily; per step, per decoder layer (1-based, in order), the 5 tokens the model would write
    if its decoder stopped after that layer (the model's own final norm and output layer): {"steps": [{"step",
    "token", "settled", "layers": [{"layer", "top_k": [{"token", "probability"}]}]}]}; "settled" is the first layer
    from which on the written token is the top one. Not /decoder_lens, which changes the encoder layer the decoder
    reads and lets it write a whole text."""
    run = request.run(model, text)
    run.session.run()
    return lens_record(run.session, run.pipeline.tokenizer)


def decoderlens_endpoint(request: Request, model: str, text: str) -> DecoderLens:
    """The DecoderLens (Langedijk et al. 2024): `text` decoded greedily with the decoder reading each encoder layer's
    output in place of the last one's (through what follows the last layer: the encoder's closing norm, if any):
    {"layers": [{"layer", "output_tokens", "output_text"}]}, layer 0 the embeddings entering layer 1, the last layer
    the model's own output. Not /lens, which reads each decoder layer at each step of one decoding."""
    run = request.run(model, text)
    return decoderlens_record(run.session, run.pipeline.tokenizer)


ENDPOINTS = (
    Endpoint("attribute", attribute_endpoint, Attribution, "Why each token: every step attributed.", Limits(64, 64)),
    Endpoint("contrast", contrast_endpoint, ContrastRecord, "Why this token and not that one.", Limits(64, 64)),
    Endpoint("lens", lens_endpoint, Lens, "The decoder's lens: what each decoder layer would write.", Limits(64, 64)),
    Endpoint(
        "decoder_lens",
        decoderlens_endpoint,
        DecoderLens,
        "The DecoderLens: what the decoder writes from each encoder layer.",
        Limits(64, 64),
    ),
)
