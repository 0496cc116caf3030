"""Scoring a forced translation (attention_lab.trust): decoding's own probabilities when the model's own output is
forced, the methods' values per step, the target side's tokens, and flags where the answer is known on the reversal
model (it reads output position j from source position S-2-j)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_lab.attribution.methods import attribute
from attention_lab.checks import InputError
from attention_lab.messages import jsonable
from attention_lab.trust.flags import COLLAPSE, LOW_SOURCE
from attention_lab.trust.messages import MAX_TRANSLATION, checked_method, record, score_record, target_ids
from attention_lab.trust.score import score
from attention_lab.trust.sentence import COVERED
from tests import hf_models
from transformer import DecodingSession, bundled, load_pretrained
from transformer.contributions import alti_plus

LIMIT = 6  # short enough that a family's forced last token (Marian's eos at the limit) is reached


@pytest.fixture(scope="module")
def reverse():
    return load_pretrained(str(bundled("reverse")))


@pytest.fixture(scope="module", params=["reverse", "de-en", *sorted(hf_models.FAMILIES)])
def pipeline(request, tmp_path_factory):
    if request.param in hf_models.FAMILIES:
        return hf_models.loaded(request.param, tmp_path_factory)
    return load_pretrained(str(bundled(request.param)))


def test_forcing_the_models_own_output_gives_decodings_own_probabilities(pipeline):
    text = "abcdef" if pipeline.tokenizer.is_character_level else "Ich habe Hunger."
    ids = pipeline.tokenizer.encode(text)
    session = DecodingSession(pipeline.model, ids, top_k=3, max_new_tokens=LIMIT)
    tokens = session.run()
    scored = score(pipeline, ids, tokens, "input_x_gradient", limit=LIMIT)
    for s, step in zip(scored.steps, session.steps, strict=True):
        assert s.token == step.token == step.top_ids[0]
        assert math.exp(s.logp) == pytest.approx(step.top_probs[0], rel=1e-5, abs=1e-7)


def test_the_translation_is_tokenized_as_the_models_target_side_with_its_end_token(pipeline):
    tokenizer, eos = pipeline.tokenizer, pipeline.model.config.eos_id
    text = "fedcba" if tokenizer.is_character_level else "The house is old."
    ids = target_ids(pipeline, text)
    hf = getattr(tokenizer, "hf", None)
    if hasattr(hf, "convert_ids_to_tokens"):  # transformers' own target encoding (BART's <s> first)
        assert ids == hf(text_target=text)["input_ids"]
    else:
        assert ids == tokenizer.encode(text)
    assert ids[-1] == eos and eos not in ids[:-1] and tokenizer.decode(ids) == text


def test_alti_values_are_the_librarys_contributions_and_add_up_to_one(reverse):
    ids, tokens = reverse.tokenizer.encode("abcdefgh"), target_ids(reverse, "hgfedcxa")
    scored = score(reverse, ids, tokens, "alti")
    c = alti_plus(reverse.model, ids, tokens)
    for s in scored.steps:
        assert len(s.source) == len(ids) and len(s.prefix) == s.step
        assert (s.source >= 0).all() and (s.prefix >= 0).all()
        assert s.source.sum() + s.prefix.sum() == pytest.approx(1, abs=1e-5)
        assert np.allclose(s.source, c.source[s.step - 1].numpy()) and np.allclose(
            s.prefix, c.prefix[s.step - 1, : s.step]
        )
        assert s.source_share == pytest.approx(float(c.source[s.step - 1].sum()), abs=1e-5)


def test_attribution_values_are_the_attribution_methods_own(reverse):
    ids, tokens = reverse.tokenizer.encode("abcdef"), target_ids(reverse, "fedxba")
    scored = score(reverse, ids, tokens, "integrated_gradients")
    for s, a in zip(scored.steps, attribute(reverse.model, ids, tokens, "integrated_gradients"), strict=True):
        assert np.array_equal(s.source, a.source) and np.array_equal(s.prefix, a.prefix)
        assert s.source_share == a.source_share and s.logp == pytest.approx(a.log_prob, abs=1e-5)


def test_a_token_the_rules_forbid_gets_null_and_a_flag(reverse):
    ids = reverse.tokenizer.encode("abc")
    bos = reverse.model.config.bos_id
    tokens = [reverse.tokenizer.token_to_id("c"), bos, reverse.tokenizer.token_to_id("a"), 2]
    answer = jsonable(score_record(reverse, ids, tokens, "input_x_gradient"))
    assert answer["steps"][1]["logp"] is None and answer["sentence"]["mean_logp"] is None
    assert answer["steps"][1]["source"] == [None] * len(ids) and answer["steps"][0]["logp"] is not None
    forbidden = [f for f in answer["flags"] if f["kind"] == "forbidden"]
    assert [f["at"] for f in forbidden] == [2] and "never write" in forbidden[0]["message"]


def test_words_the_translation_never_reads_are_uncovered(reverse):
    ids = reverse.tokenizer.encode("abcdef")  # "fed" reads d, e, f (and c, writing the end): not a or b
    scored = score(reverse, ids, target_ids(reverse, "fed"), "input_x_gradient")
    assert scored.uncovered == [0, 1] and scored.coverage == pytest.approx(4 / 6)
    assert all(read >= COVERED for read in scored.reads[2:])
    answer = jsonable(record(reverse, scored))
    assert answer["sentence"]["uncovered"] == ["a", "b"]
    assert [(f["kind"], f["at"]) for f in answer["flags"]] == [("uncovered", 1), ("uncovered", 2)]
    full = score(reverse, ids, target_ids(reverse, "fedcba"), "input_x_gradient")
    assert full.coverage == 1 and not full.flags


def test_attention_collapses_onto_the_end_token_past_the_sources_end(reverse):
    ids = reverse.tokenizer.encode("abcdef")  # every character written: nothing is left to read
    scored = score(reverse, ids, target_ids(reverse, "fedcbaaaaa"), "input_x_gradient")
    collapsed = [f.at for f in scored.flags if f.kind == "end_collapse"]
    assert collapsed == [7, 8, 9, 10] and all(scored.cross[t - 1, -1] >= COLLAPSE for t in collapsed)
    own = score(reverse, ids, target_ids(reverse, "fedcba"), "input_x_gradient")
    assert scored.mean_logp < own.mean_logp - 1


def test_a_detached_translation_scores_far_lower_than_the_models_own():
    pipeline = load_pretrained(str(bundled("de-en")))
    ids = pipeline.tokenizer.encode("Ich muss den Rasen mähen.")
    own = score(pipeline, ids, DecodingSession(pipeline.model, ids).run(), "input_x_gradient")
    detached = score(pipeline, ids, target_ids(pipeline, "The weather is nice today."), "input_x_gradient")
    assert detached.mean_logp < own.mean_logp - 3


def test_a_low_source_share_is_flagged_at_every_such_step_but_the_end():
    """de-en's guessed compound: "Handelskette" becomes "handwriting", whose last pieces are written from the prefix
    (ALTI+ gives them under 20% from the source). Every such step is flagged, and no other."""
    pipeline = load_pretrained(str(bundled("de-en")))
    ids = pipeline.tokenizer.encode("Der Supermarkt ist Teil einer Handelskette.")
    scored = score(pipeline, ids, DecodingSession(pipeline.model, ids).run(), "alti")
    eos = pipeline.model.config.eos_id
    expected = [s.step for s in scored.steps if s.source_share < LOW_SOURCE and s.token != eos]
    assert expected, [round(s.source_share, 2) for s in scored.steps]  # the case has such steps
    assert [f.at for f in scored.flags if f.kind == "low_source"] == expected


def test_bad_methods_and_over_long_translations_get_clear_messages():
    pipeline = load_pretrained(str(bundled("de-en")))
    with pytest.raises(InputError, match="Unknown method 'saliency': use one of alti, input_x_gradient"):
        checked_method("saliency")
    with pytest.raises(InputError, match=f"The translation is 129 tokens with its end token; /score takes at most "
                                         f"{MAX_TRANSLATION}"):  # fmt: skip
        target_ids(pipeline, " ".join(["a"] * 128))
    assert len(target_ids(pipeline, " ".join(["a"] * 127))) == MAX_TRANSLATION


def test_a_translation_method_or_aggregate_that_is_not_text_gets_a_message(bundled):
    from attention_lab.app import endpoints, make_lab

    api = endpoints(make_lab(bundled))
    with pytest.raises(InputError, match="The translation must be text"):
        api.score("reverse", "abc", 5)
    with pytest.raises(InputError, match="Unknown method"):
        api.score("reverse", "abc", "cba", ["alti"])
    with pytest.raises(InputError, match="Unknown aggregate"):
        api.attribute("reverse", "abc", "occlusion", ["sum"])
