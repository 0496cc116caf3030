"""ALTI+ (transformer.contributions): a worked example by hand, a second implementation written from the weights
for a one-layer model (post-LN and pre-LN), its defining properties, the known answer of reversal, and transformers
models through the adapter checked against transformers' own modules."""

from __future__ import annotations

import math

import pytest
import torch

import attention_lab.adapters  # noqa: F401 - transformers models load through load_pretrained
from tests import hf_models
from training.reversal import reversal_pairs
from transformer import Head, Interventions, Transformer, TransformerConfig, bundled, greedy_decode, load_pretrained
from transformer.contributions import Mixing, alti_plus, closeness, through_norm


def test_closeness_by_hand():
    # y = (2, 1): ||y|| = 3; ||y - (2, 0)|| = 1 and ||y - (0, 1)|| = 2, so 2 and 1 of 3
    c = closeness(torch.tensor([[2.0, 0.0], [0.0, 1.0]], dtype=torch.float64))
    assert c.tolist() == pytest.approx([2 / 3, 1 / 3])
    # a term that points away from the sum gets nothing: y = (2, 0); ||y - (3, 0)|| = 1 gives 1, ||y - (-1, 0)|| = 3
    # is more than ||y|| = 2 and gives 0
    c = closeness(torch.tensor([[3.0, 0.0], [-1.0, 0.0]], dtype=torch.float64))
    assert c.tolist() == pytest.approx([1.0, 0.0])


def test_a_layer_norm_after_the_sum_removes_a_constant_term():
    # whole (2, 4): mean 3, variance 1. L((1, 3)) = (-1, 1) and L((1, 1)) = (0, 0): the constant term is all mean
    norm = torch.nn.LayerNorm(2, eps=0.0, elementwise_affine=False)
    terms = torch.tensor([[[1.0, 3.0], [1.0, 1.0]]], dtype=torch.float64)
    passed = through_norm(terms, terms.sum(dim=1), norm)
    assert passed[0].tolist() == [[-1.0, 1.0], [0.0, 0.0]]
    assert closeness(passed)[0].tolist() == [1.0, 0.0]


def tiny(norm_first: bool, seed: int = 0) -> Transformer:
    torch.manual_seed(seed)
    config = TransformerConfig(
        src_vocab_size=11, tgt_vocab_size=11, d_model=8, n_heads=2, n_encoder_layers=1, n_decoder_layers=1,
        d_ff=16, max_len=16, norm_first=norm_first, dropout=0.0,
    )  # fmt: skip
    model = Transformer(config).eval()
    with torch.no_grad():  # LayerNorms that are not the identity, so that their gains are tested too
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.2, 0.2)
    return model


