"""How close two float32 results of the same computation, reached by two routes, must be.

float32 keeps 24 bits: every operation rounds its result to about eps = 1.19e-7 of its size. Two routes to one
number (a KV cache and a full recompute; our forward and transformers' own or torch's; the same kernels on a CPU with
other vector widths, which sum in another order) therefore agree to some eps of the size of the values they pass
through, not of each result: an attribution of 0.01 made from terms of size 20 can be off by 20 · k · eps. So each
tolerance here is `ulps` units of float32's eps times the largest value compared, and `ulps` is set at each call to
several times the worst difference measured (tests/test_tolerance.py shows that a real error still fails).

To measure on a new machine: TOLERANCE_LOG=FILE bash tests/run.sh -k ... appends each comparison's name, its worst
difference in eps of the largest value, and the ulps it allows, to FILE.
"""

from __future__ import annotations

import os

import numpy as np
import torch

EPS = float(torch.finfo(torch.float32).eps)  # 2 ** -23


def as_array(values) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().double().numpy()
    return np.asarray(values, dtype=np.float64)


def tolerance(*compared, ulps: float) -> float:
    """`ulps` float32 eps of the largest finite absolute value among `compared` (arrays or tensors)."""
    finite = [np.abs(a[np.isfinite(a)]) for a in map(as_array, compared)]
    return ulps * EPS * max((float(a.max(initial=0.0)) for a in finite), default=0.0)


def gap(actual, expected) -> float:
    """The largest difference between finite values (where one side is not finite, so must the other be)."""
    a, e = as_array(actual), as_array(expected)
    finite = np.isfinite(a) & np.isfinite(e)
    assert np.array_equal(a[~finite], e[~finite], equal_nan=True), "they differ where a value is not finite"
    return float(np.abs(a[finite] - e[finite]).max(initial=0.0))


def assert_close(actual, expected, *, ulps: float, what: str = "", scale=None) -> None:
    """`actual` equals `expected` to within `ulps` float32 eps of the largest value compared (either side), or of
    the largest of `scale` when the values compared are differences of larger ones (a fall in log p)."""
    a, e = as_array(actual), as_array(expected)
    assert a.shape == e.shape, f"{what}: shapes {a.shape} and {e.shape}"
    sizes = (a, e) if scale is None else (scale,)
    difference, unit = gap(a, e), tolerance(*sizes, ulps=1)
    measured = difference / unit if unit else (0.0 if difference == 0 else float("inf"))
    if os.environ.get("TOLERANCE_LOG"):
        with open(os.environ["TOLERANCE_LOG"], "a", encoding="utf-8") as log:
            log.write(f"{what}\t{measured:.1f}\t{ulps}\n")
    assert measured <= ulps, (
        f"{what}: differ by {difference:.3g}, {measured:.0f} eps of the largest value; {ulps} allowed"
    )
