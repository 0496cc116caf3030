"""The documented API (gradio_client) as plain Python over the shared models: each call decodes afresh, holds no
user state, and raises InputError with a message for the client when the request cannot be used.

Every request's cost is bounded: each endpoint takes sources of at most so many tokens (LIMITS; a longer one is
refused with a message that says so) and decodes at most so many new tokens (the model's own limit, if lower)."""

from __future__ import annotations

import keyword

from ..attention.record import attention_record, top_k_record
from ..beam_tree.record import continued, tree_record
from ..checks import InputError, as_int, check_source, is_blank, quoted
from ..decoding.state import Run, decode_to_end, new_run
from ..heads.ablation import ablated_session, ablation_effects
from ..heads.editing import edit_session, point_weights
from ..heads.naming import parse_heads
from ..heads.summaries import head_summaries
from ..models.registry import Registry
from ..patch.corruption import corruption
from ..patch.record import patch_record
from ..snapshots import feature as snapshots_tab
from ..snapshots.decodings import Snapshots
from ..trust.record import MAX_TRANSLATION, checked_method, score_record, target_ids
from ..why.records import attribution_record, contrast_record, lens_record

LIMITS = {  # endpoint -> (source tokens, new tokens) it takes at most: the head tests try every head or step
    "translate": (256, 256),
    "attention": (256, 256),
    "heads": (64, 64),
    "training": (64, 64),
    "ablate": (64, 64),
    "edit": (64, 64),
    "attribute": (64, 64),
    "contrast": (64, 64),
    "lens": (64, 64),
    "patch": (64, 64),
    "beam_tree": (64, 256),  # new tokens as /attention decodes them, so that its beam output is the best path
    "continue": (64, 256),
    "score": (64, MAX_TRANSLATION),  # a pasted translation's tokens, its end token included
}


def method_of(endpoint: str) -> str:
    """The Api method that answers `endpoint`: its name, or with an underscore after a Python keyword (/continue)."""
    return f"{endpoint}_" if keyword.iskeyword(endpoint) else endpoint


