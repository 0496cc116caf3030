"""Activation patching (transformer.patching): its defining properties on our model and through the adapter, the
reversal model's known answer, and a transformers model's r against a patch done with forward hooks on transformers'
own modules."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForSeq2SeqLM

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from tests import hf_models
from tests.conftest import tiny_pipelines
from transformer import KINDS, DecodingSession, load_pretrained
from transformer.config import n_layers
from transformer.interventions import Restore
from transformer.patching import NOISE_SCALE, NOTHING_TO_RESTORE, Pair, embedding_scale, noisy_embeddings

MODELS = ["ours", *sorted(hf_models.FAMILIES)]
TEXT = "Ich habe Hunger."
LIMIT = 6
EXACT = 1e-4  # restoring everything (or nothing) must give r = 1 (or 0) to this


@pytest.fixture(scope="module", params=MODELS)
def pair(request, tmp_path_factory):
    """A Pair on a decoding of TEXT, its source's tokens 1 and 2 corrupted with noise."""
    if request.param == "ours":
        pipeline = tiny_pipelines()["de-en"]
    else:
        pipeline = hf_models.loaded(request.param, tmp_path_factory)
    ids = pipeline.tokenizer.encode(TEXT)
    session = DecodingSession(pipeline.model, ids, max_new_tokens=LIMIT)
    session.run()
    return Pair(pipeline.model, ids, session.tokens, noise=[0, 1, 2], max_new_tokens=LIMIT), session


def masks(pair: Pair, rows: int = 1) -> dict:
    cfg, S, T = pair.model.config, pair.src.size(1), len(pair.tokens)
    return {
        "encoder_states": torch.zeros(rows, cfg.n_encoder_layers, S, dtype=torch.bool),
        "decoder_states": torch.zeros(rows, cfg.n_decoder_layers, T, dtype=torch.bool),
        "heads": {kind: torch.zeros(rows, n_layers(cfg, kind), cfg.n_heads, dtype=torch.bool) for kind in KINDS},
    }


def test_the_clean_runs_log_p_is_decodings_own(pair):
    pair, session = pair
    expected = torch.tensor([step.prob for step in session.steps]).log()
    assert torch.allclose(pair.clean_logp.exp(), expected.exp(), atol=1e-5)


def test_the_corruption_changes_some_step_so_that_the_tests_below_test_something(pair):
    pair, _ = pair
    assert (pair.clean_logp - pair.corrupted_logp).abs().max() >= NOTHING_TO_RESTORE


@pytest.mark.parametrize("site", ["encoder_states", "decoder_states"])
def test_restoring_every_position_of_a_layer_restores_everything(pair, site):
    """Every position of any encoder layer (the rest of the encoder then computes the clean memory), or of the last
    decoder layer (an earlier one's later layers still read the corrupted memory)."""
    pair, _ = pair
    given = masks(pair, rows=2)
    mask = given[site]
    mask[0, 0 if site == "encoder_states" else -1] = True
    mask[1, -1] = True
    r = pair.restored(pair.logp(Restore(pair.clean, **given)))
    known = ~r.isnan()
    assert known.any()
    assert torch.allclose(r[known], torch.ones_like(r[known]), atol=EXACT)


def test_restoring_nothing_restores_nothing(pair):
    pair, _ = pair
    for through_encoder in (True, False):  # with the encoder run again, and from the corrupted encoder's output
        given = masks(pair)
        if not through_encoder:
            del given["encoder_states"]
            given["heads"].pop("encoder")
        r = pair.restored(pair.logp(Restore(pair.clean, **given)))
        known = ~r.isnan()
        assert known.any() and r[known].abs().max() <= EXACT


def test_the_decoder_reads_the_source_only_through_cross_attention_and_the_encoder_heads_are_not_its_states(pair):
    """Every cross head restored (the decoder input is forced, so the rest of the decoder then computes the clean
    run) restores everything; every encoder head restored does not, as the residual stream still carries the noisy
    embeddings (a head's restore leaks nothing into the states)."""
    pair, _ = pair
    r = {}
    for kind in ("cross", "encoder"):
        given = masks(pair)
        del given["encoder_states"], given["decoder_states"]
        given["heads"][kind][:] = True
        r[kind] = pair.restored(pair.logp(Restore(pair.clean, **given)))
    known = ~r["cross"].isnan()
    assert known.any() and (r["cross"][known] - 1).abs().max() <= EXACT
    assert (r["encoder"][known] - 1).abs().max() > 10 * EXACT


