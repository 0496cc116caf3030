"""The JSON API, built from the features' declared endpoints: no module here lists them.

`served` is what gr.api serves for one endpoint (its arguments, its documentation with its limits, a user's mistake
as a gr.Error with its message, its record as JSON); `Endpoints` calls any endpoint of a feature table as plain
Python, as the API answers it (tests, benchmarks and scripts use it with no server).
"""

from __future__ import annotations

import functools
import inspect
import logging
import typing
from collections.abc import Callable, Iterable

import gradio as gr

from ..checks import InputError
from ..feature import Endpoint, Feature, Shared
from ..messages import jsonable
from ..models.devices import use_threads
from ..request import Request

logger = logging.getLogger("attention_lab")


def documentation(endpoint: Endpoint) -> str:
    """What the API page says of an endpoint: its line, its limits, then its function's own documentation."""
    details = inspect.getdoc(endpoint.fn) or ""
    return f"{endpoint.description} {endpoint.limits.sentence()}\n\n{details}".strip()


def call(endpoint: Endpoint, shared: Shared, *args, **kwargs):
    """The endpoint's answer to `args` as JSON-ready Python, computed on the app's threads; InputError for a request
    it cannot take."""
    use_threads(shared.threads)
    return jsonable(endpoint.fn(Request(endpoint, shared), *args, **kwargs))


def served(endpoint: Endpoint, shared: Shared) -> Callable:
    """The function gr.api serves for `endpoint`: its arguments are the function's after the request, and an
    InputError reaches the client as a gr.Error with its message as it is, and one line in the log."""

    @functools.wraps(endpoint.fn)
    def answer(*args, **kwargs):
        try:
            return call(endpoint, shared, *args, **kwargs)
        except InputError as err:
            logger.info("user error: %s", err)
            raise gr.Error(str(err), print_exception=False) from None

    hints = typing.get_type_hints(endpoint.fn)
    parameters = [
        parameter.replace(annotation=hints[parameter.name])
        for parameter in list(inspect.signature(endpoint.fn).parameters.values())[1:]  # the request is the server's
    ]
    returns = str if endpoint.returns is str else dict
    answer.__signature__ = inspect.Signature(parameters, return_annotation=returns)
    answer.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": returns}
    answer.__doc__ = documentation(endpoint)
    del answer.__wrapped__  # gradio reads the signature above, not the function's
    return answer


class Endpoints:
    """Every endpoint of `features` as plain Python: `endpoints.translate("de-en", "Ich habe Hunger.")`, or
    `endpoints("continue", ...)` for a name that is a Python keyword."""

    def __init__(self, shared: Shared, features: Iterable[Feature]) -> None:
        self.shared = shared
        self.by_name = {endpoint.name: endpoint for feature in features for endpoint in feature.endpoints}

    def __call__(self, name: str, *args, **kwargs):
        return call(self.by_name[name], self.shared, *args, **kwargs)

    def __getattr__(self, name: str) -> Callable:
        if name not in self.__dict__.get("by_name", {}):
            raise AttributeError(name)
        return functools.partial(self, name)
