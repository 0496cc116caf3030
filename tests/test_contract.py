"""The model contract (transformer.contract): one set of checks, run on our Transformer (post-LN and pre-LN) and on
tiny transformers models of three families through the adapter, so that every member means the same for each."""

from __future__ import annotations

import pytest
import torch

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from tests import hf_models
from tests.conftest import tiny_pipelines
from tests.tolerance import assert_close
from transformer import NextTokenRules, Seq2SeqModel, Seq2SeqTokenizer, Transformer
from transformer.contract import Cache, ModelConfig
from transformer.hooks import recording, using

MODELS = ["ours", "ours-pre-ln", *sorted(hf_models.FAMILIES)]
# the contract's logits against the model's own forward: float32 eps of the largest logit (tests/tolerance.py); they
# were equal to the bit where measured
LOGIT_ULPS = 32


@pytest.fixture(scope="module", params=MODELS)
def pipeline(request, tmp_path_factory):
    if request.param.startswith("ours"):
        pipeline = tiny_pipelines()["de-en"]
        if request.param == "ours-pre-ln":
            torch.manual_seed(1)
            config = pipeline.model.config
            config.norm_first = True
            pipeline.model = Transformer(config).eval()
        return pipeline
    return hf_models.loaded(request.param, tmp_path_factory)


def decode_states(model, *args, **kwargs):
    """model.decode(*args, **kwargs), and each decoder layer's output as recorded at its hook_resid_post."""
    names = [f"decoder.layers.{layer}.hook_resid_post" for layer in range(model.config.n_decoder_layers)]
    with recording(names) as states:
        dec = model.decode(*args, **kwargs)
    return dec, tuple(states[name] for name in names if name in states)


def batch(pipeline) -> torch.Tensor:
    """Two sources of different lengths, the shorter right-padded."""
    return pipeline.encode_batch(["Ich habe Hunger.", "Das Haus ist alt."])


def prefix(pipeline, n: int = 4) -> torch.Tensor:
    """(2, n) decoder inputs: the start token, then tokens that are no one's special."""
    config, special = pipeline.model.config, pipeline.model.special_ids
    words = [t for t in range(config.tgt_vocab_size) if t not in special][5 : 5 + 2 * (n - 1)]
    return torch.tensor([[config.bos_id, *words[: n - 1]], [config.bos_id, *words[n - 1 :]]])


def test_the_model_config_and_tokenizer_meet_the_contract(pipeline):
    model, tokenizer = pipeline.model, pipeline.tokenizer
    assert isinstance(model, Seq2SeqModel) and isinstance(model.config, ModelConfig)
    assert isinstance(tokenizer, Seq2SeqTokenizer)
    config = model.config
    assert {config.pad_id, config.bos_id, config.eos_id} <= model.special_ids
    assert 1 <= config.max_new_tokens <= config.max_len
    assert (tokenizer.pad_id, tokenizer.bos_id, tokenizer.eos_id) == (config.pad_id, config.bos_id, config.eos_id)
    vocab = tokenizer.get_vocab()
    assert vocab and all(isinstance(piece, str) and isinstance(i, int) for piece, i in vocab.items())


@torch.no_grad()
def test_the_source_mask_is_bool_true_at_real_tokens(pipeline):
    src = batch(pipeline)
    enc = pipeline.model.encode(src)
    S = src.size(1)
    assert enc.src_mask.dtype == torch.bool and enc.src_mask.shape == (2, 1, 1, S)
    assert torch.equal(enc.src_mask[:, 0, 0], src != pipeline.model.config.pad_id)
    assert enc.memory.shape == (2, S, pipeline.model.config.d_model)


@torch.no_grad()
def test_the_last_layer_state_through_final_norm_and_project_gives_the_models_logits(pipeline):
    model, src, tgt = pipeline.model, batch(pipeline), prefix(pipeline)
    enc = model.encode(src)
    dec, layer_states = decode_states(model, tgt, enc.memory, enc.src_mask)
    assert len(layer_states) == model.config.n_decoder_layers
    assert all(state.shape == dec.hidden.shape for state in layer_states)
    torch.testing.assert_close(model.final_norm(layer_states[-1]), dec.hidden, atol=1e-6, rtol=0)
    if isinstance(model, Transformer):
        expected = model(src, tgt).logits
    else:  # transformers' own forward, with its own output layer (bias, T5's scaling)
        expected = model.hf(input_ids=src, attention_mask=(src != model.config.pad_id).long(), decoder_input_ids=tgt)
        expected = expected.logits
    assert_close(model.project(dec.hidden), expected, ulps=LOGIT_ULPS, what="logits")
    with recording(["decoder.layers.0.hook_resid_post"]) as states:
        pass
    model.decode(tgt, enc.memory, enc.src_mask)
    assert not states  # only when asked for


def test_given_embeddings_stand_for_the_tokens_and_carry_gradients(pipeline):
    model, src, tgt = pipeline.model, batch(pipeline), prefix(pipeline)
    with torch.no_grad():
        enc = model.encode(src)
        dec = model.decode(tgt, enc.memory, enc.src_mask)
    src_embeds = model.embed_source(src).detach().requires_grad_()
    tgt_embeds = model.embed_target(tgt).detach().requires_grad_()
    assert src_embeds.shape == (*src.shape, model.config.d_model)
    assert tgt_embeds.shape == (*tgt.shape, model.config.d_model)
    with using([("encoder.hook_embed", lambda x, at: src_embeds)]):
        given = model.encode(src)
    with using([("decoder.hook_embed", lambda x, at: tgt_embeds)]):
        out = model.decode(tgt, given.memory, given.src_mask)
    torch.testing.assert_close(given.memory, enc.memory, atol=1e-6, rtol=0)
    torch.testing.assert_close(out.hidden, dec.hidden, atol=1e-6, rtol=0)
    model.project(out.hidden)[0, -1].max().backward()
    assert src_embeds.grad[0].abs().sum() > 0 and tgt_embeds.grad[0].abs().sum() > 0
    assert src_embeds.grad[1].abs().sum() == 0  # row 1 is not in the output differentiated
    # other embeddings change the output: they are read, not ignored (a random change: LayerNorm removes a shift)
    shifted = src_embeds + torch.randn_like(src_embeds)
    with torch.no_grad(), using([("encoder.hook_embed", lambda x, at: shifted)]):
        moved = model.encode(src).memory
    assert not torch.allclose(moved, enc.memory, atol=1e-3)


