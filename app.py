"""Attention Lab: step through a Transformer's decoding and see every head's attention.

    python app.py                                   # the bundled checkpoints, offline, on 127.0.0.1:7860
    python app.py --model user/repo [--model ...]   # models from the Hugging Face Hub as well

The models are loaded once and shared by every session; each user's decoding lives in gr.State.
"""

from __future__ import annotations

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import argparse  # noqa: E402
import html  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import string  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import unicodedata  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import gradio as gr  # noqa: E402
import torch  # noqa: E402
from huggingface_hub import ModelCard  # noqa: E402

from transformer import CheckpointError, DecodingSession, beam_search  # noqa: E402
from transformer.hub import Seq2SeqPipeline, load_pretrained  # noqa: E402
from transformer.tokenizer import SPECIAL_TOKENS  # noqa: E402
from transformer.viz import View, attention_record, session_figures  # noqa: E402

logger = logging.getLogger("attention_lab")
BUNDLED = Path(__file__).resolve().parent / "checkpoints"
SECTIONS = {"encoder": "Encoder self-attention", "decoder_self": "Decoder self-attention", "cross": "Cross-attention"}
MAX_BEAM = 8
CONCURRENCY = 2  # decoding requests served at once; more would only share the same cores
STATE_TTL_S = 3600  # an idle session's decoding is dropped after an hour
# Gradio keeps every session's component values (our figures among them) until the session is evicted, oldest
# first, beyond this many sessions; its default of 10,000 let memory grow by about 0.25 MB per session here.
SESSION_CAPACITY = 128
LAUNCH_OPTIONS = dict(state_session_capacity=SESSION_CAPACITY)


# Models: loaded once, shared by all sessions ---------------------------------------------------------------------------


@dataclass
class Registry:
    models: dict[str, Seq2SeqPipeline] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # models that failed to load, with the reason


def card_examples(folder: Path, limit: int = 8) -> list[str]:
    """Example inputs from the model card's `widget` metadata (taken from each model's test data)."""
    readme = Path(folder) / "README.md"
    if not readme.is_file():
        return []
    try:
        widget = ModelCard.load(readme).data.to_dict().get("widget") or []
    except Exception as err:  # a card is documentation: a broken one costs the examples, not the model
        logger.warning("%s: examples not read (%s)", readme, err)
        return []
    texts = [item.get("text") for item in widget if isinstance(item, dict)] if isinstance(widget, list) else []
    return [t for t in texts if isinstance(t, str) and t.strip()][:limit]


def load_models(hub_models: list[str], bundled: Path = BUNDLED) -> Registry:
    """The bundled checkpoints (offline) plus any Hub repos; a model that fails to load is reported, not fatal."""
    registry = Registry()
    specs = (
        [(p.name, p) for p in sorted(bundled.iterdir()) if (p / "config.json").is_file()] if bundled.is_dir() else []
    )
    specs += [(repo_id, repo_id) for repo_id in hub_models]
    for name, spec in specs:
        try:
            pipeline = load_pretrained(spec)
        except CheckpointError as err:
            registry.errors[name] = str(err)
            logger.warning("not loaded: %s", err)
            continue
        registry.models[name] = pipeline
        registry.examples[name] = card_examples(pipeline.folder) if pipeline.folder else []
    return registry


# Per-user decoding state ----------------------------------------------------------------------------------------------


@dataclass
class Run:
    model_name: str
    text: str  # the source as the user typed it
    session: DecodingSession
    top_k: int = 8  # the options the run was started with, as the user asked for them
    max_len: int = 64
    notice: str = ""  # e.g. "the source was truncated"
    beams: list[list] = field(default_factory=list)  # beam search history rows, when beam search ran


class UserState:
    """One browser session's decoding. Events of a session may overlap (Step clicked while Run works), so they take
    the lock and read `run` from here rather than from a value captured when the event was queued."""

    def __init__(self) -> None:
        self.run: Run | None = None
        self.lock = threading.Lock()

    def __deepcopy__(self, memo) -> UserState:  # gradio copies the initial value into each new session
        return UserState()


