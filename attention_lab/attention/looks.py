"""How a reader can look at the weights: the readings, the colour scales and the Focus head's choices. The page
applies them (assets/units.mjs) to the decoding it holds, and names them as here (assets/look.mjs; a test keeps the
two equal); the server reads them back only for an export."""

from __future__ import annotations

from transformer.config import ModelConfig

FOCUS_MEAN = "Mean of all heads"  # the Focus head choice that averages every head
READINGS = {
    "weights": "Attention weights",
    "value": "Value-weighted ‖α·v·W_o‖",
    "rollout": "Rollout",
}
SCALES = {"linear": "linear", "log": "log", "row": "per-row max"}


def focus_choices(config: ModelConfig) -> list[str]:
    """The Focus head choices for a model: the mean, then every (layer, head) of its deepest stack, as
    "Layer l · Head h" (1-based: the page reads them back as such)."""
    n_layers = max(config.n_encoder_layers, config.n_decoder_layers)
    return [FOCUS_MEAN, *(f"Layer {lay + 1} · Head {h + 1}" for lay in range(n_layers) for h in range(config.n_heads))]
