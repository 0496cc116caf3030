"""The page's layout: every component, top to bottom, and the names the events send and update (app.py wires them).

Its components hold no logic: what they do lives in lab/ (lab.actions), and app.py connects the two.
"""

from __future__ import annotations

import gradio as gr

from lab import film_page
from lab.actions import FOCUS_MEAN, Lab
from lab.drawing import READINGS
from lab.examples import examples_for_page, first_example
from lab.page_text import HEADS_NOTE, READINGS_NOTE, TAB_TITLES, TRAINING_NOTE, WORDS_NOTE
from lab.registry import Registry
from lab.session import MAX_BEAM, STRATEGIES, UserState
from lab.views import SCALES

STATE_TTL_S = 3600  # an idle session's decoding is dropped after an hour
PLAY, PAUSE = "▶ Play", "❚❚ Pause"
FRAME_S = 1.2  # seconds per snapshot while the film plays
# What every event sends (Controls' fields, after the state), and what the decoding events update, in these orders.
INPUTS = (
    "model",
    "source",
    "strategy",
    "beam_size",
    "max_len",
    "top_k_shown",
    "scrub",
    "words",
    "hide_specials",
    "scale",
    "focus",
    "reading",
    "snapshot",
)
OUTPUTS = (
    "output",
    "status",
    "scrub",
    "step_button",
    "back_button",
    "now",
    "top_k",
    "cross",
    "encoder",
    "decoder_self",
    "beams",
    "original",
    "compare",
    "heads",
    "effects",
    *film_page.OUTPUTS,
)


