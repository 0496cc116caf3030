"""The page's layout: every component, top to bottom (app.py wires them).

Each component is an attribute named as the Controls field it sends (lab.controls) or the output it shows
(lab.page.outputs and the tabs table, lab.page.tabs): the events reach them by those names alone. The tabs are laid
out from the table; a tab with controls of its own (Heads, Training) has a method here that lays it out.

The step's views and the attention tabs are drawn by the page's own code (lab/assets/page.js and views.js) into
containers laid out here, from the decoding the server sends into a hidden JSON component.
"""

from __future__ import annotations

import gradio as gr
import plotly.graph_objects as go

from lab.attention.looks import READINGS, SCALES, focus_choices
from lab.attention.text import READINGS_NOTE, WORDS_NOTE
from lab.controls import CONTROLS, FOCUS_MEAN
from lab.decoding.run import MAX_BEAM, STRATEGIES, UserState
from lab.heads.naming import head_choices
from lab.models.examples import examples_for_page, first_example
from lab.models.registry import Registry
from lab.page.outputs import MARKDOWN, MESSAGE, PLOT, TABLE, Output
from lab.page.tabs import OUTPUTS, SLOW_OUTPUTS, TABS, Tab
from lab.why.attribution import METHODS

STATE_TTL_S = 3600  # an idle session's decoding is dropped after an hour
CANDIDATES_LABEL = "Next-token probabilities. What if? Click another candidate to force it here and decode on"
PLAY, PAUSE = "▶ Play", "❚❚ Pause"
FRAME_S = 1.2  # seconds per snapshot while playing
SLOW_CLASS = "lab-slow"  # a part of the page filled after the click that asked for it (it says so meanwhile)


