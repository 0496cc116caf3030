"""The DecoderLens (Langedijk et al. 2024, "DecoderLens: Layerwise Interpretation of Encoder-Decoder Transformers"):
what the decoder writes when it reads an earlier encoder layer's output in place of the last one's.

The encoder runs once and each layer's output is recorded at its hook point (encoder.layers.{l}.hook_resid_post,
transformer.hooks), and the embeddings entering the first layer (encoder.layers.0.hook_resid_pre) as layer 0. Then
the whole model decodes greedily with the last layer's output replaced by layer l's, at that same hook point: what
comes after the last layer still applies (the encoder's closing norm, which a pre-LN model needs and ours has
post-LN too, T5's final_layer_norm; none for BART or Marian), so the decoder reads layer l's state as it reads the
last one's. Decoding is the library's own greedy_decode, with the model's next-token rules and the interventions
given (ablated heads stay ablated, an edit acts at its step), so the last layer's text is the model's own greedy
output. Every layer is one row of a single batch (the same source in every row, so no padding).

Not transformer.lens.decoder_lens, the decoder's lens: that reads each *decoder* layer's state through the output
layer, one next token per step of one decoding. The DecoderLens changes what the decoder *reads*, the encoder layer,
and lets the whole decoder write a whole text from it.

Dimension key: L encoder layers (L + 1 readings: the embeddings, then each layer), S source positions, D width.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .contract import Seq2SeqModel
from .decoding import greedy_decode
from .forced import one_run, run_with_cache
from .hooks import At, using
from .interventions import Interventions
from .next_token import _checked, _max_new_tokens


@dataclass
class LayerOutput:
    """What the decoder writes from one encoder layer's output."""

    layer: int  # 0: the embeddings entering layer 1; L: the last layer's output (what the model itself reads)
    tokens: list[int]  # the tokens written, the end token last if it was written within the limit


@torch.no_grad()
def decoderlens(
    model: Seq2SeqModel,
    src_ids: list[int],
    max_new_tokens: int | None = None,
    interventions: Interventions | None = None,
) -> list[LayerOutput]:
    """Greedy decodings of `src_ids` with the decoder reading each encoder layer's output, from the embeddings
    (layer 0) to the last layer (L, the model's own output), in order. `max_new_tokens` caps each decoding (the
    model's own limit if None); `interventions` (ablations, edits) are held in every pass.

    Examples:
        >>> from transformer import Transformer, TransformerConfig
        >>> cfg = TransformerConfig(src_vocab_size=12, tgt_vocab_size=12, d_model=16, n_heads=4,
        ...                         n_encoder_layers=2, n_decoder_layers=2, d_ff=32, max_len=16)
        >>> model = Transformer(cfg).eval()
        >>> layers = decoderlens(model, [5, 6, 7, 2], max_new_tokens=6)
        >>> [out.layer for out in layers]
        [0, 1, 2]
        >>> own = greedy_decode(model, torch.tensor([[5, 6, 7, 2]]), 6)[0]  # no end token in greedy_decode's
        >>> layers[-1].tokens in (own, [*own, cfg.eos_id])             # the last layer's: the model's own
        True
    """
    if not src_ids:
        raise ValueError("the source is empty")
    interventions = _checked(model, interventions)
    one_run(interventions, "the DecoderLens's decodings (a batch row per layer)")
    limit = _max_new_tokens(model, max_new_tokens)
    src = torch.tensor([src_ids], device=next(model.parameters()).device)
    readings = encoder_readings(model, src, interventions)
    with using(reading_each_layer(model, readings)):
        rows = greedy_decode(model, src.expand(readings.size(0), -1), limit, interventions)
    eos = model.config.eos_id
    # greedy_decode stops a row at its end token and leaves it out: a row shorter than the limit wrote it
    return [LayerOutput(layer, row + [eos] if len(row) < limit else row) for layer, row in enumerate(rows)]


def reading_points(model: Seq2SeqModel) -> list[str]:
    """The hook points of the DecoderLens's readings: the embeddings entering the first encoder layer, then each
    layer's output."""
    L = model.config.n_encoder_layers
    return ["encoder.layers.0.hook_resid_pre", *(f"encoder.layers.{layer}.hook_resid_post" for layer in range(L))]


def encoder_readings(
    model: Seq2SeqModel, src: torch.Tensor, interventions: Interventions | None = None
) -> torch.Tensor:
    """(L + 1, S, D): the source `src` (1, S) read by the encoder alone, row l being layer l's output (row 0 the
    embeddings), with `interventions` held."""
    names = reading_points(model)
    states = run_with_cache(model, src, None, names, interventions).cache
    return torch.cat([states[name] for name in names])


def reading_memories(
    model: Seq2SeqModel, src: torch.Tensor, interventions: Interventions | None = None
) -> torch.Tensor:
    """(L + 1, S, D): what the decoder reads of the source `src` (1, S) from each reading, row l being the encoder's
    output (through what follows its last layer) with layer l's output in place of the last layer's: the memory
    each of the DecoderLens's decodings reads (a page decodes from it: attention_lab/page_copy/decoderlens.py)."""
    readings = encoder_readings(model, src, interventions)
    rows = src.expand(readings.size(0), -1)
    return run_with_cache(model, rows, None, (), interventions, reading_each_layer(model, readings)).encoded.memory


def reading_each_layer(model: Seq2SeqModel, readings: torch.Tensor) -> list:
    """The hook that puts row l of `readings` (L + 1, S, D) in place of the last encoder layer's output in row l of
    a batch of L + 1 copies of the source: what follows the last layer (the closing norm, the decoder) reads layer
    l's state as it reads the last one's."""

    def read_layer_l(x: torch.Tensor, at: At) -> torch.Tensor:
        return readings.to(x)

    return [(reading_points(model)[-1], read_layer_l)]
