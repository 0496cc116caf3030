"""Named hook points (transformer.hooks): every name fires once per layer per call with its documented shape, on our
model and on tiny transformers models through the adapter; a hook that changes nothing changes nothing, one that
changes a point changes the output; interventions are hooks; hooks are scoped to their thread."""

from __future__ import annotations

import threading

import pytest
import torch

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from tests import hf_models
from tests.conftest import tiny_config, tiny_pipelines
from tests.tolerance import assert_close
from transformer import DecodingSession, Head, Interventions, Transformer, hooks, run_with_cache
from transformer.config import KINDS, n_layers
from transformer.hooks import hook_names, recording, using
from transformer.interventions import CrossEdit, held
from transformer.lens import decoder_lens

MODELS = ["ours", "ours-pre-ln", *sorted(hf_models.FAMILIES)]
# logits through an identity hook against none: float32 eps of the largest logit (tests/tolerance.py); a hook at a
# pattern point makes our attention compute explicit weights instead of SDPA's kernel, which sums in another order
LOGIT_ULPS = 64


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


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    return hf_models.loaded("marian", tmp_path_factory)


def inputs(pipeline):
    """Two sources of different lengths (the shorter padded), and (2, 4) decoder inputs of no one's special tokens."""
    model = pipeline.model
    src = pipeline.encode_batch(["Ich habe Hunger.", "Das Haus ist alt."])
    words = [t for t in range(model.config.tgt_vocab_size) if t not in model.special_ids][5:11]
    tgt = torch.tensor([[model.config.bos_id, *words[:3]], [model.config.bos_id, *words[3:]]])
    return src, tgt


def logits(model, src, tgt):
    with torch.no_grad():
        enc = model.encode(src)
        return model.project(model.decode(tgt, enc.memory, enc.src_mask).hidden)


def expected_shape(name: str, config, B: int, S: int, T: int, P: int) -> tuple[int, ...]:
    """The shape transformer.hooks documents for `name` in a call over T queries after P cached positions."""
    H, D = config.n_heads, config.d_model
    K = D // H
    encoder = name.startswith("encoder")
    queries, point = (S if encoder else T), name.rsplit(".", 1)[1]
    keys = S if encoder or ".cross_attn." in name else P + T
    shapes = {"hook_q": (B, H, queries, K), "hook_k": (B, H, keys, K), "hook_v": (B, H, keys, K)}
    shapes |= {"hook_attn_scores": (B, H, queries, keys), "hook_pattern": (B, H, queries, keys)}
    shapes |= {"hook_z": (B, H, queries, K), "hook_result": (B, H, queries, D)}
    return shapes.get(point, (B, queries, D))


def fired(model, call) -> dict[str, list[tuple]]:
    """name -> the shape of each tensor seen there, at every point, while `call()` runs."""
    seen: dict[str, list[tuple]] = {}
    with using([(lambda name: True, lambda x, at: seen.setdefault(at.name, []).append((tuple(x.shape), at.start)))]):
        call()
    return seen


@torch.no_grad()
def test_every_name_fires_once_per_call_with_its_documented_shape(pipeline):
    model = pipeline.model
    config, (src, tgt) = model.config, inputs(pipeline)
    names = hook_names(config)
    B, S, T = src.size(0), src.size(1), tgt.size(1)
    encoded = []
    seen = fired(model, lambda: encoded.append(model.encode(src)))
    assert list(seen) == [n for n in names if n.startswith("encoder")]  # in order, and each once
    enc = encoded[0]
    whole = fired(model, lambda: model.decode(tgt, enc.memory, enc.src_mask))
    assert list(whole) == [n for n in names if n.startswith("decoder")]
    cache = model.decode(tgt[:, :3], enc.memory, enc.src_mask, use_cache=True).cache
    step = fired(model, lambda: model.decode(tgt[:, 3:], enc.memory, enc.src_mask, cache))
    assert list(step) == list(whole)
    for name in names:
        for calls, length, P in ((seen, T, 0), (whole, T, 0), (step, 1, 3)):
            if name in calls:
                assert calls[name] == [(expected_shape(name, config, B, S, length, P), P)], name


