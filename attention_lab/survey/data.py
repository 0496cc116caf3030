"""A survey as the page draws it: every head over the corpus as the head summary's grid (core/grids.mjs), with
the score each head's ablation costs."""

from __future__ import annotations

from ..core.grids import METRICS, Summary, summary_data


def survey_metrics(score_name: str) -> dict:
    """The summary's rows for a survey: entropy, special, offset, alignment, and the score lost without the head."""
    return {
        "entropy": METRICS["entropy"],
        "special": METRICS["special"],
        "offset": (
            "offset of the top weight",
            "mean key − query position of each row's largest weight: −1 the previous token, +1 the next",
            "signed",
        ),
        "alignment": METRICS["alignment"],
        "lost": (
            f"{score_name} lost when ablated",
            f"the corpus {score_name} minus its {score_name} with this head alone ablated",
            "size",
        ),
    }


def survey_data(survey: dict) -> Summary:
    """The survey's head grid; each cell names its head, so a click focuses it."""
    base = survey["score"]["value"]
    cells = {
        kind: [[{**cell, "lost": round(base - cell["importance"], 4)} for cell in layer] for layer in grid]
        for kind, grid in survey["heads"].items()
    }
    name = survey["score"]["name"]
    title = f"Every head over {survey['sentences']} sentences ({name} {base:.2f}): {survey['model']}"
    return summary_data(cells, title=title, metrics=survey_metrics(name))
