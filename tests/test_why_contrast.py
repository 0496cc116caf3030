"""Attribution's aggregation over the embedding ("sum", "l2") and contrastive attribution (why.contrast): known
answers on the bundled reversal model (position j of the output reads source position S-2-j, the end token last),
a second implementation by hand with autograd, and the defining properties of occlusion and input × gradient."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attention_lab.attribution.methods import AGGREGATES, Scorer, attribute, attribute_step
from attention_lab.checks import InputError
from attention_lab.messages import jsonable
from attention_lab.why.api import attribution_record, contrast_record
from attention_lab.why.contrast import ContrastError, LogitDifference, contrast_step
from tests.conftest import tiny_pipelines
from tests.tolerance import assert_close
from training.reversal import reversal_pairs
from transformer import DecodingSession, bundled, load_pretrained

SEED = 24_680  # fresh strings, distinct from the training and survey seeds
ULPS = 512


@pytest.fixture(scope="module")
def reverse():
    return load_pretrained(str(bundled("reverse")))


@pytest.fixture(scope="module")
def tiny():
    """(pipeline, source ids, tokens): an untrained model, whose gradients are nowhere near saturated."""
    pipeline = tiny_pipelines()["de-en"]
    ids = pipeline.tokenizer.encode("Ich habe Hunger.")
    session = DecodingSession(pipeline.model, ids, max_new_tokens=6)
    return pipeline, ids, session.run()


def decoded(pipeline, n: int, seed: int = SEED):
    """(source ids, finished session) for n fresh strings of 3 to 20 characters."""
    for text, _ in reversal_pairs(n, 3, 20, seed):
        ids = pipeline.tokenizer.encode(text)
        session = DecodingSession(pipeline.model, ids)
        session.run()
        yield ids, session


def mirror_first(values: np.ndarray, S: int, step: int) -> bool:
    return int(np.argmax(values)) == S - 1 - step  # step is 1-based; the source ends with the end token


def by_hand(pipeline, ids, tokens, step):
    """Input × gradient per dimension, (source (S, D), prefix (step, D)), with autograd alone."""
    scorer = Scorer(pipeline.model, ids, tokens, 6)
    src, tgt = scorer.inputs(step)
    with torch.enable_grad():
        grads = torch.autograd.grad(scorer(src, tgt, step).sum(), (src, tgt))
    return (src * grads[0])[0].detach().numpy(), (tgt * grads[1])[0].detach().numpy()


def test_summed_values_are_the_old_ones_and_l2_is_the_norm_over_the_embedding(tiny):
    pipeline, ids, tokens = tiny
    for step in (1, 2, 3):
        source, prefix = by_hand(pipeline, ids, tokens, step)
        plain = attribute(pipeline.model, ids, tokens, "input_x_gradient", [step], 6)[0]  # no aggregate: as before
        summed = attribute(pipeline.model, ids, tokens, "input_x_gradient", [step], 6, aggregate="sum")[0]
        l2 = attribute(pipeline.model, ids, tokens, "input_x_gradient", [step], 6, aggregate="l2")[0]
        expected = np.concatenate([source.sum(-1), prefix.sum(-1)])
        assert_close(np.concatenate([plain.source, plain.prefix]), expected, ulps=ULPS, what=f"sum, step {step}")
        assert np.array_equal(
            np.concatenate([summed.source, summed.prefix]), np.concatenate([plain.source, plain.prefix])
        )
        norms = np.concatenate([np.linalg.norm(source, axis=-1), np.linalg.norm(prefix, axis=-1)])
        assert_close(np.concatenate([l2.source, l2.prefix]), norms, ulps=ULPS, what=f"l2, step {step}")
        assert (l2.source >= 0).all() and np.abs(expected).max() > 1e-4


def test_occlusions_l2_is_the_size_of_its_fall(tiny):
    pipeline, ids, tokens = tiny
    scorer = Scorer(pipeline.model, ids, tokens, 6)
    summed, l2 = (attribute_step(scorer, 2, "occlusion", aggregate=a) for a in ("sum", "l2"))
    assert np.allclose(l2.source, np.abs(summed.source)) and np.allclose(l2.prefix, np.abs(summed.prefix))
    assert (summed.source < 0).any() or (summed.prefix < 0).any()  # the absolute value changed something


def test_l2_input_x_gradient_finds_the_mirror_position_on_reversal(reverse):
    """Known answer: the L2 norm puts the mirror position first at (nearly) every step; the signed sum does not
    (gradient saturation: a certain step's gradients are tiny and their signs mixed)."""
    found = {aggregate: 0 for aggregate in AGGREGATES}
    steps = 0
    for ids, session in decoded(reverse, 12):
        S, tokens = len(ids), session.tokens
        chars = range(1, S)  # the steps that copy a character (the last writes the end token)
        for aggregate in AGGREGATES:
            for a in attribute(reverse.model, ids, tokens, "input_x_gradient", list(chars), aggregate=aggregate):
                found[aggregate] += mirror_first(a.source, S, a.step)
        steps += len(chars)
    assert found["l2"] >= 0.95 * steps, (found, steps)
    assert found["sum"] < found["l2"]


def test_an_unknown_aggregate_is_refused_in_one_line(tiny):
    pipeline, ids, tokens = tiny
    with pytest.raises(ValueError, match="unknown aggregate 'max': use one of sum, l2"):
        attribute(pipeline.model, ids, tokens, "occlusion", [1], aggregate="max")
    session = DecodingSession(pipeline.model, ids, max_new_tokens=6)
    session.run()
    with pytest.raises(InputError, match="Unknown aggregate 'max': use one of sum, l2."):
        attribution_record(session, pipeline.tokenizer, "occlusion", "max")
    assert attribution_record(session, pipeline.tokenizer, "occlusion", "l2").aggregate == "l2"


def test_the_contrast_with_the_runner_up_puts_the_mirror_position_first_on_reversal(reverse):
    found = steps = 0
    for ids, session in decoded(reverse, 10, SEED + 1):
        S, tokens = len(ids), session.tokens
        for step in range(1, S):
            other = next(t for t in session.steps[step - 1].top_ids if t != tokens[step - 1])
            c = contrast_step(reverse.model, ids, tokens, step, other, "input_x_gradient", "l2")
            found += mirror_first(c.source, S, step)
            steps += 1
            assert c.difference > 0  # greedy: the token written has the highest logit
    assert found >= 0.9 * steps, (found, steps)


def test_summed_input_x_gradient_contrast_is_the_difference_of_the_two_tokens_attributions(tiny):
    """Defining property: the gradient is linear and log_softmax's normaliser is the same for both tokens, so the
    contrast's values are the attribution of log p(token) minus that of log p(alternative), read by Scorer."""
    pipeline, ids, tokens = tiny
    step, other = 2, (tokens[1] + 1) % pipeline.model.config.tgt_vocab_size
    c = contrast_step(pipeline.model, ids, tokens, step, other, "input_x_gradient", "sum", limit=6)
    mine = attribute(pipeline.model, ids, tokens, "input_x_gradient", [step], 6)[0]
    swapped = [*tokens[: step - 1], other, *tokens[step:]]
    theirs = attribute(pipeline.model, ids, swapped, "input_x_gradient", [step], 6)[0]
    expected = np.concatenate([mine.source - theirs.source, mine.prefix - theirs.prefix])
    assert_close(np.concatenate([c.source, c.prefix]), expected, ulps=4 * ULPS, what="contrast")
    assert_close(c.difference, mine.log_prob - theirs.log_prob, ulps=ULPS, what="logit difference")


def test_occlusions_contrast_is_the_fall_of_the_logit_difference(tiny):
    pipeline, ids, tokens = tiny
    step, other = 3, (tokens[2] + 5) % pipeline.model.config.tgt_vocab_size
    c = contrast_step(pipeline.model, ids, tokens, step, other, "occlusion", "sum", limit=6)
    scorer = LogitDifference(pipeline.model, ids, tokens, other, limit=6)
    src, tgt = scorer.inputs(step)
    with torch.no_grad():
        for j in range(len(ids)):
            hidden = src.clone()
            hidden[:, j] = 0
            assert abs(c.source[j] - (c.difference - float(scorer(hidden, tgt, step)))) < 1e-4


def test_a_contrast_that_cannot_be_made_says_why(reverse):
    ids = reverse.tokenizer.encode("abc")
    session = DecodingSession(reverse.model, ids)
    session.run()
    tok = reverse.tokenizer
    with pytest.raises(ContrastError, match="Step must be from 1 to 4"):
        contrast_step(reverse.model, ids, session.tokens, 5, 3, "occlusion")
    bad = [
        ((9, "x", "occlusion", "l2"), "Step must be a whole number from 1 to 4, this decoding's steps \\(got 9\\)"),
        ((1, "zz", "occlusion", "l2"), "Unknown token 'zz': spell it as the candidates do"),
        ((1, "c", "occlusion", "l2"), "That is the token written at step 1"),
        ((1, "<pad>", "occlusion", "l2"), "may not write '&lt;pad&gt;' at step 1"),
        ((1, "x", "saliency", "l2"), "Unknown method 'saliency'"),
        ((1, "x", "occlusion", "max"), "Unknown aggregate 'max'"),
    ]
    for args, message in bad:
        with pytest.raises(InputError, match=message):
            contrast_record(session, tok, *args)
    record = jsonable(contrast_record(session, tok, 1, "</s>", "occlusion", "sum"))
    assert set(record) == {"step", "token", "alternative", "logit_difference", "source", "prefix"}
    assert record["token"] == "c" and record["alternative"] == "</s>" and len(record["prefix"]) == 1
