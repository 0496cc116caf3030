"""The head summaries the app has made, shared by every session: a summary is a function of the model, the source,
the decoding's tokens and its length limit, so a Reset and Run of the same source (or a plain decoding summarised
again after an ablation) is not measured again. The last KEPT are kept."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from ..core.grids import Summary

KEPT = 32  # summaries, about 2 KB each


class Summaries:
    def __init__(self, registry=None) -> None:
        self._kept: OrderedDict[tuple, Summary] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> Summary | None:
        """The summary of `key`, if it was made."""
        with self._lock:
            return self._kept.get(key)

    def made(self, key: tuple, make: Callable[[], Summary]) -> Summary:
        """The summary of `key`, made by `make` the first time it is asked for (outside the lock: two sessions
        asking at once both make it, and both get one)."""
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        summary = make()
        with self._lock:
            self._kept[key] = summary
            while len(self._kept) > KEPT:
                self._kept.popitem(last=False)
        return summary
