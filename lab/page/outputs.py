"""The page's outputs, named once: the ones every decoding updates here, and each tab's in its entry (lab.page.tabs).

An output's name is the page component's name (page.py) and the key of the changes the page is sent; its kind says
how a value becomes that component's update (app.py), and which component a tab gets for it when its entry does not
lay itself out. A slow output answers a click with a placeholder that says it is being computed, and is filled by
the event that follows the click (lab.page.render.fill), so that the click does not wait for it.
"""

from __future__ import annotations

from dataclasses import dataclass

# Kinds: what a value is, and how the page applies it.
TEXT = "text"  # a string, the component's value
MARKDOWN = "markdown"  # a string of Markdown
PLOT = "plot"  # a plotly figure, or None for an empty one
NOTICE = "notice"  # a string; hidden when empty
BUTTON = "button"  # a bool: whether it can be clicked now
SLIDER = "slider"  # a dict of the slider's settings: value, maximum, interactive, label
TABLE = "table"  # rows, or None for an empty table
TITLED = "titled"  # {"value", "label"}: a text with its own label, hidden when empty
MESSAGE = "message"  # JSON for the page's own drawing code (lab/assets/views.js), never shown as it is


@dataclass(frozen=True)
class Output:
    name: str
    kind: str
    classes: tuple[
        str, ...
    ] = ()  # CSS classes of the component a tab builds for it (the browser code finds it by them)
    headers: tuple[str, ...] = ()  # a TABLE's column headers
    label: str = ""  # shown above the component a tab builds for it
    slow: str = ""  # what it says while it is computed, when it answers after the click ("" when it does not)


# Updated by the decoding events whatever tab is open. `decoding` carries the run's attention to the page, which
# draws the step's views (what the model looked at, the candidates) and the attention tabs from it.
DECODING = (
    Output("output", TEXT),
    Output("status", NOTICE),
    Output("shown", SLIDER),
    Output("step", BUTTON),
    Output("back", BUTTON),
    Output("original", TITLED),
    Output("decoding", MESSAGE),
    # A new value whenever slow outputs answered with placeholders: its change event fills them (Lab.fill).
    Output("to_fill", TEXT),
    # The decoding a Step would go on from (empty when Step would not): its change decodes that step ahead.
    Output("to_step", TEXT),
)