@torch.no_grad()
def test_the_cache_steps_as_the_whole_prefix_and_cuts_back_and_reorders_without_change(pipeline):
    model, src, tgt = pipeline.model, batch(pipeline), prefix(pipeline)
    enc = model.encode(src)
    whole, whole_states = decode_states(model, tgt, enc.memory, enc.src_mask)
    cache, rows = None, []
    for t in range(tgt.size(1)):
        step, step_states = decode_states(model, tgt[:, t : t + 1], enc.memory, enc.src_mask, cache, use_cache=True)
        cache = step.cache
        rows.append(step_states[0][:, -1])
    assert isinstance(cache, Cache) and cache.length == tgt.size(1)
    torch.testing.assert_close(step.hidden[:, -1], whole.hidden[:, -1], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(torch.stack(rows, 1), whole_states[0], atol=1e-5, rtol=1e-4)
    shorter = cache.truncate(2)
    assert shorter.length == 2 and cache.length == tgt.size(1)  # the old cache is left as it was
    again = model.decode(tgt[:, 2:3], enc.memory, enc.src_mask, shorter)
    torch.testing.assert_close(again.hidden[:, -1], whole.hidden[:, 2], atol=1e-5, rtol=1e-4)
    assert shorter.length == 2  # a decode from a cache makes a new one (DecodingSession.fork relies on it)
    twice = model.decode(tgt[:, 2:3], enc.memory, enc.src_mask, shorter)
    torch.testing.assert_close(twice.hidden, again.hidden)
    swapped = cache.truncate(3).select(torch.tensor([1, 0]))
    memory, mask = enc.memory[[1, 0]], enc.src_mask[[1, 0]]
    last = model.decode(tgt[[1, 0], 3:4], memory, mask, swapped)
    torch.testing.assert_close(last.hidden[:, -1], whole.hidden[[1, 0], 3], atol=1e-5, rtol=1e-4)


@torch.no_grad()
def test_value_norms_cover_every_layer_head_and_key(pipeline):
    model, src, tgt = pipeline.model, batch(pipeline), prefix(pipeline)
    config = model.config
    enc = model.encode(src, output_attentions=True)
    dec = model.decode(tgt, enc.memory, enc.src_mask, use_cache=True, output_attentions=True)
    S, P, H = src.size(1), tgt.size(1), config.n_heads
    assert [n.shape for n in model.encoder_value_norms(enc)] == [(2, H, S)] * config.n_encoder_layers
    own, cross = model.decoder_value_norms(dec.cache)
    assert [n.shape for n in own] == [(2, H, P)] * config.n_decoder_layers
    assert [n.shape for n in cross] == [(2, H, S)] * config.n_decoder_layers
    last, none = model.decoder_value_norms(dec.cache, start=P - 1, cross=False)  # what a step adds
    assert none == [] and all(torch.allclose(a, b[:, :, -1:], atol=1e-6) for a, b in zip(last, own))


def test_the_next_token_rules_ban_force_and_hold_back_eos():
    rules = NextTokenRules(banned=(0,), begin_banned=(3,), forced_first=None, forced_last=2, eos_ids=(2,), min_length=3)
    first = rules.apply(torch.zeros(6), step=0, limit=4)
    assert first.isinf().tolist() == [True, False, True, True, False, False]  # pad; eos too early; 3 at the start
    assert rules.apply(torch.zeros(6), step=2, limit=4).isinf().tolist() == [True, False, False, False, False, False]
    last = rules.apply(torch.zeros(6), step=3, limit=4)
    assert last.argmax() == 2 and last.isinf().sum() == 5  # eos forced at the limit
    forced = NextTokenRules(forced_first=4).apply(torch.zeros(6), step=0)
    assert forced.isfinite().tolist() == [False, False, False, False, True, False]
    # a whole prefix at once: position t is step t, whatever the rules and the limit
    both = NextTokenRules(banned=(0, 1), begin_banned=(5,), forced_first=4, forced_last=2, eos_ids=(2,), min_length=3)
    for every in (rules, both, NextTokenRules()):
        for limit in (None, 1, 2, 4, 9):
            whole = every.apply(torch.zeros(2, 4, 6), step=None, limit=limit)
            for t in range(4):
                assert torch.equal(whole[:, t], every.apply(torch.zeros(2, 6), step=t, limit=limit)), (every, limit, t)


def test_every_member_of_the_contract_says_why_it_exists():
    from transformer import contract

    for protocol in (contract.Seq2SeqModel, contract.Seq2SeqTokenizer, contract.ModelConfig, contract.Cache):
        members = [m for m in vars(protocol) if not m.startswith("_") and callable(getattr(protocol, m, None))]
        members += [m for m, v in vars(protocol).items() if isinstance(v, property)]
        for name in set(members) - {"parameters", "eval", "train", "training"}:
            member = vars(protocol)[name]
            doc = (member.fget if isinstance(member, property) else member).__doc__
            assert doc and len(doc.split()) >= 5, f"{protocol.__name__}.{name}"