class Page:
    """The page's components, laid out top to bottom as they are created; events read and write them by name."""

    def __init__(self, registry: Registry, default: str) -> None:
        gr.Markdown(
            "# Attention Lab\nStep through an encoder–decoder Transformer's decoding and see where every head looks: "
            "encoder self-attention, decoder self-attention and cross-attention."
        )
        if registry.errors:
            gr.Markdown("\n".join(f"**{n} could not be loaded:** {e}" for n, e in registry.errors.items()))
        self.state = gr.State(UserState(), time_to_live=STATE_TTL_S)  # copied fresh into each session
        # The decoding's attention, for the page's drawing code; never shown as it is.
        self.decoding = gr.JSON(visible=False)
        self.to_fill = gr.Textbox(visible=False)  # changed when slow outputs wait to be filled (app.py)
        self.to_step = gr.Textbox(visible=False)  # changed when there is a next step to decode ahead (app.py)
        # A figure drawn as the page loads, so that gradio's plotly.js is there for the page's own drawing.
        self.plotly = gr.Plot(go.Figure(layout={"height": 20, "width": 20}), visible="hidden", show_label=False)
        config = registry.entry(default).pipeline.model.config
        self._inputs(registry, default)
        self._step_views(config)
        self._options(config)
        self._tabs(config)
        self._export()

    def _inputs(self, registry: Registry, default: str) -> None:
        """Model, Source, the examples, the buttons and the decoding options."""
        with gr.Row(elem_classes="inputs"):
            self.model = gr.Dropdown(registry.names, value=default, label="Model", scale=1, min_width=140)
            start = first_example(registry, default)
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
            self.top_k = gr.Slider(1, 20, value=8, step=1, label="Top-k shown")

    def _step_views(self, config) -> None:
        """The output, the shown step, what it looked at, its next-token probabilities, and what-if."""
        with gr.Row(elem_classes="outputs"):
            self.output = gr.Textbox(label="Output", interactive=False, scale=1, min_width=200)
            self.original = gr.Textbox(
                label="Before the what-if", interactive=False, visible=False, scale=1, min_width=200
            )
        self.status = gr.Textbox(label="Notice", interactive=False, visible=False)
        self.shown = gr.Slider(0, 1, value=0, step=1, label="Show step", interactive=False, elem_id="shown")
        with gr.Row(elem_classes="now"):
            with gr.Column(scale=3, min_width=260):
                now = "<div class='lab-label'>What the model looked at</div><div class='lab-now'></div>"
                self.now = gr.HTML(now, elem_id="now", js_on_load=None)
                info = "Click a source word above: at this step these cross heads look only at it. Reset undoes it."
                choices = head_choices(config, ("cross",))
                self.edit_heads = gr.Dropdown(
                    choices, value=["cross:*:*"], multiselect=True, label="Heads to edit", info=info
                )
            self.candidates = gr.HTML(
                f"<div class='lab-label'>{CANDIDATES_LABEL}</div><div class='lab-candidates'></div>",
                elem_id="candidates",
                scale=2,
                min_width=220,
                js_on_load=None,
            )
        # Written by a click on a word of the now-view, or on a candidate (lab/assets/page.js): hidden by page.css.
        self.word_pick = gr.Textbox(elem_id="word-pick", elem_classes="tile-pick", show_label=False, container=False)
        self.cand_pick = gr.Textbox(elem_id="cand-pick", elem_classes="tile-pick", show_label=False, container=False)

    def _options(self, config) -> None:
        """How the views draw the weights: focused head, words or pieces, specials, colour scale, reading."""
        with gr.Row(elem_classes="options"):
            info = "Or click a head in the figure."
            self.focus = gr.Dropdown(focus_choices(config), value=FOCUS_MEAN, label="Focus head", info=info)
            # Written by a click on a tile of an overview, or on a cell of the head summary (lab/assets/page.js).
            self.tile_pick = gr.Textbox(
                elem_id="tile-pick", elem_classes="tile-pick", show_label=False, container=False
            )
            self.cell_pick = gr.Textbox(
                elem_id="cell-pick", elem_classes="tile-pick", show_label=False, container=False
            )
            self.words = gr.Checkbox(True, label="Merge pieces into words")
            self.hide_specials = gr.Checkbox(False, label="Hide special tokens (renormalise rows)")
            scales = [(label, key) for key, label in SCALES.items()]
            self.scale = gr.Radio(scales, value="linear", label="Colour scale")
            readings = [(label, key) for key, label in READINGS.items()]
            self.reading = gr.Radio(readings, value="weights", label="Reading")
        gr.Markdown(WORDS_NOTE + "\n\n" + READINGS_NOTE, elem_classes="note")

    def _tabs(self, config) -> None:
        """One tab per entry of the tabs table: its note, then its outputs, or the layout of its own method."""
        own_layouts = {"heads": self._heads, "training": self._training, "why": self._why}
        self.tabs = {}
        with gr.Tabs() as self.tab_set:
            for tab in TABS:
                with gr.Tab(tab.title, id=tab.id) as self.tabs[tab.id]:
                    if tab.note:
                        gr.Markdown(tab.note, elem_classes="note")
                    own_layouts.get(tab.id, self._outputs)(tab, config)

    def _outputs(self, tab: Tab, config) -> None:
        """A tab laid out plainly: one component per output, top to bottom; a tab drawn in the page, a container."""
        if tab.in_page:
            classes = ["attention-view"] if tab.id != "compare" else ["compare-view"]
            setattr(self, f"{tab.id}_view", drawn_here(f"{tab.id}-view", classes))
        for output in tab.outputs:
            setattr(self, output.name, component(output))

    def _heads(self, tab: Tab, config) -> None:
        """The head summary of this sentence beside the saved survey over a corpus (a survey.json can be chosen),
        the heads to ablate with Ablate, and what an ablation changed."""
        with gr.Row(elem_classes="summaries"):
            with gr.Column(min_width=340):
                gr.Markdown("**This sentence**")
                self.heads = component(tab.outputs[0])
            with gr.Column(min_width=340):
                gr.Markdown("**Over the corpus**")
                self.survey = component(tab.outputs[2])
                self.survey_file = gr.File(
                    label="Choose a survey.json (python -m lab.survey)",
                    file_types=[".json"],
                    height=120,
                    elem_id="survey-file",
                )
        with gr.Row(elem_classes="ablate"):
            self.ablate_heads = gr.Dropdown(
                head_choices(config),
                value=[],
                multiselect=True,
                label="Heads to ablate",
                info="Each is removed from the forward pass: its output is zeroed before W_o.",
                scale=4,
            )
            self.ablate = gr.Button("Ablate", min_width=80, scale=1)
        self.effects = component(tab.outputs[1])

    def _why(self, tab: Tab, config) -> None:
        """The attribution method, the shown step's attribution beside attention with each head's agreement, the
        decoder's lens (all drawn by the page from the Why message), and the deletion test on this sentence."""
        methods = [(method.title, name) for name, method in METHODS.items()]
        info = "Input × gradient and occlusion are quick; integrated gradients takes about ten times as long."
        self.method = gr.Radio(methods, value="input_x_gradient", label="Attribution method", info=info)
        self.why = component(tab.outputs[0])  # the run's attribution and lens, for the page to draw
        self.why_view = drawn_here("why-view", ["why-view", SLOW_CLASS])
        with gr.Row(elem_classes="deletion"):
            self.deletion_run = gr.Button("Run the deletion test on this sentence", size="md", min_width=300, scale=0)
        self.deletion = component(tab.outputs[1])

    def _training(self, tab: Tab, config) -> None:
        """The model's snapshots on this source: a slider over them with play, the output and cross-attention of the
        chosen one, and loss and alignment against training step."""
        with gr.Row(elem_classes="film"):
            self.snapshot = gr.Slider(
                0, 1, value=0, step=1, label="Snapshot", interactive=False, scale=5, elem_id="snapshot"
            )
            self.play = gr.Button(PLAY, min_width=80, scale=1, elem_id="play")
        self.timer = gr.Timer(FRAME_S, active=False)
        self.film = component(tab.outputs[1])  # every snapshot's decoding, for the page to draw
        # Drawn by the page from the film, which comes after the click (slow), as the chart does.
        self.snapshot_info = gr.Markdown(elem_id="snapshot-info", elem_classes=[SLOW_CLASS])
        self.snapshot_output = gr.Textbox(
            label="Output of this snapshot", interactive=False, elem_id="snapshot-output", elem_classes=[SLOW_CLASS]
        )
        self.snapshot_chart = component(tab.outputs[2], "snapshot-chart")
        self.snapshot_view = drawn_here("snapshot-view", ["attention-view", SLOW_CLASS])

    def _export(self) -> None:
        with gr.Accordion("Export", open=False), gr.Row():
            self.png = gr.Button("Focused head as PNG", min_width=120)
            self.svg = gr.Button("Focused head as SVG", min_width=120)
            self.html = gr.Button("Whole view as HTML (works offline)", min_width=120)
            self.json = gr.Button("Attention as JSON", min_width=120)
        self.export_file = gr.File(label="Download", visible=False)

    def inputs(self) -> list:
        """The user's state, then every control in CONTROLS' order (lab.controls.Controls.of reads them by name)."""
        return [self.state, *(getattr(self, name) for name in CONTROLS)]

    def outputs(self) -> list:
        """The user's state, then every output in the page's order (lab.page.tabs.OUTPUTS)."""
        return [self.state, *(getattr(self, output.name) for output in OUTPUTS)]

    def slow_outputs(self) -> list:
        """The user's state, then the outputs filled after the click that asked for them (SLOW_OUTPUTS)."""
        return [self.state, *(getattr(self, output.name) for output in SLOW_OUTPUTS)]


def component(output: Output, elem_id: str | None = None):
    """The component a tab gets for an output it does not lay out itself."""
    if output.kind == TABLE:
        return gr.Dataframe(headers=list(output.headers), interactive=False, label=output.label or None)
    if output.kind == MESSAGE:
        return gr.JSON(visible=False)
    if output.kind == MARKDOWN:
        return gr.Markdown(elem_classes=[*output.classes, *([SLOW_CLASS] if output.slow else [])])
    assert output.kind == PLOT, f"no plain component for {output.kind} outputs: lay the tab out in its own method"
    classes = [*output.classes, *([SLOW_CLASS] if output.slow else [])]
    return gr.Plot(show_label=False, elem_id=elem_id or f"{output.name}-view", elem_classes=classes)


def drawn_here(elem_id: str, classes: list[str]) -> gr.HTML:
    """A container the page's drawing code draws a figure into (lab/assets/page.js); the server never updates it."""
    return gr.HTML("<div class='lab-drawn'></div>", elem_id=elem_id, elem_classes=classes, js_on_load=None)
