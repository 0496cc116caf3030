"""Proof that our Transformer computes what torch.nn.Transformer computes with the same weights.

Our embeddings feed torch's encoder-decoder stacks (with masks converted to torch's convention), and our output
projection reads their result. Logits, every head's attention weights and every gradient must match in float32.
"""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tests.conftest import random_ids, tiny_config
from tests.tolerance import assert_close
from transformer import Transformer
from transformer.attention import MultiHeadAttention
from transformer.masks import causal_mask, padding_mask, to_torch_causal_mask, to_torch_key_padding_mask

TOL = {"rtol": 0, "atol": 1e-5}  # attention weights lie in [0, 1]: 1e-5 is 84 float32 eps of the largest there can be
# Logits, the loss, a layer's output and every gradient: in float32 eps of the largest value compared
# (tests/tolerance.py); torch's stacks and ours sum in other orders. At most 2.7 eps measured.
ULPS = 32
PAD = 0


def make_pair(norm_first: bool) -> tuple[Transformer, nn.Transformer]:
    torch.manual_seed(0)
    cfg = tiny_config(norm_first=norm_first)
    ours = Transformer(cfg)
    theirs = nn.Transformer(
        d_model=cfg.d_model,
        nhead=cfg.n_heads,
        num_encoder_layers=cfg.n_encoder_layers,
        num_decoder_layers=cfg.n_decoder_layers,
        dim_feedforward=cfg.d_ff,
        dropout=0.0,
        batch_first=True,
        norm_first=norm_first,
    )
    ours.load_torch_transformer(theirs)
    # Train mode keeps torch on its reference (non-fused) path; dropout is 0, so it is deterministic.
    return ours.train(), theirs.train()


def torch_logits(ours: Transformer, theirs: nn.Transformer, src, tgt) -> torch.Tensor:
    src_pad, tgt_pad = to_torch_key_padding_mask(src, PAD), to_torch_key_padding_mask(tgt, PAD)
    hidden = theirs(
        ours.add_positions(ours.embed_source(src)),
        ours.add_positions(ours.embed_target(tgt)),
        tgt_mask=to_torch_causal_mask(tgt.size(1)),
        src_key_padding_mask=src_pad,
        tgt_key_padding_mask=tgt_pad,
        memory_key_padding_mask=src_pad,
    )
    return ours.project(hidden)


def batch(ragged: bool):
    g = torch.Generator().manual_seed(11)
    src_lengths, tgt_lengths = ([9, 6, 3, 1], [7, 4, 7, 2]) if ragged else (None, None)
    return random_ids(g, 4, 9, 13, src_lengths), random_ids(g, 4, 7, 11, tgt_lengths)


CASES = [
    pytest.param(nf, r, id=f"{'pre' if nf else 'post'}-LN-{'ragged' if r else 'full'}")
    for nf in (False, True)
    for r in (False, True)
]


@pytest.mark.parametrize("norm_first, ragged", CASES)
def test_logits_equal_torch(norm_first, ragged):
    ours, theirs = make_pair(norm_first)
    src, tgt = batch(ragged)
    expected = torch_logits(ours, theirs, src, tgt)
    assert_close(ours(src, tgt).logits, expected, ulps=ULPS, what="logits")
    assert_close(ours(src, tgt, output_attentions=True).logits, expected, ulps=ULPS, what="logits, weights asked for")


def test_logits_equal_torch_in_eval_mode():
    ours, theirs = make_pair(norm_first=False)
    ours.eval(), theirs.eval()
    src, tgt = batch(ragged=True)
    with torch.no_grad():  # torch may take its fused inference path here; the result must not change
        assert_close(ours(src, tgt).logits, torch_logits(ours, theirs, src, tgt), ulps=ULPS, what="eval logits")


@pytest.mark.parametrize("norm_first", [False, True])
def test_parameter_count_equals_torch(norm_first):
    ours, theirs = make_pair(norm_first)
    cfg = ours.config
    stacks = sum(p.numel() for p in [*ours.encoder.parameters(), *ours.decoder.parameters()])
    assert stacks == sum(p.numel() for p in theirs.parameters())
    embeddings = (cfg.src_vocab_size + cfg.tgt_vocab_size) * cfg.d_model  # the output projection is tied
    assert sum(p.numel() for p in ours.parameters()) == stacks + embeddings


