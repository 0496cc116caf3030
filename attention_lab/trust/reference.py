"""The correct translations that Wass-to-Data measures against (attention_lab.trust.wasserstein), for the bundled de-en
model: each one's source attention mass per decoder layer, and each layer's Wass-Combo rule, in reference-de-en.npz
beside this module. benchmarks/wass_reference.py builds it from the Ding valid split: its reference translations,
held out of training and apart from the test split that benchmarks/sets/hallucination.tsv is drawn from, forced
through the model.

A reference set belongs to one set of weights: the file records the size and SHA-256 of the model.safetensors it was
built from, and a pipeline gets it only when the folder it was loaded from holds that very file. Every other model
(the reversal model, transformers models, de-en retrained) gets none, and its Wass-to-Data and Wass-Combo are NaN
(null in /score): there are no correct translations of its own to compare with. Its Wass-to-Unif needs none.

Which references a translation is compared with: the paper takes up to 1,000 whose translation length is within 10%
of the scored one's; ours are a few hundred, so the NEAREST (100) whose translation length is nearest it (ties in the
file's order). For a 15-token translation that is about 13 to 17 tokens.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from transformer.checkpoint import WEIGHTS_FILE

from ..page_copy.extras import register
from .wasserstein import ComboRule, to_data

NEAREST = 100
FILES = (Path(__file__).with_name("reference-de-en.npz"),)
PAGE_FILE = "reference.json"  # in a page copy of a model that has a reference set (page_copy/extras.py)


@dataclass(frozen=True)
class Reference:
    """Correct translations of one model, as Wass-to-Data and Wass-Combo read them."""

    masses: list[np.ndarray]  # per translation: (L, S) its source attention mass per decoder layer
    lengths: np.ndarray  # (N,): each translation's length in tokens, its end token included
    rules: list[ComboRule]  # per decoder layer
    weights: tuple[int, str]  # the size and SHA-256 of the model.safetensors they were forced through

    def nearest(self, length: int, leave_out: int | None = None) -> list[int]:
        """The NEAREST translations whose length is nearest `length` (the one at `leave_out` left out)."""
        order = np.argsort(np.abs(self.lengths - length), kind="stable")
        return [int(i) for i in order if i != leave_out][:NEAREST]

    def to_data(self, mass: np.ndarray, length: int, leave_out: int | None = None) -> list[float]:
        """Wass-to-Data per decoder layer of a translation of `length` tokens with source attention mass (L, S)."""
        picked = self.nearest(length, leave_out)
        return [to_data(mass[layer], [self.masses[i][layer] for i in picked]) for layer in range(len(mass))]


def save(reference: Reference, path: Path) -> None:
    """`reference` as a compressed .npz: the masses side by side (L, ΣS) in float32, and how to cut them apart."""
    np.savez_compressed(
        path,
        mass=np.concatenate(reference.masses, axis=1).astype(np.float32),
        sizes=np.array([m.shape[1] for m in reference.masses]),
        lengths=reference.lengths,
        threshold=np.array([r.threshold for r in reference.rules]),
        unif=np.array([r.unif for r in reference.rules]),
        data=np.array([r.data for r in reference.rules]),
        weights_size=np.array(reference.weights[0]),
        weights_sha256=np.array(reference.weights[1]),
    )


def page_file(reference: Reference) -> bytes:
    """`reference` as a page copy carries it (PAGE_FILE; trust/wasserstein.mjs reads it):
    JSON of the masses side by side, (L, ΣS) row by row, as base64 of their float32 little-endian bytes (the values
    saved, exactly), each translation's size (S) and length, and each layer's Wass-Combo rule."""
    mass = np.concatenate(reference.masses, axis=1).astype("<f4")
    return json.dumps(
        {
            "layers": mass.shape[0],
            "mass": base64.b64encode(mass.tobytes()).decode("ascii"),
            "sizes": [m.shape[1] for m in reference.masses],
            "lengths": [int(n) for n in reference.lengths],
            "rules": [
                {
                    "threshold": float(r.threshold),
                    "unif": [float(v) for v in r.unif],
                    "data": [float(v) for v in r.data],
                }
                for r in reference.rules
            ],
        }
    ).encode("utf-8")


@functools.lru_cache(maxsize=4)
def load(path: Path) -> Reference:
    """The reference set saved at `path`."""
    with np.load(path, allow_pickle=False) as f:
        masses = np.split(f["mass"].astype(np.float64), np.cumsum(f["sizes"])[:-1], axis=1)
        rules = [ComboRule(float(t), tuple(u), tuple(d)) for t, u, d in zip(f["threshold"], f["unif"], f["data"])]
        weights = (int(f["weights_size"]), str(f["weights_sha256"]))
        return Reference(masses, f["lengths"].copy(), rules, weights)


@functools.lru_cache(maxsize=16)
def _sha256(path: str, mtime_ns: int, size: int) -> str:
    """The SHA-256 of the file at `path` (cached while its time and size stay the same)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def weights_of(folder: Path) -> tuple[int, str] | None:
    """The size and SHA-256 of the model.safetensors in `folder`, or None without one."""
    path = Path(folder) / WEIGHTS_FILE
    if not path.is_file():
        return None
    stat = path.stat()
    return stat.st_size, _sha256(str(path), stat.st_mtime_ns, stat.st_size)


def reference_for(pipeline) -> Reference | None:
    """The reference set of the weights `pipeline` was loaded from, or None when there is none."""
    folder = getattr(pipeline, "folder", None)
    if folder is None:
        return None
    path = Path(folder) / WEIGHTS_FILE
    references = [load(p) for p in FILES if p.is_file()]
    if not path.is_file() or path.stat().st_size not in {r.weights[0] for r in references}:
        return None  # hash nothing whose size already rules it out (a transformers model's weights)
    weights = weights_of(folder)
    return next((r for r in references if r.weights == weights), None)


def page_copy_file(pipeline) -> bytes | None:
    """The reference set of the weights `pipeline` was loaded from as its page copy carries it, or None."""
    reference = reference_for(pipeline)
    return None if reference is None else page_file(reference)


register(PAGE_FILE, page_copy_file, (Path(__file__), *FILES))
