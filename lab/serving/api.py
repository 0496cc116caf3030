"""The documented API (gradio_client) as plain Python over the shared models: each call decodes afresh, holds no
user state, and raises InputError with a message for the client when the request cannot be used."""

from __future__ import annotations

from ..attention.record import attention_record, top_k_record
from ..checks import InputError, as_int, quoted
from ..decoding.run import Run, decode_to_end, new_run
from ..heads.ablation import ablated_session, ablation_effects
from ..heads.editing import edit_session, point_weights
from ..heads.naming import parse_heads
from ..heads.summaries import head_summaries
from ..models.registry import Registry
from ..snapshots import tab as snapshots_tab
from ..snapshots.decodings import Snapshots


class Api:
    def __init__(self, registry: Registry, snapshots: Snapshots) -> None:
        self.registry = registry
        self.snapshots = snapshots

    def _run(self, model: str, text: str) -> Run:
        return new_run(self.registry.entry(model), text)

    def translate(self, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> str:
        """Decode `text` with `model` ("greedy" or "beam" search); returns the output text."""
        run = self._run(model, text)
        decode_to_end(run, strategy, beam_size)
        return run.pipeline.tokenizer.decode(run.session.tokens)

    def attention(self, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> dict:
        """Decode `text` and return every head's attention at every step (the app's JSON export)."""
        run = self._run(model, text)
        decode_to_end(run, strategy, beam_size)
        return attention_record(run.session, run.pipeline.tokenizer, model)

    def heads(self, model: str, text: str) -> dict:
        """Decode `text` greedily; per kind, layer and head: mean entropy, mean weight on specials, alignment."""
        run = self._run(model, text)
        run.session.run()
        return head_summaries(run.session, run.entry.alignment)

    def training(self, model: str, text: str) -> dict:
        """Each snapshot of the model decoding `text` greedily, in training order."""
        return snapshots_tab.record(self.snapshots, model, text)

    def ablate(self, model: str, text: str, heads: list[str]) -> dict:
        """The greedy decoding with `heads` ablated throughout, and per original step what the ablation changed."""
        run = self._run(model, text)
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

    def edit(self, model: str, text: str, step: object, position: object, heads: list[str]) -> dict:
        """Greedy for step - 1 tokens; at `step` the listed cross heads look only at source token `position`
        (1-based, as in /attention's source_tokens); then greedy with no further edit."""
        run = self._run(model, text)
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
