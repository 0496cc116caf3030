"""Attention Lab: step through a Transformer's decoding and see every head's attention.

    python app.py                                   # the bundled checkpoints, offline, on 127.0.0.1:7860
    python app.py --model user/repo [--model ...]   # models from the Hugging Face Hub as well

This file is the page: its layout and what each event calls. What the controls do lives in lab/ (lab.actions), and
the model code in transformer/. The models are loaded once and shared by every session; each user's decoding lives
in gr.State.
"""

from __future__ import annotations

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import argparse
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import gradio as gr
import torch

from lab.actions import Lab, Screen
from lab.checks import InputError
from lab.registry import Registry, load_models
from lab.serving import available_cores
from lab.session import MAX_BEAM, STRATEGIES, UserState

SECTIONS = {"encoder": "Encoder self-attention", "decoder_self": "Decoder self-attention", "cross": "Cross-attention"}
CONCURRENCY = 2  # decoding requests served at once; more would only share the same cores
STATE_TTL_S = 3600  # an idle session's decoding is dropped after an hour
# Gradio keeps every session's component values (our figures among them) until the session is evicted, oldest
# first, beyond this many sessions; its default of 10,000 let memory grow by about 0.25 MB per session here.
SESSION_CAPACITY = 128
LAUNCH_OPTIONS = {"state_session_capacity": SESSION_CAPACITY}
# What every decoding event updates, in this order (the ui_* endpoints answer with these values).
OUTPUTS = (
    "state",
    "output",
    "status",
    "scrub",
    "spotlight",
    "top_k",
    "what_if",
    "encoder",
    "decoder_self",
    "cross",
    "beam_table",
)


@contextmanager
def shown_to_user() -> Iterator[None]:
    """An InputError reaches the page (or the API client) as a gr.Error with its message as it is."""
    try:
        yield
    except InputError as err:
        raise gr.Error(str(err)) from None


def updates(user: UserState, screen: Screen, with_encoder: bool = True) -> tuple:
    """A Screen as the values of OUTPUTS. The encoder view only changes with a new source."""
    figures, candidates = screen.figures, screen.candidates
    values = {
        "state": user,
        "output": screen.output,
        "status": gr.update(value=screen.status, visible=bool(screen.status)),
        "scrub": gr.update(value=screen.step, maximum=max(screen.n_steps, 1), interactive=screen.n_steps > 1),
        "spotlight": figures.get("spotlight"),
        "top_k": figures.get("top_k"),
        "what_if": gr.update(choices=candidates, value=candidates[1][1] if len(candidates) > 1 else None),
        "encoder": figures.get("encoder") if with_encoder else gr.skip(),
        "decoder_self": figures.get("decoder_self"),
        "cross": figures.get("cross"),
        "beam_table": gr.update(value=screen.beam_rows or None),
    }
    return tuple(values[name] for name in OUTPUTS)


