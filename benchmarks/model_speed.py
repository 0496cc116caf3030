"""Our Transformer against torch.nn.Transformer: a training step, and greedy decoding with and without the KV cache.

Machines are shared and noisy, so every comparison is measured side by side in one run, alternating the
contenders, and reported as the ratio of medians (benchmarks/run.py writes the table).
"""

from __future__ import annotations

import copy
import statistics
import time
import warnings
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from transformer import Transformer, TransformerConfig
from transformer.masks import to_torch_causal_mask, to_torch_key_padding_mask

warnings.filterwarnings("ignore", message=".*nested tensor.*")  # torch.nn.Transformer's notes about its fast path


def median_ms(times: list[float]) -> float:
    return 1000 * statistics.median(times)


def alternate(fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 2) -> dict[str, list[float]]:
    """Time each function `repeats` times, interleaved (A B A B ...) so that noise hits every contender alike."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


# 1. Training step ----------------------------------------------------------------------------------------------------


def torch_pair(cfg: TransformerConfig) -> tuple[Transformer, nn.Transformer]:
    torch.manual_seed(0)
    ours = Transformer(cfg)
    theirs = nn.Transformer(
        d_model=cfg.d_model,
        nhead=cfg.n_heads,
        num_encoder_layers=cfg.n_encoder_layers,
        num_decoder_layers=cfg.n_decoder_layers,
        dim_feedforward=cfg.d_ff,
        dropout=cfg.dropout,
        batch_first=True,
        norm_first=cfg.norm_first,
    )
    ours.load_torch_transformer(theirs)
    return ours, theirs


def training_step_bench(cfg: TransformerConfig, batch: int, length: int, repeats: int) -> dict[str, float]:
    ours, theirs = torch_pair(cfg)
    shell = copy.deepcopy(ours)  # our embeddings and projection around torch's stacks
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, cfg.src_vocab_size, (batch, length), generator=g)
    tgt = torch.randint(4, cfg.tgt_vocab_size, (batch, length + 1), generator=g)
    tgt_in, labels = tgt[:, :-1], tgt[:, 1:]
    opt_ours = torch.optim.AdamW(ours.parameters(), lr=1e-4)
    opt_theirs = torch.optim.AdamW([*theirs.parameters(), *shell.parameters()], lr=1e-4)
    causal = to_torch_causal_mask(length)
    src_pad, tgt_pad = to_torch_key_padding_mask(src, cfg.pad_id), to_torch_key_padding_mask(tgt_in, cfg.pad_id)

    def step(model_logits, optimizer):
        loss = F.cross_entropy(model_logits().transpose(1, 2), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    def torch_logits():
        hidden = theirs(
            shell.add_positions(shell.embed_source(src)),
            shell.add_positions(shell.embed_target(tgt_in)),
            tgt_mask=causal,
            src_key_padding_mask=src_pad,
            tgt_key_padding_mask=tgt_pad,
            memory_key_padding_mask=src_pad,
        )
        return shell.project(hidden)

    ours.train(), theirs.train(), shell.train()
    times = alternate(
        {
            "torch": lambda: step(torch_logits, opt_theirs),
            "ours": lambda: step(lambda: ours(src, tgt_in).logits, opt_ours),
            "ours_weights": lambda: step(lambda: ours(src, tgt_in, output_attentions=True).logits, opt_ours),
        },
        repeats,
    )
    return {name: median_ms(t) for name, t in times.items()}


# 2. Inference --------------------------------------------------------------------------------------------------------


@torch.no_grad()
def greedy_fixed(model: Transformer, src: torch.Tensor, steps: int, cached: bool) -> list[int]:
    """Greedy decoding of exactly `steps` tokens (eos ignored), with the KV cache or re-running the whole prefix."""
    enc = model.encode(src)
    tokens = torch.full((src.size(0), 1), model.config.bos_id)
    cache = None
    for _ in range(steps):
        if cached:
            dec = model.decode(tokens[:, -1:], enc.memory, enc.src_mask, cache, use_cache=True)
            cache = dec.cache
        else:
            dec = model.decode(tokens, enc.memory, enc.src_mask)
        tokens = torch.cat([tokens, model.project(dec.hidden[:, -1:]).argmax(-1)], dim=1)
    return tokens[0].tolist()


@torch.no_grad()
def torch_greedy(ours: Transformer, theirs: nn.Transformer, src: torch.Tensor, steps: int) -> list[int]:
    """The same greedy loop through torch.nn.Transformer's modules, which have no KV cache."""
    src_pad = to_torch_key_padding_mask(src, ours.config.pad_id)
    memory = theirs.encoder(ours.add_positions(ours.embed_source(src)), src_key_padding_mask=src_pad)
    tokens = torch.full((src.size(0), 1), ours.config.bos_id)
    for _ in range(steps):
        hidden = theirs.decoder(
            ours.add_positions(ours.embed_target(tokens)),
            memory,
            tgt_mask=to_torch_causal_mask(tokens.size(1)),
            memory_key_padding_mask=src_pad,
        )
        tokens = torch.cat([tokens, ours.project(hidden[:, -1:]).argmax(-1)], dim=1)
    return tokens[0].tolist()


@torch.no_grad()
def step_at(model: Transformer, src: torch.Tensor, position: int, repeats: int) -> float:
    """Median time of one cached decoder step when `position` tokens are already in the cache."""
    enc = model.encode(src)
    tokens = torch.randint(4, model.config.tgt_vocab_size, (1, position))
    cache = model.decode(tokens, enc.memory, enc.src_mask, use_cache=True).cache
    nxt = tokens[:, -1:]
    times = alternate({"step": lambda: model.decode(nxt, enc.memory, enc.src_mask, cache, use_cache=True)}, repeats)
    return median_ms(times["step"])


def inference_bench(cfg: TransformerConfig, steps: int, repeats: int) -> dict[str, float]:
    ours, theirs = torch_pair(cfg)
    ours.eval(), theirs.eval()
    src = torch.randint(4, cfg.src_vocab_size, (1, 20), generator=torch.Generator().manual_seed(1))
    same = (
        greedy_fixed(ours, src, steps, True)
        == greedy_fixed(ours, src, steps, False)
        == torch_greedy(ours, theirs, src, steps)
    )
    times = alternate(
        {
            "cached": lambda: greedy_fixed(ours, src, steps, True),
            "recompute": lambda: greedy_fixed(ours, src, steps, False),
            "torch": lambda: torch_greedy(ours, theirs, src, steps),
        },
        repeats,
    )
    result = {name: median_ms(t) for name, t in times.items()}
    result["same_tokens"] = float(same)
    result["step_at_8"] = step_at(ours, src, 8, repeats * 5)
    result["step_at_64"] = step_at(ours, src, min(64, cfg.max_len - 1), repeats * 5)
    return result
