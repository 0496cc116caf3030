"""The browser benchmark's table (benchmarks/browser_speed.py): each measure's median, its ratio to the floor, and
the bar it must meet."""

from __future__ import annotations

import statistics

BARS = {  # ratios to the floor
    "step": 1.0,
    "key": 0.35,
    "presenter_step": 1.0,
    "run": 2.5,
    "show_step": 0.35,
    "focus": 0.5,
    "focus_menu": 0.5,
    "why_step": 1.5,
    "why_show": 0.35,
    "patch_word": 1.5,
    "patch_show": 0.35,
    "why_not": 1.5,
    "trust_open": 1.5,
    "trust_score": 1.5,
    "trust_show": 0.35,
    "flow_open": 1.5,
    "flow_threshold": 0.35,
    "flow_show": 0.35,
    "two_models_show": 0.35,
    "tree_open": 1.5,
    "tree_node": 1.5,
    "heads_run": 1.5,
    "ablate": 1.5,
    "edit": 1.5,
    "training_open": 1.5,
    "snapshot": 1.5,
    "step_opus": 1.2,
    "step_large": 1.2,
}
LAST_CHANGE_BARS = {  # ratios to the floor of the page's last change, once every slow part is drawn
    "heads_run": 2.0,
    "heads_run_new": 2.0,
    "training_open": 2.0,
}
SHOW_STEP_MS = 50  # a move of Show step, at most, whatever the floor
TIME_BARS_S = {"first_run": 2.0, "paragraph": 3.0}
LOOKS = (
    "show_step",
    "key",
    "focus",
    "focus_menu",
    "why_show",
    "patch_show",
    "trust_show",
    "flow_threshold",
    "flow_show",
    "two_models_show",
)
LOOKS += ("snapshot",)  # 0 requests


ROWS = (  # (measure, what it is); a row is left out when it was not measured
    ("step", "Step (de-en, 15 words)"),
    ("show_step", "Move Show step (de-en, 15 words)"),
    ("key", "Press ← or → (the shown step, as a move of Show step)"),
    ("focus", "Choose a Focus head: click its tile"),
    ("focus_menu", "Choose a Focus head from its menu"),
    ("why_step", "Step (de-en, 15 words), Why tab open (the new step attributed, the lens read, after the answer)"),
    ("why_show", "Move Show step, Why tab open (attribution, agreement and lens redrawn in the page)"),
    ("patch_word", "Patch tab: click a source word for noise, 15 words (every step patched, after the answer)"),
    ("patch_show", "Move Show step, Patch tab open (every grid redrawn in the page)"),
    (
        "why_not",
        "Click a candidate's “why not this?” (Why tab opened, the contrast drawn; the page settled in brackets)",
    ),
    ("run", "Run, 10-word sentence"),
    ("trust_open", "Open the Trust tab after a Run, 10 words (the output forced and scored, after the answer)"),
    ("trust_score", "Trust tab: Score a pasted translation, 10 words (forced and scored, after the answer)"),
    ("trust_show", "Move Show step, Trust tab open (the source words and flags redrawn in the page)"),
    ("flow_open", "Open the Flow tab after a Run, 10 words (the decoding's contribution graph read, after the answer)"),
    ("flow_threshold", "Move the Flow tab's threshold (the step's graph pruned and redrawn in the page)"),
    ("flow_show", "Move Show step, Flow tab open (the step's graph cut, pruned and redrawn in the page)"),
    ("two_models_show", "Move Show step, Two models tab open (both sides' words and bars redrawn in the page)"),
    ("tree_open", "Open the Beam tree tab after a Run, 10 words (beam 4 searched and drawn, after the answer)"),
    ("tree_node", "Beam tree tab: click a node (its prefix forced, its attention drawn; the tree then settled)"),
    ("heads_run_new", "Run, a new 10-word sentence, Heads tab open (summary + every head ablated in turn)"),
    ("heads_run", "Run, 10 words, Heads tab open, after a Reset (the summary made before)"),
    ("ablate", "Ablate (cross layer 3), 10 words"),
    ("edit", "Edit: click a source word, 10 words"),
    ("training_open", "Open the Training tab (reverse: every snapshot decodes the source)"),
    ("snapshot", "Move the Training slider to another snapshot"),
    ("step_opus", "Step, transformers model of opus-mt-de-en's shapes (6+6 layers × 8 heads, 58k vocabulary)"),
    ("step_large", "Step, transformers model of mBART-large's shapes (12+12 layers × 16 heads, 250k vocabulary)"),
    ("step_large_rapid", "the same, a Step clicked the moment the one before answered (no time to decode ahead)"),
    ("presenter_on", "Presenter mode on (the toggle, at 1280×720: large type, only the step loop and the views)"),
    ("presenter_step", "Step in presenter mode (de-en, 15 words, 1280×720)"),
)


