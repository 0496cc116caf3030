"""Head ablation, attention editing and the value-norm and rollout readings, in the library's real forward pass."""

import copy

import pytest
import torch

from tests.conftest import tiny_config
from tests.tolerance import assert_close
from transformer import DecodingSession, Transformer, greedy_decode, hooks
from transformer.attention import MultiHeadAttention
from transformer.interventions import KINDS, CrossEdit, Head, Interventions, held
from transformer.readings import rollout, value_weighted

TOL = {"rtol": 0, "atol": 1e-5}  # weights and probabilities in [0, 1]: 84 float32 eps of 1
# logits after an ablation, against the same head cut out of the weights: float32 eps of the largest logit
# (tests/tolerance.py): they were equal to the bit where measured
LOGIT_ULPS = 32
SRC = [5, 9, 3, 7, 12, 4, 2]


@pytest.fixture(params=[True, False], ids=["pre-LN", "post-LN"])
def model(request):
    torch.manual_seed(1)  # a seed whose random models do not say eos at once, so there are steps to compare
    return Transformer(tiny_config(norm_first=request.param)).eval()


def every_head(kind, config):
    layers = config.n_encoder_layers if kind == "encoder" else config.n_decoder_layers
    return frozenset(Head(kind, layer, h) for layer in range(layers) for h in range(config.n_heads))


def decoder_input(model, src, interventions=None, steps=8):
    tokens = greedy_decode(model, torch.tensor([src]), steps, interventions=interventions)[0]
    return [model.config.bos_id] + tokens


def full_pass(model, src, tgt, interventions=None):
    with torch.no_grad():
        return model(torch.tensor([src]), torch.tensor([tgt]), output_attentions=True, interventions=interventions)


def test_ablating_nothing_changes_nothing_bit_for_bit(model):
    tgt = decoder_input(model, SRC)
    plain = full_pass(model, SRC, tgt)
    empty = full_pass(model, SRC, tgt, Interventions())
    assert torch.equal(plain.logits, empty.logits)
    for kind in KINDS:
        for ours, theirs in zip(getattr(plain.attentions, kind), getattr(empty.attentions, kind)):
            assert torch.equal(ours, theirs)
    session = DecodingSession(model, SRC, interventions=Interventions())
    session.run()
    assert session.tokens == DecodingSession(model, SRC).run()


def test_ablating_all_cross_attention_makes_the_decoder_blind_to_the_source(model):
    blind = Interventions(ablate=every_head("cross", model.config))
    tgt = [model.config.bos_id, 4, 8, 3, 6]
    sources = ([5, 9, 3, 7, 2], [11, 10, 6, 6, 8, 4, 12, 2], [3, 2])
    logits = [full_pass(model, src, tgt, blind).logits for src in sources]
    assert all(torch.equal(logits[0], other) for other in logits[1:])
    # and without the ablation the source matters, so the check above could fail
    assert not torch.allclose(full_pass(model, sources[0], tgt).logits, full_pass(model, sources[1], tgt).logits)


@pytest.mark.parametrize("kind", KINDS)
def test_ablating_a_head_equals_zeroing_its_columns_of_the_output_projection(model, kind):
    layer, head = 1, 2
    K = model.config.d_model // model.config.n_heads
    surgery = copy.deepcopy(model)
    stack = surgery.encoder if kind == "encoder" else surgery.decoder
    module = {"encoder": "self_attn", "decoder_self": "self_attn", "cross": "cross_attn"}[kind]
    with torch.no_grad():
        getattr(stack.layers[layer], module).out_proj.weight[:, head * K : (head + 1) * K] = 0.0
    tgt = decoder_input(model, SRC)
    ablated = full_pass(model, SRC, tgt, Interventions(ablate=frozenset({Head(kind, layer, head)})))
    assert_close(ablated.logits, full_pass(surgery, SRC, tgt).logits, ulps=LOGIT_ULPS, what=f"{kind} ablated")
    assert not torch.allclose(ablated.logits, full_pass(model, SRC, tgt).logits, **TOL)


def stepped_and_recomputed(model, interventions, steps=8):
    """Every step's distribution decoded with the KV cache, and the same prefix re-run in full each time."""
    session = DecodingSession(model, SRC, top_k=3, max_new_tokens=steps, interventions=interventions)
    session.run()
    tgt = [model.config.bos_id] + session.tokens
    for t, step in enumerate(session.steps):
        full = full_pass(model, SRC, tgt[: t + 1], interventions)
        probs = full.logits[0, -1].clone()
        probs[[model.config.pad_id, model.config.bos_id]] = float("-inf")
        probs = probs.softmax(-1)
        yield step, probs, full.attentions, t


@pytest.mark.parametrize(
    "interventions",
    [
        Interventions(ablate=frozenset({Head("encoder", 0, 1), Head("decoder_self", 1, 3), Head("cross", 0, 0)})),
        Interventions(edits=(CrossEdit.point(layer=1, heads=(0, 2), step=3, position=4, source_length=len(SRC)),)),
    ],
    ids=["ablation", "edit"],
)
def test_interventions_with_the_kv_cache_equal_full_recomputation(model, interventions):
    checked = 0
    for step, probs, full, t in stepped_and_recomputed(model, interventions):
        assert step.token == int(probs.argmax())
        torch.testing.assert_close(torch.tensor(step.top_probs), probs.topk(3).values, **TOL)
        for layer in range(model.config.n_decoder_layers):
            torch.testing.assert_close(step.cross_attention[layer], full.cross[layer][0, :, t], **TOL)
            torch.testing.assert_close(step.self_attention[layer], full.decoder_self[layer][0, :, t], **TOL)
        checked += 1
    assert checked >= 4  # past the edited step