def test_the_names_of_our_model_and_the_adapter_are_the_same(marian):
    ours = Transformer(tiny_config()).eval()
    assert hook_names(ours.config) == hook_names(marian.model.config)
    src, tgt = inputs(marian)
    with torch.no_grad():
        enc = [None]
        seen = fired(marian.model, lambda: enc.__setitem__(0, marian.model.encode(src)))
        seen.update(fired(marian.model, lambda: marian.model.decode(tgt, enc[0].memory, enc[0].src_mask)))
    assert list(seen) == hook_names(ours.config)


def test_a_hook_that_returns_its_input_changes_nothing(pipeline):
    model, (src, tgt) = pipeline.model, inputs(pipeline)
    plain = logits(model, src, tgt)
    with using([(lambda name: True, lambda x, at: x)]):
        same = logits(model, src, tgt)
    assert_close(same, plain, ulps=LOGIT_ULPS, what="logits through identity hooks")


def test_every_point_can_be_replaced(pipeline):
    """A hook that moves the tensor at any one point moves the logits (on the adapter, pre-LN mids are read-only)."""
    model, (src, tgt) = pipeline.model, inputs(pipeline)
    plain = logits(model, src, tgt)

    def shift(x, at):
        return x + 0.5 * torch.randn(x.shape, generator=torch.Generator().manual_seed(0)).to(x)

    def first_key(weights, at):  # still weights: every query's weight moved to the first key
        return torch.zeros_like(weights).index_fill(-1, torch.tensor([0]), 1.0)

    for name in hook_names(model.config):
        with using([(name, first_key if name.endswith("hook_pattern") else shift)]):
            moved = logits(model, src, tgt)
        assert not torch.allclose(moved, plain, atol=1e-4), name


@torch.no_grad()
def test_zeroing_a_head_at_hook_z_is_ablating_it(pipeline):
    model, (src, tgt) = pipeline.model, inputs(pipeline)

    def zero_head_1(z, at):
        z = z.clone()
        z[:, 1] = 0.0
        return z

    for kind, name in (
        ("cross", "decoder.layers.1.cross_attn.hook_z"),
        ("encoder", "encoder.layers.0.self_attn.hook_z"),
    ):
        with using([(name, zero_head_1)]):
            by_hook = logits(model, src, tgt)
        with held(Interventions(ablate=frozenset({Head(kind, int(name.split(".")[2]), 1)}))):
            ablated = logits(model, src, tgt)
        assert torch.equal(by_hook, ablated), kind
        assert not torch.allclose(by_hook, logits(model, src, tgt), atol=1e-4), kind


@torch.no_grad()
def test_an_edit_at_hook_pattern_acts_at_its_step_cached_or_over_the_whole_prefix(pipeline):
    """Step 3's cross weights in layer 0 put on the last source token, through a hook tied to its position: the
    same stepping through the cache as over the whole prefix, and the same as a CrossEdit."""
    model, (src, tgt) = pipeline.model, inputs(pipeline)
    src, tgt = src[:1], tgt[:1]
    S, step = src.size(1), 3

    def look_at_last(weights, at):
        row = step - 1 - at.start
        if not 0 <= row < weights.size(2):
            return None
        weights = weights.clone()
        weights[:, :, row] = 0.0
        weights[:, :, row, S - 1] = 1.0
        return weights

    edit = [("decoder.layers.0.cross_attn.hook_pattern", look_at_last)]
    with using(edit):
        enc = model.encode(src)
        whole = model.project(model.decode(tgt, enc.memory, enc.src_mask).hidden)[0]
        cache, rows = None, []
        for t in range(tgt.size(1)):
            dec = model.decode(tgt[:, t : t + 1], enc.memory, enc.src_mask, cache, use_cache=True)
            cache = dec.cache
            rows.append(model.project(dec.hidden)[0, -1])
    assert_close(torch.stack(rows), whole, ulps=LOGIT_ULPS, what="edited logits, cached and whole")
    crossed = CrossEdit.point(
        layer=0, heads=tuple(range(model.config.n_heads)), step=step, position=S - 1, source_length=S
    )
    with held(Interventions(edits=(crossed,))):
        by_edit = model.project(model.decode(tgt, enc.memory, enc.src_mask).hidden)[0]
    assert torch.equal(by_edit, whole)
    plain = logits(model, src, tgt)[0]
    assert_close(whole[: step - 1], plain[: step - 1], ulps=LOGIT_ULPS, what="the steps before the edit")
    assert not torch.allclose(plain[step - 1], whole[step - 1], atol=1e-4)