class Page:
    """The page's components, laid out top to bottom as they are created; events read and write them by name."""

    def __init__(self, lab: Lab, registry: Registry) -> None:
        gr.Markdown(
            "# Attention Lab\nStep through an encoder–decoder Transformer's decoding and see where every head looks: "
            "encoder self-attention, decoder self-attention and cross-attention."
        )
        if registry.errors:
            gr.Markdown("\n".join(f"**{n} could not be loaded:** {e}" for n, e in registry.errors.items()))
        self.state = gr.State(UserState(), time_to_live=STATE_TTL_S)  # copied fresh into each session
        self._inputs(lab, registry)
        self._step_views(lab)
        self._options(lab)
        self._tabs(lab)
        self._export()

    def _inputs(self, lab: Lab, registry: Registry) -> None:
        """Model, Source, the examples, the buttons and the decoding options."""
        with gr.Row(elem_classes="inputs"):
            self.model = gr.Dropdown(lab.names, value=lab.default, label="Model", scale=1, min_width=140)
            start = first_example(registry, lab.default)
            self.source = gr.Textbox(label="Source", lines=2, max_lines=6, scale=4, min_width=200, value=start)
        rows, labels = examples_for_page(registry)
        if rows:
            gr.Examples(rows, inputs=[self.model, self.source], example_labels=labels, label="Examples")
        with gr.Row(elem_classes="buttons"):
            self.run = gr.Button("Run", variant="primary", min_width=60)
            self.step = gr.Button("Step", min_width=60)
            self.back = gr.Button("Back", min_width=60, interactive=False)
            self.reset = gr.Button("Reset", min_width=60)
        with gr.Accordion("Decoding options", open=False), gr.Row():
            info = "Step decodes greedily, so it is off in beam mode; Run decodes the beams."
            self.strategy = gr.Radio(list(STRATEGIES), value="greedy", label="Strategy", info=info)
            self.beam_size = gr.Slider(1, MAX_BEAM, value=4, step=1, label="Beam size")
            self.max_len = gr.Slider(1, 128, value=64, step=1, label="Max length")
            self.top_k_shown = gr.Slider(1, 20, value=8, step=1, label="Top-k shown")

    def _step_views(self, lab: Lab) -> None:
        """The output, the shown step, what it looked at, its next-token probabilities, and what-if."""
        with gr.Row(elem_classes="outputs"):
            self.output = gr.Textbox(label="Output", interactive=False, scale=1, min_width=200)
            self.original = gr.Textbox(
                label="Before the what-if", interactive=False, visible=False, scale=1, min_width=200
            )
        self.status = gr.Textbox(label="Notice", interactive=False, visible=False)
        self.scrub = gr.Slider(0, 1, value=0, step=1, label="Show step", interactive=False)
        with gr.Row(elem_classes="now"):
            with gr.Column(scale=3, min_width=260):
                self.now = gr.HTML(label="What the model looked at")
                info = "Click a source word above: at this step these cross heads look only at it. Reset undoes it."
                choices = lab.head_choices(lab.default, ("cross",))
                self.edit_heads = gr.Dropdown(
                    choices, value=["cross:*:*"], multiselect=True, label="Heads to edit", info=info
                )
            label = "Next-token probabilities. What if? Click another candidate to force it here and decode on"
            self.top_k = gr.Label(label=label, scale=2, min_width=220, show_heading=False, elem_classes="top-k")
        # Written by a click on a word of the now-view (lab/assets/tile_click.js): hidden by page.css.
        self.word_pick = gr.Textbox(elem_id="word-pick", elem_classes="tile-pick", show_label=False, container=False)

    def _options(self, lab: Lab) -> None:
        """How the views draw the weights: focused head, words or pieces, specials, colour scale."""
        with gr.Row(elem_classes="options"):
            info = "Or click a head in the figure."
            self.focus = gr.Dropdown(lab.focus_choices(lab.default), value=FOCUS_MEAN, label="Focus head", info=info)
            # Written by a click on a tile of an overview (lab/assets/tile_click.js); hidden by page.css.
            self.tile_pick = gr.Textbox(
                elem_id="tile-pick", elem_classes="tile-pick", show_label=False, container=False
            )
            self.words = gr.Checkbox(True, label="Merge pieces into words")
            self.hide_specials = gr.Checkbox(False, label="Hide special tokens (renormalise rows)")
            scales = [(label, key) for key, label in SCALES.items()]
            self.scale = gr.Radio(scales, value="linear", label="Colour scale")
            readings = [(label, key) for key, label in READINGS.items()]
            self.reading = gr.Radio(readings, value="weights", label="Reading")
        gr.Markdown(WORDS_NOTE + "\n\n" + READINGS_NOTE, elem_classes="note")

    def _tabs(self, lab: Lab) -> None:
        """The three kinds of attention (overview and focus each), the heads and their ablation, the beams and the
        comparison after a what-if, ablation or edit."""
        self.tabs = {}
        with gr.Tabs() as self.tab_set:
            for kind in ("cross", "encoder", "decoder_self"):
                with gr.Tab(TAB_TITLES[kind], id=kind) as self.tabs[kind]:
                    setattr(
                        self, kind, gr.Plot(show_label=False, elem_classes="attention-view", elem_id=f"{kind}-view")
                    )
            with gr.Tab(TAB_TITLES["heads"], id="heads") as self.tabs["heads"]:
                gr.Markdown(HEADS_NOTE, elem_classes="note")
                self.heads = gr.Plot(show_label=False, elem_classes="heads-view", elem_id="heads-view")
                with gr.Row(elem_classes="ablate"):
                    self.ablate_heads = gr.Dropdown(
                        lab.head_choices(lab.default),
                        value=[],
                        multiselect=True,
                        label="Heads to ablate",
                        info="Each is removed from the forward pass: its output is zeroed before W_o.",
                        scale=4,
                    )
                    self.ablate = gr.Button("Ablate", min_width=80, scale=1)
                self.effects = gr.Plot(show_label=False, elem_id="effects-view")
            with gr.Tab(TAB_TITLES["training"], id="training") as self.tabs["training"]:
                self._training()
            with gr.Tab(TAB_TITLES["beams"], id="beams") as self.tabs["beams"]:
                headers = ["step", "rank", "hypothesis", "log-prob"]
                self.beams = gr.Dataframe(headers=headers, interactive=False, label="Beam search: the live beams")
            with gr.Tab(TAB_TITLES["compare"], id="compare") as self.tabs["compare"]:
                note = "After a what-if, an ablation or an edit: the cross-attention of the decoding before, beside the new one."
                gr.Markdown(note)
                self.compare = gr.Plot(show_label=False)

    def _training(self) -> None:
        """The model's snapshots on this source: a slider over them with play, the output and cross-attention of the
        chosen one, and loss and alignment against training step."""
        gr.Markdown(TRAINING_NOTE, elem_classes="note")
        with gr.Row(elem_classes="film"):
            self.snapshot = gr.Slider(
                0, 1, value=0, step=1, label="Snapshot", interactive=False, scale=5, elem_id="snapshot"
            )
            self.play = gr.Button(PLAY, min_width=80, scale=1, elem_id="play")
        self.timer = gr.Timer(FRAME_S, active=False)
        self.snapshot_info = gr.Markdown(elem_id="snapshot-info")
        self.snapshot_output = gr.Textbox(label="Output of this snapshot", interactive=False, elem_id="snapshot-output")
        self.snapshot_chart = gr.Plot(show_label=False, elem_id="snapshot-chart")
        self.snapshot_view = gr.Plot(show_label=False, elem_classes="attention-view", elem_id="snapshot-view")

    def _export(self) -> None:
        with gr.Accordion("Export", open=False), gr.Row():
            self.png = gr.Button("Focused head as PNG", min_width=120)
            self.svg = gr.Button("Focused head as SVG", min_width=120)
            self.html = gr.Button("Whole view as HTML (works offline)", min_width=120)
            self.json = gr.Button("Attention as JSON", min_width=120)
        self.export_file = gr.File(label="Download", visible=False)

    def inputs(self) -> list:
        return [self.state, *(getattr(self, name) for name in INPUTS)]

    def outputs(self) -> list:
        return [self.state, *(getattr(self, name.removesuffix("_button")) for name in OUTPUTS)]
