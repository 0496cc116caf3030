"""The page's decoding (page_copy/model.mjs) under a model's rules for each step, against the library's
(transformer.contract.NextTokenRules.apply, DecodingSession.can_write): every token at every step of a decoding,
for rules that force a first and a last token, ban tokens always or at the first step, and hold eos back to a minimum
length; and the page never decodes past the model's own limit, whatever length it is asked for (as next_token.py)."""

from __future__ import annotations

import dataclasses

import torch

from tests.node import needs_node, run_modules
from transformer import NextTokenRules

V, LIMIT = 7, 5
RULES = [
    NextTokenRules(),
    NextTokenRules(banned=(0, 1)),
    NextTokenRules(banned=(0,), forced_first=4, forced_last=2, eos_ids=(2,)),
    NextTokenRules(banned=(0,), begin_banned=(3, 5), eos_ids=(2,), min_length=4),
    NextTokenRules(banned=(4,), forced_first=4),  # a forced token wins over a banned one, as in apply
    NextTokenRules(eos_ids=(2,), min_length=9, forced_last=2),  # at the limit, the forced last token wins
]
PAGE = """
const {LiveSession} = model;
return data.rules.map((rules) => {
  const config = {tgt_vocab_size: data.V, banned: rules.banned, rules, max_new_tokens: data.limit, n_decoder_layers: 1,
    n_heads: 1, d_model: 1};
  const fake = {config, keep: () => ({}), ort: {Tensor: class {}}};
  const none = {data: []};
  const encoded = {encoder: none, encoder_norms: none, encoder_rollout: none, cross_norms: none, cross_k: {}, cross_v: {}};
  const session = new LiveSession(fake, [1, 2], encoded, 3, data.asked);
  const writable = [];
  for (let index = 0; index < data.limit; index++) {
    writable.push([...Array(data.V + 1).keys()].map((token) => session.canWrite(token, index)));
  }
  return {writable, maxNew: session.maxNew};
});
"""


def library_can_write(rules: NextTokenRules, token: int, index: int) -> bool:
    """DecodingSession.can_write's answer (its step counts from 1: index + 1)."""
    if not 0 <= token < V:
        return False
    logits = torch.zeros(V)
    return bool(rules.apply(logits, index, LIMIT)[token].isfinite())


@needs_node
def test_the_page_writes_what_the_library_may_write_at_every_step_and_stops_at_the_models_limit():
    rules = [{k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(r).items()} for r in RULES]
    answer = run_modules({"model": "page_copy/model.mjs"}, PAGE, {"rules": rules, "V": V, "limit": LIMIT, "asked": 64})
    for rule, page in zip(RULES, answer):
        expected = [[library_can_write(rule, token, index) for token in range(V + 1)] for index in range(LIMIT)]
        assert page["writable"] == expected, rule
        assert page["maxNew"] == LIMIT  # 64 asked: the model's own limit holds
