"""Activation patching: which parts of the model carry the difference between a clean and a corrupted source.

The clean source is decoded, and its output is forced as the decoder input of both runs, so that both are read at
the same tokens. The corrupted run is the clean one with another source of the same length, or with Gaussian noise
added to the token embeddings of chosen positions (Meng et al. 2022, "causal tracing": 3 times the embeddings'
standard deviation, seeded). Then one component at a time is restored: its activation in the corrupted run is
replaced by the clean run's, and the clean token's log-probability is read at every step. The restored fraction

    r = (logp_patched - logp_corrupted) / (logp_clean - logp_corrupted)

is 1 where the component brings the clean prediction fully back and 0 where it changes nothing; it is NaN where the
corruption moved logp by less than NOTHING_TO_RESTORE nats. The components, each restored on its own:

- an encoder layer's output at one source position (the last layer's is what cross-attention reads);
- one head's output (encoder self-, decoder self- or cross-attention) at every position;
- a decoder layer's output at one target position (it can change the steps from that position on).

A sweep is a few batched forward passes (rows_per_pass components a pass), through the model contract's
interventions (transformer.interventions.Restore), so an adapted model of another family patches as ours does.
Heimersheim & Nanda 2024 ("How to use and interpret activation patching") discuss what such restorations do and do not show.

Dimension key: L layers, H heads, S source positions, T steps (the clean output, its end token included).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .config import KINDS, n_layers
from .contract import EncoderOutput, Seq2SeqModel
from .decoding import _max_new_tokens, greedy_decode, next_token_logits
from .forced import ForcedRun, decoder_input, run_with_cache
from .hooks import Hook, using
from .interventions import Activations, Interventions, Restore

NOTHING_TO_RESTORE = 0.1  # nats: a step whose clean and corrupted log p differ by less has no r
NOISE_SCALE = 3.0  # the noise's standard deviation, in embedding standard deviations (ROME's)
NOISE_SAMPLE = 4096  # vocabulary entries, evenly spaced, whose embeddings give the standard deviation


@dataclass
class Patching:
    """A whole sweep: r for every component at every step (NaN where there is nothing to restore)."""

    clean_logp: torch.Tensor  # (T,): the clean token's log p in the clean run
    corrupted_logp: torch.Tensor  # (T,): and in the corrupted run
    encoder_states: torch.Tensor  # (L_enc, S, T): restoring encoder layer l's output at source position s
    decoder_states: torch.Tensor  # (L_dec, T, T): [l, p, t] restoring decoder layer l's output at target position p;
    # NaN where p > t (a later position cannot change step t)
    heads: dict[str, torch.Tensor]  # kind -> (L, H, T): restoring one head's output at every position


@torch.no_grad()
def embedding_scale(model: Seq2SeqModel) -> float:
    """The standard deviation of the source token embeddings as the encoder reads them (embed_source), over at most
    NOISE_SAMPLE evenly spaced vocabulary entries."""
    vocab = model.config.src_vocab_size
    device = next(model.parameters()).device
    ids = torch.linspace(0, vocab - 1, min(vocab, NOISE_SAMPLE), device=device).round().long()
    return float(model.embed_source(ids[None]).std())


@torch.no_grad()
def noise_rows(model: Seq2SeqModel, seed: int = 0) -> torch.Tensor:
    """(max_len, D): the noise of each noisy source position, in order (row i: the i-th position with noise), drawn
    from N(0, (NOISE_SCALE · embedding_scale)²) with a generator seeded with `seed`: as many rows as a source may have
    positions, so the i-th noisy position's noise does not depend on how many others there are."""
    generator = torch.Generator().manual_seed(seed)
    rows = torch.randn(model.config.max_len, model.config.d_model, generator=generator)
    return rows * NOISE_SCALE * embedding_scale(model)


