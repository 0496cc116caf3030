"""The page's outputs, named once: the ones every decoding updates here, and each tab's in its entry (lab.page.tabs).

An output's name is the page component's name (page.py) and the key of the changes the page is sent; its kind says
how a value becomes that component's update (app.py), and which component a tab gets for it when its entry does not
lay itself out.
"""

from __future__ import annotations

from dataclasses import dataclass

# Kinds: what a value is, and how the page applies it.
TEXT = "text"  # a string, the component's value
MARKDOWN = "markdown"  # a string of Markdown
HTML = "html"  # a string of HTML, escaped where it holds user text
PLOT = "plot"  # a plotly figure, or None for an empty one
NOTICE = "notice"  # a string; hidden when empty
BUTTON = "button"  # a bool: whether it can be clicked now
SLIDER = "slider"  # a dict of the slider's settings: value, maximum, interactive, label
LABEL = "label"  # {label: probability} for gr.Label
TABLE = "table"  # rows, or None for an empty table
TITLED = "titled"  # {"value", "label"}: a text with its own label, hidden when empty


@dataclass(frozen=True)
class Output:
    name: str
    kind: str
    classes: tuple[
        str, ...
    ] = ()  # CSS classes of the component a tab builds for it (the browser code finds it by them)
    headers: tuple[str, ...] = ()  # a TABLE's column headers
    label: str = ""  # shown above the component a tab builds for it


# Updated by the decoding events whatever tab is open.
DECODING = (
    Output("output", TEXT),
    Output("status", NOTICE),
    Output("shown", SLIDER),
    Output("step", BUTTON),
    Output("back", BUTTON),
    Output("now", HTML),
    Output("candidates", LABEL),
    Output("original", TITLED),
)
