"""The JSON export as an endpoint: /attention, every head's attention at every step of a decoding."""

from __future__ import annotations

from ..core.attention_export import AttentionExport, attention_record
from ..decoding.actions import decode_to_end
from ..feature import DECODE, Endpoint, Limits
from ..request import Request


def attention(request: Request, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> AttentionExport:
    """`strategy`: "greedy" or "beam" search, `beam_size` 1 to 16 (for "beam"). {"model", "source_tokens",
    "output_tokens", "output_text", "shapes", "encoder": [layer][head][query][key], "steps": [{"step", "token",
    "probability", "forced", "top_k": [{"token", "probability"}], "decoder_self": [layer][head][key <= step], "cross":
    [layer][head][source]}]}."""
    run = request.run(model, text)
    decode_to_end(run, strategy, beam_size)
    return attention_record(run.session, run.pipeline.tokenizer, model)


ATTENTION_EXPORT = Endpoint(
    "attention",
    attention,
    AttentionExport,
    "Decode `text` and return every head's attention at every step (the app's JSON export).",
    Limits(256, 256),
    lane=DECODE,
)
