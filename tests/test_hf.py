"""transformers encoder–decoders (Marian, BART, T5) through the adapter: the same decoding, weights and head tests as ours.

Each family is a tiny random model saved with save_pretrained, with a tokenizer trained in the test (tests/hf_models).
The reference is transformers itself: generate() for the tokens, an eager output_attentions=True forward for the
weights, on a second copy of the model loaded with plain eager attention.
"""

from __future__ import annotations

import json

import pytest
import torch
from transformers import AutoModelForSeq2SeqLM

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from attention_lab.adapters.hf.model import HFCache
from attention_lab.core import summaries
from attention_lab.heads import ablation, editing
from attention_lab.messages import jsonable
from tests import hf_models
from tests.tolerance import assert_close
from transformer import DecodingSession, Head, Interventions, beam_search, greedy_decode, load_pretrained

TEXTS = ["Wo ist der Bahnhof?", "Ich habe Hunger.", "Die Kinder spielen im Garten."]
LIMIT = 12
# log-probabilities read through the adapter against transformers' own forward: float32 eps of the largest |log p|
# compared (tests/tolerance.py); they were equal to the bit where measured
LOG_P_ULPS = 32


@pytest.fixture(scope="module", params=sorted(hf_models.FAMILIES))
def family(request, tmp_path_factory):
    """(pipeline through the adapter, transformers' own model with eager attention, folder)."""
    folder = hf_models.FAMILIES[request.param](tmp_path_factory.mktemp(request.param))
    reference = AutoModelForSeq2SeqLM.from_pretrained(folder, attn_implementation="eager").eval()
    return load_pretrained(str(folder)), reference, folder


def generated(reference, ids: list[int], limit: int = LIMIT) -> list[int]:
    return hf_models.generated(reference, ids, limit)


def test_greedy_decoding_equals_transformers_generate(family):
    pipeline, reference, _ = family
    outputs = []
    for text in TEXTS:
        ids = pipeline.tokenizer.encode(text)
        expected = generated(reference, ids)
        session = DecodingSession(pipeline.model, ids, max_new_tokens=LIMIT)
        assert session.run() == expected, text
        eos = pipeline.model.config.eos_id
        assert greedy_decode(pipeline.model, torch.tensor([ids]), LIMIT)[0] == [t for t in expected if t != eos]
        outputs.append(expected)
    # the tiny models say different things for different sources: the comparison means something
    assert len({tuple(o) for o in outputs}) == len(TEXTS) and len({t for o in outputs for t in o}) > 3


def test_without_a_limit_asked_for_a_decoding_stops_where_generate_stops(family):
    """generate()'s max_length counts the decoder's start token: with no limit given, the model's positions allow
    positions - 1 new tokens there, and here (eos forced at the last of them for Marian and BART)."""
    pipeline, reference, _ = family
    ids = pipeline.tokenizer.encode(TEXTS[0])
    positions = pipeline.model.config.max_len
    expected = reference.generate(torch.tensor([ids]), num_beams=1, do_sample=False, max_length=positions)[0, 1:]
    session = DecodingSession(pipeline.model, ids)
    assert session.max_new_tokens == positions - 1
    assert session.run() == expected.tolist()


def test_every_recorded_weight_equals_transformers_output_attentions(family):
    pipeline, reference, _ = family
    ids = pipeline.tokenizer.encode(TEXTS[2])
    session = DecodingSession(pipeline.model, ids, max_new_tokens=LIMIT)
    tokens = session.run()
    start = pipeline.model.config.bos_id
    with torch.no_grad():
        out = reference(
            input_ids=torch.tensor([ids]),
            decoder_input_ids=torch.tensor([[start, *tokens[:-1]]]),
            output_attentions=True,
        )
    assert len(session.encoder_attention) == len(out.encoder_attentions) == 2
    for ours, theirs in zip(session.encoder_attention, out.encoder_attentions):
        torch.testing.assert_close(ours, theirs[0], atol=1e-5, rtol=0)
    for t, step in enumerate(session.steps):
        for layer in range(2):
            torch.testing.assert_close(
                step.self_attention[layer], out.decoder_attentions[layer][0, :, t, : t + 1], atol=1e-5, rtol=0
            )
            torch.testing.assert_close(
                step.cross_attention[layer], out.cross_attentions[layer][0, :, t], atol=1e-5, rtol=0
            )
        # the distribution shown is transformers' logits with generate()'s rules for this step (a forced first token)
        probs = pipeline.model.rules.apply(out.logits[0, t].clone(), t, LIMIT).softmax(-1)
        assert step.prob == pytest.approx(float(probs[step.token]), abs=1e-5)
        assert step.top_probs == pytest.approx(probs.topk(len(step.top_ids)).values.tolist(), abs=1e-5)


