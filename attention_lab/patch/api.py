"""Activation patching as an endpoint: /patch, every part of the model restored from the clean run on its own."""

from __future__ import annotations

from ..checks import InputError, as_int, is_blank, quoted
from ..feature import Endpoint, Limits
from ..request import Request
from .corruption import corruption
from .messages import Patched, patch_record


def patch(request: Request, model: str, clean: str, corrupted: str, noise: list[int] | None = None) -> Patched:
    """Decode `clean` greedily, then read its output with the decoder input forced to it from the clean source and
    from a corrupted one, `corrupted` (as many tokens), or the clean one with Gaussian noise on the embeddings of the
    source words `noise` (1-based; `corrupted` then empty; 3 embedding standard deviations, seeded). Each component
    is restored from the clean run on its own, and r = (logp_patched - logp_corrupted) / (logp_clean -
    logp_corrupted) of the clean token is given per step: {"source_tokens", "corrupted_tokens", "output_tokens",
    "corrupted_output_text", "steps": [{"step", "token", "clean_logp", "corrupted_logp", "encoder_states":
    [layer][source position], "decoder_states": [layer][target position up to the step], "heads":
    {"encoder"|"decoder_self"|"cross": [layer][head]}}]}; 1 is fully restored, 0 as corrupted, null where the two
    log ps differ by less than 0.1 nats."""
    run = request.run(model, clean)
    words = [] if noise is None else noise
    if not isinstance(words, list) or any(as_int(w) is None for w in words):
        raise InputError(f"Noise must be a list of whole numbers, the source words to corrupt (got {quoted(noise)}).")
    typed = corrupted is not None and not is_blank(corrupted)
    if words and typed:
        raise InputError(
            "Give a corrupted source or noise words, not both: with noise, leave the corrupted source empty."
        )
    if typed:
        request.within(model, corrupted)
    asked = corruption(run.pipeline, clean, corrupted, [as_int(w) - 1 for w in words])
    run.session.run()
    return patch_record(run.pipeline, asked, list(run.session.tokens), run.session.max_new_tokens)


PATCH_ENDPOINT = Endpoint(
    "patch", patch, Patched, "Activation patching between a clean source and a corrupted one.", Limits(64, 64)
)
