"""The trained models that ship with Attention Lab, wherever it is installed: the checkpoints/ folder of the
repository beside this package, or, installed (pip install .), the copy the app carries as its data
(attention_lab/checkpoints, beside this package in site-packages).

>>> from transformer import bundled, load_pretrained
>>> load_pretrained(bundled("reverse")).generate(["abc"])
['cba']
"""

from __future__ import annotations

from pathlib import Path

from .checkpoint import CONFIG_FILE, CheckpointError

HERE = Path(__file__).resolve().parent.parent
# The repository's checkpoints/ folder first (a clone), then the installed distribution's copy of it.
PLACES = (HERE / "checkpoints", HERE / "attention_lab" / "checkpoints")
BUNDLED = next((place for place in PLACES if place.is_dir()), PLACES[0])


def bundled_names(folder: Path = BUNDLED) -> list[str]:
    """The models in a folder of checkpoints (the bundled ones: "de-en", "reverse"), sorted; [] when there is none."""
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / CONFIG_FILE).is_file())


def bundled(name: str) -> Path:
    """The folder of the bundled model `name`, for load_pretrained; CheckpointError naming those there are."""
    if name not in bundled_names():
        there = ", ".join(bundled_names()) or f"none: {BUNDLED} is missing"
        raise CheckpointError(f"{name!r} is not a bundled model (there are: {there})")
    return BUNDLED / name
