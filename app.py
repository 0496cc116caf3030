"""Attention Lab: step through a Transformer's decoding and see every head's attention.

    python app.py                                   # the bundled checkpoints, offline, on 127.0.0.1:7860
    python app.py --model user/repo [--model ...]   # models from the Hugging Face Hub (or folders) as well
    attention-lab [--model ...]                     # the same, once the package is installed (pip install .)

This file is what each event of the page calls, and the wiring; page.py lays the page out. What the controls do
lives in lab/ (lab.page.Lab, lab.serving.Api), the models in adapters/ and transformer/. The models are loaded once
and shared by every session; each user's decoding lives in gr.State.
"""

from __future__ import annotations

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import argparse
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import gradio as gr
import torch

from lab.attention.export import in_script, page_config
from lab.attention.looks import focus_choices
from lab.checks import InputError
from lab.controls import FOCUS_MEAN, Controls
from lab.heads.naming import head_choices
from lab.models.devices import DEVICES
from lab.models.examples import example_for
from lab.models.registry import Registry, load_models
from lab.page import outputs as kinds
from lab.page.lab import Lab
from lab.page.tabs import BY_ID, OUTPUTS, SLOW_OUTPUTS
from lab.serving.api import Api
from lab.serving.cores import available_cores
from lab.snapshots.tab import at_end
from lab.survey import tab as survey_tab
from lab.why.actions import ask_deletion
from page import PAUSE, PLAY, Page

logger = logging.getLogger("attention_lab")
CONCURRENCY = 2  # decoding requests served at once; more would only share the same cores
# Gradio keeps every session's component values (our figures among them) until the session is evicted, oldest
# first, beyond this many sessions; its default of 10,000 let memory grow by about 0.25 MB per session here.
SESSION_CAPACITY = 128
ASSETS = Path(__file__).resolve().parent / "lab" / "assets"


def page_js() -> str:
    """The page's browser code, run once as it loads: the drawing code (views.js), told the views' colours and names,
    then the page's own (page.js)."""
    views, own = ((ASSETS / name).read_text(encoding="utf-8") for name in ("views.js", "page.js"))
    return f"() => {{\n{views}\nAttentionViews.configure({in_script(page_config())});\n({own})();\n}}"


LAUNCH_OPTIONS = {"state_session_capacity": SESSION_CAPACITY, "css_paths": [ASSETS / "page.css"], "js": page_js()}
# How a value from the Lab becomes its component's update, by the output's kind (lab.page.outputs).
UPDATES = {
    kinds.BUTTON: lambda value: gr.update(interactive=bool(value)),
    kinds.SLIDER: lambda value: gr.update(**value),
    kinds.NOTICE: lambda value: gr.update(value=value, visible=bool(value)),
    kinds.TABLE: lambda value: gr.update(value=value or None),
    kinds.TITLED: lambda value: gr.update(
        value=(value or {}).get("value") or "",
        label=(value or {}).get("label"),
        visible=bool((value or {}).get("value")),
    ),
}


def updates(changes: dict, outputs: tuple | None = None) -> tuple:
    """The Lab's changes as the values of `outputs` (OUTPUTS by default): gr.skip() for what stays as it is."""
    return tuple(
        UPDATES.get(output.kind, lambda value: value)(changes[output.name]) if output.name in changes else gr.skip()
        for output in (OUTPUTS if outputs is None else outputs)
    )


@contextmanager
def shown_to_user() -> Iterator[None]:
    """An InputError reaches an API client (or a file download) as a gr.Error with its message as it is."""
    try:
        yield
    except InputError as err:
        logger.info("user error: %s", err)
        raise gr.Error(str(err), print_exception=False) from None


