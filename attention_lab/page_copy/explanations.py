"""Every explanations' graph a page copy has (analyses.py), in the order they are exported (graphs.explanations)."""

from __future__ import annotations

from .ablations import ABLATIONS
from .analyses import Analysis
from .attribution import ATTRIBUTION
from .decoderlens import DECODERLENS, DECODERLENS_STEP
from .flow import FLOW
from .gradients import GRADIENTS
from .patching import PATCHING
from .readings import READINGS

ANALYSES: tuple[Analysis, ...] = (
    READINGS,
    FLOW,
    PATCHING,
    ATTRIBUTION,
    DECODERLENS,
    DECODERLENS_STEP,
    ABLATIONS,
    GRADIENTS,
)
