"""What the page's controls say, by name: every decoding event sends them, and every action reads them from here.

The step loop's own controls are fields: the model, the source, the decoding options and the decoding the page shows
when it decodes itself (their components are laid out by attention_lab.decoding.layout under the same names, and sent
in DECODING_CONTROLS' order). A feature's
controls that bear on what it shows after every decoding (the Why tab's attribution method) follow them, and are read
from `options` by the name the feature gives them (attention_lab.feature.Feature.controls).

The step shown and the way the page looks at the weights (the focused head, words or pieces, the colour scale, the
reading) are the page's own: an event that needs them gets them with its data (a what-if, an edit, an export).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

DECODING_CONTROLS = ("model", "source", "strategy", "beam_size", "max_len", "top_k", "page")


@dataclass
class Controls:
    """The controls' values, under the names of the page's components."""

    model: str = ""
    source: str = ""
    strategy: str = "greedy"  # "greedy" or "beam"
    beam_size: int = 4
    max_len: int = 64
    top_k: int = 8  # the "Top-k shown" slider: candidates kept at each step
    page: str = ""  # the decoding the page shows when it decodes itself, as JSON (attention_lab.decoding.from_page)
    shown: int | None = None  # the step the page shows, when the event sends it (None: the latest)
    options: dict[str, object] = field(default_factory=dict)  # the features' controls, by name

    @classmethod
    def of(cls, values: Sequence, options: Sequence[str] = ()) -> Controls:
        """The page's values, sent in DECODING_CONTROLS' order and then the features' `options`, by name."""
        values = list(values)
        n = len(DECODING_CONTROLS)
        decoding = dict(zip(DECODING_CONTROLS, values[:n], strict=True))
        return cls(**decoding, options=dict(zip(options, values[n:], strict=True)))

    def option(self, name: str, default: object = None) -> object:
        """A feature's control, or `default` when the page did not send it."""
        value = self.options.get(name)
        return default if value is None else value