def test_the_batched_sweep_equals_restoring_each_component_alone(pair):
    pair, _ = pair
    swept = pair.sweep(rows_per_pass=5)
    cfg, S, T = pair.model.config, pair.src.size(1), len(pair.tokens)
    for layer, position in [(0, 0), (cfg.n_encoder_layers - 1, S - 1), (1, 1)]:
        given = masks(pair)
        given["encoder_states"][0, layer, position] = True
        alone = pair.restored(pair.logp(Restore(pair.clean, **given)))[0]
        assert torch.allclose(swept.encoder_states[layer, position], alone, atol=1e-5, equal_nan=True)
    for kind in KINDS:
        given = masks(pair)
        given["heads"][kind][0, 1, 2] = True
        alone = pair.restored(pair.logp(Restore(pair.clean, **given)))[0]
        assert torch.allclose(swept.heads[kind][1, 2], alone, atol=1e-5, equal_nan=True)
    given = masks(pair)
    given["decoder_states"][0, 0, 0] = True
    alone = pair.restored(pair.logp(Restore(pair.clean, **given)))[0]
    assert torch.allclose(swept.decoder_states[0, 0], alone, atol=1e-5, equal_nan=True)
    assert swept.decoder_states.shape == (cfg.n_decoder_layers, T, T)
    later = torch.ones(T, T, dtype=torch.bool).triu(1).T
    assert swept.decoder_states[:, later].isnan().all()  # a position after the step cannot change it


def test_identical_sources_give_only_nulls(pair):
    pair, _ = pair
    same = Pair(pair.model, pair.src[0].tolist(), pair.tokens, corrupted=pair.src[0].tolist(), max_new_tokens=LIMIT)
    swept = same.sweep()
    for r in (swept.encoder_states, swept.decoder_states, *swept.heads.values()):
        assert r.isnan().all()


def test_the_noise_is_seeded_and_three_embedding_deviations_wide():
    model = load_pretrained("checkpoints/de-en").model  # D = 256: enough draws to measure the width
    src = torch.tensor([[5, 6, 7, 8, 2]])
    clean = model.embed_source(src)
    first, again = noisy_embeddings(model, src, [1, 3], seed=3), noisy_embeddings(model, src, [1, 3], seed=3)
    assert torch.equal(first, again)
    assert not torch.equal(first, noisy_embeddings(model, src, [1, 3], seed=4))
    noise = first - clean
    assert torch.equal(noise[0, [0, 2, 4]], torch.zeros(3, 256))  # the other positions are untouched
    width = float(noise[0, [1, 3]].std()) / embedding_scale(model)
    assert abs(width - NOISE_SCALE) < 0.3
    with pytest.raises(ValueError, match=r"0\.\.4"):
        noisy_embeddings(model, src, [5])


def test_a_corrupted_source_of_another_length_or_none_at_all_is_refused_with_both_counts():
    model = tiny_pipelines()["de-en"].model
    with pytest.raises(ValueError, match="corrupted source is 3 tokens and the clean one 4"):
        Pair(model, [5, 6, 7, 2], [5, 2], corrupted=[5, 6, 2])
    with pytest.raises(ValueError, match="give a corrupted source"):
        Pair(model, [5, 6, 7, 2], [5, 2])


@pytest.mark.parametrize("text", ["abcdef", "hello42world", "q9"])
def test_on_reversal_the_mirror_position_in_the_last_encoder_layer_carries_the_changed_character(text):
    """Reversal writes source character i at step n - i: restoring that position alone, after the last encoder
    layer (what cross-attention reads), brings the step back, and restoring any other position does not."""
    pipeline = load_pretrained("checkpoints/reverse")
    tokenizer, model = pipeline.tokenizer, pipeline.model
    n = len(text)
    for i in range(n):
        changed = text[:i] + ("z" if text[i] != "z" else "y") + text[i + 1 :]
        clean, corrupted = tokenizer.encode(text), tokenizer.encode(changed)
        session = DecodingSession(model, clean)
        session.run()
        assert tokenizer.decode(session.tokens) == text[::-1]
        swept = Pair(model, clean, session.tokens, corrupted=corrupted).sweep()
        step = n - 1 - i  # 0-based: the step that writes character i
        last = swept.encoder_states[-1, :, step]
        assert float(last[i]) >= 0.9, (text, i, last)
        others = torch.cat([last[:i], last[i + 1 :]])
        assert float(others.abs().max()) <= 0.1, (text, i, last)


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    """A tiny Marian initialised wide enough that its output depends on its source (at init_std 0.02 every r would
    be null), through the adapter and as transformers loads it."""
    folder = hf_models.marian(tmp_path_factory.mktemp("marian-patching"), {"init_std": 0.5})
    return load_pretrained(str(folder)), AutoModelForSeq2SeqLM.from_pretrained(folder).eval()