class Api:
    def __init__(self, registry: Registry, snapshots: Snapshots) -> None:
        self.registry = registry
        self.snapshots = snapshots

    def _run(self, model: str, text: str, endpoint: str) -> Run:
        """A fresh run of `text` within the endpoint's limits."""
        entry = self.registry.entry(model)
        self._within(model, text, endpoint)
        return new_run(entry, text, max_len=min(entry.pipeline.model.config.max_new_tokens, LIMITS[endpoint][1]))

    def _within(self, model: str, text: str, endpoint: str) -> None:
        """InputError if `text` is more source tokens than the endpoint takes (or unusable, as the page says)."""
        pipeline = self.registry.entry(model).pipeline
        check_source(pipeline, text)
        n, most = len(pipeline.tokenizer.encode(text)), LIMITS[endpoint][0]
        if n > most:
            raise InputError(
                f"The source is {n} tokens; /{endpoint} takes at most {most} (its cost grows with the length). "
                "Send a shorter text."
            )

    def translate(self, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> str:
        """Decode `text` with `model` ("greedy" or "beam" search); returns the output text. At most 256 source
        tokens (a longer text is refused, with a message) and 256 new tokens."""
        run = self._run(model, text, "translate")
        decode_to_end(run, strategy, beam_size)
        return run.pipeline.tokenizer.decode(run.session.tokens)

    def attention(self, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> dict:
        """Decode `text` and return every head's attention at every step (the app's JSON export). At most 256
        source tokens (a longer text is refused, with a message) and 256 new tokens."""
        run = self._run(model, text, "attention")
        decode_to_end(run, strategy, beam_size)
        return attention_record(run.session, run.pipeline.tokenizer, model)

    def heads(self, model: str, text: str) -> dict:
        """Decode `text` greedily; {"encoder"|"decoder_self"|"cross": [layer][head] -> {"entropy", "special",
        "alignment"}}: mean row entropy in nats, mean weight on the model's special tokens (pad, start, end and its
        tokenizer's own), gold alignment accuracy or null. At most 64 source tokens (a longer text is refused, with a
        message) and 64 new tokens."""
        run = self._run(model, text, "heads")
        run.session.run()
        return head_summaries(run.session, run.entry.alignment)

    def training(self, model: str, text: str) -> dict:
        """Decode `text` greedily with each training snapshot of `model`: {"snapshots": [{"step", "output_text",
        "alignment", "loss"}]} in training order. alignment: the best cross head's alignment accuracy for `text`, or
        null where no gold alignment is known; loss: the snapshot's validation loss. At most 64 source tokens (a
        longer text is refused, with a message)."""
        self.snapshots.listed(model)  # a model without snapshots says so first
        self._within(model, text, "training")
        return snapshots_tab.record(self.snapshots, model, text)

    def ablate(self, model: str, text: str, heads: list[str]) -> dict:
        """Ablate `heads` ("kind:layer:head", 1-based, "*" for all) throughout: {"output_text", "steps": [{"step",
        "token", "kl", "top_k"}]}, one entry per step of the original greedy decoding. At most 64 source tokens (a
        longer text is refused, with a message) and 64 new tokens."""
        run = self._run(model, text, "ablate")
        session, tokenizer = run.session, run.pipeline.tokenizer
        chosen = parse_heads(heads, session.model.config)
        tokens = session.run()
        effects = ablation_effects(
            session.model, session.src_ids, tokens, chosen, session.top_k, session.max_new_tokens
        )
        return {
            "output_text": tokenizer.decode(ablated_session(session, chosen).tokens),
            "steps": [
                {
                    "step": e.step,
                    "token": tokenizer.id_to_token(e.token),
                    "kl": round(e.kl, 6),
                    "top_k": top_k_record(tokenizer, e.top_ids, e.top_probs),
                }
                for e in effects
            ],
        }

    def edit(self, model: str, text: str, step: int, position: int, heads: list[str]) -> dict:
        """At `step` (1-based) the listed cross heads look only at source token `position` (1-based):
        {"token", "probability", "top_k", "output_text"}, decoding on greedily with no further edit. At most 64
        source tokens (a longer text is refused, with a message) and 64 new tokens."""
        run = self._run(model, text, "edit")
        session, tokenizer = run.session, run.pipeline.tokenizer
        chosen = parse_heads(heads, session.model.config, kinds=("cross",))
        if not chosen:
            raise InputError('List the cross-attention heads to edit, such as "cross:2:*" ("cross:*:*" for all).')
        session.run()
        n_steps, n_source = len(session.steps), len(session.src_ids)
        at, where = as_int(step), as_int(position)
        if at is None or not 1 <= at <= n_steps:
            raise InputError(
                f"Step must be a whole number from 1 to {n_steps}, this decoding's steps (got {quoted(step)})."
            )
        if where is None or not 1 <= where <= n_source:
            raise InputError(
                f"Position must be a whole number from 1 to {n_source}, the source tokens (got {quoted(position)})."
            )
        edited = edit_session(session, at, point_weights(n_source, [where - 1]), chosen)
        taken = edited.steps[at - 1]
        return {
            "token": tokenizer.id_to_token(taken.token),
            "probability": round(taken.prob, 6),
            "top_k": top_k_record(tokenizer, taken.top_ids, taken.top_probs),
            "output_text": tokenizer.decode(edited.tokens),
        }

    def attribute(self, model: str, text: str, method: str, aggregate: str = "sum") -> dict:
        """Why each token: decode `text` greedily and attribute every written token's log-probability to each source
        token and to each decoder input before it: {"source_tokens", "method", "note", "steps": [{"step", "token",
        "source": [a value per source token], "prefix": [a value per decoder input at that step], "source_share"}]}.
        `method`: "input_x_gradient" (embedding × gradient, summed over dimensions), "integrated_gradients" (from
        zero embeddings, positions kept; 50 steps; the values add up to the change in log p) or "occlusion" (the
        fall in log p when one token's embedding is zeroed). A positive value raised the probability; source_share
        is the source's share of the absolute values. `aggregate`: "sum" (signed, over the embedding's dimensions)
        or "l2" (their L2 norm, unsigned; occlusion's is the size of its fall); the answer says which in
        "aggregate". At most 64 source tokens and 64 new tokens."""
        run = self._run(model, text, "attribute")
        run.session.run()
        return attribution_record(run.session, run.pipeline.tokenizer, method, aggregate)

    def contrast(
        self,
        model: str,
        text: str,
        step: int,
        alternative: str,
        method: str = "input_x_gradient",
        aggregate: str = "l2",
    ) -> dict:
        """Why this token and not that one: decode `text` greedily and attribute logit(token written) −
        logit(`alternative`) at `step` (1-based), the logits after the model's next-token rules: {"step", "token",
        "alternative", "logit_difference", "source": [a value per source token], "prefix": [a value per decoder
        input at that step]}. `alternative` is spelled as the candidates (top_k in /attention) spell it, the end
        token included; `method` and `aggregate` as in /attribute. At most 64 source tokens and 64 new tokens."""
        run = self._run(model, text, "contrast")
        run.session.run()
        return contrast_record(run.session, run.pipeline.tokenizer, step, alternative, method, aggregate)

    def lens(self, model: str, text: str) -> dict:
        """The decoder's lens: decode `text` greedily; per step, per decoder layer (1-based, in order), the 5 tokens
        the model would write if its decoder stopped after that layer (the model's own final norm and output layer):
        {"steps": [{"step", "token", "settled", "layers": [{"layer", "top_k": [{"token", "probability"}]}]}]};
        "settled" is the first layer from which on the written token is the top one. At most 64 source tokens and
        64 new tokens."""
        run = self._run(model, text, "lens")
        run.session.run()
        return lens_record(run.session, run.pipeline.tokenizer)

    def patch(self, model: str, clean: str, corrupted: str, noise: list[int] | None = None) -> dict:
        """Activation patching: decode `clean` greedily, then read its output with the decoder input forced to it
        from the clean source and from a corrupted one, `corrupted` (as many tokens), or the clean one with Gaussian
        noise on the embeddings of the source words `noise` (1-based; `corrupted` then empty; 3 embedding standard
        deviations, seeded). Each component is restored from the clean run on its own, and r = (logp_patched -
        logp_corrupted) / (logp_clean - logp_corrupted) of the clean token is given per step: {"source_tokens",
        "corrupted_tokens", "output_tokens", "corrupted_output_text", "steps": [{"step", "token", "clean_logp",
        "corrupted_logp", "encoder_states": [layer][source position], "decoder_states": [layer][target position up
        to the step], "heads": {"encoder"|"decoder_self"|"cross": [layer][head]}}]}; 1 is fully restored, 0 as
        corrupted, null where the two log ps differ by less than 0.1 nats. At most 64 source tokens and 64 new
        tokens."""
        run = self._run(model, clean, "patch")
        words = [] if noise is None else noise
        if not isinstance(words, list) or any(as_int(w) is None for w in words):
            raise InputError(
                f"Noise must be a list of whole numbers, the source words to corrupt (got {quoted(noise)})."
            )
        typed = corrupted is not None and not is_blank(corrupted)
        if words and typed:
            raise InputError(
                "Give a corrupted source or noise words, not both: with noise, leave the corrupted source empty."
            )
        if typed:
            self._within(model, corrupted, "patch")
        asked = corruption(run.pipeline, clean, corrupted, [as_int(w) - 1 for w in words])
        run.session.run()
        return patch_record(run.pipeline, asked, list(run.session.tokens), run.session.max_new_tokens)

    def score(self, model: str, source: str, translation: str, method: str = "alti") -> dict:
        """Score a translation of `source`: its tokens (as the model's target side tokenizes them, then the end token)
        are forced on the decoder, and each step gives log p of the token under the model's own rules (null: the
        model would never write it there), its source share, and a value per source token and per decoder input by
        `method`: "alti" (ALTI+: contributions, non-negative, adding up to 1) or one of /attribute's methods. An empty
        `translation` scores the model's own greedy output. {"source_tokens", "target_tokens", "method", "steps":
        [{"step", "token", "logp", "source_share", "source", "prefix"}], "sentence": {"mean_logp", "source_share",
        "coverage", "uncovered": [source words]}, "flags": [{"kind", "at", "message"}]}: coverage is the share of
        source words that cross-attention (mean over layers and heads) reads for at least 0.35 of a step over the
        whole translation; flags are "forbidden", "uncovered" (at: the source word, 1-based), "low_source" and
        "end_collapse" (at: the step). At most 64 source tokens and 128 new tokens (the translation's, its end token
        included)."""
        checked_method(method)
        self._within(model, source, "score")
        if translation is not None and not isinstance(translation, str):
            raise InputError(f"The translation must be text (got {quoted(translation)}).")
        if translation is None or is_blank(translation):
            run = self._run(model, source, "score")
            tokens = run.session.run()
            return score_record(
                run.pipeline, run.session.src_ids, list(tokens), method, limit=run.session.max_new_tokens
            )
        pipeline = self.registry.entry(model).pipeline
        src_ids, tokens = check_source(pipeline, source)[0], target_ids(pipeline, translation)
        return score_record(pipeline, src_ids, list(tokens), method)

    def beam_tree(self, model: str, text: str, beam_size: int = 4) -> dict:
        """The beam search of `text` as a tree: at each step, each live hypothesis's `beam_size` most probable
        continuations, marked "kept", "pruned" or "finished" (the end token, leaving the beam finished): {"nodes":
        [{"id", "parent", "step", "token", "logp", "total", "state"}], "best", "output_text"}. The root (step 0,
        parent null, total 0) is the start token; a node's total is its parent's plus its logp; the best node's path
        is /attention's beam output_tokens and output_text what /translate with "beam" writes. Finished hypotheses
        are ranked by the GNMT length penalty (alpha 1). Beam sizes 1 to 16. At most 64 source tokens and 256 new
        tokens."""
        run = self._run(model, text, "beam_tree")
        return tree_record(run, beam_size)

    def continue_(self, model: str, text: str, prefix: list[str], strategy: str = "greedy", beam_size: int = 4) -> dict:
        """Decode on from a prefix: its tokens (spelled as output_tokens spells them) forced first, then "greedy" or
        "beam" decoding: {"output_tokens" (the prefix's included, the end token last), "output_text"}. At most 64
        source tokens and 256 new tokens."""
        run = self._run(model, text, "continue")
        return continued(run, prefix, strategy, beam_size)