class Events:
    """What the page's events call: the Lab's actions, with their screens as the page's updates."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab

    def run(self, user, *args):
        with shown_to_user():
            return updates(user, self.lab.run(user, *args))

    def step(self, user, *args):
        before = user.run
        with shown_to_user():
            screen = self.lab.step(user, *args)
        return updates(user, screen, with_encoder=user.run is not before)

    def back(self, user, *args):
        with shown_to_user():
            return updates(user, self.lab.back(user, *args), with_encoder=False)

    def reset(self, user):
        return updates(user, self.lab.reset(user))

    def force(self, user, *args):
        with shown_to_user():
            return updates(user, self.lab.force(user, *args), with_encoder=False)

    def view(self, user, *args):
        return updates(user, self.lab.show(user, *args))

    def scrub(self, user, *args):
        return updates(user, self.lab.show(user, *args), with_encoder=False)

    def model(self, user, name):
        layers, heads = self.lab.view_choices(name)
        new_views = gr.update(choices=layers, value=layers[0]), gr.update(choices=heads, value=heads[0])
        return (*updates(user, self.lab.reset(user)), *new_views)

    def export(self, user):
        with shown_to_user():
            return self.lab.export(user)

    # The documented API (gradio_client); typed, so gr.api describes it.

    def translate(self, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> str:
        """Decode `text` with `model` ("greedy" or "beam" search); returns the output text."""
        with shown_to_user():
            return self.lab.translate(model, text, strategy, beam_size)

    def attention(self, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> dict:
        """Decode `text` and return every head's attention at every step (the app's JSON export)."""
        with shown_to_user():
            return self.lab.attention(model, text, strategy, beam_size)


# The page ------------------------------------------------------------------------------------------------------------


class Page:
    """The page's components, laid out top to bottom as they are created; events read and write them by name."""

    def __init__(self, lab: Lab, registry: Registry) -> None:
        gr.Markdown(
            "# Attention Lab\nStep through an encoder–decoder Transformer's decoding and see every head's "
            "attention: encoder self-attention, decoder self-attention and cross-attention."
        )
        if registry.errors:
            gr.Markdown("\n".join(f"**{n} could not be loaded:** {e}" for n, e in registry.errors.items()))
        self.state = gr.State(UserState, time_to_live=STATE_TTL_S)
        self._inputs(lab, registry)
        self._step_views(lab)
        self._sections()
        if any(registry.examples.values()):
            examples = [[n, t] for n, texts in registry.examples.items() for t in texts]
            gr.Examples(examples, inputs=[self.model, self.source], label="Examples from the test data")

    def _inputs(self, lab: Lab, registry: Registry) -> None:
        """Model, Source, the decoding options and the buttons."""
        with gr.Row():
            self.model = gr.Dropdown(lab.names, value=lab.default, label="Model", scale=1)
            first_example = (registry.examples.get(lab.default) or [""])[0]
            self.source = gr.Textbox(label="Source", lines=2, max_lines=6, scale=4, value=first_example)
        with gr.Accordion("Decoding options", open=False), gr.Row():
            self.strategy = gr.Radio(list(STRATEGIES), value="greedy", label="Strategy")
            self.beam_size = gr.Slider(1, MAX_BEAM, value=4, step=1, label="Beam size")
            self.max_len = gr.Slider(1, 128, value=64, step=1, label="Max length")
            self.top_k_shown = gr.Slider(1, 20, value=8, step=1, label="Top-k shown")
        with gr.Row():
            self.run = gr.Button("Run", variant="primary")
            self.step = gr.Button("Step")
            self.back = gr.Button("Back")
            self.reset = gr.Button("Reset")

    def _step_views(self, lab: Lab) -> None:
        """The output, the shown step, its cross-attention and next-token probabilities, what-if, and the views."""
        self.output = gr.Textbox(label="Output", interactive=False)
        self.status = gr.Textbox(label="Notice", interactive=False, visible=False)
        self.scrub = gr.Slider(0, 1, value=0, step=1, label="Show step", interactive=False)
        with gr.Row():
            self.spotlight = gr.Plot(label="Cross-attention at this step", scale=3)
            self.top_k = gr.Plot(label="Next-token probabilities", scale=2)
        with gr.Row():
            self.what_if = gr.Dropdown([], label="What if? Pick another candidate for this step", scale=3)
            self.force = gr.Button("Force it and decode on", scale=1)
        layers, heads = lab.view_choices(lab.default)
        with gr.Row():
            self.layer_view = gr.Dropdown(layers, value=layers[0], label="Layers")
            self.head_view = gr.Dropdown(heads, value=heads[0], label="Heads")

    def _sections(self) -> None:
        """The three headed sections of heatmaps, then the beam table and the export."""
        gr.Markdown(
            f"## {SECTIONS['cross']}\nRows are decoding steps (the token each wrote), columns the source; "
            "the current step is outlined."
        )
        self.cross = gr.Plot(show_label=False)
        gr.Markdown(f"## {SECTIONS['encoder']}")
        self.encoder = gr.Plot(show_label=False)
        gr.Markdown(f"## {SECTIONS['decoder_self']}\nEach step attends to the decoder inputs so far (causal).")
        self.decoder_self = gr.Plot(show_label=False)
        with gr.Accordion("Beam search: the beams and their scores at each step", open=False):
            self.beam_table = gr.Dataframe(headers=["step", "rank", "hypothesis", "log-prob"], interactive=False)
        with gr.Accordion("Export", open=False):
            self.export = gr.Button("Export attention as JSON")
            self.export_file = gr.File(label="attention.json")
            gr.Markdown("Each figure's toolbar saves it as PNG; the JSON holds every head's weights at every step.")

    def outputs(self) -> list:
        """The components of OUTPUTS, in its order."""
        return [getattr(self, name) for name in OUTPUTS]


def wire(page: Page, events: Events) -> None:
    """Every event that decodes or draws shares one queue group: CONCURRENCY of them run at once, app-wide. The
    buttons' endpoints stay out of the API docs, but benchmarks and tests can drive them by name."""
    shared = {"concurrency_id": "decode", "concurrency_limit": CONCURRENCY}
    hidden = {"api_visibility": "undocumented", **shared}
    private = {"api_visibility": "private", **shared}
    p, outputs, view = page, page.outputs(), [page.layer_view, page.head_view]
    run_inputs = [p.state, p.model, p.source, p.strategy, p.beam_size, p.max_len, p.top_k_shown, *view]
    p.run.click(events.run, run_inputs, outputs, api_name="ui_run", **hidden)
    step_inputs = [p.state, p.model, p.source, p.max_len, p.top_k_shown, *view]
    p.step.click(events.step, step_inputs, outputs, api_name="ui_step", **hidden)
    p.back.click(events.back, [p.state, *view], outputs, api_name="ui_back", **hidden)
    p.reset.click(events.reset, [p.state], outputs, api_name="ui_reset", **hidden)
    p.force.click(events.force, [p.state, p.scrub, p.what_if, *view], outputs, **private)
    p.scrub.release(events.scrub, [p.state, p.scrub, *view], outputs, **private)
    p.layer_view.change(events.view, [p.state, p.scrub, *view], outputs, **private)
    p.head_view.change(events.view, [p.state, p.scrub, *view], outputs, **private)
    p.model.change(events.model, [p.state, p.model], [*outputs, *view], **private)
    p.export.click(events.export, [p.state], [p.export_file], **private)
    gr.api(events.translate, api_name="translate", **shared)
    gr.api(events.attention, api_name="attention", **shared)


def build_demo(registry: Registry) -> gr.Blocks:
    lab = Lab(registry)
    with gr.Blocks(title="Attention Lab") as demo:
        wire(Page(lab, registry), Events(lab))
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=64)
    return demo


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
    demo = build_demo(load_models(args.model))
    demo.launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"), **LAUNCH_OPTIONS)


if __name__ == "__main__":
    main()
