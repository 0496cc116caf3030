"""Heads by name: "kind:layer:head" as the API and the page write them (1-based, "*" for every layer or head, such as
"cross:2:*"), the library's 0-based Head, labels, and the choices of the heads controls."""

from __future__ import annotations

import re

from transformer import Head
from transformer.config import KINDS, ModelConfig, n_layers

from ..checks import InputError, quoted
from .kinds import NAMES


def head_name(head: Head) -> str:
    """A head as the API writes it: "cross:2:3" (1-based)."""
    return f"{head.kind}:{head.layer + 1}:{head.head + 1}"


def head_label(head: Head) -> str:
    """A head as the page shows it: "Cross · Layer 2 · Head 3"."""
    return f"{NAMES[head.kind].name.capitalize()} · Layer {head.layer + 1} · Head {head.head + 1}"


def all_heads(config: ModelConfig, kinds=KINDS) -> list[Head]:
    """Every head of the model, kinds in KINDS order, then layers and heads in model order."""
    return [Head(k, layer, h) for k in kinds for layer in range(n_layers(config, k)) for h in range(config.n_heads)]


def parse_heads(specs: object, config: ModelConfig, kinds=KINDS) -> frozenset[Head]:
    """ "kind:layer:head" strings (1-based, "*" for all) -> Heads; InputError naming the first one that is wrong."""
    if specs is None:
        specs = []
    if isinstance(specs, str):
        specs = [specs]
    if not isinstance(specs, (list, tuple)):
        raise InputError(f'Heads must be a list of "kind:layer:head" strings (got {quoted(specs)}).')
    heads = set()
    for spec in specs:
        found = re.fullmatch(r"\s*(\w+)\s*:\s*(\*|\d+)\s*:\s*(\*|\d+)\s*", str(spec))
        if not found:
            raise InputError(
                f'A head is written "kind:layer:head", such as "cross:2:3" or "cross:2:*" (got {quoted(spec)}).'
            )
        kind, layer, head = found.groups()
        if kind not in kinds:
            raise InputError(f"Unknown kind {quoted(kind)} in {quoted(spec)}: use {', '.join(kinds)}.")
        layers = _indices("layer", layer, n_layers(config, kind), spec)
        for lay in layers:
            heads.update(Head(kind, lay, h) for h in _indices("head", head, config.n_heads, spec))
    return frozenset(heads)


def _indices(name: str, value: str, size: int, spec: object) -> list[int]:
    if value == "*":
        return list(range(size))
    if not 1 <= int(value) <= size:
        raise InputError(f"No {name} {int(value)} in {quoted(spec)}: this model's {name}s are 1 to {size}.")
    return [int(value) - 1]


# describe_heads's words, as format strings: the page writes them too (trust/in_page.mjs, sent as Feature.texts)
HEADS_SAID = {
    "kind": "all {name}-attention heads",  # every head of a kind
    "layer": "{name} layer {layer} {which}",  # some of a kind's layers
    "all": "(all heads)",  # every head of a layer
    "one": "head {numbers}",
    "some": "heads {numbers}",  # the numbers joined by ", "
}


def describe_heads(heads, config: ModelConfig) -> str:
    """Heads in words, grouped: "all cross-attention heads; encoder self layer 1 (all heads); decoder self layer 2
    heads 1, 3"."""
    parts = []
    for kind in KINDS:
        layers: dict[int, list[int]] = {}
        for h in sorted(h for h in heads if h.kind == kind):
            layers.setdefault(h.layer, []).append(h.head + 1)
        full = [layer for layer, numbers in layers.items() if len(numbers) == config.n_heads]
        name = NAMES[kind].name
        if len(full) == n_layers(config, kind):
            parts.append(HEADS_SAID["kind"].format(name=name))
            continue
        for layer, numbers in layers.items():
            said = ", ".join(map(str, numbers))
            which = HEADS_SAID["all" if layer in full else "one" if len(numbers) == 1 else "some"]
            parts.append(HEADS_SAID["layer"].format(name=name, layer=layer + 1, which=which.format(numbers=said)))
    return "; ".join(parts)


def head_choices(config: ModelConfig, kinds=KINDS) -> list[tuple[str, str]]:
    """Choices for a heads control, per kind in `kinds`: all its heads, each layer's heads, then each head."""
    choices = []
    for kind in kinds:
        title = NAMES[kind].name.capitalize()
        choices.append((f"All {NAMES[kind].name}-attention heads", f"{kind}:*:*"))
        layers = range(1, n_layers(config, kind) + 1)
        choices += [(f"{title} · Layer {layer} · all heads", f"{kind}:{layer}:*") for layer in layers]
        choices += [(head_label(h), head_name(h)) for h in all_heads(config, (kind,))]
    return choices