def check_source(pipeline: Seq2SeqPipeline, text: str | None) -> tuple[list[int], str]:
    """Source ids for `text`, and a notice for the user; raises gr.Error with a clear message for unusable input."""
    if text is None or is_blank(text):
        raise gr.Error("Type a source text first: it is empty.")
    tokenizer = pipeline.tokenizer
    unknown = tokenizer.unknown_characters(text)
    notice = ""
    if unknown:
        names = ", ".join(describe_char(c) for c in unknown[:10]) + (" …" if len(unknown) > 10 else "")
        alphabet = known_characters(tokenizer)
        if alphabet:  # a character-level model has no use for <unk>: ask for the text it can read
            raise gr.Error(f"This model only knows {alphabet}; remove {names}.")
        notice = f"Not in the vocabulary (read as <unk>): {names}. "
    ids = tokenizer.encode(text)
    limit = pipeline.max_source_tokens
    if len(ids) > limit:
        ids = ids[: limit - 1] + [tokenizer.eos_id]
        notice += f"The source was {len(tokenizer.encode(text))} tokens; only the first {limit - 1} are used."
    return ids, notice.strip()


def known_characters(tokenizer) -> str:
    """The alphabet of a character-level model, in words where it is a familiar one; "" for other models."""
    if not tokenizer.is_character_level:
        return ""
    chars = sorted(t for t in tokenizer.hf.get_vocab() if t not in SPECIAL_TOKENS)
    if any(len(c) != 1 for c in chars):  # a word-level vocabulary
        return ""
    if set(chars) == set(string.ascii_lowercase + string.digits):
        return "lowercase letters and digits"
    if len(chars) <= 40 and all(c.isalnum() for c in chars):
        return "the characters " + "".join(chars)
    return f"the {len(chars)} characters of its vocabulary"


