"""Typed records and their one serializer: every API answer and everything the page is sent is a dataclass with
typed fields, turned into JSON here (`jsonable`), and described by the JSON Schema generated from the same classes
(`json_schema`), so that Python and the page's modules speak one language and a test sees when the two drift.

A field whose value may be left out of the JSON when it is None is annotated `Annotated[X | None, OMITTED]`; every
other field is always present (null where it has no value).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, Union

import pydantic_core
from pydantic import Field, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema

DRAFT = "https://json-schema.org/draft/2020-12/schema"
OMITTED = Field(exclude_if=lambda value: value is None)  # left out of the JSON when None


@functools.cache
def _adapter(kind: type) -> TypeAdapter:
    return TypeAdapter(kind)


def jsonable(value: Any) -> Any:
    """A record (or a list, dict or plain value holding records) as JSON-ready Python: dicts, lists, strings,
    numbers, booleans and None."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _adapter(type(value)).dump_python(value, mode="json", by_alias=True)
    return pydantic_core.to_jsonable_python(value)


class _Generator(GenerateJsonSchema):
    """Every field is required, as the serializer always writes it, unless it is OMITTED when None."""

    def field_is_required(self, field, total: bool) -> bool:
        return "serialization_exclude_if" not in field


def _closed(node: Any) -> None:
    """Objects of the schema take no property they do not declare (a key the page does not know is an error)."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            node.setdefault("additionalProperties", False)
        node.pop("discriminator", None)
        for child in node.values():
            _closed(child)
    elif isinstance(node, list):
        for child in node:
            _closed(child)


def json_schema(records: Iterable[type], title: str, description: str) -> dict:
    """The JSON Schema (draft 2020-12) of any one of `records`, each defined once under "$defs"."""
    kinds = tuple(dict.fromkeys(records))
    union = kinds[0] if len(kinds) == 1 else Union[kinds]  # noqa: UP007 - a union built from a tuple of types
    schema = TypeAdapter(union).json_schema(mode="serialization", schema_generator=_Generator)
    _closed(schema)
    return {"$schema": DRAFT, "title": title, "description": description, **schema}


@dataclass
class Computing:
    """What a slow view says while it is computed after the click that asked for it."""

    text: str
    op: Literal["computing"] = "computing"


@dataclass
class Ask:
    """The page is to ask for the slow outputs its views still wait for (the fill): they were not made in time to
    come with the answer. `n` tells one ask from the last."""

    n: int
    op: Literal["ask"] = "ask"


@dataclass
class Nothing:
    """A view with nothing to draw, and why."""

    text: str
    op: Literal["none"] = "none"