def by_hand(model: Transformer, src_ids: list[int], tokens: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """ALTI+ for a one-layer model, from its weights: every head, query and key in loops."""
    D, H = model.config.d_model, model.config.n_heads
    K = D // H

    def terms(attn, queries, keys, causal):  # (T, S, D): what key j adds to query i, heads summed
        W, b = attn.in_proj.weight, attn.in_proj.bias
        q, k, v = queries @ W[:D].T + b[:D], keys @ W[D : 2 * D].T + b[D : 2 * D], keys @ W[2 * D :].T + b[2 * D :]
        out = torch.zeros(queries.size(0), keys.size(0), D)
        for h in range(H):
            cols = slice(h * K, (h + 1) * K)
            scores = q[:, cols] @ k[:, cols].T / math.sqrt(K)
            if causal:
                scores = scores.masked_fill(torch.ones_like(scores).triu(1).bool(), -math.inf)
            a = scores.softmax(dim=-1)
            moved = v[:, cols] @ attn.out_proj.weight[:, cols].T  # (S, D)
            for i in range(queries.size(0)):
                for j in range(keys.size(0)):
                    out[i, j] += a[i, j] * moved[j]
        return out

    def shares(vectors, whole, norm):  # vectors (N, D) of one query, whole (D,) what the norm read
        if norm is not None:
            sigma = torch.sqrt(whole.var(unbiased=False) + norm.eps)
            vectors = torch.stack([norm.weight * (t - t.mean()) / sigma for t in vectors])
        y = vectors.sum(dim=0)
        near = torch.stack([torch.clamp(y.abs().sum() - (y - t).abs().sum(), min=0) for t in vectors])
        return near / near.sum()

    def block(attn, norm_before, norm_after, x, keys, cross, causal=False):  # -> contributions, output
        normed = norm_before(x) if norm_before is not None else x
        key_in = keys if cross else normed
        if not cross and norm_before is not None:
            key_in = normed
        parts = terms(attn, normed, key_in, causal)
        written = parts.sum(dim=1) + attn.out_proj.bias
        rows = []
        for i in range(x.size(0)):
            vectors = torch.cat([x[i : i + 1], parts[i]]) if cross else parts[i].clone()
            if not cross:
                vectors[i] = vectors[i] + x[i]
            rows.append(shares(vectors, x[i] + written[i], norm_after))
        out = x + written if norm_after is None else norm_after(x + written)
        return torch.stack(rows), out

    pre = model.config.norm_first
    with torch.no_grad():
        enc_layer, dec_layer = model.encoder.layers[0], model.decoder.layers[0]
        x = model.add_positions(model.embed_source(torch.tensor([src_ids])))[0]
        c_enc, x = block(
            enc_layer.self_attn, enc_layer.self_attn_norm if pre else None, None if pre else enc_layer.self_attn_norm,
            x, None, cross=False,
        )  # fmt: skip
        x = x + enc_layer.ff(enc_layer.ff_norm(x)) if pre else enc_layer.ff_norm(x + enc_layer.ff(x))
        memory = model.encoder.norm(x)
        y = model.add_positions(model.embed_target(torch.tensor([[model.config.bos_id, *tokens[:-1]]])))[0]
        c_self, y = block(
            dec_layer.self_attn, dec_layer.self_attn_norm if pre else None, None if pre else dec_layer.self_attn_norm,
            y, None, cross=False, causal=True,
        )  # fmt: skip
        c_cross, _ = block(
            dec_layer.cross_attn, dec_layer.cross_attn_norm if pre else None,
            None if pre else dec_layer.cross_attn_norm, y, memory, cross=True,
        )  # fmt: skip
    T = len(tokens)
    source = c_cross[:, 1:] @ c_enc  # the encoder's outputs' contributions from the source tokens
    prefix = c_cross[:, :1] * c_self  # the prefix reaches the cross-attention through its residual
    return source.reshape(T, -1), prefix


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_a_one_layer_model_matches_contributions_worked_from_its_weights(norm_first):
    model = tiny(norm_first)
    src_ids, tokens = [4, 7, 5, 9, 2], [6, 3, 8, 2]
    ours = alti_plus(model, src_ids, tokens)
    source, prefix = by_hand(model, src_ids, tokens)
    assert torch.allclose(ours.source, source, atol=1e-5)
    assert torch.allclose(ours.prefix, prefix, atol=1e-5)


@pytest.fixture(scope="module")
def reverse():
    return load_pretrained(str(bundled("reverse")))


def check_properties(c, steps: int, source_length: int) -> None:
    assert c.source.shape == (steps, source_length) and c.prefix.shape == (steps, steps)
    assert torch.allclose(c.source.sum(dim=1) + c.prefix.sum(dim=1), torch.ones(steps), atol=1e-5)
    assert (c.source >= 0).all() and (c.prefix >= 0).all()
    assert (c.prefix.triu(1) == 0).all()  # step t reads the decoder inputs 0..t-1 only


def no_cross(config) -> Interventions:
    return Interventions(
        ablate=frozenset(Head("cross", l, h) for l in range(config.n_decoder_layers) for h in range(config.n_heads))
    )


def test_contributions_add_up_and_the_source_reaches_the_decoder_only_through_cross_attention(reverse):
    model, tokenizer = reverse.model, reverse.tokenizer
    src_ids = tokenizer.encode("hello42world")
    tokens = greedy_decode(model, torch.tensor([src_ids]))[0]
    c = alti_plus(model, src_ids, tokens)
    check_properties(c, len(tokens), len(src_ids))
    assert (c.source_share > 0.5).all()  # a copy reads its source
    blind = alti_plus(model, src_ids, tokens, no_cross(model.config))
    assert blind.source.abs().max() == 0 and torch.allclose(blind.prefix.sum(dim=1), torch.ones(len(tokens)))


def test_reversal_puts_the_mirror_position_first(reverse):
    """Output position t copies source position S - 2 - t (the end token is last): ALTI+ must say so at >= 90% of
    the steps that copy."""
    model, tokenizer = reverse.model, reverse.tokenizer
    hits = steps = 0
    for text, _ in reversal_pairs(30, min_len=2, max_len=20, seed=11):
        src_ids = tokenizer.encode(text)
        tokens = greedy_decode(model, torch.tensor([src_ids]))[0]
        c = alti_plus(model, src_ids, tokens)
        S = len(src_ids)
        for t in range(min(len(tokens), S - 1)):
            steps += 1
            hits += int(c.source[t].argmax()) == S - 2 - t
    assert steps > 200 and hits / steps >= 0.9, f"{hits} of {steps}"


@pytest.fixture(scope="module", params=sorted(hf_models.FAMILIES))
def family(request, tmp_path_factory):
    return request.param, hf_models.loaded(request.param, tmp_path_factory)


def test_a_transformers_model_is_decomposed_as_its_own_modules_compute(family):
    """Through the adapter: every sublayer's parts add up to what transformers' attention module wrote (its output
    projection's bias included), and its residual and norm give what transformers' next module reads."""
    name, pipeline = family
    model = pipeline.model
    src_ids = pipeline.tokenizer.encode("ein kleiner Test hier")
    tokens = greedy_decode(model, torch.tensor([src_ids]), max_new_tokens=6)[0]
    check_properties(alti_plus(model, src_ids, tokens), len(tokens), len(src_ids))
    assert alti_plus(model, src_ids, tokens, no_cross(model.config)).source.abs().max() == 0

    written = {}
    hooks = [
        module.register_forward_hook(lambda m, a, out, key=(kind, layer): written.__setitem__(key, out[0]))
        for kind, modules in model.modules_by_kind.items()
        for layer, module in enumerate(modules)
    ]
    mixing = Mixing()
    try:
        with torch.no_grad(), mixing.reading(model):
            enc = model.encode(torch.tensor([src_ids]))
            tgt = torch.tensor([[model.config.bos_id, *tokens[:-1]]])
            model.decode(tgt, enc.memory, enc.src_mask)
    finally:
        for hook in hooks:
            hook.remove()
    assert set(mixing.sublayers) == set(written)
    for key, sublayer in mixing.sublayers.items():
        bias = 0 if sublayer.b_o is None else sublayer.b_o
        assert torch.allclose(sublayer.parts().sum(dim=2) + bias, written[key], atol=1e-5), (name, key)
        if sublayer.norm is not None:  # post-LN: the norm of residual + attention is the sublayer's output
            assert isinstance(sublayer.norm, torch.nn.LayerNorm)
    post = {key for key, s in mixing.sublayers.items() if s.norm is not None}
    assert post == (set(written) if name in ("marian", "bart") else set()), name  # T5 is pre-LN


def test_the_residual_read_through_the_adapter_is_transformers_own(family):
    """The residual each sublayer adds to, as the adapter reads it, is the hidden state transformers' own layer
    holds there: checked on the encoder, whose layer inputs transformers returns (output_hidden_states)."""
    name, pipeline = family
    model = pipeline.model
    src = torch.tensor([pipeline.tokenizer.encode("ein kleiner Test hier")])
    mixing = Mixing()
    with torch.no_grad():
        with mixing.reading(model):
            model.encode(src)
        theirs = model.hf.get_encoder()(input_ids=src, output_hidden_states=True).hidden_states
    for layer in range(model.config.n_encoder_layers):
        sublayer = mixing.sublayers[("encoder", layer)]
        assert torch.allclose(sublayer.residual, theirs[layer], atol=1e-5), (name, layer)


def test_a_patched_or_batched_run_is_refused_rather_than_read_wrong(reverse):
    from transformer.interventions import Activations, Restore

    src_ids = reverse.tokenizer.encode("abc")
    restore = Restore(Activations(), encoder_states=torch.zeros(1, reverse.model.config.n_encoder_layers, 4).bool())
    for held in (Interventions(restore=restore), Interventions(rows=(frozenset({Head("cross", 0, 0)}),))):
        with pytest.raises(ValueError, match="contributions read one run as it is"):
            alti_plus(reverse.model, src_ids, [5, 4, 3, 2], held)