@torch.no_grad()
def noisy_embeddings(
    model: Seq2SeqModel,
    src: torch.Tensor,
    positions: Sequence[int] | torch.Tensor,
    seed: int = 0,
    rows: torch.Tensor | None = None,
) -> torch.Tensor:
    """embed_source(src) (1, S, D) with noise added at `positions`, 0-based (or an (S,) bool tensor marking them, as a
    traced graph's input): the i-th of them in order gets row i of `rows` (noise_rows(model, seed) by default), so the
    same call gives the same corruption."""
    embeds = model.embed_source(src)
    S = src.size(1)
    if not isinstance(positions, torch.Tensor):
        if not positions:
            return embeds.clone()
        if any(not 0 <= p < S for p in positions):
            raise ValueError(f"noise positions must be in 0..{S - 1} (got {sorted(positions)})")
        marked = torch.zeros(S, dtype=torch.bool, device=src.device)
        marked[list(positions)] = True
        positions = marked
    rows = noise_rows(model, seed) if rows is None else rows
    nth = (positions.long().cumsum(0) - 1).clamp(min=0)  # the row each position would take
    return torch.where(positions.to(embeds.device)[:, None], embeds + rows.to(embeds)[nth], embeds)


def _batch_of_one(ids: Sequence[int] | torch.Tensor, device: torch.device) -> torch.Tensor:
    """(1, S): source ids as a batch of one."""
    return ids.to(device).view(1, -1) if isinstance(ids, torch.Tensor) else torch.tensor([list(ids)], device=device)


