"""KV-cached decoding against full recompute, the step-by-step session, beam search, and a tiny model that learns."""

import pytest
import torch
import torch.nn.functional as F

from tests.conftest import random_ids, tiny_config
from transformer import DecodingSession, Transformer, beam_search, greedy_decode
from transformer.decoding import length_normalise

TOL = {"rtol": 0, "atol": 1e-5}


def recompute_greedy(model, src_ids, steps):
    """Greedy decoding the slow way: re-run the whole prefix for every token, no cache."""
    tgt = [model.config.bos_id]
    for _ in range(steps):
        logits = model(torch.tensor([src_ids]), torch.tensor([tgt])).logits
        token = int(_mask(model, logits[0, -1]).argmax())
        tgt.append(token)
        if token == model.config.eos_id:
            break
    return tgt


def _mask(model, logits):
    logits = logits.clone()
    logits[[model.config.pad_id, model.config.bos_id]] = float("-inf")
    return logits


@pytest.fixture
def model():
    torch.manual_seed(0)
    return Transformer(tiny_config(tgt_vocab_size=13)).eval()


def test_cached_steps_equal_full_recompute_in_tokens_and_attention(model):
    src = [5, 9, 3, 7, 12, 4]
    session = DecodingSession(model, src, max_new_tokens=12)
    session.run()
    expected = recompute_greedy(model, src, 12)
    assert [model.config.bos_id] + session.tokens == expected
    assert len(session.tokens) >= 5  # long enough for the check below to mean something
    # The attention of the full-prefix pass over the decoder input (bos + all but the last token).
    full = model(torch.tensor([src]), torch.tensor([expected[:-1]]), output_attentions=True).attentions
    for t, step in enumerate(session.steps):
        for layer in range(model.config.n_decoder_layers):
            torch.testing.assert_close(step.self_attention[layer], full.decoder_self[layer][0, :, t, : t + 1], **TOL)
            torch.testing.assert_close(step.cross_attention[layer], full.cross[layer][0, :, t], **TOL)
    for layer, weights in enumerate(session.encoder_attention):
        torch.testing.assert_close(weights, full.encoder[layer][0], **TOL)


def test_batched_greedy_equals_one_at_a_time_and_the_session(model):
    g = torch.Generator().manual_seed(1)
    lengths = [8, 5, 2, 7]
    src = random_ids(g, 4, 8, 13, lengths)
    batched = greedy_decode(model, src, max_new_tokens=10)
    for b, n in enumerate(lengths):
        ids = src[b, :n].tolist()
        alone = greedy_decode(model, torch.tensor([ids]), max_new_tokens=10)[0]
        assert batched[b] == alone
        session_tokens = DecodingSession(model, ids, max_new_tokens=10).run()
        assert [t for t in session_tokens if t != model.config.eos_id] == alone
        assert recompute_greedy(model, ids, 10)[1:] == session_tokens


def test_session_back_and_forced_token(model):
    session = DecodingSession(model, [4, 5, 6, 7], top_k=3, max_new_tokens=8)
    first, second = session.step(), session.step()
    assert first.top_ids[0] == first.token and not first.forced
    assert len(first.top_ids) == 3 and first.top_probs == sorted(first.top_probs, reverse=True)
    assert first.prob == pytest.approx(first.top_probs[0])
    assert second.self_attention[0].shape == (4, 2) and second.cross_attention[0].shape == (4, 4)
    session.back()
    assert session.tokens == [first.token]
    again = session.step()
    assert again.token == second.token
    torch.testing.assert_close(again.self_attention[1], second.self_attention[1], rtol=0, atol=0)
    # What if: force the runner-up at step 2 and continue; the model conditions on the forced token.
    session.back()
    forced_token = second.top_ids[1]
    forced = session.step(force=forced_token)
    assert forced.token == forced_token and forced.forced and forced.prob == pytest.approx(second.top_probs[1])
    session.run()
    expected = recompute_greedy_from(model, [4, 5, 6, 7], [first.token, forced_token], 8)
    assert session.tokens == expected
    session.reset()
    assert session.tokens == [] and not session.finished
    with pytest.raises(ValueError, match="forced token"):
        session.step(force=99)


def recompute_greedy_from(model, src, prefix, max_new_tokens):
    tgt = [model.config.bos_id, *prefix]
    while len(tgt) - 1 < max_new_tokens and tgt[-1] != model.config.eos_id:
        logits = model(torch.tensor([src]), torch.tensor([tgt])).logits
        tgt.append(int(_mask(model, logits[0, -1]).argmax()))
    return tgt[1:]


def test_session_stops_at_the_length_limit(model):
    session = DecodingSession(model, [4, 5], max_new_tokens=3)
    for _ in range(3):
        assert not session.finished
        session.step(force=5)  # never eos, so only the limit can stop it
    assert session.finished and len(session.steps) == 3
    with pytest.raises(ValueError, match="finished"):
        session.step()
    session.back()
    with pytest.raises(ValueError, match="never writes token"):
        session.step(force=model.config.pad_id)
    assert len(session.steps) == 2
    assert session.step(force=5).token == 5 and session._cache.length == 3  # the refusal left the cache as it was