def test_a_pass_over_the_whole_prefix_is_masked_as_transformers_masks_it(family):
    """The head tests read the decoder over the whole prefix at once: no position may see the ones after it."""
    pipeline, reference, _ = family
    model, ids = pipeline.model, pipeline.tokenizer.encode(TEXTS[0])
    tokens = DecodingSession(model, ids, max_new_tokens=LIMIT).run()
    tgt = torch.tensor([[model.config.bos_id, *tokens[:-1]]])
    with torch.no_grad():
        out = reference(input_ids=torch.tensor([ids]), decoder_input_ids=tgt, output_attentions=True)
        enc = model.encode(torch.tensor([ids]))
        dec = model.decode(tgt, enc.memory, enc.src_mask, output_attentions=True)
    expected = model.rules.apply(out.logits[0].clone(), None, LIMIT).log_softmax(-1)
    ours = ablation.next_token_log_probs(model, ids, tokens, limit=LIMIT)[0]
    assert_close(ours, expected, ulps=LOG_P_ULPS, what="log p over the whole prefix")
    for ours, theirs in zip(dec.self_attentions, out.decoder_attentions):
        torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=0)
        assert ours[0, :, 0, 1:].abs().max() == 0  # the first position sees only itself


def test_a_padded_batch_decodes_each_source_as_it_decodes_alone(family):
    pipeline, _, _ = family
    texts = [TEXTS[1], TEXTS[2], TEXTS[0]]  # of different lengths: the shorter ones are padded
    assert len({len(pipeline.tokenizer.encode(t)) for t in texts}) == 3
    alone = [pipeline.generate([t], max_new_tokens=LIMIT)[0] for t in texts]
    assert pipeline.generate(texts, max_new_tokens=LIMIT) == alone
    assert pipeline.generate(texts, "beam", beam_size=3, max_new_tokens=LIMIT) == [
        pipeline.generate([t], "beam", beam_size=3, max_new_tokens=LIMIT)[0] for t in texts
    ]


def test_stepping_back_and_on_equals_one_shot_decoding(family):
    pipeline, _, _ = family
    ids = pipeline.tokenizer.encode(TEXTS[1])
    one_shot = DecodingSession(pipeline.model, ids, max_new_tokens=LIMIT)
    one_shot.run()
    stepped = DecodingSession(pipeline.model, ids, max_new_tokens=LIMIT)
    for _ in range(4):
        stepped.step()
    stepped.back()
    stepped.back()  # the cache is cut back to two positions, and the old one is left as it was
    assert isinstance(stepped._cache, HFCache) and stepped._cache.length == 2
    stepped.run()
    assert stepped.tokens == one_shot.tokens
    for a, b in zip(stepped.steps, one_shot.steps):
        for x, y in zip(a.cross_attention + a.self_attention, b.cross_attention + b.self_attention):
            torch.testing.assert_close(x, y, atol=1e-6, rtol=0)
    # a beam of one is greedy, through the cache's row selection
    assert beam_search(pipeline.model, torch.tensor([ids]), 1, LIMIT)[0].tokens == [
        t for t in one_shot.tokens if t != pipeline.model.config.eos_id
    ]
    assert len(beam_search(pipeline.model, torch.tensor([ids, ids]), 3, LIMIT)) == 2


