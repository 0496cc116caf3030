"""What each control of the app does, as plain Python over the shared models: tested without a server.

Every action takes the user's state and returns a Screen, what the user sees after it. Input that cannot be used
raises InputError with a message for the user; the page shows it, and nothing the user had is lost.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from transformer import DecodingSession

from .checks import InputError, check_source, quoted
from .record import attention_record
from .registry import Registry
from .session import Run, UserState, decode_to_end
from .views import View, session_figures

ALL_LAYERS, ALL_HEADS, MEAN_OF_HEADS = "All layers", "All heads", "Mean of heads"
FINISHED = "Finished: use Back, a what-if token, or Reset."


@dataclass
class Screen:
    """What the user sees after an action."""

    output: str = ""
    status: str = ""
    step: int = 0  # the step shown (1-based; 0 before any)
    n_steps: int = 0
    figures: dict = field(default_factory=dict)  # encoder, decoder_self, cross, spotlight, top_k
    candidates: list[tuple[str, str]] = field(default_factory=list)  # (label, token id) at the shown step
    beam_rows: list[list] = field(default_factory=list)  # [step, rank, hypothesis, log-prob]


class Lab:
    """The app's behaviour over the shared models; each method takes the user's state and returns a Screen."""

    def __init__(self, registry: Registry) -> None:
        if not registry.models:
            raise SystemExit("no model could be loaded:\n" + "\n".join(registry.errors.values()))
        self.registry = registry
        self.names = list(registry.models)
        self.default = "de-en" if "de-en" in self.names else self.names[0]

    # Views -----------------------------------------------------------------------------------------------------------

    def view_choices(self, name: str) -> tuple[list[str], list[str]]:
        """The layer and head choices for a model, as the dropdowns list them."""
        cfg = self.registry.models[name].model.config
        n_layers = max(cfg.n_encoder_layers, cfg.n_decoder_layers)
        layers = [ALL_LAYERS] + [f"Layer {i + 1}" for i in range(n_layers)]
        heads = [ALL_HEADS, MEAN_OF_HEADS] + [f"Head {i + 1}" for i in range(cfg.n_heads)]
        return layers, heads

    @staticmethod
    def parse_view(layer: str, heads: str) -> View:
        """The dropdowns' labels as a View: "Layer 2" is layer index 1, "Mean of heads" is "mean"."""
        if heads.startswith("All"):
            head_choice: int | str = "all"
        elif heads.startswith("Mean"):
            head_choice = "mean"
        else:
            head_choice = int(heads.split()[-1]) - 1
        return View(layers="all" if layer.startswith("All") else int(layer.split()[-1]) - 1, heads=head_choice)

    def screen(
        self, user: UserState, step: int | None = None, layer: str = ALL_LAYERS, heads: str = ALL_HEADS
    ) -> Screen:
        """The user's run drawn at `step` (1-based; None = the latest)."""
        run = user.run
        if run is None:
            return Screen()
        tokenizer, session = self.registry.models[run.model_name].tokenizer, run.session
        n = len(session.steps)
        if step is None:  # the latest step; after a finished run, the last word rather than the end-of-sentence token
            ends_with_eos = n > 1 and session.steps[-1].token == session.model.config.eos_id
            shown = n - 1 if ends_with_eos else n
        else:
            shown = max(1, min(int(step), n))
        status = (run.notice + " " + FINISHED).strip() if session.finished else run.notice
        candidates = []
        if n:
            record = session.steps[shown - 1]
            candidates = [
                (f"{tokenizer.id_to_token(t)}  ({p:.2f})", str(t)) for t, p in zip(record.top_ids, record.top_probs)
            ]
        beam_rows = [
            [i + 1, rank + 1, tokenizer.decode(tokens), round(score, 3)]
            for i, beams in enumerate(run.beams)
            for rank, (tokens, score) in enumerate(beams)
        ]
        figures = session_figures(session, tokenizer, shown - 1, self.parse_view(layer, heads))
        return Screen(
            output=tokenizer.decode(session.tokens),
            status=status,
            step=shown,
            n_steps=n,
            figures=figures,
            candidates=candidates,
            beam_rows=beam_rows,
        )

    # Decoding --------------------------------------------------------------------------------------------------------

    def new_run(self, name: str, text: str, top_k: int = 8, max_len: int | None = None) -> Run:
        if name not in self.registry.models:
            raise InputError(f"Unknown model {quoted(name)}; choose one of: {', '.join(self.names)}.")
        pipeline = self.registry.models[name]
        ids, notice = check_source(pipeline, text)
        max_len = int(max_len) if max_len else pipeline.model.config.max_len
        session = DecodingSession(pipeline.model, ids, top_k=int(top_k), max_new_tokens=max_len)
        return Run(name, text, session, top_k=int(top_k), max_len=max_len, notice=notice)

    def current(self, user: UserState, name: str, text: str, top_k: int, max_len: int) -> Run:
        """The user's run, restarted when the model, the text or the options changed."""
        run = user.run
        if run is None or (run.model_name, run.text, run.top_k, run.max_len) != (name, text, int(top_k), int(max_len)):
            user.run = run = self.new_run(name, text, top_k, max_len)
        return run

    def run(
        self, user, name, text, strategy="greedy", beam_size=4, max_len=64, top_k=8, layer=ALL_LAYERS, heads=ALL_HEADS
    ) -> Screen:
        with user.lock:
            run = self.current(user, name, text, top_k, max_len)
            if run.session.finished:  # Run continues a stepped decoding; a finished one is decoded afresh
                run.session.reset()
            run.beams = decode_to_end(run, strategy, beam_size)
            return self.screen(user, None, layer, heads)

    def step(self, user, name, text, max_len=64, top_k=8, layer=ALL_LAYERS, heads=ALL_HEADS) -> Screen:
        with user.lock:
            run = self.current(user, name, text, top_k, max_len)
            if run.session.finished:
                raise InputError("Decoding has finished: use Back, a what-if token, or Reset.")
            run.session.step()
            run.beams = []
            return self.screen(user, None, layer, heads)

    def back(self, user, layer=ALL_LAYERS, heads=ALL_HEADS) -> Screen:
        with user.lock:
            if user.run is None or not user.run.session.steps:
                raise InputError("Nothing to go back to.")
            user.run.session.back()
            user.run.beams = []  # the beam table described the finished decoding, not this one
            return self.screen(user, None, layer, heads)

    def reset(self, user) -> Screen:
        with user.lock:
            user.run = None
            return Screen()

    def force(self, user, shown_step, candidate, layer=ALL_LAYERS, heads=ALL_HEADS) -> Screen:
        """What if: take `candidate` at the shown step instead, and decode on greedily from there."""
        with user.lock:
            run = user.run
            if run is None or not run.session.steps or candidate in (None, ""):
                raise InputError("Decode a step first, then pick another candidate token.")
            step = max(1, min(int(shown_step or 1), len(run.session.steps)))
            cfg = run.session.model.config
            token = int(candidate) if str(candidate).isdigit() else -1
            if not 0 <= token < cfg.tgt_vocab_size or token in (cfg.pad_id, cfg.bos_id):
                raise InputError("Pick one of the candidate tokens listed for this step.")
            run.session.rewind(step - 1)  # checked first, so a bad choice loses nothing
            run.session.step(force=token)
            run.session.run()
            run.beams = []
            return self.screen(user, step, layer, heads)

    def show(self, user, shown_step, layer, heads) -> Screen:
        with user.lock:
            return self.screen(user, shown_step, layer, heads)

    def export(self, user) -> str:
        """The run's attention record written to a JSON file; returns its path."""
        with user.lock:
            run = user.run
            if run is None or not run.session.steps:
                raise InputError("Nothing to export yet: Run or Step first.")
            record = attention_record(run.session, self.registry.models[run.model_name].tokenizer, run.model_name)
        path = Path(tempfile.mkdtemp(prefix="attention-")) / "attention.json"
        path.write_text(json.dumps(record), encoding="utf-8")
        return str(path)

    # The documented API (gradio_client) ------------------------------------------------------------------------------

    def translate(self, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> str:
        """Decode `text` with `model` ("greedy" or "beam" search); returns the output text."""
        run = self.new_run(model, text)
        decode_to_end(run, strategy, beam_size)
        return self.registry.models[model].tokenizer.decode(run.session.tokens)

    def attention(self, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> dict:
        """Decode `text` and return every head's attention at every step (the app's JSON export)."""
        run = self.new_run(model, text)
        decode_to_end(run, strategy, beam_size)
        return attention_record(run.session, self.registry.models[model].tokenizer, model)