def test_beam_of_one_is_greedy_and_beams_are_batched(model):
    g = torch.Generator().manual_seed(2)
    lengths = [6, 3, 5]
    src = random_ids(g, 3, 6, 13, lengths)
    greedy = greedy_decode(model, src, max_new_tokens=10)
    assert [r.tokens for r in beam_search(model, src, beam_size=1, max_new_tokens=10, length_penalty=0)] == greedy
    batched = beam_search(model, src, beam_size=4, max_new_tokens=10, record_history=True)
    for b, n in enumerate(lengths):
        alone = beam_search(model, src[b : b + 1, :n], beam_size=4, max_new_tokens=10)[0]
        assert batched[b].tokens == alone.tokens
        assert batched[b].score == pytest.approx(alone.score, abs=1e-5)
        assert 1 <= len(batched[b].history) <= 10 and len(batched[b].history[0]) <= 4


def test_beam_search_finds_a_better_sequence_than_greedy_on_a_known_distribution(model):
    """With exact sequence scores computed by recompute, beam search's best is never worse than greedy's."""
    src = torch.tensor([[5, 9, 3, 7]])

    def sequence_log_prob(tokens):
        tgt = [model.config.bos_id, *tokens, model.config.eos_id]
        logits = model(src, torch.tensor([tgt[:-1]])).logits[0]
        logp = torch.stack([_mask(model, row) for row in logits]).log_softmax(-1)
        return logp[torch.arange(len(tgt) - 1), torch.tensor(tgt[1:])].sum().item()

    def score(tokens, limit):  # complete hypotheses end with eos; ones cut by the limit do not
        return sequence_log_prob(tokens) if len(tokens) < limit else partial_log_prob(tokens)

    def partial_log_prob(tokens):
        tgt = [model.config.bos_id, *tokens]
        logits = model(src, torch.tensor([tgt[:-1]])).logits[0]
        logp = torch.stack([_mask(model, row) for row in logits]).log_softmax(-1)
        return logp[torch.arange(len(tgt) - 1), torch.tensor(tgt[1:])].sum().item()

    for limit in (3, 8, 32):
        greedy = greedy_decode(model, src, max_new_tokens=limit)[0]
        beam = beam_search(model, src, beam_size=8, max_new_tokens=limit, length_penalty=0.0)[0]
        assert score(beam.tokens, limit) >= score(greedy, limit) - 1e-5
        assert beam.score == pytest.approx(score(beam.tokens, limit), abs=1e-4)
        scores = [s for _, s in beam.candidates]  # every hypothesis it ended with, best first, the best among them
        assert beam.candidates[0] == (beam.tokens, beam.score) and scores == sorted(scores, reverse=True)
        assert len(beam.candidates) >= 2


def log_prob(model, src, tokens, ended: bool) -> float:
    """The model's summed log-probability of `tokens`, and of eos after them if the hypothesis ended, by recompute."""
    tgt = [model.config.bos_id, *tokens, *([model.config.eos_id] if ended else [])]
    logits = model(src, torch.tensor([tgt[:-1]])).logits[0]
    logp = torch.stack([_mask(model, row) for row in logits]).log_softmax(-1)
    return logp[torch.arange(len(tgt) - 1), torch.tensor(tgt[1:])].sum().item()


def eos_prone_model(seed: int, push: float) -> Transformer:
    """An untrained tiny model whose eos logit is raised by `push`, so that hypotheses end at varied lengths."""
    torch.manual_seed(seed)
    model = Transformer(tiny_config(tgt_vocab_size=13)).eval()
    eos = model.tgt_embed.weight[model.config.eos_id].detach()  # tied: logits = hidden @ embedding.T
    with torch.no_grad():
        model.decoder.norm.bias += push * eos / eos.norm() ** 2
    return model


def test_the_length_penalty_is_gnmts():
    """Wu et al. 2016, eq. 14: score = log P(Y|X) / lp(Y), lp(Y) = ((5 + |Y|) / 6) ** alpha."""
    assert length_normalise(-6.0, 7, 0.0) == -6.0
    assert length_normalise(-6.0, 1, 2.0) == -6.0  # lp(1) = 1, whatever alpha
    assert length_normalise(-6.0, 7, 1.0) == pytest.approx(-3.0)  # lp = 12 / 6 = 2
    assert length_normalise(-6.0, 7, 2.0) == pytest.approx(-1.5)  # lp = 2 ** 2
    assert length_normalise(-6.0, 7, 0.6) == pytest.approx(-6.0 / 2**0.6)


