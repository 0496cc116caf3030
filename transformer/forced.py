"""The teacher-forced pass: one model run over a source and the tokens a decoding wrote, returning the logits and
the values at the hook points asked for (TransformerLens's run_with_cache, for an encoder–decoder).

Every reading of a decoding (contributions, the flow graph, the lens, value zeroing, patching, the head tests, the
scores of a forced translation, attribution) is this pass with hooks of its own: step t reads the decoder inputs
[bos, *tokens[:t-1]], all at once (the whole prefix in one decoder call) or one position at a time through the KV
cache, as decoding reads them. It runs through the model contract (transformer.contract) alone, so a model of
another family, wrapped by an adapter, is read as ours is.

Dimension key: B batch rows, S source positions, T the tokens written (the decoder inputs), D width, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import torch

from .contract import EncoderOutput, Seq2SeqModel
from .hooks import Hook, recording, using
from .interventions import Interventions, held
from .next_token import _checked


@dataclass
class ForcedRun:
    """What one teacher-forced pass gave. `logits` are made from `hidden` when first read (a reading of one step
    projects only the positions it needs: model.project(run.hidden[:, -1]))."""

    model: Seq2SeqModel = field(repr=False)
    encoded: EncoderOutput  # the encoder's output: memory (B, S, D) and the source mask
    hidden: torch.Tensor | None  # (B, T, D): the decoder's output before the output layer; None for the encoder alone
    cache: dict[str, torch.Tensor]  # hook name -> its value (stepwise: the encoder's, and the last step's)
    steps: list[dict[str, torch.Tensor]] = field(default_factory=list)  # stepwise: per position, the decoder's values
    _logits: torch.Tensor | None = field(default=None, repr=False)

    @property
    def logits(self) -> torch.Tensor | None:
        """(B, T, V): the model's own next-token logits at each position, before its next-token rules."""
        if self._logits is None and self.hidden is not None:
            self._logits = self.model.project(self.hidden)
        return self._logits


def decoder_input(
    model: Seq2SeqModel, tokens: Sequence[int] | Sequence[Sequence[int]], rows: int, device: torch.device
) -> torch.Tensor:
    """(rows, T): the decoder inputs that teacher-force `tokens`: bos, then every token but the last. `tokens`: the
    same T tokens for every row, or one list per row (T the longest; a shorter row padded with pad_id after it)."""
    bos, pad = model.config.bos_id, model.config.pad_id
    if isinstance(tokens, torch.Tensor):  # (T,) as a tensor: a traced graph's input (attention_lab.page_copy)
        tokens = tokens.to(device)
        return torch.cat([tokens.new_full((1,), bos), tokens[:-1]])[None].expand(rows, -1)
    if tokens and isinstance(tokens[0], (list, tuple)):
        T = max(len(row) for row in tokens)
        return torch.tensor([[bos, *row[:-1]] + [pad] * (T - len(row)) for row in tokens], device=device)
    return torch.tensor([[bos, *tokens[:-1]]], device=device).expand(rows, -1)


def run_with_cache(
    model: Seq2SeqModel,
    src: list[int] | torch.Tensor | EncoderOutput,
    tokens: Iterable[int] | Sequence[Sequence[int]] | None,
    names: Iterable[str] | Callable[[str], bool] = (),
    interventions: Interventions | None = None,
    hooks: Iterable[Hook] = (),
    stepwise: bool = False,
) -> ForcedRun:
    """ForcedRun `model` over `src` with the decoder forced along `tokens`, and keep the values at the hook points named.

    Args:
        model: any Seq2SeqModel.
        src: the source ids (S,), a batch (B, S) of sources padded with pad_id, or the EncoderOutput of an earlier
            run (the encoder does not run again; its B rows are the decoder's).
        tokens: the tokens written (the end token included, if written): the decoder reads bos and every token
            but the last, and its position t predicts tokens[t]; the same tokens in every row (a list, or a (T,)
            tensor, which a traced graph reads as its input), or one list per row (padded with pad_id after a
            shorter one). None: the encoder alone.
        names: hook names (transformer.hooks), or a predicate on names, whose values the run keeps.
        interventions: ablations, edits, records or restorations held over the whole pass (checked first).
        hooks: more hooks held over the pass (inside the interventions', so they see what those left).
        stepwise: one decoder call per position through the KV cache, as decoding steps (a model whose cached path
            differs is read as it decodes); the whole prefix in one call otherwise.

    Shape:
        ForcedRun.logits (B, T, V), ForcedRun.hidden (B, T, D), ForcedRun.cache[name] as transformer.hooks documents it.

    Examples:
        >>> from transformer import Transformer, TransformerConfig
        >>> cfg = TransformerConfig(src_vocab_size=12, tgt_vocab_size=12, d_model=16, n_heads=4,
        ...                         n_encoder_layers=2, n_decoder_layers=2, d_ff=32, max_len=16)
        >>> model = Transformer(cfg).eval()
        >>> run = run_with_cache(model, [5, 6, 7, 2], [8, 9, 2], ["decoder.layers.1.cross_attn.hook_pattern"])
        >>> run.logits.shape, run.cache["decoder.layers.1.cross_attn.hook_pattern"].shape
        (torch.Size([1, 3, 12]), torch.Size([1, 4, 3, 4]))
        >>> forward = model(torch.tensor([[5, 6, 7, 2]]), torch.tensor([[cfg.bos_id, 8, 9]])).logits
        >>> torch.allclose(run.logits, forward, atol=1e-6)
        True
    """
    interventions = _checked(model, interventions)
    device = next(model.parameters()).device
    with held(interventions), using(hooks), recording(names) as cache:
        if isinstance(src, EncoderOutput):
            encoded = src
        else:
            src = src.to(device) if isinstance(src, torch.Tensor) else torch.tensor([list(src)], device=device)
            encoded = model.encode(src)
        if tokens is None:
            return ForcedRun(model, encoded, None, dict(cache))
        tokens = tokens if isinstance(tokens, torch.Tensor) else list(tokens)
        if isinstance(tokens, torch.Tensor):  # (T,): its size, not its rows one by one (torch.export keeps T unfixed)
            empty = tokens.size(0) == 0
        else:
            empty = not len(tokens) or not all(len(row) for row in tokens if isinstance(row, (list, tuple)))
        if empty:
            raise ValueError("there is no token to force: a teacher-forced pass needs at least one in every row")
        tgt = decoder_input(model, tokens, encoded.memory.size(0), device)
        if not stepwise:
            hidden = model.decode(tgt, encoded.memory, encoded.src_mask).hidden
            return ForcedRun(model, encoded, hidden, dict(cache))
        steps, hiddens, kv = [], [], None
        for t in range(tgt.size(1)):
            with recording(names) as step:
                dec = model.decode(tgt[:, t : t + 1], encoded.memory, encoded.src_mask, kv, use_cache=True)
            kv = dec.cache
            hiddens.append(dec.hidden)
            steps.append(step)
    return ForcedRun(model, encoded, torch.cat(hiddens, dim=1), dict(cache), steps)


def one_run(interventions: Interventions | None, what: str) -> None:
    """Raise ValueError if `interventions` change rows of the batch apart (per-row ablations) or restore another
    run's activations: a reading of `what` reads one run as it is."""
    if interventions is not None and (interventions.restore is not None or any(interventions.rows)):
        raise ValueError(f"{what} read one run as it is: restored activations and per-row interventions are not read")