class Events:
    """What the page's events call: the Lab's actions, with their changes as the page's updates.

    A user's mistake becomes a warning toast and one line in the server log; the page keeps every view it had.
    """

    def __init__(self, lab: Lab, api: Api) -> None:
        self.lab, self.api = lab, api

    def _changes(self, user, make, outputs: tuple | None = None) -> tuple:
        """(user, the update of each of `outputs`) for the changes `make()` gives; a user's mistake changes
        nothing."""
        try:
            changes = make()
        except InputError as err:
            logger.info("user error: %s", err)
            gr.Warning(str(err))
            changes = {}
        return (user, *updates(changes, outputs))

    def act(self, name: str):
        """The event of a decoding control: Run, Step, Back or Reset."""
        action = getattr(self.lab.decoding, name)

        def event(user, *values):
            return self._changes(user, lambda: self.lab.do(action, user, Controls.of(values)))

        return event

    def pick(self, user, *values):
        """A click on a next-token candidate ("<token id>#<time>"): force it at the shown step (what if?), decode on."""
        *values, picked = values
        return self._changes(user, lambda: self.lab.do(self.lab.decoding.force, user, Controls.of(values), picked))

    def ahead(self, user) -> None:
        """The next step of the user's decoding, decoded while they look at this one (Step then takes it)."""
        self.lab.decoding.step_ahead(user)

    def fill(self, user):
        """What a click answered with a placeholder (the head summary, an ablation's effects, the film), made now."""
        return self._changes(user, lambda: self.lab.fill(user), SLOW_OUTPUTS)

    def show(self, user, *values):
        return self._changes(user, lambda: self.lab.show(user, Controls.of(values)))

    def tab(self, tab_id: str):
        def opened(user, *values):
            return self._changes(user, lambda: self.lab.open_tab(user, Controls.of(values), tab_id))

        return opened

    def model(self, user, name, text):
        """A new model: start over, with one of its examples unless the text suits it, and its heads to focus."""
        source = example_for(self.lab.registry, name, text)
        config = self.lab.registry.entry(name).pipeline.model.config
        focus = gr.update(choices=focus_choices(config), value=FOCUS_MEAN)
        ablate = gr.update(choices=head_choices(config), value=[])
        edit = gr.update(choices=head_choices(config, ("cross",)), value=["cross:*:*"])
        c = Controls(model=name, source=source)
        return (
            *self._changes(user, lambda: self.lab.do(self.lab.decoding.reset, user, c)),
            source,
            focus,
            ablate,
            edit,
        )

    def cell(self, user, *values):
        """A click on a cell of the head summary ("cross|Layer 2 · Head 3#<time>"): focus that head, if the model
        has it, and open that kind's view."""
        *values, picked = values
        c = Controls.of(values)
        kind, _, head = str(picked).split("#")[0].rpartition("|")
        entry = self.lab.registry.entries.get(c.model)
        if kind not in BY_ID or entry is None or head not in focus_choices(entry.pipeline.model.config):
            return (user, *(gr.skip() for _ in OUTPUTS), gr.skip(), gr.skip())
        c.focus = head
        opened = self._changes(user, lambda: self.lab.open_tab(user, c, kind))
        return (*opened, gr.update(value=head), gr.Tabs(selected=kind))

    def deletion(self, user, *values):
        """The Why tab's deletion test on this sentence: asked for now, filled after the click."""
        return self._changes(user, lambda: self.lab.do(ask_deletion, user, Controls.of(values)))

    def survey(self, user, *values):
        """A survey.json chosen in the Heads tab: shown over the corpus for the model, if it is one of its shape."""
        *values, path = values
        c = Controls.of(values)
        return self._changes(
            user, lambda: self.lab.do(survey_tab.choose, user, c, path, self.lab.registry.entry(c.model))
        )

    def ablate_heads(self, user, *values):
        *values, heads = values
        return self._changes(user, lambda: self.lab.do(self.lab.heads.ablate, user, Controls.of(values), heads))

    def word_clicked(self, user, *values):
        """A click on a source word of the now-view ("3,4#<time>": its pieces): point the chosen heads at it."""
        *values, picked, heads = values
        c = Controls.of(values)
        return self._changes(user, lambda: self.lab.do(self.lab.heads.edit, user, c, picked, heads))

    def play(self, user, label, model, snapshot):
        """Play from the shown snapshot (from the first when the last is shown), one snapshot a tick; or pause. The
        slider's value moves; the page draws each snapshot as it does for a move of the slider."""
        if label != PLAY:
            return gr.skip(), gr.Timer(active=False), gr.update(value=PLAY)
        start = gr.update(value=0) if at_end(self.lab.snapshots, model, snapshot) else gr.skip()
        return start, gr.Timer(active=True), gr.update(value=PAUSE)

    def tick(self, user, model, snapshot):
        """The next snapshot; at the last one, or once the Training tab is closed, playing stops."""
        if user.tab != "training" or at_end(self.lab.snapshots, model, snapshot):
            return gr.skip(), gr.Timer(active=False), gr.update(value=PLAY)
        return gr.update(value=int(snapshot or 0) + 1), gr.skip(), gr.skip()

    @shown_to_user()
    def export_json(self, user):
        return gr.update(value=self.lab.export_json(user), visible=True)

    @shown_to_user()
    def export_html(self, user, *values):
        return gr.update(value=self.lab.export_html(user, Controls.of(values)), visible=True)

    # The documented API (gradio_client); typed, so gr.api describes it.

    @shown_to_user()
    def translate(self, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> str:
        """Decode `text` with `model` ("greedy" or "beam" search); returns the output text. At most 256 source
        tokens (a longer text is refused, with a message) and 256 new tokens."""
        return self.api.translate(model, text, strategy, beam_size)

    @shown_to_user()
    def attention(self, model: str, text: str, strategy: str = "greedy", beam_size: int = 4) -> dict:
        """Decode `text` and return every head's attention at every step (the app's JSON export). At most 256
        source tokens (a longer text is refused, with a message) and 256 new tokens."""
        return self.api.attention(model, text, strategy, beam_size)

    @shown_to_user()
    def heads(self, model: str, text: str) -> dict:
        """Decode `text` greedily; {"encoder"|"decoder_self"|"cross": [layer][head] -> {"entropy", "special",
        "alignment"}}: mean row entropy in nats, mean weight on the model's special tokens (pad, start, end and its
        tokenizer's own), gold alignment accuracy or null. At most 64 source tokens (a longer text is refused, with a
        message) and 64 new tokens."""
        return self.api.heads(model, text)

    @shown_to_user()
    def training(self, model: str, text: str) -> dict:
        """Decode `text` greedily with each training snapshot of `model`: {"snapshots": [{"step", "output_text",
        "alignment", "loss"}]} in training order. alignment: the best cross head's alignment accuracy for `text`, or
        null where no gold alignment is known; loss: the snapshot's validation loss. At most 64 source tokens (a
        longer text is refused, with a message)."""
        return self.api.training(model, text)

    @shown_to_user()
    def ablate(self, model: str, text: str, heads: list[str]) -> dict:
        """Ablate `heads` ("kind:layer:head", 1-based, "*" for all) throughout: {"output_text", "steps": [{"step",
        "token", "kl", "top_k"}]}, one entry per step of the original greedy decoding. At most 64 source tokens (a
        longer text is refused, with a message) and 64 new tokens."""
        return self.api.ablate(model, text, heads)

    @shown_to_user()
    def edit(self, model: str, text: str, step: int, position: int, heads: list[str]) -> dict:
        """At `step` (1-based) the listed cross heads look only at source token `position` (1-based):
        {"token", "probability", "top_k", "output_text"}, decoding on greedily with no further edit. At most 64
        source tokens (a longer text is refused, with a message) and 64 new tokens."""
        return self.api.edit(model, text, step, position, heads)

    @shown_to_user()
    def attribute(self, model: str, text: str, method: str) -> dict:
        """Why each token: decode `text` greedily and attribute every written token's log-probability to each source
        token and to each decoder input before it: {"source_tokens", "method", "note", "steps": [{"step", "token",
        "source": [a value per source token], "prefix": [a value per decoder input at that step], "source_share"}]}.
        `method`: "input_x_gradient" (embedding × gradient, summed over dimensions), "integrated_gradients" (from
        zero embeddings, positions kept; 50 steps; the values add up to the change in log p) or "occlusion" (the
        fall in log p when one token's embedding is zeroed). A positive value raised the probability; source_share
        is the source's share of the absolute values. At most 64 source tokens and 64 new tokens."""
        return self.api.attribute(model, text, method)

    @shown_to_user()
    def lens(self, model: str, text: str) -> dict:
        """The decoder's lens: decode `text` greedily; per step, per decoder layer (1-based, in order), the 5 tokens
        the model would write if its decoder stopped after that layer (the model's own final norm and output layer):
        {"steps": [{"step", "token", "settled", "layers": [{"layer", "top_k": [{"token", "probability"}]}]}]};
        "settled" is the first layer from which on the written token is the top one. At most 64 source tokens and
        64 new tokens."""
        return self.api.lens(model, text)


DECODE = {"concurrency_id": "decode", "concurrency_limit": CONCURRENCY}  # Run, Step, what-if, /translate...
HEAVY = {"concurrency_id": "heavy", "concurrency_limit": 1}  # head tests, the film, the Why tab, /attribute, /lens
AHEAD = {"concurrency_id": "ahead", "concurrency_limit": 1}  # a user's next step, decoded while they look
HIDDEN, PRIVATE, QUIET = {"api_visibility": "undocumented"}, {"api_visibility": "private"}, {"show_progress": "hidden"}


def wire(page: Page, events: Events, demo: gr.Blocks) -> None:
    """Three lanes of the queue: decoding, CONCURRENCY at once, app-wide; the heavy work, one at a time, so that it
    never keeps a Step or a /translate waiting; and a user's next step decoded ahead, one at a time. A click that leaves slow outputs to fill changes `to_fill`, whose
    change fills them in the heavy lane. What the page draws for itself (Show step, Focus head, the look, a tile,
    the film) never reaches the server. The buttons' endpoints stay out of the API docs, but benchmarks and tests
    can drive them by name."""
    wire_server(page, events, demo)
    wire_in_page(page)
    for name in ("translate", "attention"):
        gr.api(getattr(events, name), api_name=name, **DECODE)
    for name in ("heads", "training", "ablate", "edit", "attribute", "lens"):
        gr.api(getattr(events, name), api_name=name, **HEAVY)


def wire_server(page: Page, events: Events, demo: gr.Blocks) -> None:
    """The events that change the user's run or open a tab (the decoding lane), and the filling of slow outputs."""
    p, inputs, outputs = page, page.inputs(), page.outputs()
    run = events.act("run")
    p.run.click(run, inputs, outputs, api_name="ui_run", show_progress_on=[p.output], **HIDDEN, **DECODE)
    for name in ("step", "back", "reset"):  # quick: a spinner on every output would cost more than the step
        button = getattr(p, name)
        button.click(events.act(name), inputs, outputs, api_name=f"ui_{name}", **QUIET, **HIDDEN, **DECODE)
    p.cand_pick.change(events.pick, [*inputs, p.cand_pick], outputs, **QUIET, **PRIVATE, **DECODE)
    ablate = [*inputs, p.ablate_heads]
    p.ablate.click(events.ablate_heads, ablate, outputs, show_progress_on=[p.effects], **PRIVATE, **DECODE)
    edit = [*inputs, p.word_pick, p.edit_heads]
    p.word_pick.change(events.word_clicked, edit, outputs, **QUIET, **PRIVATE, **DECODE)
    p.cell_pick.change(events.cell, [*inputs, p.cell_pick], [*outputs, p.focus, p.tab_set], **PRIVATE, **DECODE)
    p.deletion_run.click(events.deletion, inputs, outputs, **QUIET, **PRIVATE, **DECODE)
    p.survey_file.upload(events.survey, [*inputs, p.survey_file], outputs, **QUIET, **PRIVATE, **DECODE)
    for control in (p.source, p.max_len, p.top_k, p.strategy, p.method):  # a new source or option: redrawn
        control.change(events.show, inputs, outputs, trigger_mode="always_last", **QUIET, **PRIVATE, **DECODE)
    for tab_id, tab in p.tabs.items():
        tab.select(None, js=f"() => window.attentionLab.open({tab_id!r})")
        tab.select(events.tab(tab_id), inputs, outputs, **QUIET, **PRIVATE, **DECODE)
    model = [*outputs, p.source, p.focus, p.ablate_heads, p.edit_heads]
    p.model.change(events.model, [p.state, p.model, p.source], model, **PRIVATE, **DECODE)
    p.to_fill.change(events.fill, [p.state], page.slow_outputs(), **QUIET, **PRIVATE, **HEAVY)
    p.to_step.change(events.ahead, [p.state], None, **QUIET, **PRIVATE, **AHEAD)
    playing = [p.snapshot, p.timer, p.play]
    p.play.click(events.play, [p.state, p.play, p.model, p.snapshot], playing, **QUIET, **PRIVATE, **DECODE)
    p.timer.tick(events.tick, [p.state, p.model, p.snapshot], playing, **QUIET, **PRIVATE, **DECODE)
    p.html.click(events.export_html, inputs, [p.export_file], **PRIVATE, **DECODE)
    p.json.click(events.export_json, [p.state], [p.export_file], **PRIVATE, **DECODE)
    demo.load(run, inputs, outputs, **PRIVATE, **DECODE)


def wire_in_page(p: Page) -> None:
    """Drawn in the page alone: the decoding the server sent, the step shown, the look, a tile's head, the film."""
    p.decoding.change(None, [p.decoding], None, js="(m) => window.attentionLab.receive(m)")
    p.shown.change(None, [p.shown], None, js="(s) => window.attentionLab.show(s)")
    look = [p.words, p.hide_specials, p.scale, p.focus, p.reading]
    for control in look:
        control.change(None, look, None, js="(...look) => window.attentionLab.setLook(...look)")
    p.tile_pick.change(None, [p.tile_pick, p.focus], [p.focus], js="(t, f) => window.attentionLab.tile(t, f)")
    p.why.change(None, [p.why], None, js="(m) => window.attentionLab.receiveWhy(m)")
    snapshot_text = [p.snapshot_info, p.snapshot_output]
    p.film.change(None, [p.film, p.snapshot], snapshot_text, js="(m, i) => window.attentionLab.receiveFilm(m, i)")
    p.snapshot.change(None, [p.snapshot], snapshot_text, js="(i) => window.attentionLab.snapshotAt(i)")
    p.png.click(None, js="() => window.attentionLab.download('png')")
    p.svg.click(None, js="() => window.attentionLab.download('svg')")


def build_demo(registry: Registry) -> gr.Blocks:
    lab = Lab(registry)
    with gr.Blocks(title="Attention Lab") as demo:
        wire(Page(registry, lab.default), Events(lab, Api(registry, lab.snapshots)), demo)
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=64)
    return demo


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Attention Lab: see inside an encoder-decoder Transformer.")
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="USER/REPO",
        help=(
            "also load this model: a Hugging Face Hub repo or a folder, in our format or a transformers "
            "encoder-decoder such as Helsinki-NLP/opus-mt-de-en (pip install -r requirements-hf.txt); repeatable"
        ),
    )
    parser.add_argument(
        "--device", default="cpu", choices=DEVICES, help="where the models run (auto: a CUDA GPU when there is one)"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    # Each of the CONCURRENCY requests gets its share of the cores (1 thread each on a 2-core Space).
    torch.set_num_threads(max(1, available_cores() // CONCURRENCY))
    try:
        registry = load_models(args.model, device=args.device)
    except InputError as err:
        raise SystemExit(str(err)) from None
    demo = build_demo(registry)
    demo.launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"), **LAUNCH_OPTIONS)


if __name__ == "__main__":
    main()
