"""Greedy decoding driven by Python's onnxruntime over the page's two graphs (graphs.py), step by step as the page
does it: what checks the graphs against the library (tests/test_live.py) and one precision against another
(precision.py).

The graphs come as an `Exported` or as a folder holding encoder.onnx, decoder.onnx and weights.bin; `config` is the
page's config (page_copy.page_config): n_heads, n_encoder_layers, n_decoder_layers, d_model (or head_dim), bos_id,
eos_id, max_new_tokens, and "rules" (the fields of transformer.NextTokenRules, lists for tuples), the step-dependent rules
that whoever runs the graphs applies to their logits; without "rules", none beyond the graph's own.

Shapes as in graphs.py: Le and Ld encoder and decoder layers, H heads, S source positions, K head width, V vocabulary.

    >>> decoder = GraphDecoder(exported(model), config)                       # doctest: +SKIP
    >>> decoding = decoder.decode(ids)                                        # doctest: +SKIP
    >>> decoder.decode(ids, force=decoding.tokens).steps[0].outputs["cross"]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from transformer import Head, NextTokenRules

from .graphs import WEIGHTS, Exported


def sessions(graphs: Exported | Path, threads: int = 1) -> list:
    """onnxruntime sessions of the encoder and the decoder graph, on `threads` threads each."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    if isinstance(graphs, Exported):
        blob = np.frombuffer(graphs.weights, np.uint8)
        options.add_external_initializers_from_files_in_memory([WEIGHTS], [blob], [len(blob)])
        return [ort.InferenceSession(graph, options) for graph in (graphs.encoder, graphs.decoder)]
    return [ort.InferenceSession(str(Path(graphs) / f"{name}.onnx"), options) for name in ("encoder", "decoder")]


def analysis_session(graphs: Exported, name: str, threads: int = 1):
    """An onnxruntime session of the explanations' graph `name` of `graphs` (analyses.py), reading their weights."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    blob = np.frombuffer(graphs.weights, np.uint8)
    options.add_external_initializers_from_files_in_memory([WEIGHTS], [blob], [len(blob)])
    return ort.InferenceSession(graphs.analyses[name], options)


def keep_masks(config: dict, ablated: Iterable[Head] = ()) -> dict[str, np.ndarray]:
    """The graphs' head masks (layers, H) per kind: 1, and 0 for each head of `ablated`."""
    H, Ld = config["n_heads"], config["n_decoder_layers"]
    layers = {"encoder": config["n_encoder_layers"], "decoder_self": Ld, "cross": Ld}
    keep = {kind: np.ones((n, H), np.float32) for kind, n in layers.items()}
    for head in ablated:
        keep[head.kind][head.layer, head.head] = 0.0
    return keep


def rules_of(config: dict) -> NextTokenRules:
    """The page config's step-dependent rules (none when it has no "rules")."""
    given = config.get("rules") or {}
    return NextTokenRules(**{key: tuple(v) if isinstance(v, list) else v for key, v in given.items()})


@dataclass
class Step:
    token: int  # written, or forced
    logits: np.ndarray  # (V,) the graph's logits with the rules of this step applied (-inf: may not be written)
    outputs: dict[str, np.ndarray]  # the decoder graph's outputs but the cache: self (Ld, H, P + 1), cross (Ld, H, S),
    # self_norms (Ld, H)


@dataclass
class GraphDecoding:
    """A greedy (or forced) decoding by the two graphs: what the encoder gave, and each step."""

    encoder: dict[str, np.ndarray]  # the encoder graph's outputs: encoder (Le, H, S, S), cross_k (Ld, H, S, K), ...
    steps: list[Step] = field(default_factory=list)

    @property
    def tokens(self) -> list[int]:
        return [step.token for step in self.steps]


class GraphDecoder:
    """Greedy decoding over the two graphs with onnxruntime, with heads ablated (transformer.Head) and with tokens
    forced (teacher forcing: the same tokens through another model, to compare what it reads on them)."""

    def __init__(self, graphs: Exported | Path, config: dict, ablated: Iterable[Head] = (), threads: int = 1):
        self.encoder, self.decoder = sessions(graphs, threads)
        self.config = config
        self.keep = keep_masks(config, ablated)
        self.rules = rules_of(config)
        self.names = [o.name for o in self.decoder.get_outputs()]
        self.inputs = [[i.name for i in session.get_inputs()] for session in (self.encoder, self.decoder)]

    def encode(self, source: Sequence[int]) -> dict[str, np.ndarray]:
        feeds = {"source": np.array([source], np.int64), "keep_encoder": self.keep["encoder"]}
        outputs = self.encoder.run(None, {name: feeds[name] for name in self.inputs[0]})
        return dict(zip([o.name for o in self.encoder.get_outputs()], outputs))

    def decode(self, source: Sequence[int], force: Sequence[int] | None = None) -> GraphDecoding:
        """The greedy decoding of `source` (ids, eos included) up to eos or max_new_tokens; with `force`, those tokens
        are written instead, one a step, whatever the logits say (the steps' outputs are what the graphs read on
        them)."""
        c = self.config
        decoding = GraphDecoding(self.encode(source))
        shape = (c["n_decoder_layers"], c["n_heads"], 0, c.get("head_dim") or c["d_model"] // c["n_heads"])
        past_k = past_v = np.zeros(shape, np.float32)
        fixed = {"cross_k": decoding.encoder["cross_k"], "cross_v": decoding.encoder["cross_v"]}
        fixed.update(keep_self=self.keep["decoder_self"], keep_cross=self.keep["cross"])
        token, limit = c["bos_id"], c["max_new_tokens"]
        steps = limit if force is None else len(force)
        while len(decoding.steps) < steps:
            feeds = {"token": np.array([[token]], np.int64), "past_k": past_k, "past_v": past_v, **fixed}
            out = dict(zip(self.names, self.decoder.run(None, {name: feeds[name] for name in self.inputs[1]})))
            logits = self.rules.apply(torch.from_numpy(out.pop("logits")), len(decoding.steps), limit).numpy()
            past_k, past_v = out.pop("next_k"), out.pop("next_v")
            token = int(np.argmax(logits)) if force is None else int(force[len(decoding.steps)])
            decoding.steps.append(Step(token, logits, out))
            if force is None and token == c["eos_id"]:
                break
        return decoding