def requests_note(name: str, times: dict[str, list[float]]) -> str:
    """The server requests a row sent: all its looks' together (none is the bar), or each click's (a range when
    the clicks differ)."""
    counts = times.get(f"{name}_requests")
    if counts is None:
        return ""
    if name in LOOKS:
        return f"; {sum(counts)} server requests"
    low, high = min(counts), max(counts)
    return f"; {low if low == high else f'{low}–{high}'} server requests a click"


def report(times: dict[str, list[float]], label: str) -> str:
    med = {name: statistics.median(values) for name, values in times.items() if values}
    floor = med["floor"]
    heading = (
        f"Browser ({label}): Chromium, click to the page's last DOM change, medians of "
        f"{len(times['step'])} Steps and Show step moves, 8 Focus head choices, {len(times['run'])} Runs and 3 of "
        "the others; floor = benchmarks/floor_app.py, clicked alternately. Where a click's slow parts are filled "
        "after it, its time is when it was answered, and when all was filled is in brackets (and its ratio; a bar on "
        "it says so). A key is pressed with nothing focused that takes it."
    )
    lines = [
        heading,
        "",
        "| browser measure | median (ms) | ratio to floor | bar |",
        "|---|---|---|---|",
        f"| floor: bare Gradio app, one tiled heatmap | {floor:.0f} | 1.00 | |",
    ]
    for name, words in ROWS:
        if name not in med:
            continue
        shown = med.get(f"{name}_answered", med[name])
        later = med[name] if f"{name}_answered" in med else None
        ratio = shown / floor
        requests = sum(times.get(f"{name}_requests", [0]))
        zero = name not in LOOKS or requests == 0
        ok = ratio <= BARS.get(name, float("inf")) and (name != "show_step" or shown <= SHOW_STEP_MS) and zero
        bar = f"{'✓' if ok else '✗'} ≤ {BARS[name]}×" if name in BARS else ""
        bar += f", ≤ {SHOW_STEP_MS} ms" if name == "show_step" else ""
        if name in LAST_CHANGE_BARS and later is not None:
            done = later / floor <= LAST_CHANGE_BARS[name]
            bar += f"{', ' if bar else ''}{'✓' if done else '✗'} ≤ {LAST_CHANGE_BARS[name]}× filled"
        bar += requests_note(name, times)
        filled = f" ({later:.0f})" if later else ""
        filled_ratio = f" ({later / floor:.2f})" if later else ""
        lines.append(f"| {words} | {shown:.0f}{filled} | {ratio:.2f}{filled_ratio} | {bar} |")
    for name, words in (("first_run", "first Run after the page loads"), ("paragraph", "Run, 60-word paragraph")):
        ok = "✓" if med[name] <= 1000 * TIME_BARS_S[name] else "✗"
        lines.append(f"| {words} | {med[name]:.0f} | {med[name] / floor:.2f} | {ok} ≤ {TIME_BARS_S[name]:g} s |")
    return "\n".join(lines)