@pytest.mark.parametrize("norm_first, ragged", CASES)
def test_every_layers_attention_weights_equal_torch_multihead_attention(norm_first, ragged):
    """Capture the inputs torch gives each of its nn.MultiheadAttention modules, ask them for per-head weights,
    and compare with the weights our model returns for the same layer."""
    ours, theirs = make_pair(norm_first)
    src, tgt = batch(ragged)
    calls = {}

    def capture(name):
        def hook(module, args, kwargs):
            calls[name] = (module, args, kwargs)

        return hook

    for name, module in theirs.named_modules():
        if isinstance(module, nn.MultiheadAttention):
            module.register_forward_pre_hook(capture(name), with_kwargs=True)
    torch_logits(ours, theirs, src, tgt)
    attentions = ours(src, tgt, output_attentions=True).attentions
    expected = {
        "encoder.layers.{}.self_attn": attentions.encoder,
        "decoder.layers.{}.self_attn": attentions.decoder_self,
        "decoder.layers.{}.multihead_attn": attentions.cross,
    }
    compared = 0
    for pattern, ours_per_layer in expected.items():
        for i, our_weights in enumerate(ours_per_layer):
            module, args, kwargs = calls[pattern.format(i)]
            kwargs = {**kwargs, "need_weights": True, "average_attn_weights": False}
            _, their_weights = module(*args, **kwargs)
            torch.testing.assert_close(our_weights, their_weights, **TOL)
            compared += 1
    assert compared == 6


@pytest.mark.parametrize("cross", [False, True])
def test_attention_module_equals_multihead_attention(cross):
    torch.manual_seed(3)
    ours, theirs = MultiHeadAttention(16, 4, 0.0), nn.MultiheadAttention(16, 4, batch_first=True)
    ours.in_proj.weight.data.copy_(theirs.in_proj_weight), ours.in_proj.bias.data.copy_(theirs.in_proj_bias)
    ours.out_proj.load_state_dict(theirs.out_proj.state_dict())
    x = torch.randn(3, 5, 16)
    memory = torch.randn(3, 6, 16) if cross else None
    keys = memory if cross else x
    key_ids = torch.tensor([[4, 4, 4, 4, 4, 4], [4, 4, 4, 0, 0, 0], [4, 0, 0, 0, 0, 0]])[:, : keys.size(1)]
    mask = padding_mask(key_ids, PAD)
    torch_kwargs = {"key_padding_mask": to_torch_key_padding_mask(key_ids, PAD)}
    if not cross:
        mask = mask & causal_mask(5, 5)
        torch_kwargs["attn_mask"] = to_torch_causal_mask(5)
    out, weights = ours(x, memory, mask, need_weights=True)
    their_out, their_weights = theirs(x, keys, keys, need_weights=True, average_attn_weights=False, **torch_kwargs)
    torch.testing.assert_close(weights, their_weights, **TOL)
    assert_close(out, their_out, ulps=ULPS, what="attention output")


def _map_grads(ours: Transformer, theirs: nn.Transformer):
    from transformer.model import _torch_to_ours

    our_params = dict(ours.named_parameters())
    return [(name, our_params[_torch_to_ours(name)].grad, p.grad) for name, p in theirs.named_parameters()]


@pytest.mark.parametrize("norm_first, ragged", CASES)
def test_every_gradient_equals_torch(norm_first, ragged):
    ours, theirs = make_pair(norm_first)
    shell = copy.deepcopy(ours)  # our embeddings and projection around torch's stacks, with their own gradients
    src, tgt = batch(ragged)
    labels = torch.roll(tgt, -1, dims=1)
    loss_ours = F.cross_entropy(ours(src, tgt).logits.transpose(1, 2), labels, ignore_index=PAD)
    loss_theirs = F.cross_entropy(torch_logits(shell, theirs, src, tgt).transpose(1, 2), labels, ignore_index=PAD)
    assert_close(loss_ours, loss_theirs, ulps=ULPS, what="loss")
    loss_ours.backward(), loss_theirs.backward()
    pairs = _map_grads(ours, theirs)
    for name in ("src_embed.weight", "tgt_embed.weight", "output_proj.weight"):
        pairs.append(
            (
                name,
                dict(ours.named_parameters()).get(name, ours.tgt_embed.weight).grad,
                dict(shell.named_parameters()).get(name, shell.tgt_embed.weight).grad,
            )
        )
    assert len(pairs) == len(list(theirs.parameters())) + 3
    for name, ours_grad, their_grad in pairs:
        assert ours_grad is not None and their_grad is not None, name
        assert_close(ours_grad, their_grad, ulps=ULPS, what=f"gradient of {name}")