def hooked_log_p(hf, rules, src, tgt, written, limit, clean=None, restore=()) -> tuple[torch.Tensor, dict]:
    """The clean tokens' log p from transformers' own forward, with forward hooks on its own modules that record
    every layer's output and every attention module's input to its output projection, or, for the sites named in
    `restore`, put `clean`'s recording in their place: ("encoder_state", layer, position), ("decoder_state", layer,
    position) or (kind, layer, head)."""
    recorded, handles = {}, []
    layers = {"encoder_state": hf.model.encoder.layers, "decoder_state": hf.model.decoder.layers}
    attention = {
        "encoder": [layer.self_attn for layer in hf.model.encoder.layers],
        "decoder_self": [layer.self_attn for layer in hf.model.decoder.layers],
        "cross": [layer.encoder_attn for layer in hf.model.decoder.layers],
    }
    K = hf.config.d_model // hf.config.encoder_attention_heads

    def on_layer(stack, layer):
        def hook(module, args, output):
            state = output[0] if isinstance(output, tuple) else output
            recorded[(stack, layer)] = state
            for site, at, position in restore:
                if (site, at) == (stack, layer):
                    state = state.clone()
                    state[:, position] = clean[(stack, layer)][:, position]
            return (state, *output[1:]) if isinstance(output, tuple) else state

        return hook

    def on_projection(kind, layer):
        def hook(module, args):
            heads = args[0]
            recorded[(kind, layer, "in")] = heads
            for site, at, head in restore:
                if (site, at) == (kind, layer):
                    heads = heads.clone()
                    heads[..., head * K : (head + 1) * K] = clean[(kind, layer, "in")][..., head * K : (head + 1) * K]
            return (heads,)

        return hook

    for stack, modules in layers.items():
        handles += [m.register_forward_hook(on_layer(stack, i)) for i, m in enumerate(modules)]
    for kind, modules in attention.items():
        handles += [m.out_proj.register_forward_pre_hook(on_projection(kind, i)) for i, m in enumerate(modules)]
    try:
        with torch.no_grad():
            logits = hf(input_ids=src, decoder_input_ids=tgt).logits
    finally:
        for handle in handles:
            handle.remove()
    log_p = rules.apply(logits, None, limit).log_softmax(-1)[0].gather(-1, written[:, None])[:, 0]
    return log_p, recorded


def test_a_transformers_models_r_equals_a_patch_done_with_hooks_on_transformers_own_modules(marian):
    pipeline, hf = marian
    model, tokenizer = pipeline.model, pipeline.tokenizer
    clean = tokenizer.encode("Das Haus ist alt und klein.")
    corrupted = tokenizer.encode("Die Kinder spielen im Garten.")
    corrupted = (corrupted + clean)[: len(clean) - 1] + [clean[-1]]  # as many tokens, the end token kept
    session = DecodingSession(model, clean, max_new_tokens=8)
    session.run()
    pair = Pair(model, clean, session.tokens, corrupted=corrupted, max_new_tokens=8)
    swept = pair.sweep()
    assert (~swept.encoder_states.isnan()).any(), "the corruption changed no step: nothing would be compared"
    src, bad, tgt, written = pair.src, pair.corrupted_src, pair.tgt, pair.written
    clean_log_p, recorded = hooked_log_p(hf, model.rules, src, tgt, written, 8)
    corrupted_log_p, _ = hooked_log_p(hf, model.rules, bad, tgt, written, 8)
    assert torch.allclose(clean_log_p, pair.clean_logp, atol=1e-4)
    assert torch.allclose(corrupted_log_p, pair.corrupted_logp, atol=1e-4)
    gap = clean_log_p - corrupted_log_p
    S, T = src.size(1), len(pair.tokens)
    sites = [("encoder_state", layer, s) for layer in range(2) for s in range(S)]
    sites += [("decoder_state", layer, p) for layer in range(2) for p in range(T)]
    sites += [(kind, layer, h) for kind in KINDS for layer in range(2) for h in range(4)]
    compared = 0
    for site in sites:
        log_p, _ = hooked_log_p(hf, model.rules, bad, tgt, written, 8, recorded, [site])
        theirs = ((log_p - corrupted_log_p) / gap).masked_fill(gap.abs() < NOTHING_TO_RESTORE, float("nan"))
        kind, layer, index = site
        if kind == "encoder_state":
            ours = swept.encoder_states[layer, index]
        elif kind == "decoder_state":
            ours = swept.decoder_states[layer, index]
            theirs[:index] = float("nan")  # before the position: unchanged, and not reported
        else:
            ours = swept.heads[kind][layer, index]
        assert torch.allclose(ours, theirs, atol=1e-3, equal_nan=True), (site, ours, theirs)
        compared += int((~ours.isnan()).sum())
    assert compared > 50