def test_the_value_norms_are_those_of_each_layers_values_and_output_projection(family):
    pipeline, _, _ = family
    session = DecodingSession(pipeline.model, pipeline.tokenizer.encode(TEXTS[0]), max_new_tokens=4)
    session.run()
    self_norms, cross_norms = session.decoder_value_norms()
    S, P = len(session.src_ids), len(session.steps)
    assert [n.shape for n in session.encoder_value_norms] == [torch.Size([4, S])] * 2
    assert [n.shape for n in self_norms] == [torch.Size([4, P])] * 2 and [n.shape for n in cross_norms] == [
        torch.Size([4, S])
    ] * 2
    # recomputed from the memory with the cross-attention's own projections
    module = pipeline.model.modules_by_kind["cross"][0]
    memory = pipeline.model.encode(torch.tensor([session.src_ids])).memory
    v_proj = module.v_proj if hasattr(module, "v_proj") else module.v
    w_o = (module.out_proj if hasattr(module, "out_proj") else module.o).weight
    v = v_proj(memory)[0].view(S, 4, -1)  # (S, H, K)
    expected = torch.stack([(v[:, h] @ w_o[:, h * v.size(-1) : (h + 1) * v.size(-1)].T).norm(dim=-1) for h in range(4)])
    torch.testing.assert_close(cross_norms[0], expected.detach(), atol=1e-5, rtol=1e-5)


def test_ablating_every_cross_head_makes_the_decoder_blind_to_the_source(family):
    pipeline, _, _ = family
    model = pipeline.model
    blind = Interventions(ablate=frozenset(Head("cross", l, h) for l in range(2) for h in range(4)))
    a, b = (pipeline.tokenizer.encode(text) for text in TEXTS[:2])
    tokens = [5, 6, 7]
    seeing = [ablation.next_token_log_probs(model, src, tokens) for src in (a, b)]
    assert not torch.allclose(seeing[0], seeing[1], atol=1e-4)  # the source matters ...
    ablated = [ablation.next_token_log_probs(model, src, tokens, blind) for src in (a, b)]
    assert_close(ablated[0], ablated[1], ulps=LOG_P_ULPS, what="blind")  # ... until no cross head reads it


def test_one_head_ablated_in_a_batch_row_equals_it_ablated_alone(family):
    pipeline, _, _ = family
    model, ids = pipeline.model, pipeline.tokenizer.encode(TEXTS[0])
    tokens = DecodingSession(model, ids, max_new_tokens=6).run()
    grid = ablation.importance(model, ids, tokens)
    for head in (Head("encoder", 1, 2), Head("decoder_self", 0, 3), Head("cross", 1, 0)):
        alone = ablation.ablation_effects(model, ids, tokens, frozenset({head}), 3)
        mean_kl = sum(e.kl for e in alone) / len(alone)
        assert grid[head.kind][head.layer, head.head] == pytest.approx(mean_kl, rel=1e-3, abs=1e-6)
    assert sum(g.sum() for g in grid.values()) > 0


def test_an_edit_sets_the_cross_weights_and_an_edit_to_the_heads_own_weights_changes_nothing(family):
    pipeline, _, _ = family
    model, ids = pipeline.model, pipeline.tokenizer.encode(TEXTS[2])
    session = DecodingSession(model, ids, max_new_tokens=6)
    session.run()
    heads = frozenset({Head("cross", 1, 0), Head("cross", 1, 2)})
    own = session.steps[2].cross_attention[1][0]
    same = editing.edit_session(session, 3, own.clone(), frozenset({Head("cross", 1, 0)}))
    assert same.tokens == session.tokens
    torch.testing.assert_close(same.steps[2].cross_attention[1], session.steps[2].cross_attention[1], atol=1e-6, rtol=0)
    point = editing.point_weights(len(ids), [1])
    edited = editing.edit_session(session, 3, point, heads)
    assert torch.equal(edited.steps[2].cross_attention[1][[0, 2]], torch.stack([point, point]))
    assert not torch.allclose(edited.steps[2].cross_attention[1][1], point)  # the other heads are their own
    assert edited.tokens[:2] == session.tokens[:2]  # the steps before the edit are kept