def test_recording_hook_resid_post_gives_the_lens_layer_states(pipeline):
    model, (src, tgt) = pipeline.model, inputs(pipeline)
    ids = [i for i in src[0].tolist() if i != model.config.pad_id]
    tokens = tgt[0, 1:].tolist() + [model.config.eos_id]
    lens = decoder_lens(model, ids, tokens, k=3)
    names = [f"decoder.layers.{layer}.hook_resid_post" for layer in range(model.config.n_decoder_layers)]
    with torch.no_grad(), recording(names) as states:
        enc = model.encode(torch.tensor([ids]))
        model.decode(tgt[:1], enc.memory, enc.src_mask)
    assert list(states) == names
    for layer, name in enumerate(names):
        logits = model.rules.apply(model.project(model.final_norm(states[name][0])), None, model.config.max_new_tokens)
        assert torch.allclose(lens.top_probs[layer], logits.softmax(-1).topk(3).values, atol=1e-6), layer


def test_hooks_set_in_one_thread_are_not_seen_by_a_call_in_another(pipeline):
    model, (src, tgt) = pipeline.model, inputs(pipeline)
    plain = logits(model, src, tgt)
    callers, together, results = [], threading.Barrier(2, timeout=30), {}

    def zero_everything(x, at):
        callers.append(threading.get_ident())
        return torch.zeros_like(x) if at.name.endswith("hook_z") else None

    def hooked():
        with using([(lambda name: True, zero_everything)]):
            together.wait()  # both threads are inside their calls' scopes at once
            results["hooked"] = logits(model, src, tgt)
            together.wait()

    def plain_call():
        together.wait()
        results["plain"] = logits(model, src, tgt)
        together.wait()

    threads = [threading.Thread(target=hooked), threading.Thread(target=plain_call)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(callers) == {threads[0].ident}
    assert torch.equal(results["plain"], plain) and not torch.allclose(results["hooked"], plain)


def test_decoding_holds_its_interventions_hooks_and_leaves_none_behind(pipeline):
    model, (src, _) = pipeline.model, inputs(pipeline)
    ids = [i for i in src[0].tolist() if i != model.config.pad_id]
    gone = Interventions(ablate=frozenset({Head("cross", 0, 0)}))
    session = DecodingSession(model, ids, max_new_tokens=3, interventions=gone)
    session.run()
    assert hooks._active.get() is None


def test_a_hook_must_keep_the_shape_and_be_callable():
    model = Transformer(tiny_config()).eval()
    shorter = using([("encoder.hook_embed", lambda x, at: x[:, :2])])
    with pytest.raises(ValueError, match=r"encoder.hook_embed returned \(1, 2, 16\) for \(1, 3, 16\)"), shorter:
        model.encode(torch.tensor([[4, 5, 6]]))
    with pytest.raises(TypeError, match="a hook is"), using([("encoder.hook_embed", None)]):
        pass


def test_a_pre_ln_bart_like_model_reads_its_mid_streams_and_refuses_to_replace_them():
    """mBART's layers keep the stream between sublayers in a local variable: the adapter reads it at the next norm's
    input (every name still fires once), and a hook that returns another tensor there is an error, not ignored."""
    from transformers import MBartConfig, MBartForConditionalGeneration

    from attention_lab.adapters.hf.model import HFSeq2Seq

    torch.manual_seed(0)
    shape = {"encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4, "decoder_attention_heads": 4}
    shape |= {"encoder_ffn_dim": 32, "decoder_ffn_dim": 32, "max_position_embeddings": 64}
    config = MBartConfig(vocab_size=40, d_model=16, pad_token_id=1, eos_token_id=2, decoder_start_token_id=2, **shape)
    model = HFSeq2Seq(MBartForConditionalGeneration(config).eval(), "mbart")
    assert model.sublayer("cross", 0).norm is None  # the load probe saw the norms run first: pre-LN
    src, tgt = torch.tensor([[5, 6, 7, 2]]), torch.tensor([[2, 8, 9]])
    with torch.no_grad():
        enc = [None]
        seen = fired(model, lambda: enc.__setitem__(0, model.encode(src)))
        seen.update(fired(model, lambda: model.decode(tgt, enc[0].memory, enc[0].src_mask)))
        assert list(seen) == hook_names(model.config)
        for name in ("encoder.layers.1.hook_resid_mid", "decoder.layers.0.hook_resid_mid_cross"):
            with pytest.raises(ValueError, match="can be read but not replaced"), using([(name, lambda x, at: 2 * x)]):
                model.decode(tgt, enc[0].memory, enc[0].src_mask)
                model.encode(src)


KIND_POINTS = {"encoder": "encoder.layers.{}.hook_attn_out", "decoder_self": "decoder.layers.{}.hook_attn_out"}
KIND_POINTS["cross"] = "decoder.layers.{}.hook_cross_attn_out"
ATTENTION_ULPS = 64  # a reading recomputed from outside (another order of sums) against the model's own


def may_attend(model, src, tgt) -> dict[str, torch.Tensor]:
    """Per kind, where a query may attend (True), broadcastable to (B, H, T, S): the source's real tokens, and the
    decoder's causal order (its inputs here hold no padding)."""
    keys = (src != model.config.pad_id)[:, None, None, :]
    return {"encoder": keys, "cross": keys, "decoder_self": torch.ones(tgt.size(1), tgt.size(1)).tril().bool()}


@torch.no_grad()
def test_the_head_points_meet_their_definitions(pipeline):
    """softmax of the scores, masked, is the pattern; the heads' results summed plus W_o's bias are the attention's
    output; on our model q k^T / sqrt(K) is the scores."""
    model, (src, tgt) = pipeline.model, inputs(pipeline)
    with recording(lambda name: True) as seen:
        enc = model.encode(src)
        model.decode(tgt, enc.memory, enc.src_mask)
    masks = may_attend(model, src, tgt)
    for kind in KINDS:
        for layer in range(n_layers(model.config, kind)):
            at = {p: seen[hooks.attention_name(kind, layer, p)] for p in hooks.HEAD_POINTS}
            weights = at["hook_attn_scores"].masked_fill(~masks[kind], float("-inf")).softmax(dim=-1)
            assert_close(weights, at["hook_pattern"], ulps=ATTENTION_ULPS, what=f"{kind} {layer} softmax(scores)")
            b_o = model.sublayer(kind, layer).b_o
            summed = at["hook_result"].sum(dim=1) + (0 if b_o is None else b_o)
            out = seen[KIND_POINTS[kind].format(layer)]
            assert_close(summed, out, ulps=ATTENTION_ULPS, what=f"{kind} {layer} heads' results summed")
            if isinstance(model, Transformer):
                scores = at["hook_q"] @ at["hook_k"].transpose(-2, -1) / at["hook_q"].size(-1) ** 0.5
                assert_close(scores, at["hook_attn_scores"], ulps=ATTENTION_ULPS, what=f"{kind} {layer} q k")


@torch.no_grad()
def test_run_with_cache_gives_the_models_own_logits(pipeline):
    model = pipeline.model
    src_ids = pipeline.encode_batch(["Das Haus ist alt."])[0].tolist()
    words = [t for t in range(model.config.tgt_vocab_size) if t not in model.special_ids][5:9]
    tgt = torch.tensor([[model.config.bos_id, *words[:-1]]])
    names = [hooks.attention_name("cross", 1, "hook_result")]
    run = run_with_cache(model, src_ids, words, names)
    if isinstance(model, Transformer):
        own = model(torch.tensor([src_ids]), tgt).logits
    else:  # transformers' own forward, the output layer's bias and scaling included
        own = model.hf(input_ids=torch.tensor([src_ids]), decoder_input_ids=tgt).logits
    assert_close(run.logits, own, ulps=LOGIT_ULPS, what="run_with_cache against the model's forward")
    assert list(run.cache) == names and run.cache[names[0]].shape[:3] == (1, model.config.n_heads, len(words))
    stepwise = run_with_cache(model, src_ids, words, names, stepwise=True)
    assert_close(stepwise.logits, own, ulps=LOGIT_ULPS, what="run_with_cache, a position at a time")
    assert [step[names[0]].shape[2] for step in stepwise.steps] == [1] * len(words)


def test_unhooked_attention_makes_neither_scores_nor_results(monkeypatch):
    """With no hook at a scores, pattern or result point, attention runs SDPA's kernel and one output matmul."""
    from transformer import attention

    model = Transformer(tiny_config()).eval()
    fused = []
    monkeypatch.setattr(attention.MultiHeadAttention, "head_results", lambda *a: pytest.fail("results made"))
    sdpa = attention.F.scaled_dot_product_attention
    monkeypatch.setattr(attention.F, "scaled_dot_product_attention", lambda *a, **k: fused.append(1) or sdpa(*a, **k))
    with torch.no_grad(), using([("decoder.layers.0.cross_attn.hook_z", lambda x, at: x)]):
        model(torch.tensor([[5, 6, 7, 2]]), torch.tensor([[1, 8, 9]]))
    config = model.config
    assert len(fused) == config.n_encoder_layers + 2 * config.n_decoder_layers


@torch.no_grad()
def test_run_with_cache_forces_a_list_per_row_as_each_row_alone():
    """Rows of different lengths are padded after their tokens: each row's logits are its own run's."""
    model = Transformer(tiny_config()).eval()
    src, rows = torch.tensor([[5, 6, 7, 2], [8, 9, 2, 0]]), [[10, 4, 9, 2], [7, 2]]
    both = run_with_cache(model, src, rows).logits
    for b, row in enumerate(rows):
        alone = run_with_cache(model, src[b : b + 1, : 4 - b], row).logits[0]
        assert_close(both[b, : len(row)], alone, ulps=LOGIT_ULPS, what=f"row {b} in a batch")
    with pytest.raises(ValueError, match="no token to force"):
        run_with_cache(model, src, [[10, 2], []])


def test_torch_export_keeps_the_number_of_tokens_a_dimension(model):
    """The teacher-forced pass traced by torch.export with the tokens' length T as a dimension, not the example's:
    the program gives the library's output for another length."""
    from torch.export import Dim

    class Forced(torch.nn.Module):
        def forward(self, source, tokens):
            return run_with_cache(model, source, tokens).hidden

    # lengths that no dimension of the model has (9 and 7), up to its max_len (32)
    source = torch.tensor([[5, 6, 7, 8, 9, 10, 11, 12, 2]])
    program = torch.export.export(
        Forced(),
        (source, torch.tensor([3, 4, 5, 6, 7, 8, 2])),
        dynamic_shapes=({1: Dim("S", max=32)}, {0: Dim("T", min=3, max=32)}),
    )
    other = torch.tensor([4, 3, 2])
    torch.testing.assert_close(
        program.module()(source[:, 2:], other), run_with_cache(model, source[:, 2:], other).hidden
    )