class Pair:
    """A clean and a corrupted source, read with the decoder input forced to `tokens`, the clean output (its end
    token included). `corrupted` ids (as many as the clean ones) or `noise` positions (0-based) make the corrupted
    run; the clean run's activations are recorded once, for every restoration that follows.

    A traced graph (attention_lab.page_copy.patching) gives tensors: `clean` and `corrupted` (1, S) ids, `tokens` (T,),
    `noise` an (S,) bool mask (none marked: no noise) and `rows` the noise of each noisy position (noise_rows)."""

    def __init__(
        self,
        model: Seq2SeqModel,
        clean: Sequence[int] | torch.Tensor,
        tokens: Sequence[int] | torch.Tensor,
        corrupted: Sequence[int] | torch.Tensor | None = None,
        noise: Sequence[int] | torch.Tensor = (),
        seed: int = 0,
        max_new_tokens: int | None = None,
        rows: torch.Tensor | None = None,
    ) -> None:
        traced = isinstance(tokens, torch.Tensor)  # a traced graph's inputs: their values are not read here
        if not traced and not tokens:
            raise ValueError("nothing was written: there is no step to restore")
        if not traced and corrupted is not None and len(corrupted) != len(clean):
            raise ValueError(
                f"the corrupted source is {len(corrupted)} tokens and the clean one {len(clean)}: "
                "patching needs the same number of tokens"
            )
        if corrupted is None and not isinstance(noise, torch.Tensor) and not noise:
            raise ValueError("give a corrupted source, or positions to corrupt with noise")
        self.model, self.tokens = model, tokens if traced else list(tokens)
        device = next(model.parameters()).device
        self.limit = _max_new_tokens(model, max_new_tokens)
        self.src = _batch_of_one(clean, device)
        self.corrupted_src = self.src if corrupted is None else _batch_of_one(corrupted, device)
        self.tgt = decoder_input(model, self.tokens, 1, device)
        self.written = tokens.to(device) if traced else torch.tensor(self.tokens, device=device)
        with torch.no_grad():
            self.embeds = noisy_embeddings(model, self.corrupted_src, noise, seed, rows)
            self.clean = Activations()
            clean_run = run_with_cache(model, self.src, self.tokens, interventions=Interventions(record=self.clean))
            self.clean_logp = self._log_probs(clean_run)[0]
            corrupted = run_with_cache(model, self.corrupted_src, self.tokens, hooks=self._embedded(self.embeds))
            self.encoded = corrupted.encoded  # the corrupted encoder's output, for restorations in the decoder only
            self.corrupted_logp = self._log_probs(corrupted)[0]

    @torch.no_grad()
    def corrupted_output(self) -> list[int]:
        """What the model writes, greedily, from the corrupted source."""
        with using(self._embedded(self.embeds)):
            return greedy_decode(self.model, self.corrupted_src, self.limit)[0]

    @staticmethod
    def _embedded(embeds: torch.Tensor) -> list[Hook]:
        """A hook that reads `embeds` (B, S, D) in place of the source's token embeddings."""
        return [("encoder.hook_embed", lambda x, at: embeds)]

    def _log_probs(self, run: ForcedRun) -> torch.Tensor:
        """(B, T): the log p of each clean token in a teacher-forced run, under decoding's rules."""
        logits = next_token_logits(self.model, run.hidden, None, self.limit)
        return logits.log_softmax(dim=-1).gather(-1, self.written.expand(run.hidden.size(0), -1)[..., None])[..., 0]

    @torch.no_grad()
    def logp(self, restore: Restore) -> torch.Tensor:
        """(B, T): the clean tokens' log p in the corrupted run with what `restore` marks taken from its clean run
        (this pair's `clean`), one row per row of its masks."""
        interventions = Interventions(restore=restore)
        B = restore.rows
        if restore.encoder_states is not None or "encoder" in restore.heads:
            src, embedded = self.corrupted_src.expand(B, -1), self._embedded(self.embeds.expand(B, -1, -1))
            return self._log_probs(run_with_cache(self.model, src, self.tokens, (), interventions, embedded))
        enc = self.encoded  # the encoder's output is the corrupted one
        encoded = EncoderOutput(enc.memory.expand(B, -1, -1), enc.src_mask.expand(B, -1, -1, -1), ())
        return self._log_probs(run_with_cache(self.model, encoded, self.tokens, (), interventions))

    def restored(self, logp: torch.Tensor) -> torch.Tensor:
        """r for log p (..., T); NaN at steps where clean and corrupted differ by less than NOTHING_TO_RESTORE."""
        gap = self.clean_logp - self.corrupted_logp
        r = (logp - self.corrupted_logp) / gap
        return r.masked_fill(gap.abs() < NOTHING_TO_RESTORE, float("nan"))

    def sweep(self, rows_per_pass: int | None = 64) -> Patching:
        """r for every encoder state, decoder state and head, each restored on its own; rows_per_pass None: each
        site in one pass (a traced graph's, whose rows follow S and T)."""
        cfg, S, T = self.model.config, self.src.size(1), self.written.size(0)
        L_enc, L_dec, H = cfg.n_encoder_layers, cfg.n_decoder_layers, cfg.n_heads
        encoder = self._rows("encoder_states", (L_enc, S), rows_per_pass)
        heads = {kind: self._rows(kind, (n_layers(cfg, kind), H), rows_per_pass) for kind in KINDS}
        decoder = self._rows("decoder_states", (L_dec, T), rows_per_pass)  # (L_dec, T positions, T steps)
        later = torch.ones(T, T, dtype=torch.bool).triu(1).T  # [p, t]: p > t
        decoder = decoder.masked_fill(later.to(decoder.device), float("nan"))
        return Patching(
            self.clean_logp.cpu(),
            self.corrupted_logp.cpu(),
            encoder.cpu(),
            decoder.cpu(),
            {kind: r.cpu() for kind, r in heads.items()},
        )

    def _rows(self, site: str, shape: tuple[int, int], rows_per_pass: int | None) -> torch.Tensor:
        """r (*shape, T) for each component of one site ("encoder_states", "decoder_states" or a head kind),
        restored one per row, rows_per_pass rows a pass (None: all in one)."""
        n = shape[0] * shape[1]
        if rows_per_pass is None:  # a traced graph's: n follows the inputs' lengths
            each = torch.arange(n, device=self.src.device)
            return self.restored(self.logp(self._restore(site, each[:, None] == each, shape))).view(*shape, -1)
        found = []
        for first in range(0, n, rows_per_pass):
            rows = torch.arange(first, min(first + rows_per_pass, n))
            mask = torch.zeros(len(rows), n, dtype=torch.bool)
            mask[torch.arange(len(rows)), rows] = True
            found.append(self.restored(self.logp(self._restore(site, mask.to(self.src.device), shape))))
        return torch.cat(found).view(*shape, -1)

    def _restore(self, site: str, mask: torch.Tensor, shape: tuple[int, int]) -> Restore:
        """The restoration of what `mask` (rows, n) marks, one row a component of `site` in the order of `shape`."""
        mask = mask.view(mask.size(0), *shape)
        return Restore(self.clean, heads={site: mask}) if site in KINDS else Restore(self.clean, **{site: mask})