def test_a_what_if_the_models_rules_forbid_is_refused_and_loses_nothing(family):
    from attention_lab.app import make_lab
    from attention_lab.checks import InputError
    from attention_lab.controls import Controls
    from attention_lab.models.registry import Registry
    from attention_lab.run.state import UserState, loop

    pipeline, _, _ = family
    config, rules = pipeline.model.config, pipeline.model.rules
    lab, user = make_lab(Registry.of({"m": pipeline})), UserState()
    lab.do(lab.decoding.run, user, Controls("m", TEXTS[2], max_len=LIMIT))
    steps = list(user.run.session.steps)
    # BART forces <s> first (every other token is refused there); Marian never writes pad; T5 forbids nothing
    forbidden = [t for t in (3, config.pad_id) if not user.run.session.can_write(t, 1)]
    assert bool(forbidden) == (rules.forced_first is not None or config.pad_id in rules.banned)
    for token in forbidden:
        with pytest.raises(InputError, match="Pick one of the candidate tokens"):
            lab.do(lab.decoding.force, user, Controls("m", TEXTS[2], max_len=LIMIT, shown=1), str(token))
        assert user.run.session.steps == steps and loop(user.run).before is None
    # eos may be forced at step 2 in every family, BART's too (its decoder starts with eos: bos_id == eos_id there)
    lab.do(lab.decoding.force, user, Controls("m", TEXTS[2], max_len=LIMIT, shown=2), str(config.eos_id))
    assert user.run.session.tokens == [steps[0].token, config.eos_id] and loop(user.run).before.change == "what-if"


def test_the_tokenizers_own_special_tokens_count_as_specials_in_the_head_summaries(family):
    pipeline, _, _ = family
    ids = pipeline.tokenizer.encode(TEXTS[0])
    special = set(pipeline.tokenizer.hf.all_special_ids) - {pipeline.tokenizer.unk_id}
    assert summaries.special_positions(ids, pipeline.model).tolist() == [i in special for i in ids]
    assert pipeline.tokenizer.unk_id not in pipeline.model.special_ids  # <unk> stands for text, as in our models
    assert ids[-1] in special and (ids[0] in special) == (pipeline.model.rules.forced_first is not None)  # BART's <s>


def test_the_why_tab_explains_a_transformers_models_decoding(family):
    """The Why tab's message for every family: each step attributed, and the lens's last layer writes what was
    written (greedy decoding)."""
    from attention_lab.app import make_lab
    from attention_lab.controls import Controls
    from attention_lab.models.registry import Registry
    from attention_lab.run.state import UserState

    pipeline, _, _ = family
    lab, user = make_lab(Registry.of({"m": pipeline})), UserState()
    c = Controls("m", TEXTS[1], max_len=LIMIT, options={"method": "occlusion"})
    lab.do(lab.decoding.run, user, c)
    lab.open_tab(user, c, "why")
    message = lab.fill(user)["why"]
    session = user.run.session
    assert "error" not in message and len(message["steps"]) == len(session.tokens) > 0
    assert all(len(s["source"]) == len(session.src_ids) for s in message["steps"])
    last = [layers[-1][0][0] for layers in message["lens"]["top"]]
    assert last == [s["label"] for s in payload_steps(session, pipeline.tokenizer)]
    assert message["lens"]["settled"][-1] is not None


def payload_steps(session, tokenizer) -> list[dict]:
    from attention_lab.core import payload

    return jsonable(payload.full(session, tokenizer, "m"))["steps"]


@pytest.mark.slow
def test_the_head_survey_runs_on_a_transformers_model(family, tmp_path):
    """python -m attention_lab.survey on a folder of another library's model: every kind's layers and heads, and without
    references each head is scored by how often the plain decoding is kept."""
    from attention_lab.survey.__main__ import main
    from transformer.config import KINDS, n_layers

    pipeline, _, folder = family
    data = tmp_path / "sources.tsv"
    data.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    assert main(["--model", str(folder), "--data", str(data), "--out", str(tmp_path / "out"), "--device", "cpu"]) == 0
    survey = json.loads((tmp_path / "out" / "survey.json").read_text(encoding="utf-8"))
    config = pipeline.model.config
    assert survey["score"] == {"name": "exact match with the plain decoding", "value": 100.0}
    for kind in KINDS:
        assert [len(row) for row in survey["heads"][kind]] == [config.n_heads] * n_layers(config, kind)
        assert survey["pruning_by_kind"][kind][-1]["heads"] == n_layers(config, kind) * config.n_heads
    cells = [cell for kind in KINDS for row in survey["heads"][kind] for cell in row]
    assert all(0 <= cell["special"] <= 1 and cell["alignment"] is None for cell in cells)
    assert survey["pruning"][0]["score"] == 100.0
