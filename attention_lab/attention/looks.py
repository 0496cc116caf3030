"""How a reader can look at the weights: the readings, the colour scales and the Focus head's mean. The page
applies them (assets/units.mjs) to the decoding it holds, and names them as here (assets/look.mjs; a test keeps the
two equal); the server reads them back only for an export."""

from __future__ import annotations

FOCUS_MEAN = "Mean of all heads"  # the Focus head choice that averages every head
READINGS = {
    "weights": "Attention weights",
    "value": "Value-weighted ‖α·v·W_o‖",
    "rollout": "Rollout",
}
SCALES = {"linear": "linear", "log": "log", "row": "per-row max"}
