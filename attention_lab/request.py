"""One request to an endpoint of the JSON API, as the endpoint's function sees it: the models and stores every
session shares, and the endpoint's limits. Each call decodes afresh and holds no user state; a source the endpoint
cannot take raises InputError with a message for the client."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from .checks import InputError, check_source
from .feature import Endpoint, Shared
from .models.registry import ModelEntry
from .run.state import Run, new_run

T = TypeVar("T")

TOO_LONG = (
    "The source is {n} tokens; /{endpoint} takes at most {most} (its cost grows with the length). Send a shorter text."
)


@dataclass(frozen=True)
class Request:
    endpoint: Endpoint
    shared: Shared

    def entry(self, model: str) -> ModelEntry:
        """The served model named `model` (InputError naming the ones there are, for any other)."""
        return self.shared.registry.entry(model)

    def store(self, kind: type[T]) -> T:
        return self.shared.store(kind)

    def within(self, model: str, text: str) -> None:
        """InputError if `text` is more source tokens than the endpoint takes (or unusable, as the page says)."""
        pipeline = self.entry(model).pipeline
        check_source(pipeline, text)
        n, most = len(pipeline.tokenizer.encode(text)), self.endpoint.limits.source
        if n > most:
            raise InputError(TOO_LONG.format(n=n, endpoint=self.endpoint.name, most=most))

    def run(self, model: str, text: str) -> Run:
        """A fresh run of `text` within the endpoint's limits (its new tokens capped by them and by the model)."""
        entry = self.entry(model)
        self.within(model, text)
        limit = entry.pipeline.model.config.max_new_tokens
        new = self.endpoint.limits.new
        return new_run(entry, text, max_len=limit if new is None else min(limit, new))