def as_int(value: object) -> int | None:
    """A whole number the user sent (5, 5.0 or "5"), or None for anything else."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() else None


def quoted(value: object, limit: int = 60) -> str:
    """A value the user sent, for an error message: quoted, cut short, and with markup escaped (toasts render HTML)."""
    text = repr(value)
    return html.escape(text if len(text) <= limit else text[:limit] + "…", quote=False)


def describe_char(char: str) -> str:
    """A character named so that any reader can tell what it is, without printing markup or invisible characters."""
    code = f"U+{ord(char):04X}"
    name = unicodedata.name(char, code).lower()
    return f"'{char}' ({name})" if char.isalnum() else f"{name} ({code})" if name != code.lower() else code


def is_blank(text: str) -> bool:
    """Nothing visible: only white space, control or format characters (such as zero-width spaces)."""
    return all(c.isspace() or unicodedata.category(c) in ("Cc", "Cf", "Zs", "Zl", "Zp") for c in text)


def replay_beam(run: Run, beam_size: int) -> list[list]:
    """Beam search, then the best hypothesis replayed through the session so the attention drawn is its own.

    Returns the beam history (the live beams and their scores at each step) for the beam view.
    """
    session = run.session
    result = beam_search(
        session.model, torch.tensor([session.src_ids]), beam_size, session.max_new_tokens, record_history=True
    )[0]
    session.reset()
    for token in result.tokens + [session.model.config.eos_id]:
        if session.finished:
            break
        session.step(force=token)
    return result.history


# The app: what each control does, as plain Python (tested without a server) ------------------------------------------


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

    def view_choices(self, name: str) -> tuple[list[str], list[str]]:
        cfg = self.registry.models[name].model.config
        layers = ["All layers"] + [f"Layer {i + 1}" for i in range(max(cfg.n_encoder_layers, cfg.n_decoder_layers))]
        heads = ["All heads", "Mean of heads"] + [f"Head {i + 1}" for i in range(cfg.n_heads)]
        return layers, heads

    @staticmethod
    def parse_view(layer: str, heads: str) -> View:
        return View(
            layers="all" if layer.startswith("All") else int(layer.split()[-1]) - 1,
            heads="all"
            if heads.startswith("All")
            else "mean"
            if heads.startswith("Mean")
            else int(heads.split()[-1]) - 1,
        )

    def new_run(self, name: str, text: str, top_k: int = 8, max_len: int | None = None) -> Run:
        if name not in self.registry.models:
            raise gr.Error(f"Unknown model {quoted(name)}; choose one of: {', '.join(self.names)}.")
        pipeline = self.registry.models[name]
        ids, notice = check_source(pipeline, text)
        max_len = int(max_len) if max_len else pipeline.model.config.max_len
        session = DecodingSession(pipeline.model, ids, top_k=int(top_k), max_new_tokens=max_len)
        return Run(name, text, session, top_k=int(top_k), max_len=max_len, notice=notice)

    def current(self, user: UserState, name: str, text: str, top_k: int, max_len: int) -> Run:
        """The user's run, restarted when the model, the text or the options changed."""
        run = user.run
        if (
            run is None
            or run.model_name != name
            or run.text != text
            or run.top_k != int(top_k)
            or run.max_len != int(max_len)
        ):
            user.run = run = self.new_run(name, text, top_k, max_len)
        return run

    def screen(
        self, user: UserState, step: int | None = None, layer: str = "All layers", heads: str = "All heads"
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
        status = run.notice
        if session.finished:
            status = (status + " Finished: use Back, a what-if token, or Reset.").strip()
        candidates = []
        if n:
            record = session.steps[shown - 1]
            candidates = [
                (f"{tokenizer.id_to_token(t)}  ({p:.2f})", str(t)) for t, p in zip(record.top_ids, record.top_probs)
            ]
        return Screen(
            output=tokenizer.decode(session.tokens),
            status=status,
            step=shown,
            n_steps=n,
            figures=session_figures(session, tokenizer, shown - 1, self.parse_view(layer, heads)),
            candidates=candidates,
            beam_rows=[
                [i + 1, rank + 1, tokenizer.decode(tokens), round(score, 3)]
                for i, beams in enumerate(run.beams)
                for rank, (tokens, score) in enumerate(beams)
            ],
        )

    def run(
        self,
        user,
        name,
        text,
        strategy="greedy",
        beam_size=4,
        max_len=64,
        top_k=8,
        layer="All layers",
        heads="All heads",
    ) -> Screen:
        with user.lock:
            run = self.current(user, name, text, top_k, max_len)
            if run.session.finished:  # Run continues a stepped decoding; a finished one is decoded afresh
                run.session.reset()
            run.beams = self.decode(run, strategy, beam_size)
            return self.screen(user, None, layer, heads)

    def step(self, user, name, text, max_len=64, top_k=8, layer="All layers", heads="All heads") -> Screen:
        with user.lock:
            run = self.current(user, name, text, top_k, max_len)
            if run.session.finished:
                raise gr.Error("Decoding has finished: use Back, a what-if token, or Reset.")
            run.session.step()
            run.beams = []
            return self.screen(user, None, layer, heads)

    def back(self, user, layer="All layers", heads="All heads") -> Screen:
        with user.lock:
            if user.run is None or not user.run.session.steps:
                raise gr.Error("Nothing to go back to.")
            user.run.session.back()
            user.run.beams = []  # the beam table described the finished decoding, not this one
            return self.screen(user, None, layer, heads)

    def reset(self, user) -> Screen:
        with user.lock:
            user.run = None
            return Screen()

    def force(self, user, shown_step, candidate, layer="All layers", heads="All heads") -> Screen:
        """What if: take `candidate` at the shown step instead, and decode on greedily from there."""
        with user.lock:
            run = user.run
            if run is None or not run.session.steps or candidate in (None, ""):
                raise gr.Error("Decode a step first, then pick another candidate token.")
            step = max(1, min(int(shown_step or 1), len(run.session.steps)))
            cfg = run.session.model.config
            token = int(candidate) if str(candidate).isdigit() else -1
            if not 0 <= token < cfg.tgt_vocab_size or token in (cfg.pad_id, cfg.bos_id):
                raise gr.Error("Pick one of the candidate tokens listed for this step.")
            run.session.rewind(step - 1)  # checked first, so a bad choice loses nothing
            run.session.step(force=token)
            run.session.run()
            run.beams = []
            return self.screen(user, step, layer, heads)

    def show(self, user, shown_step, layer, heads) -> Screen:
        with user.lock:
            return self.screen(user, shown_step, layer, heads)

    def export(self, user) -> str:
        with user.lock:
            run = user.run
            if run is None or not run.session.steps:
                raise gr.Error("Nothing to export yet: Run or Step first.")
            record = attention_record(run.session, self.registry.models[run.model_name].tokenizer, run.model_name)
        path = Path(tempfile.mkdtemp(prefix="attention-")) / "attention.json"
        path.write_text(json.dumps(record), encoding="utf-8")
        return str(path)

    @staticmethod
    def decode(run: Run, strategy: str, beam_size: int) -> list[list]:
        """Decode the run to the end; returns the beam history (empty for greedy)."""
        if strategy not in ("greedy", "beam"):
            raise gr.Error(f'Strategy must be "greedy" or "beam" (got {quoted(strategy)}).')
        if strategy == "beam":
            size = as_int(beam_size)
            if size is None or not 1 <= size <= MAX_BEAM:
                raise gr.Error(f"Beam size must be between 1 and {MAX_BEAM} (got {quoted(beam_size)}).")
            return replay_beam(run, size)
        run.session.run()
        return []

    # The documented API (gradio_client); typed, so gr.api describes it.

    def translate(self, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> str:
        """Decode `text` with `model` ("greedy" or "beam" search); returns the output text."""
        run = self.new_run(model, text)
        self.decode(run, strategy, beam_size)
        return self.registry.models[model].tokenizer.decode(run.session.tokens)

    def attention(self, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> dict:
        """Decode `text` and return every head's attention at every step (the app's JSON export)."""
        run = self.new_run(model, text)
        self.decode(run, strategy, beam_size)
        return attention_record(run.session, self.registry.models[model].tokenizer, model)


# The page: layout and wiring only ------------------------------------------------------------------------------------


def build_demo(registry: Registry) -> gr.Blocks:
    lab = Lab(registry)
    layers, heads = lab.view_choices(lab.default)

    def outputs_of(user: UserState, screen: Screen, with_encoder: bool = True) -> tuple:
        figures = screen.figures
        candidates = screen.candidates
        return (
            user,
            screen.output,
            gr.update(value=screen.status, visible=bool(screen.status)),
            gr.update(value=screen.step, maximum=max(screen.n_steps, 1), interactive=screen.n_steps > 1),
            figures.get("spotlight"),
            figures.get("top_k"),
            gr.update(choices=candidates, value=candidates[1][1] if len(candidates) > 1 else None),
            figures.get("encoder") if with_encoder else gr.skip(),
            figures.get("decoder_self"),
            figures.get("cross"),
            gr.update(value=screen.beam_rows or None),
        )

    def on_run(user, *args):
        return outputs_of(user, lab.run(user, *args))

    def on_step(user, name, *args):
        before = user.run
        screen = lab.step(user, name, *args)
        return outputs_of(user, screen, with_encoder=user.run is not before)

    def on_back(user, *args):
        return outputs_of(user, lab.back(user, *args), with_encoder=False)

    def on_reset(user):
        return outputs_of(user, lab.reset(user))

    def on_force(user, *args):
        return outputs_of(user, lab.force(user, *args), with_encoder=False)

    def on_view(user, *args):
        return outputs_of(user, lab.show(user, *args))

    def on_scrub(user, *args):
        return outputs_of(user, lab.show(user, *args), with_encoder=False)

    def on_model(user, name):
        layer_choices, head_choices = lab.view_choices(name)
        return (
            *outputs_of(user, lab.reset(user)),
            gr.update(choices=layer_choices, value=layer_choices[0]),
            gr.update(choices=head_choices, value=head_choices[0]),
        )

    with gr.Blocks(title="Attention Lab") as demo:
        gr.Markdown(
            "# Attention Lab\nStep through an encoder–decoder Transformer's decoding and see every head's "
            "attention: encoder self-attention, decoder self-attention and cross-attention."
        )
        if registry.errors:
            gr.Markdown("\n".join(f"**{n} could not be loaded:** {e}" for n, e in registry.errors.items()))
        state = gr.State(UserState, time_to_live=STATE_TTL_S)
        with gr.Row():
            model = gr.Dropdown(lab.names, value=lab.default, label="Model", scale=1)
            source = gr.Textbox(
                label="Source", lines=2, max_lines=6, scale=4, value=(registry.examples.get(lab.default) or [""])[0]
            )
        with gr.Accordion("Decoding options", open=False):
            with gr.Row():
                strategy = gr.Radio(["greedy", "beam"], value="greedy", label="Strategy")
                beam_size = gr.Slider(1, MAX_BEAM, value=4, step=1, label="Beam size")
                max_len = gr.Slider(1, 128, value=64, step=1, label="Max length")
                top_k = gr.Slider(1, 20, value=8, step=1, label="Top-k shown")
        with gr.Row():
            run_btn = gr.Button("Run", variant="primary")
            step_btn = gr.Button("Step")
            back_btn = gr.Button("Back")
            reset_btn = gr.Button("Reset")
        output = gr.Textbox(label="Output", interactive=False)
        status = gr.Textbox(label="Notice", interactive=False, visible=False)
        scrub = gr.Slider(0, 1, value=0, step=1, label="Show step", interactive=False)
        with gr.Row():
            spotlight = gr.Plot(label="Cross-attention at this step", scale=3)
            top_k_plot = gr.Plot(label="Next-token probabilities", scale=2)
        with gr.Row():
            what_if = gr.Dropdown([], label="What if? Pick another candidate for this step", scale=3)
            force_btn = gr.Button("Force it and decode on", scale=1)
        with gr.Row():
            layer_view = gr.Dropdown(layers, value=layers[0], label="Layers")
            head_view = gr.Dropdown(heads, value=heads[0], label="Heads")
        gr.Markdown(
            f"## {SECTIONS['cross']}\nRows are decoding steps (the token each wrote), columns the source; "
            "the current step is outlined."
        )
        cross_plot = gr.Plot(show_label=False)
        gr.Markdown(f"## {SECTIONS['encoder']}")
        encoder_plot = gr.Plot(show_label=False)
        gr.Markdown(f"## {SECTIONS['decoder_self']}\nEach step attends to the decoder inputs so far (causal).")
        decoder_plot = gr.Plot(show_label=False)
        with gr.Accordion("Beam search: the beams and their scores at each step", open=False):
            beam_table = gr.Dataframe(headers=["step", "rank", "hypothesis", "log-prob"], interactive=False)
        with gr.Accordion("Export", open=False):
            export_btn = gr.Button("Export attention as JSON")
            export_file = gr.File(label="attention.json")
            gr.Markdown("Each figure's toolbar saves it as PNG; the JSON holds every head's weights at every step.")
        if any(registry.examples.values()):
            gr.Examples(
                [[n, t] for n, texts in registry.examples.items() for t in texts],
                inputs=[model, source],
                label="Examples from the test data",
            )

        outputs = [
            state,
            output,
            status,
            scrub,
            spotlight,
            top_k_plot,
            what_if,
            encoder_plot,
            decoder_plot,
            cross_plot,
            beam_table,
        ]
        view = [layer_view, head_view]
        # The buttons' endpoints stay out of the API docs, but benchmarks and tests can drive them by name.
        # Every event that decodes or draws shares one queue slot group: CONCURRENCY of them run at once, app-wide.
        shared = dict(concurrency_id="decode", concurrency_limit=CONCURRENCY)
        hidden = dict(api_visibility="undocumented", **shared)
        private = dict(api_visibility="private", **shared)
        run_btn.click(
            on_run,
            [state, model, source, strategy, beam_size, max_len, top_k, *view],
            outputs,
            api_name="ui_run",
            **hidden,
        )
        step_btn.click(on_step, [state, model, source, max_len, top_k, *view], outputs, api_name="ui_step", **hidden)
        back_btn.click(on_back, [state, *view], outputs, api_name="ui_back", **hidden)
        reset_btn.click(on_reset, [state], outputs, api_name="ui_reset", **hidden)
        force_btn.click(on_force, [state, scrub, what_if, *view], outputs, **private)
        scrub.release(on_scrub, [state, scrub, *view], outputs, **private)
        layer_view.change(on_view, [state, scrub, *view], outputs, **private)
        head_view.change(on_view, [state, scrub, *view], outputs, **private)
        model.change(on_model, [state, model], [*outputs, *view], **private)
        export_btn.click(lab.export, [state], [export_file], **private)
        gr.api(lab.translate, api_name="translate", **shared)
        gr.api(lab.attention, api_name="attention", **shared)
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=64)
    return demo


def available_cores(cpu_max: Path = Path("/sys/fs/cgroup/cpu.max")) -> int:
    """The CPUs this process may use: its affinity mask, capped by a cgroup CPU quota (how containers such as Spaces
    are limited, while os.cpu_count() reports the whole host)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        quota, period = cpu_max.read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(quota) // int(period)))
    except (OSError, ValueError):
        pass  # no cgroup v2 quota to read
    return cores


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Attention Lab: see inside an encoder-decoder Transformer.")
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="USER/REPO",
        help="also load this Hugging Face Hub model (repeatable)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    # Each of the CONCURRENCY requests gets its share of the cores (1 thread each on a 2-core Space).
    torch.set_num_threads(max(1, available_cores() // CONCURRENCY))
    registry = load_models(args.model)
    demo = build_demo(registry)
    demo.launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"), **LAUNCH_OPTIONS)


if __name__ == "__main__":
    main()
