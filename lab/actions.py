"""What each control of the app does, as plain Python over the shared models: tested without a server.

Every action takes the user's state and the page's controls, and returns what the page must change: a dict from an
output's name to its new value, holding only what differs from what the page already shows (the user's state keeps a
key per output). So a Step sends the grown decoder views and the new step's figures, never the encoder view, and a
view that is not on screen is drawn when it is opened. Input that cannot be used raises InputError with a message
for the user; the page shows it and keeps everything it had.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from transformer import DecodingSession

from . import film_page, head_views, lens
from .checks import InputError, as_int, check_source, quoted
from .drawing import KINDS, READINGS, Drawing, Look
from .examples import first_example
from .film import Films
from .record import attention_record, top_k_record
from .registry import Registry
from .session import Run, UserState, decode_to_end
from .units import token_label, word_label

FOCUS_MEAN = "Mean of all heads"
FINISHED = "Finished: use Back, a what-if token, or Reset."
BEAM_MODE = (
    "Beam mode: Step is off, since it decodes greedily. Run decodes with beam search (the Beams tab lists them)."
)
TABS = (*KINDS, "heads", "beams", "compare", "training")


@dataclass
class Controls:
    """What the page's controls say; every event sends all of them."""

    model: str = ""
    text: str = ""
    strategy: str = "greedy"
    beam_size: int = 4
    max_len: int = 64
    top_k: int = 8
    shown: int | None = None  # the "Show step" slider
    words: bool = True
    hide_specials: bool = False
    scale: str = "linear"
    focus: str = FOCUS_MEAN
    reading: str = "weights"  # a key of drawing.READINGS
    snapshot: int | None = None  # the Training tab's slider: which snapshot (None: the first)
    candidate: str | None = None  # the what-if choice: a candidate's label as the page shows it, or a token id

    @property
    def look(self) -> Look:
        """The view options; a focus such as "Layer 2 · Head 3" is (1, 2)."""
        found = re.fullmatch(r"Layer (\d+) · Head (\d+)", str(self.focus))
        focus = (int(found[1]) - 1, int(found[2]) - 1) if found and min(int(found[1]), int(found[2])) > 0 else None
        reading = self.reading if self.reading in READINGS else "weights"
        return Look(bool(self.words), bool(self.hide_specials), str(self.scale), focus, reading)