def test_an_edit_acts_at_its_step_only_and_its_weights_are_the_ones_recorded(model):
    edit = CrossEdit.point(layer=1, heads=(0, 2), step=3, position=4, source_length=len(SRC))
    plain = DecodingSession(model, SRC, max_new_tokens=6)
    plain.run()
    edited = DecodingSession(model, SRC, max_new_tokens=6, interventions=Interventions(edits=(edit,)))
    edited.run()
    for before, after in zip(plain.steps[:2], edited.steps[:2]):  # steps before the edit: untouched
        assert torch.equal(before.cross_attention[1], after.cross_attention[1]) and before.token == after.token
    at = edited.steps[2].cross_attention[1]
    assert torch.equal(at[[0, 2]], edit.weights.expand(2, -1))
    assert torch.equal(at[[1, 3]], plain.steps[2].cross_attention[1][[1, 3]])  # heads not listed keep their own
    assert not torch.equal(plain.steps[2].cross_attention[1][[0, 2]], at[[0, 2]])
    # the next step's own cross-attention is computed again, not edited
    assert not torch.equal(edited.steps[3].cross_attention[1][0], edit.weights)


def test_editing_a_head_to_its_own_weights_changes_nothing(model):
    plain = DecodingSession(model, SRC, top_k=3, max_new_tokens=6)
    plain.run()
    own = plain.steps[2].cross_attention[0]  # (H, S) at step 3
    edits = tuple(CrossEdit(0, (h,), 3, own[h]) for h in range(model.config.n_heads))
    same = DecodingSession(model, SRC, top_k=3, max_new_tokens=6, interventions=Interventions(edits=edits))
    same.run()
    assert same.tokens == plain.tokens
    for a, b in zip(plain.steps, same.steps):
        torch.testing.assert_close(torch.tensor(a.top_probs), torch.tensor(b.top_probs), **TOL)


@pytest.mark.parametrize(
    ("interventions", "message"),
    [
        (Interventions(ablate=frozenset({Head("cross", 2, 0)})), "layer must be in 0..1"),
        (Interventions(ablate=frozenset({Head("encoder", 0, 4)})), "head must be in 0..3"),
        (Interventions(ablate=frozenset({Head("ffn", 0, 0)})), "kind must be one of"),
        (Interventions(edits=(CrossEdit(0, (5,), 1, torch.ones(3) / 3),)), "head must be in 0..3"),
        (Interventions(edits=(CrossEdit(0, (0,), 0, torch.ones(3) / 3),)), "step must be in 1..32"),
    ],
)
def test_an_intervention_the_model_cannot_take_is_refused_with_its_reason(model, interventions, message):
    with pytest.raises(ValueError, match=message):
        DecodingSession(model, SRC, interventions=interventions)


def test_point_edits_need_a_source_position():
    with pytest.raises(ValueError, match="position must be in 0..6"):
        CrossEdit.point(layer=0, heads=(0,), step=1, position=7, source_length=7)


def test_value_norms_are_the_norms_of_each_heads_share_of_the_output(model):
    session = DecodingSession(model, SRC, max_new_tokens=4)
    session.run()
    attn = model.decoder.layers[1].cross_attn
    _, v = attn.project_kv(session._memory)  # (1, H, S, K)
    H, K = model.config.n_heads, model.config.d_model // model.config.n_heads
    _, cross_norms = session.decoder_value_norms()
    for h in range(H):
        share = v[0, h] @ attn.out_proj.weight[:, h * K : (h + 1) * K].T  # (S, D): what each key adds via head h
        torch.testing.assert_close(cross_norms[1][h], share.norm(dim=-1), **TOL)
    weights = session.steps[-1].cross_attention[1]  # (H, S)
    torch.testing.assert_close(value_weighted(weights[:, None], cross_norms[1])[:, 0], weights * cross_norms[1])
    self_norms, _ = session.decoder_value_norms()
    assert self_norms[0].shape == (H, len(session.steps))
    assert [n.shape for n in session.encoder_value_norms] == [(H, len(SRC))] * 2


def test_rollout_multiplies_residual_mixed_layers_and_rows_stay_distributions():
    torch.manual_seed(1)
    layers = [torch.rand(2, 3, 3).softmax(-1) for _ in range(3)]
    rolled = rollout(layers)
    mixed = [0.5 * w.mean(0) + 0.5 * torch.eye(3) for w in layers]
    torch.testing.assert_close(rolled[0], mixed[0])
    torch.testing.assert_close(rolled[2], mixed[2] @ mixed[1] @ mixed[0])
    for r in rolled:
        torch.testing.assert_close(r.sum(-1), torch.ones(3))


def test_a_control_that_keeps_every_head_changes_nothing_bit_for_bit():
    torch.manual_seed(0)
    attn = MultiHeadAttention(d_model=16, n_heads=4, dropout=0.0).eval()
    attn.hook_z.name = "encoder.layers.0.self_attn.hook_z"  # as a model names it (hooks.name_points)
    x = torch.randn(2, 5, 16)
    q, k, v = attn.project_qkv(x)
    plain, weights = attn.attend(q, k, v, need_weights=True)
    for keep in (torch.ones(4), torch.ones(2, 4)):
        with hooks.using([(attn.hook_z.name, lambda z, at, keep=keep: z * keep.view(*keep.shape, 1, 1))]):
            kept, kept_weights = attn.attend(q, k, v, need_weights=True)
        assert torch.equal(plain, kept) and torch.equal(weights, kept_weights)
    three_rows = Interventions(rows=(frozenset({Head("encoder", 0, 0)}),) * 3)
    with pytest.raises(ValueError, match="one row of kept heads per batch row"), held(three_rows):
        attn.attend(q, k, v)
