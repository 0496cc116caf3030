"""Value zeroing (transformer.value_zeroing): the known answer of reversal, the definition (zeroing in no head
changes nothing), and a second implementation for a transformers model, with torch hooks on its own v_proj modules
in its own forward."""

from __future__ import annotations

import pytest
import torch

import attention_lab.adapters  # noqa: F401 - transformers models load through load_pretrained
from tests import hf_models
from tests.tolerance import assert_close
from training.reversal import reversal_pairs
from transformer import DecodingSession, Head, Interventions, bundled, greedy_decode, load_pretrained
from transformer.value_zeroing import value_zeroing

# falls in log p and cosine distances against transformers' own forward, in float32 eps (tests/tolerance.py) of the
# largest log p, or of 1 for a distance: the falls were equal to the bit where measured at one thread, the distances
# 1.3 eps apart; with two threads torch sums in another order, and the falls were 50 eps apart
ULPS = 64


@pytest.fixture(scope="module")
def reverse():
    return load_pretrained(str(bundled("reverse")))


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    return hf_models.loaded("marian", tmp_path_factory)


def test_reversal_needs_the_mirror_positions_value_most(reverse):
    """Output position t copies source position S - 2 - t (the end token is last): zeroing that position's value in
    every cross head must move the copied token's log p the most, at >= 90% of the steps that copy."""
    model, tokenizer = reverse.model, reverse.tokenizer
    hits = steps = 0
    for text, _ in reversal_pairs(30, min_len=2, max_len=20, seed=12):
        src_ids = tokenizer.encode(text)
        tokens = greedy_decode(model, torch.tensor([src_ids]))[0]
        S = len(src_ids)
        for zeroed in value_zeroing(model, src_ids, tokens):
            t = zeroed.step - 1
            if t < S - 1 and tokens[t] == src_ids[S - 2 - t]:  # a step that copies
                steps += 1
                hits += int(zeroed.source_fall.argmax()) == S - 2 - t
    assert steps > 200 and hits / steps >= 0.9, f"{hits} of {steps}"
    print(f"mirror position first at {hits} of {steps} copying steps ({hits / steps:.1%})")


def test_zeroing_in_no_head_changes_nothing_and_the_unzeroed_log_p_is_decodings(reverse):
    model, tokenizer = reverse.model, reverse.tokenizer
    src_ids = tokenizer.encode("hello42world")
    session = DecodingSession(model, src_ids)
    tokens = session.run()
    nothing = value_zeroing(model, src_ids, tokens, heads=frozenset())
    assert [z.step for z in nothing] == list(range(1, len(tokens) + 1))
    for zeroed, step in zip(nothing, session.steps):
        assert zeroed.source_fall.shape == (len(src_ids),) and zeroed.prefix_fall.shape == (zeroed.step,)
        for values in (zeroed.source_fall, zeroed.source_distance, zeroed.prefix_fall, zeroed.prefix_distance):
            assert torch.equal(values, torch.zeros_like(values))
        assert abs(zeroed.log_prob - torch.tensor(step.prob).log().item()) < 1e-4
    some = value_zeroing(model, src_ids, tokens, steps=[2, 3])
    assert [z.step for z in some] == [2, 3] and some[0].source_fall.abs().max() > 0


def test_heads_ablated_by_the_decoding_stay_ablated_and_bad_input_is_refused(reverse):
    model, src_ids = reverse.model, reverse.tokenizer.encode("abc")
    tokens = greedy_decode(model, torch.tensor([src_ids]))[0]
    config = reverse.model.config
    no_cross = Interventions(
        ablate=frozenset(Head("cross", l, h) for l in range(config.n_decoder_layers) for h in range(config.n_heads))
    )
    blind = value_zeroing(model, src_ids, tokens, interventions=no_cross)
    assert all(z.source_fall.abs().max() == 0 for z in blind)  # no cross head reads the source: nothing to zero
    with pytest.raises(ValueError, match="layer must be in"):
        value_zeroing(model, src_ids, tokens, heads=[Head("cross", 9, 0)])
    with pytest.raises(ValueError, match="steps must be in"):
        value_zeroing(model, src_ids, tokens, steps=[len(tokens) + 1])


def test_a_transformers_model_equals_zeroing_done_on_its_own_v_proj(marian):
    model, tokenizer = marian.model, marian.tokenizer
    hf, config = model.hf, model.config
    K = config.d_model // config.n_heads
    src_ids = tokenizer.encode("ein kleiner Test hier")
    tokens = greedy_decode(model, torch.tensor([src_ids]), max_new_tokens=6)[0]
    limit = 6
    src = torch.tensor([src_ids])
    tgt = torch.tensor([[config.bos_id, *tokens[:-1]]])
    chosen = frozenset(
        {Head("cross", 1, 2), Head("cross", 0, 0), Head("decoder_self", 0, 1), Head("decoder_self", 1, 3)}
    )
    layers = hf.get_decoder().layers

    def theirs(position: int | None, source: bool, heads) -> tuple[torch.Tensor, torch.Tensor]:
        """log p of the written tokens (T,) and the final hidden states (T, D), position's value zeroed in `heads`
        (None: nothing) through forward hooks on transformers' own v_proj modules."""
        handles = []
        for head in heads if position is not None else ():
            if head.kind != ("cross" if source else "decoder_self"):
                continue
            layer = layers[head.layer]
            module = layer.encoder_attn.v_proj if source else layer.self_attn.v_proj

            def zero(m, args, out, h=head.head):
                out = out.clone()
                out[:, position, h * K : (h + 1) * K] = 0.0
                return out

            handles.append(module.register_forward_hook(zero))
        try:
            with torch.no_grad():
                out = hf(input_ids=src, decoder_input_ids=tgt, output_hidden_states=True)
        finally:
            for handle in handles:
                handle.remove()
        logits = model.rules.apply(out.logits[0].clone(), None, limit)
        logp = logits.log_softmax(-1).gather(-1, torch.tensor(tokens)[:, None])[:, 0]
        return logp, out.decoder_hidden_states[-1][0]

    all_heads = frozenset(
        Head(k, l, h)
        for k in ("cross", "decoder_self")
        for l in range(config.n_decoder_layers)
        for h in range(config.n_heads)
    )
    for heads in (None, chosen):
        ours = value_zeroing(model, src_ids, tokens, limit=limit, heads=heads)
        their_heads = all_heads if heads is None else heads
        clean_logp, clean_hidden = theirs(None, True, ())
        for source, count in ((True, len(src_ids)), (False, len(tokens))):
            for j in range(count):
                logp, hidden = theirs(j, source, their_heads)
                fall = clean_logp - logp
                distance = 1 - torch.nn.functional.cosine_similarity(hidden, clean_hidden, dim=-1)
                for zeroed in ours:
                    t = zeroed.step - 1
                    if not source and j > t:
                        continue
                    mine_fall = zeroed.source_fall[j] if source else zeroed.prefix_fall[j]
                    mine_distance = zeroed.source_distance[j] if source else zeroed.prefix_distance[j]
                    assert_close(mine_fall, fall[t], ulps=ULPS, scale=clean_logp, what="fall")
                    assert_close(mine_distance, distance[t], ulps=ULPS, scale=torch.ones(1), what="distance")
        for zeroed in ours:
            assert_close(zeroed.log_prob, clean_logp[zeroed.step - 1], ulps=ULPS, what="log p")
