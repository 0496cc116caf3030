"""Attention Lab in a notebook: `show(model, source)` decodes and returns a view that Jupyter, JupyterLab, VS Code and
Colab render in the output cell, drawn by the app's own page modules (the HTML export's), with no server and no
network: plotly.js is inlined, once per notebook where the cells share one page (Jupyter and JupyterLab), in every
cell where each is a page of its own (VS Code, Colab). `view.save(path)` writes the same view as one HTML file (a
lesson to hand out); `view.to_json()` is the /attention export.

    import attention_lab
    attention_lab.show("de-en", "Ich muss den Rasen mähen.")
"""

from __future__ import annotations

import html
import json
import os
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

from ..assets import in_script, plotly_js, styles
from ..assets.bundles import started
from ..core.attention_export import attention_record
from ..core.payload import Decoding
from ..export.lesson import OFFLINE, PARTS, STYLESHEETS, Lesson, decoded, first_look, page
from ..messages import jsonable


@dataclass
class View:
    """A decoding's views, as a notebook shows them (_repr_html_) and as a lesson file (save)."""

    data: Decoding  # what the page draws a decoding from
    name: str
    source: str
    output: str
    record: dict  # the JSON export (/attention's, for a decoding)

    def state(self) -> Lesson:
        return first_look(self.data)

    def to_json(self) -> dict:
        """The decoding's JSON export: tokens, each step's top k, and every head's weights (/attention's)."""
        return self.record

    def html(self, with_plotly: bool = True) -> str:
        """The cell's HTML: its own copy of the page modules, started on this view's element (so that cells do not
        share a page state); plotly.js inlined unless `with_plotly` is False (a page that has it already)."""
        cell = f"attention-lab-{uuid.uuid4().hex[:12]}"
        parts = "".join(f"<div data-part='{name}' class='lab-view'></div>" for name in PARTS)
        heading = f"<p><b>{html.escape(self.name)}</b>: {html.escape(self.source)} → {html.escape(self.output)}</p>"
        plotly = f"<script>if (!window.Plotly) {{ {plotly_js()} }}</script>" if with_plotly else ""
        start = started(OFFLINE, f"start({in_script(self.state())}, document.getElementById({json.dumps(cell)}))")
        return (
            f"<div id='{cell}' class='attention-lab-cell'><style>{styles(STYLESHEETS)}</style>{plotly}"
            f"{heading}{parts}<script>(() => {{\n{start}\n}})();</script></div>"
        )

    def _repr_html_(self) -> str:
        shared = shares_one_page()
        html_text = self.html(with_plotly=not (shared and Sent.plotly))
        Sent.plotly = Sent.plotly or shared
        return html_text

    def save(self, path: str | Path) -> Path:
        """The view as one self-contained HTML file (plotly.js and the decoding inlined): a lesson to hand out."""
        path = Path(path)
        path.write_text(page(self.state(), self.name, self.source, self.output), encoding="utf-8")
        return path


class Sent:
    """What this kernel has sent to its notebook's page: plotly.js, once, where every cell shares that page."""

    plotly = False


def shares_one_page() -> bool:
    """Whether the notebook's cells share one page (Jupyter, JupyterLab) rather than each being a page of its own
    (Colab, VS Code), where plotly.js must come with every cell."""
    return "google.colab" not in sys.modules and "VSCODE_PID" not in os.environ


def show(model, source: str, strategy: str = "greedy", beam_size: int = 4, max_new_tokens: int | None = None) -> View:
    """Decode `source` with `model` (a bundled name, a folder, a Hub id or a loaded pipeline) greedily or by beam
    search, and return its view: every kind of attention, every head, the step slider, the focus head and word
    merging, drawn in the output cell."""
    done = decoded(model, source, strategy, beam_size, max_new_tokens)
    tokenizer = done.pipeline.tokenizer
    data = done.data()
    record = jsonable(attention_record(done.session, tokenizer, done.name))
    return View(data, done.name, source, done.output, record)
