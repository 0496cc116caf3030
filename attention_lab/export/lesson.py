"""A decoding's views in one HTML file that works offline: the app's own page modules (bundled into one script),
plotly.js and the decoding inlined. Its step, kind, head, words, specials, colour scale and reading can still be
changed, as on the page, with no server."""

from __future__ import annotations

import html
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from transformer import DecodingSession, Seq2SeqPipeline, bundled, load_pretrained
from transformer.bundled import bundled_names

from ..assets import PACKAGE, PAGE_CSS, offline_page, styles
from ..checks import check_source
from ..core import payload
from ..core.kinds import PAGE_ORDER
from ..core.looks import READINGS, SCALES, Look, Names, names
from ..core.payload import Decoding
from ..run.search import decoded_on

HERE = Path(__file__).resolve().parent
OFFLINE = HERE / "lesson.mjs"
PARTS = ("lab-steps", "now", "candidates", "views")  # the views a lesson holds (lesson.mjs's PARTS)
# What its views look like: the page-wide rules, the step loop's, the Attention tab's, and the lesson's own
STYLESHEETS = [PAGE_CSS, PACKAGE / "decoding" / "decoding.css", PACKAGE / "core" / "views.css", HERE / "lesson.css"]


@dataclass
class Lesson:
    """What a lesson file's views start from: the decoding, the step shown, the kind in view, the look, the names."""

    decoding: Decoding
    shown: int
    kind: str
    look: Look
    names: Names
    op: Literal["lesson"] = "lesson"


def look_of(sent: object) -> tuple[int | None, str, Look]:
    """How the page looked, as it sent it, kept to what the views know (anything else: their default): the step
    shown (None: the latest), the kind and the look."""
    sent = sent if isinstance(sent, dict) else {}
    look = sent.get("look") if isinstance(sent.get("look"), dict) else {}
    focus = look.get("focus")
    focus = focus if isinstance(focus, list) and len(focus) == 2 and all(isinstance(i, int) for i in focus) else None
    shown = sent.get("shown")
    return (
        shown if isinstance(shown, int) and shown >= 0 else None,
        sent.get("kind") if sent.get("kind") in PAGE_ORDER else PAGE_ORDER[0],
        Look(
            words=look.get("words") is not False,
            hide_specials=look.get("hideSpecials") is True,
            scale=look.get("scale") if look.get("scale") in SCALES else "linear",
            focus=tuple(focus) if focus else None,
            reading=look.get("reading") if look.get("reading") in READINGS else "weights",
        ),
    )


def page(lesson: Lesson, model_name: str, source: str, output: str) -> str:
    """The HTML of a lesson file: the views of its decoding, as it says they look."""
    parts = "".join(f"<div id='{name}' data-part='{name}' class='lab-view'></div>" for name in PARTS)
    body = (
        f"<h1>Attention Lab: {html.escape(model_name)}</h1>"
        f"<p><b>Source:</b> {html.escape(source)}</p><p><b>Output:</b> {html.escape(output)}</p>{parts}"
    )
    title = "Attention Lab export"
    return offline_page(title, body, OFFLINE, lesson, style=styles(STYLESHEETS), body_class="lab-export")


def written(text: str, name: str) -> str:
    """`text` written to a fresh temporary folder as `name`; returns its path."""
    path = Path(tempfile.mkdtemp(prefix="attention-")) / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def pipeline_of(model: str | Path | Seq2SeqPipeline) -> Seq2SeqPipeline:
    """A bundled model's name ("de-en", "reverse"), a folder, a Hub id, or a loaded pipeline, as a pipeline."""
    if isinstance(model, Seq2SeqPipeline):
        return model
    import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained

    name = str(model)
    return load_pretrained(str(bundled(name)) if name in bundled_names() else name)


@dataclass
class Decoded:
    """A source decoded for a lesson: the model's name, its pipeline, the session and the output text."""

    name: str
    pipeline: Seq2SeqPipeline
    session: DecodingSession
    source: str
    output: str

    def data(self) -> Decoding:
        """What the page draws this decoding from."""
        return payload.full(self.session, self.pipeline.tokenizer, self.name)


def first_look(data: Decoding) -> Lesson:
    """A decoding's lesson as the page first shows it: its last step, cross-attention, the default look."""
    return Lesson(data, len(data.steps), "cross", Look(), names())


def decoded(
    model, source: str, strategy: str = "greedy", beam_size: int = 4, max_new_tokens: int | None = None
) -> Decoded:
    """Decode `source` with `model` (a bundled name, a folder, a Hub id or a loaded pipeline) greedily or by beam
    search, as a lesson shows it."""
    pipeline = pipeline_of(model)
    ids, _ = check_source(pipeline, source)
    session = DecodingSession(pipeline.model, ids, top_k=8, max_new_tokens=max_new_tokens)
    session, _ = decoded_on(session, [], strategy, beam_size)
    name = str(model if isinstance(model, str) else getattr(pipeline, "name", "") or "model")
    return Decoded(name, pipeline, session, source, pipeline.tokenizer.decode(session.tokens))