@pytest.mark.parametrize("alpha", [0.6, 1.0, 2.0])
def test_beam_scores_are_log_probabilities_under_the_length_penalty(alpha):
    model = eos_prone_model(seed=2, push=2.0)
    src, limit = torch.tensor([[5, 9, 3, 7]]), 8
    result = beam_search(model, src, beam_size=4, max_new_tokens=limit, length_penalty=alpha)[0]
    assert sum(len(tokens) < limit for tokens, _ in result.candidates) >= 2  # hypotheses that ended with eos
    for tokens, score in result.candidates:
        ended = len(tokens) < limit  # a finished hypothesis spent a position on eos; one cut by the limit did not
        length = len(tokens) + ended  # eos counts in the length
        expected = log_prob(model, src, tokens, ended) / ((5 + length) / 6) ** alpha
        assert score == pytest.approx(expected, abs=1e-4), tokens


def never_stop_early(self, *args) -> bool:
    return False  # every row searches on to the length limit


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.0, 2.0])
def test_stopping_early_never_changes_what_beam_search_finds(alpha, monkeypatch):
    """A row stops once no live beam can beat its k-th best finished hypothesis. Searching on to the length limit
    must find the same best hypotheses, only later."""
    from transformer import decoding

    calls = {"early": 0, "full": 0}
    original_decode = Transformer.decode
    for seed in range(6):
        for push in (1.0, 2.0):
            model = eos_prone_model(seed, push)
            src = random_ids(torch.Generator().manual_seed(seed), 4, 6, 13, [6, 4, 2, 5])
            results = {}
            for how in calls:
                with monkeypatch.context() as patch:
                    if how == "full":
                        patch.setattr(decoding._Row, "_cannot_improve", never_stop_early)

                    def counted(self, *args, how=how, **kwargs):
                        calls[how] += 1
                        return original_decode(self, *args, **kwargs)

                    patch.setattr(Transformer, "decode", counted)
                    results[how] = beam_search(model, src, beam_size=3, max_new_tokens=16, length_penalty=alpha)
            for early, full in zip(results["early"], results["full"]):
                assert early.tokens == full.tokens and early.score == pytest.approx(full.score, abs=1e-6), seed
                assert [t for t, _ in early.candidates[:3]] == [t for t, _ in full.candidates[:3]], seed
    # It did stop early, except with alpha 2, where a live beam's normalised score can grow enough to win right up
    # to the length limit in these cases.
    assert calls["early"] < calls["full"] if alpha < 2 else calls["early"] <= calls["full"]


def test_a_long_source_is_cut_to_max_len_and_keeps_its_end_of_sentence_token():
    from tests.conftest import tiny_pipelines

    pipeline = tiny_pipelines()["reverse"]
    limit, eos = pipeline.max_source_tokens, pipeline.tokenizer.eos_id
    src = pipeline.encode_batch(["a" * 100, "ab"])
    assert src.shape == (2, limit)
    assert src[0, -1] == eos and (src[0, :-1] == pipeline.tokenizer.token_to_id("a")).all()
    assert src[1, :3].tolist() == pipeline.tokenizer.encode("ab") and (src[1, 3:] == pipeline.model.config.pad_id).all()
    assert pipeline.truncate(pipeline.tokenizer.encode("a" * limit))[-1] == eos


@pytest.mark.slow
def test_tiny_model_overfits_reversal_and_decodes_it_exactly():
    torch.manual_seed(0)
    cfg = tiny_config(src_vocab_size=13, tgt_vocab_size=13, d_model=32, d_ff=64, share_embeddings=True)
    model = Transformer(cfg)
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(2, 7, (24,), generator=g).tolist()
    src = random_ids(g, 24, 6, 13, lengths)
    targets = [src[b, :n].flip(0).tolist() for b, n in enumerate(lengths)]
    tgt = torch.zeros(24, 8, dtype=torch.long)
    for b, t in enumerate(targets):
        row = [cfg.bos_id, *t, cfg.eos_id]
        tgt[b, : len(row)] = torch.tensor(row)
    decoder_input, labels = tgt[:, :-1], tgt[:, 1:]
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(300):
        loss = F.cross_entropy(model(src, decoder_input).logits.transpose(1, 2), labels, ignore_index=cfg.pad_id)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    assert greedy_decode(model, src) == targets
    assert [r.tokens for r in beam_search(model, src, beam_size=3)] == targets


def test_a_fork_steps_on_its_own_and_steps_as_the_session_would(model):
    session = DecodingSession(model, [4, 5, 6, 7], top_k=3, max_new_tokens=8)
    session.step(force=5)  # not the end of the sentence
    forked = session.fork()
    ahead = forked.step()
    assert len(session.steps) == 1 and len(forked.steps) == 2  # the session is as it was
    step = session.step()
    assert step.token == ahead.token and step.top_ids == ahead.top_ids
    for mine, theirs in zip(step.cross_attention + step.self_attention, ahead.cross_attention + ahead.self_attention):
        torch.testing.assert_close(mine, theirs)
    session.back()
    forked.step(force=6)  # the fork goes on; the session keeps its one step
    assert len(session.steps) == 1 and forked.tokens == [5, step.token, 6]