class Lab:
    """The app's behaviour over the shared models; each method takes the user's state and returns the changes."""

    def __init__(self, registry: Registry) -> None:
        if not registry.models:
            raise SystemExit("no model could be loaded:\n" + "\n".join(registry.errors.values()))
        self.registry = registry
        self.names = list(registry.models)
        self.default = "de-en" if "de-en" in self.names else self.names[0]
        self.films = Films(registry)

    def focus_choices(self, name: str) -> list[str]:
        """The Focus head choices for a model: the mean, then every (layer, head)."""
        cfg = self.registry.models[name].model.config
        n_layers = max(cfg.n_encoder_layers, cfg.n_decoder_layers)
        heads = [f"Layer {lay + 1} · Head {h + 1}" for lay in range(n_layers) for h in range(cfg.n_heads)]
        return [FOCUS_MEAN, *heads]

    def example_for(self, name: str, text: str) -> str:
        """`text` if the model can read it as it is, else the model's first example."""
        try:
            _, notice = check_source(self.registry.models[name], text)
        except InputError:
            notice = "unusable"
        return text if not notice else first_example(self.registry, name)

    # Decoding --------------------------------------------------------------------------------------------------------

    def new_run(self, name: str, text: str, top_k: int = 8, max_len: int | None = None) -> Run:
        pipeline = self.registry.pipeline(name)
        ids, notice = check_source(pipeline, text)
        notice = (notice + " " + self.registry.length_notice(name, text, ids)).strip()
        max_len = int(max_len) if max_len else pipeline.model.config.max_len
        session = DecodingSession(pipeline.model, ids, top_k=int(top_k), max_new_tokens=max_len)
        return Run(name, text, session, top_k=int(top_k), max_len=max_len, notice=notice)

    def max_len(self, c: Controls) -> int | None:
        """The max length asked for; none: the model's, as new_run takes it."""
        pipeline = self.registry.models.get(c.model)
        return int(c.max_len) if c.max_len else pipeline.model.config.max_len if pipeline else None

    def is_current(self, run: Run | None, c: Controls) -> bool:
        """Whether the controls ask for this run (same model, text and options), or for a new one."""
        wanted = (c.model, c.text, int(c.top_k), self.max_len(c))
        return run is not None and (run.model_name, run.text, run.top_k, run.max_len) == wanted

    def current(self, user: UserState, c: Controls) -> Run:
        """The user's run, restarted when the model, the text or the options changed."""
        if not self.is_current(user.run, c):
            user.run = self.new_run(c.model, c.text, c.top_k, self.max_len(c))
        return user.run

    def run(self, user: UserState, c: Controls) -> dict:
        with user.lock:
            run = self.current(user, c)
            if run.session.finished:  # Run continues a stepped decoding; a finished one is decoded afresh
                run.session.reset()
            run.beams = decode_to_end(run, c.strategy, c.beam_size)
            run.original = None
            run.changed()
            return self.render(user, c)

    def step(self, user: UserState, c: Controls) -> dict:
        with user.lock:
            if c.strategy == "beam":
                raise InputError(BEAM_MODE)
            run = self.current(user, c)
            if run.session.finished:
                raise InputError("Decoding has finished: use Back, a what-if token, or Reset.")
            run.session.step()
            run.beams = []
            run.changed()
            return self.render(user, c)

    def back(self, user: UserState, c: Controls) -> dict:
        with user.lock:
            if user.run is None or not user.run.session.steps:
                raise InputError("Nothing to go back to: this is step 0.")
            user.run.session.back()
            user.run.beams = []  # the beam table described the finished decoding, not this one
            user.run.changed()
            return self.render(user, c)

    def reset(self, user: UserState, c: Controls) -> dict:
        with user.lock:
            user.run = None
            return self.render(user, c)

    def force(self, user: UserState, c: Controls) -> dict:
        """What if: take the chosen candidate at the shown step instead, and decode on greedily from there."""
        with user.lock:
            run = user.run
            if run is None or not run.session.steps or c.candidate in (None, ""):
                raise InputError("Decode a step first, then pick another candidate token.")
            step = max(1, min(int(c.shown or 1), len(run.session.steps)))
            tokenizer = self.registry.models[run.model_name].tokenizer
            drawing = Drawing(tokenizer, run.session.src_ids, None, run.session.steps, c.look)
            choices, chosen = dict(drawing.candidates(step)), str(c.candidate)  # a label first: "7" may be a token
            token = choices[chosen] if chosen in choices else int(chosen) if chosen.isdigit() else -1
            if not run.session.can_write(token, step):  # pad, bos, or what the model's rules forbid at this step
                raise InputError("Pick one of the candidate tokens listed for this step.")
            run.original, run.forced_at, run.change = list(run.session.steps), step, "what-if"
            run.session.rewind(step - 1)  # checked first, so a bad choice loses nothing
            run.session.step(force=token)
            run.session.run()
            run.beams = []
            run.changed()
            return self.render(user, c, step)

    def show(self, user: UserState, c: Controls, tab: str | None = None) -> dict:
        """Redraw at the slider's step (with other view options, or another tab opened)."""
        with user.lock:
            if tab not in TABS:
                return self.render(user, c, c.shown)
            if tab == user.tab:  # gradio selects the open tab as the page opens: nothing to draw, and an answer
                return {}  # sent beside the opening Run's could reach the page after it and blank its views
            user.tab = tab  # a tab keeps the step the page shows (the slider may not have caught up with it yet)
            return self.render(user, c, user.shown)

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

    # Testing heads: ablation and editing, on the user's run ---------------------------------------------------------

    def head_choices(self, name: str, kinds=lens.KINDS) -> list[tuple[str, str]]:
        """Choices for a heads control, per kind in `kinds`: all its heads, each layer's heads, then each head."""
        pipeline = self.registry.models.get(name)
        if pipeline is None:
            return []
        cfg = pipeline.model.config
        choices = []
        for kind in kinds:
            title = lens.KIND_NAMES[kind].capitalize()
            choices.append((f"All {lens.KIND_NAMES[kind]}-attention heads", f"{kind}:*:*"))
            layers = range(1, lens.n_layers(cfg, kind) + 1)
            choices += [(f"{title} · Layer {layer} · all heads", f"{kind}:{layer}:*") for layer in layers]
            choices += [(lens.head_label(h), lens.head_name(h)) for h in lens.all_heads(cfg, (kind,))]
        return choices

    def ablate(self, user: UserState, c: Controls, heads: object) -> dict:
        """Decode with `heads` ablated throughout, beside the plain decoding; per step, what the ablation changed."""
        with user.lock:
            plain = self.new_run(c.model, c.text, c.top_k, self.max_len(c))
            session = plain.session
            chosen = lens.parse_heads(heads, session.model.config)
            session.run()
            if not chosen:  # nothing ablated: the plain decoding, as Run gives it
                user.run = plain
                return self.render(user, c)
            ablated = lens.ablated_session(session, chosen)
            original = list(session.steps)
            run = Run(c.model, c.text, ablated, plain.top_k, plain.max_len, plain.notice, original=original)
            run.change, run.forced_at = "ablation", lens.first_difference(original, ablated.steps)
            run.base = session
            run.held = f"Ablated throughout: {lens.describe_heads(chosen, session.model.config)} (Reset to undo)."
            tokens = [s.token for s in original]
            run.effects = lens.ablation_effects(
                session.model, session.src_ids, tokens, chosen, 3, session.max_new_tokens
            )
            user.run = run
            return self.render(user, c)

    def edit(self, user: UserState, c: Controls, picked: object, heads: object) -> dict:
        """At the shown step, point the chosen cross heads at the clicked source word (its pieces share weight 1),
        and decode on greedily with no further edit; the decoding before stays beside it."""
        with user.lock:
            run = user.run
            if run is None or not run.session.steps:
                raise InputError("Decode a step first, then click a source word to edit the attention at that step.")
            session = run.session
            chosen = lens.parse_heads(heads, session.model.config, kinds=("cross",))
            if not chosen:
                raise InputError("Choose the cross-attention heads to edit first (or all of them).")
            positions = [int(p) for p in re.findall(r"\d+", str(picked).split("#")[0])]
            if not positions or max(positions) >= len(session.src_ids):
                raise InputError("Click one of the source words shown for this step.")
            step = max(1, min(int(c.shown or 1), len(session.steps)))
            weights = lens.point_weights(len(session.src_ids), positions)
            edited = lens.edit_session(session, step, weights, chosen)
            tokenizer = self.registry.models[run.model_name].tokenizer
            word = word_label(tokenizer.tokens([session.src_ids[p] for p in positions]))
            config = session.model.config
            held = session.interventions.ablate if session.interventions else None
            run.original, run.forced_at, run.change = list(session.steps), step, "edit"
            run.held = (
                f"Edited: at step {step}, {lens.describe_heads(chosen, config)} looked only at “{word}”"
                + (f"; still ablated: {lens.describe_heads(held, config)}" if held else "")
                + " (Reset to undo)."
            )
            if run.base is None:
                run.base = session
            run.session = edited
            run.effects = None  # the chart described an ablation's steps, not these
            run.changed()
            return self.render(user, c, step)

    def heads_figure(self, run: Run):
        """The summary of the decoding without interventions (after an ablation or edit, the one before it)."""
        session = run.base or run.session
        if not session.steps:
            return None
        summaries = lens.head_summaries(session, self.registry.alignments.get(run.model_name))
        tokens = [s.token for s in session.steps]
        importance = lens.importance(session.model, session.src_ids, tokens, session.max_new_tokens)
        title = "Every head, over this source's decoding without ablations or edits"
        return head_views.summary_figure(summaries, importance, title)

    def effects_figure(self, run: Run, tokenizer):
        if not run.effects:
            return head_views.no_effects()
        return head_views.effects_figure(run.effects, partial(token_label, tokenizer), run.held)

    # What the page shows ---------------------------------------------------------------------------------------------

    def render(self, user: UserState, c: Controls, shown: int | None = None) -> dict:
        """What the page must change to show the user's run at step `shown` (None: the latest)."""
        wanted = self.page(user, c, shown)
        changes = {}
        for name, (key, make) in wanted.items():
            if user.drawn.get(name, ()) != key:
                changes[name] = make()
                user.drawn[name] = key
        return changes

    def page(self, user: UserState, c: Controls, shown: int | None) -> dict:
        """Every output the page shows now, as name -> (key, how to make it); equal keys, equal values."""
        wanted = self.run_page(user, c, shown)
        if user.tab == "training":  # the model's snapshots on the controls' source, whatever the run holds
            wanted.update(film_page.outputs(self.films, c.model, c.text, self.max_len(c), c.snapshot, c.look))
        return wanted

    def run_page(self, user: UserState, c: Controls, shown: int | None) -> dict:
        """The outputs that show the user's run."""
        run, look = user.run, c.look
        beam_note = BEAM_MODE if c.strategy == "beam" else ""
        if run is None:
            blank = {"output": ("", lambda: ""), "status": (beam_note, lambda: beam_note)}
            blank["scrub"] = ((0, 0), lambda: {"value": 0, "maximum": 1, "interactive": False})
            blank["step_button"] = (not beam_note, lambda: not beam_note)
            blank["back_button"] = (False, lambda: False)
            for name in ("now", "top_k", "original", "compare", "beams", "heads", "effects", *self.view_names(user)):
                blank[name] = (None, lambda: None)
            return blank
        session = run.session
        tokenizer = self.registry.models[run.model_name].tokenizer
        shown = user.shown = self.shown_step(session, shown)
        drawing = Drawing.of(session, tokenizer, look)
        status = " ".join(filter(None, [run.notice, run.held, FINISHED if session.finished else "", beam_note]))
        at = (run.serial, run.version, shown)
        n, output = len(session.steps), tokenizer.decode(session.tokens)
        # Step goes on with this run, or starts a new one for an edited source: off only when this one has finished
        can_step = not beam_note and (not session.finished or not self.is_current(run, c))
        wanted = {
            "output": (output, lambda: output),
            "status": (status, lambda: status),
            "scrub": ((shown, n), lambda: {"value": shown, "maximum": max(n, 1), "interactive": n > 0}),
            "step_button": (can_step, lambda: can_step),
            "back_button": (n > 0, lambda: n > 0),
            "now": ((*at, look), lambda: drawing.now(shown)),
            "top_k": ((*at, look.words), lambda: drawing.top_k(shown)),
            "beams": ((run.serial, run.version if run.beams else 0), lambda: self.beam_rows(run, tokenizer)),
        }
        original = tokenizer.decode(s.token for s in run.original) if run.original else None
        before = {"value": original, "label": f"Before the {run.change}"}
        wanted["original"] = ((original, run.change), lambda: before)
        if user.tab == "compare":
            wanted["compare"] = (
                (*at, look),
                lambda: drawing.compare(run.original, run.forced_at) if original else None,
            )
        if user.tab == "heads":
            summarised = run.base or session  # keyed by content: an Ablate decodes the same plain tokens again
            summary_key = (run.model_name, tuple(session.src_ids), tuple(summarised.tokens))
            wanted["heads"] = (summary_key, lambda: self.heads_figure(run))
            wanted["effects"] = ((run.serial, run.version), lambda: self.effects_figure(run, tokenizer))
        if user.tab in KINDS:
            kind = user.tab
            when = (run.serial,) if kind == "encoder" else at
            wanted[kind] = ((*when, look), lambda: drawing.view(kind, shown))
        return wanted

    @staticmethod
    def view_names(user: UserState) -> list[str]:
        return [user.tab] if user.tab in KINDS else []

    @staticmethod
    def shown_step(session: DecodingSession, step: int | None) -> int:
        """The step to show (0 = before any output); None is the latest, and after a finished run the last word
        rather than the end-of-sentence token."""
        n = len(session.steps)
        if step is None:
            ends_with_eos = n > 1 and session.steps[-1].token == session.model.config.eos_id
            return n - 1 if ends_with_eos else n
        return max(0, min(int(step), n))

    @staticmethod
    def beam_rows(run: Run, tokenizer) -> list[list]:
        return [
            [i + 1, rank + 1, tokenizer.decode(tokens), round(score, 3)]
            for i, beams in enumerate(run.beams)
            for rank, (tokens, score) in enumerate(beams)
        ]

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

    def heads(self, model: str, text: str) -> dict:
        """Decode `text` greedily; per kind, layer and head: mean entropy, mean weight on specials, alignment."""
        run = self.new_run(model, text)
        run.session.run()
        return lens.head_summaries(run.session, self.registry.alignments.get(model))

    def training(self, model: str, text: str) -> dict:
        """Each snapshot of the model decoding `text` greedily, in training order."""
        return film_page.record(self.films, model, text)

    def ablate_api(self, model: str, text: str, heads: list[str]) -> dict:
        """The greedy decoding with `heads` ablated throughout, and per original step what the ablation changed."""
        run = self.new_run(model, text)
        session, tokenizer = run.session, self.registry.models[model].tokenizer
        chosen = lens.parse_heads(heads, session.model.config)
        tokens = session.run()
        return {
            "output_text": tokenizer.decode(lens.ablated_session(session, chosen).tokens),
            "steps": [
                {
                    "step": e.step,
                    "token": tokenizer.id_to_token(e.token),
                    "kl": round(e.kl, 6),
                    "top_k": top_k_record(tokenizer, e.top_ids, e.top_probs),
                }
                for e in lens.ablation_effects(
                    session.model, session.src_ids, tokens, chosen, session.top_k, session.max_new_tokens
                )
            ],
        }

    def edit_api(self, model: str, text: str, step: object, position: object, heads: list[str]) -> dict:
        """Greedy for step - 1 tokens; at `step` the listed cross heads look only at source token `position`
        (1-based, as in /attention's source_tokens); then greedy with no further edit."""
        run = self.new_run(model, text)
        session, tokenizer = run.session, self.registry.models[model].tokenizer
        chosen = lens.parse_heads(heads, session.model.config, kinds=("cross",))
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
        edited = lens.edit_session(session, at, lens.point_weights(n_source, [where - 1]), chosen)
        taken = edited.steps[at - 1]
        return {
            "token": tokenizer.id_to_token(taken.token),
            "probability": round(taken.prob, 6),
            "top_k": top_k_record(tokenizer, taken.top_ids, taken.top_probs),
            "output_text": tokenizer.decode(edited.tokens),
        }
