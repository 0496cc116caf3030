"""The step loop's endpoint: /translate, the output text of a greedy or beam decoding."""

from __future__ import annotations

from ..feature import DECODE, Endpoint, Limits
from ..request import Request
from .actions import decode_to_end


def translate(request: Request, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> str:
    """`strategy`: "greedy" or "beam" search, `beam_size` 1 to 16 (for "beam"); returns the output text."""
    run = request.run(model, text)
    decode_to_end(run, strategy, beam_size)
    return run.pipeline.tokenizer.decode(run.session.tokens)


TRANSLATE = Endpoint("translate", translate, str, "Decode `text` with `model`.", Limits(256, 256), lane=DECODE)
