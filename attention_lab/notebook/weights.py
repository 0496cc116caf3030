"""Attention weights a model has already given (any transformers encoder–decoder's `output_attentions=True`), shown
with our views: `show_attentions` takes bertviz model_view's encoder–decoder arguments, as transformers names them
(encoder_attentions, decoder_attentions, cross_attentions: per layer, batch 1) or as bertviz does (encoder_attention,
decoder_attention, cross_attention), with encoder_tokens and decoder_tokens.

    outputs = model(**inputs, decoder_input_ids=decoder_ids, output_attentions=True)
    attention_lab.show_attentions(encoder_attentions=outputs.encoder_attentions,
        decoder_attentions=outputs.decoder_attentions, cross_attentions=outputs.cross_attentions,
        encoder_tokens=tokenizer.convert_ids_to_tokens(inputs.input_ids[0]),
        decoder_tokens=tokenizer.convert_ids_to_tokens(decoder_ids[0]))

The decoder's tokens are its inputs, the start token first: the token written at position t is the input at t + 1, and
the last position's is not known from them ("…"). Without the model's values, the value-weighted reading shows the
weights as they are.
"""

from __future__ import annotations

import re

import numpy as np
import torch

from transformer.readings import rollout

from ..core.payload import Decoding, StepData, Tokens, labelled, q16
from .view import View

SPECIAL = re.compile(
    r"^(<[^<>\s]+>|\[[A-Z]+\]|__[a-z]{2,3}(_[A-Za-z]+)?__|[a-z]{3}_[A-Z][a-z]{3})$"
)  # <s>, [CLS], __en__, deu_Latn
UNKNOWN = "…"  # the token the last decoder position wrote: not among the decoder's inputs


def per_layer(layers, name: str, batch_one: bool = True) -> np.ndarray:
    """Per-layer tensors (1, H, Q, K) as one array (L, H, Q, K); a clear error for anything else."""
    if layers is None or len(layers) == 0:
        raise ValueError(f"{name} is missing: give one tensor per layer, as output_attentions=True returns them")
    arrays = [
        np.asarray(layer.detach().float().cpu() if torch.is_tensor(layer) else layer, dtype=np.float64)
        for layer in layers
    ]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1 or len(arrays[0].shape) != 4 or (batch_one and arrays[0].shape[0] != 1):
        raise ValueError(f"{name}: each layer must be (1, heads, queries, keys), one sentence (got {sorted(shapes)})")
    return np.stack([a[0] for a in arrays])


def tokens_of(tokens: list[str]) -> Tokens:
    """Tokens given as text, labelled as the views label them (a special token known by its look)."""
    pieces = [str(t) for t in tokens]
    return labelled(pieces, [bool(SPECIAL.match(t)) for t in pieces])


def decoding_data(
    encoder: np.ndarray, decoder: np.ndarray, cross: np.ndarray, src: list[str], dec: list[str]
) -> Decoding:
    """What the page draws a decoding from (attention_lab.core.payload's Decoding), from weights alone."""
    (Le, H, S, _), (Ld, _, T, _) = encoder.shape, decoder.shape
    if cross.shape != (Ld, H, T, S) or len(src) != S or len(dec) != T:
        raise ValueError(
            f"the shapes disagree: encoder {encoder.shape}, decoder {decoder.shape}, cross {cross.shape}, "
            f"{len(src)} encoder tokens, {len(dec)} decoder tokens"
        )
    written = tokens_of([*dec[1:], UNKNOWN])
    self_rolled = torch.stack(rollout(list(torch.tensor(decoder)))).numpy()  # (Ld, T, T)
    steps = [
        StepData(
            token=-1,
            label=written.labels[t],
            forced=False,
            prob=0.0,
            top=[],
            cross=q16(cross[:, :, t]),
            self=q16(decoder[:, :, t, : t + 1]),
            self_norms=None,
            self_rollout=q16(self_rolled[:, t, : t + 1]),
        )
        for t in range(T)
    ]
    return Decoding(
        model="output_attentions",
        layers=(Le, Ld),
        heads=H,
        character_level=False,
        bos=tokens_of(dec[:1]).labels[0],
        src=tokens_of(src),
        out=written,
        encoder=q16(encoder),
        encoder_norms=None,
        encoder_rollout=q16(torch.stack(rollout(list(torch.tensor(encoder)))).numpy()),
        cross_norms=None,
        steps=steps,
    )


def show_attentions(
    encoder_attentions=None,
    decoder_attentions=None,
    cross_attentions=None,
    encoder_tokens=None,
    decoder_tokens=None,
    *,
    encoder_attention=None,
    decoder_attention=None,
    cross_attention=None,
    name: str = "output_attentions",
) -> View:
    """Any encoder–decoder's attention weights (per layer, batch 1) and its tokens, as a view of our own."""
    encoder = per_layer(
        encoder_attentions if encoder_attentions is not None else encoder_attention, "encoder_attentions"
    )
    decoder = per_layer(
        decoder_attentions if decoder_attentions is not None else decoder_attention, "decoder_attentions"
    )
    cross = per_layer(cross_attentions if cross_attentions is not None else cross_attention, "cross_attentions")
    if encoder_tokens is None or decoder_tokens is None:
        raise ValueError("encoder_tokens and decoder_tokens are needed: tokenizer.convert_ids_to_tokens(ids)")
    src, dec = [str(t) for t in encoder_tokens], [str(t) for t in decoder_tokens]
    data = decoding_data(encoder, decoder, cross, src, dec)
    data.model = name
    record = {
        "source_tokens": src,
        "decoder_tokens": dec,
        "encoder": np.round(encoder, 5).tolist(),
        "steps": [
            {
                "step": t + 1,
                "decoder_self": np.round(decoder[:, :, t, : t + 1], 5).tolist(),
                "cross": np.round(cross[:, :, t], 5).tolist(),
            }
            for t in range(len(dec))
        ],
    }
    return View(data, name, " ".join(src), " ".join(dec[1:]), record)
