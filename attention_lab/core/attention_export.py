"""The JSON record of what a DecodingSession saw: the app's export, and the /attention API's answer."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from transformer import DecodingSession, Seq2SeqTokenizer

Grid = list[list[float]]


@dataclass
class TopToken:
    token: str  # spelled as the tokenizer spells it
    probability: float


@dataclass
class Shapes:
    encoder: str = "[layer][head][query][key]"
    decoder_self: str = "[layer][head][key <= step]"
    cross: str = "[layer][head][source]"


@dataclass
class StepRecord:
    step: int  # 1-based
    token: str
    probability: float
    forced: bool  # chosen by a what-if rather than by the decoding
    top_k: list[TopToken]
    decoder_self: list[Grid]  # [layer][head][key <= step]
    cross: list[Grid]  # [layer][head][source]


@dataclass
class AttentionExport:
    """Everything a decoding recorded: its tokens, each step's top k, and every head's weights."""

    model: str
    source_tokens: list[str]
    output_tokens: list[str]
    output_text: str
    encoder: list[list[Grid]]  # [layer][head][query][key]
    steps: list[StepRecord]
    shapes: Shapes = field(default_factory=Shapes)


def top_k_record(tokenizer, ids: list[int], probs: list[float], decimals: int = 6) -> list[TopToken]:
    return [TopToken(tokenizer.id_to_token(t), round(p, decimals)) for t, p in zip(ids, probs)]


def attention_record(
    session: DecodingSession, tokenizer: Seq2SeqTokenizer, model_name: str, decimals: int = 5
) -> AttentionExport:
    """Everything the session recorded, every head's weights rounded to `decimals`."""

    def rounded(tensor) -> list:
        return np.round(tensor.numpy().astype(np.float64), decimals).tolist()

    steps = [
        StepRecord(
            step=i + 1,
            token=tokenizer.id_to_token(s.token),
            probability=round(s.prob, decimals),
            forced=s.forced,
            top_k=top_k_record(tokenizer, s.top_ids, s.top_probs, decimals),
            decoder_self=[rounded(w) for w in s.self_attention],
            cross=[rounded(w) for w in s.cross_attention],
        )
        for i, s in enumerate(session.steps)
    ]
    return AttentionExport(
        model=model_name,
        source_tokens=tokenizer.tokens(session.src_ids),
        output_tokens=tokenizer.tokens(session.tokens),
        output_text=tokenizer.decode(session.tokens),
        encoder=[rounded(w) for w in session.encoder_attention],
        steps=steps,
    )
