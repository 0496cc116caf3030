"""The tab table: one line per feature, whose folder holds the rest (its layout, view, events, actions, state and
page module). The step loop (attention_lab.decoding) is always on the page, beside the tabs; a tab's `parts` are
laid out, drawn and wired inside it."""

from __future__ import annotations

from .attention.feature import ATTENTION
from .beam_tree.feature import BEAM_TREE
from .beams.feature import BEAMS
from .compare.feature import COMPARE
from .controls import DECODING_CONTROLS
from .decoding.feature import LOOP
from .feature import Feature, Output
from .flow.feature import FLOW
from .heads.feature import HEADS
from .patch.feature import PATCH
from .survey.feature import SURVEY
from .training.feature import TRAINING
from .trust.feature import TRUST
from .two_models.feature import TWO_MODELS
from .why.feature import WHY

TABS = (  # in the page's order, by what they are for (GROUPS)
    ATTENTION,
    BEAMS,
    COMPARE,
    BEAM_TREE,
    WHY,
    FLOW,
    PATCH,
    TRUST,
    HEADS,
    TRAINING,
    SURVEY,
    TWO_MODELS,
)
GROUPS = {  # what each run of tabs is for: a heading over it in the tab row, its first tab's id -> the heading
    "attention": "Look",
    "why": "Explain",
    "heads": "Heads",
    "two_models": "Models",
}


def features(tabs: tuple[Feature, ...] = TABS) -> tuple[Feature, ...]:
    """Every feature on the page, in its order: the step loop, then each tab and its parts."""
    return (LOOP, *(part for tab in tabs for part in tab.every()))


def outputs(tabs: tuple[Feature, ...] = TABS) -> tuple[Output, ...]:
    """What a decoding event may update, in the order its outputs are wired."""
    return tuple(output for feature in features(tabs) for output in feature.outputs)


def options(tabs: tuple[Feature, ...] = TABS) -> tuple[str, ...]:
    """The features' own controls, sent after the step loop's (Controls.options)."""
    return tuple(name for feature in features(tabs) for name in feature.controls)


def publishers(tabs: tuple[Feature, ...] = TABS) -> dict[str, Feature]:
    """Each event of the page that features may listen to -> the feature that publishes it."""
    return {name: feature for feature in features(tabs) for name in feature.publishes}


def unheard(tabs: tuple[Feature, ...] = TABS) -> list[str]:
    """What the table's features listen to that none of them publishes, or that two publish, one line each."""
    published = [name for feature in features(tabs) for name in feature.publishes]
    twice = [f"{name} is published twice" for name in sorted(set(published)) if published.count(name) > 1]
    return twice + [
        f"{feature.id} listens to {name}, which no feature publishes"
        for feature in features(tabs)
        for name in feature.listens
        if name not in published
    ]


OUTPUTS, CONTROLS = outputs(), (*DECODING_CONTROLS, *options())  # as the page is wired (the API's tests read them)
