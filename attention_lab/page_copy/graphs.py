"""A model as two ONNX graphs that a page runs with ONNX Runtime Web: the encoder, and one decoder step with the KV
cache as inputs and outputs. Each graph gives every head's weights and what the readings need as named outputs
(ONNX Runtime returns nothing else), so the page draws what the app draws.

    encoder:  source (1, S) ids, keep_encoder (Le, H) -> encoder (Le, H, S, S) weights, encoder_norms (Le, H, S) ||v W_o||,
              encoder_rollout (Le, S, S), cross_k and cross_v (Ld, H, S, K) the memory's keys and values for every
              decoder layer, cross_norms (Ld, H, S)
    decoder:  token (1, 1) the previous token, past_k and past_v (Ld, H, P, K) the cache (P may be 0: the first step),
              cross_k, cross_v, keep_self and keep_cross (Ld, H) -> logits (V) with what the model never writes at
              -inf, next_k and next_v (Ld, H, P + 1, K), self (Ld, H, P + 1) and cross (Ld, H, S) this step's weights,
              self_norms (Ld, H) the new key's ||v W_o||

The `keep_*` inputs are head masks: each head's output is multiplied by its entry (1 keeps it, 0 ablates it, as
transformer.Interventions(ablate=...) does at hook_z), so a page decodes with heads ablated too. The position of a
step is the cache's length. The rules that depend on the step (a token forced first, eos held back or forced at the
limit) are the page's to apply (page_copy.page_config gives them).

Both graphs are traced from the model's own encode and decode, through the contract (transformer.contract): our
Transformer, or a transformers model through the adapter (attention_lab.adapters.hf), whose forward is transformers'
own; three members beyond the contract say where a family keeps its keys and values (`cross_keys_values`,
`cache_from`, the cache's `self_keys_values`). So what the graphs compute is what the app computes;
tests/test_live.py and tests/test_live_hf.py run them with Python's onnxruntime against the library and against
transformers. The weights of both graphs are stored once, in one file beside them (ONNX external data), which the
page hands to both sessions.
"""

from __future__ import annotations

import hashlib
import io
import logging
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn

from transformer import hooks as hook_points
from transformer.attention import value_norms
from transformer.checkpoint import error_line
from transformer.contract import NextTokenRules, Seq2SeqModel
from transformer.readings import rollout

from . import explanations
from .analyses import kept
from .step import decoder_step

logger = logging.getLogger("attention_lab")
OPSET = 17
WEIGHTS = "weights.bin"  # the external data both graphs read
ENCODER_INPUTS = ("source", "keep_encoder")
ENCODER_OUTPUTS = ("encoder", "encoder_norms", "encoder_rollout", "cross_k", "cross_v", "cross_norms")
DECODER_INPUTS = ("token", "past_k", "past_v", "cross_k", "cross_v", "keep_self", "keep_cross")
DECODER_OUTPUTS = ("logits", "next_k", "next_v", "self", "cross", "self_norms")


class EncoderGraph(nn.Module):
    """The encoder as the page runs it (see the module's docstring)."""

    def __init__(self, model: Seq2SeqModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, source: torch.Tensor, keep_encoder: torch.Tensor):
        model = self.model
        with hook_points.using(kept("encoder", keep_encoder)):
            enc = model.encode(source, output_attentions=True)
        weights = torch.stack([w[0] for w in enc.attentions])
        norms = torch.stack([n[0] for n in model.encoder_value_norms(enc)])
        rolled = torch.stack(rollout([w[0] for w in enc.attentions]))
        kv = model.cross_keys_values(enc.memory)
        cross_k, cross_v = torch.stack([k[0] for k, _ in kv]), torch.stack([v[0] for _, v in kv])
        cross_norms = torch.stack(
            [value_norms(v, model.sublayer("cross", layer).w_o)[0] for layer, (_, v) in enumerate(kv)]
        )
        return weights, norms, rolled, cross_k, cross_v, cross_norms


class DecoderGraph(nn.Module):
    """One decoding step with the KV cache as inputs and outputs (see the module's docstring)."""

    def __init__(self, model: Seq2SeqModel) -> None:
        super().__init__()
        self.model = model
        self.banned = NextTokenRules(banned=model.rules.banned)  # the rules of a step are the page's to apply

    def forward(self, token, past_k, past_v, cross_k, cross_v, keep_self, keep_cross):
        model = self.model
        layers = [(past_k[i][None], past_v[i][None], cross_k[i][None], cross_v[i][None]) for i in range(len(past_k))]
        dec = decoder_step(model, token, layers, keep_self, keep_cross, output_attentions=True)
        logits = self.banned.apply(model.project(dec.hidden[0, -1]), 0)
        own = dec.cache.self_keys_values()
        next_k, next_v = torch.stack([k[0] for k, _ in own]), torch.stack([v[0] for _, v in own])
        self_weights = torch.stack([w[0, :, -1] for w in dec.self_attentions])
        cross_weights = torch.stack([w[0, :, -1] for w in dec.cross_attentions])
        norms = torch.stack(
            [
                value_norms(v[:, :, -1:], model.sublayer("decoder_self", layer).w_o)[0, :, 0]
                for layer, (_, v) in enumerate(own)
            ]
        )
        return logits, next_k, next_v, self_weights, cross_weights, norms


@dataclass
class Exported:
    """The graphs (ONNX bytes whose weights are external data) and the weights they read: the two that decode, and
    the explanations' (analyses.py: by name, those the model has)."""

    encoder: bytes
    decoder: bytes
    weights: bytes
    analyses: dict[str, bytes] = field(default_factory=dict)

    def graphs(self) -> dict[str, bytes]:
        """Each graph by its file's stem ({name}.onnx): the encoder, the decoder, then the explanations'."""
        return {"encoder": self.encoder, "decoder": self.decoder, **self.analyses}


def exported(model: Seq2SeqModel, gradients: bool = True) -> Exported:
    """`model` (ours or an adapter's, in eval mode on the CPU) as the page's two graphs and the explanations', each
    weight stored once; without `gradients`, but the gradients graph (its export takes half a minute)."""
    cfg = model.config
    src = torch.tensor([[5, 6, 7, cfg.eos_id]])
    H = cfg.n_heads
    keep_e, keep_d = torch.ones(cfg.n_encoder_layers, H), torch.ones(cfg.n_decoder_layers, H)
    with torch.no_grad():
        kv = EncoderGraph(model)(src, keep_e)[3:5]
    past = torch.zeros(cfg.n_decoder_layers, H, 2, kv[0].size(-1))
    axes_s = {"source": {1: "S"}, "cross_k": {2: "S"}, "cross_v": {2: "S"}}
    encoder = _traced(
        EncoderGraph(model),
        (src, keep_e),
        ENCODER_INPUTS,
        ENCODER_OUTPUTS,
        {
            **axes_s,
            "encoder": {2: "S", 3: "S"},
            "encoder_norms": {2: "S"},
            "encoder_rollout": {1: "S", 2: "S"},
            "cross_norms": {2: "S"},
        },
    )
    decoder = _traced(
        DecoderGraph(model),
        (torch.tensor([[cfg.bos_id]]), past, past, *kv, keep_d, keep_d.clone()),
        DECODER_INPUTS,
        DECODER_OUTPUTS,
        {
            "past_k": {2: "P"},
            "past_v": {2: "P"},
            "cross_k": {2: "S"},
            "cross_v": {2: "S"},
            "next_k": {2: "P1"},
            "next_v": {2: "P1"},
            "self": {2: "P1"},
            "cross": {2: "S"},
        },
    )
    return stored(encoder, decoder, traced_analyses(model, gradients))


def stored(encoder, decoder, analyses: dict) -> Exported:
    """The traced graphs (onnx ModelProtos holding their weights, changed in place; `analyses` by name, in
    explanations.ANALYSES' order) as an Exported, each weight stored once (shared_weights)."""
    blob = shared_weights(encoder, decoder, *analyses.values())
    made = {name: graph.SerializeToString() for name, graph in analyses.items()}
    return Exported(encoder.SerializeToString(), decoder.SerializeToString(), blob, made)


def traced_analyses(model: Seq2SeqModel, gradients: bool = True, wanted=None) -> dict:
    """The explanations' graphs (`wanted`: explanations.ANALYSES by default, or some of them) as onnx ModelProtos by
    name, but those the model's sublayers cannot be read for (their explanations stay on the server; the model still
    decodes in the page), and, without `gradients`, the gradients graph. A graph whose pass differentiates is
    exported in a process of its own (`differentiated`, the longest by far), begun first, so that the others are
    traced meanwhile."""
    made, wanted = {}, explanations.ANALYSES if wanted is None else wanted
    differentiating = [graph for graph in wanted if graph.gradients and gradients]
    with ThreadPoolExecutor(1, thread_name_prefix="differentiated") as pool:
        begun = {graph.name: pool.submit(differentiated, graph, model) for graph in differentiating}
        for graph in [*(graph for graph in wanted if not graph.gradients), *differentiating]:
            try:
                module, example = graph.module(model), graph.example(model)
                if graph.name in begun:
                    made[graph.name] = runs_as_traced(begun[graph.name].result(), module, example)
                else:
                    made[graph.name] = _traced(module, example, graph.inputs, graph.outputs, graph.axes)
            except (ValueError, TypeError, RuntimeError) as err:
                logger.warning("no %s graph for this model (%s): made on the server", graph.name, error_line(err))
    return {graph.name: made[graph.name] for graph in wanted if graph.name in made}


def shared_weights(*graphs) -> bytes:
    """The blob (WEIGHTS) that `graphs` (onnx ModelProtos, changed in place) read their tensors of 1 KB or more from
    as external data, their weights and their large constants (stored_constants): each distinct tensor (by its bytes)
    stored once, 64-byte aligned."""
    import onnx

    blob = bytearray()
    seen: dict[bytes, tuple[int, int]] = {}
    for graph in graphs:
        stored_constants(graph)
        for tensor in graph.graph.initializer:
            raw = tensor.raw_data
            if len(raw) < 1024:  # small constants stay inside the graph
                continue
            digest = hashlib.sha256(raw).digest()
            if digest not in seen:
                blob.extend(b"\0" * (-len(blob) % 64))
                seen[digest] = (len(blob), len(raw))
                blob.extend(raw)
            offset, length = seen[digest]
            onnx.external_data_helper.set_external_data(tensor, WEIGHTS, offset, length)
            tensor.data_location = onnx.TensorProto.EXTERNAL
            tensor.ClearField("raw_data")
    return bytes(blob)


def stored_constants(graph) -> None:
    """Each Constant node of `graph` (an onnx ModelProto, changed in place) whose tensor is 1 KB or more made an
    initializer of the same name, which shared_weights stores in the blob: the tracer writes a buffer it reads (the
    positional encodings' table, 128 KB for de-en) into every graph as a constant, so each graph held its own copy."""
    import onnx

    kept = []
    for node in graph.graph.node:
        value = [a.t for a in node.attribute if a.name == "value"] if node.op_type == "Constant" else []
        if value and len(value[0].raw_data) >= 1024:
            tensor = onnx.TensorProto()
            tensor.CopyFrom(value[0])
            tensor.name = node.output[0]
            graph.graph.initializer.append(tensor)
        else:
            kept.append(node)
    if len(kept) < len(graph.graph.node):
        graph.graph.ClearField("node")
        graph.graph.node.extend(kept)


# torch's exporter keeps its state in the process (a second export begun during one fails): one at a time, as the
# app makes a model's copy in the background while a live page or another copy is being exported
EXPORTING = threading.Lock()


def _traced(module: nn.Module, args: tuple, inputs, outputs, axes: dict):
    import onnx

    buffer = io.BytesIO()
    with EXPORTING, torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on Python values it took as constants
        torch.onnx.export(
            module.eval(),
            args,
            buffer,
            input_names=list(inputs),
            output_names=list(outputs),
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=False,
        )
    return onnx.load_from_string(buffer.getvalue())


def differentiated(graph, model: Seq2SeqModel):
    """The explanations' graph `graph` (an Analysis whose pass differentiates) of `model`, as an onnx ModelProto,
    exported in a Python process of its own (page_copy/differentiated.py says how): torch.fx keeps its tracing state
    in one global of the process (torch.fx.traceback.current_meta), which a trace replaces as it ends, and a trace in
    the app's background thread broke torch calls made meanwhile in other threads (a KeyError from
    torch.fx.traceback.annotate, in the tests). The model goes to that process as a checkpoint (save_pretrained:
    safetensors and its config), which it loads again; the graph comes back as its bytes."""
    import os
    import subprocess
    import sys
    import tempfile

    import onnx

    home = str(Path(__file__).resolve().parents[2])  # where attention_lab is imported from, wherever the app runs
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [home, os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory() as folder:  # another process: the exporter's state here is not touched
        model.save_pretrained(folder)
        command = [sys.executable, "-m", "attention_lab.page_copy.differentiated", folder, graph.name]
        done = subprocess.run(command, capture_output=True, env=env, check=False)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(said[-1] if said else f"the export ended with code {done.returncode}")
    return onnx.load_from_string(done.stdout)


def runs_as_traced(graph, module: nn.Module, args: tuple, within: float = 1e-3):
    """`graph` (an onnx ModelProto holding its weights), once ONNX Runtime has run it on `args` and given what
    `module` gives, each output within `within` of its largest value; a ValueError otherwise. The dynamo exporter
    writes some graphs it cannot run (a transformers BART's: a ScatterElements of the wrong rank)."""
    import numpy as np
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(graph.SerializeToString(), providers=["CPUExecutionProvider"])
        got = session.run(None, {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)})
    except Exception as err:  # onnxruntime's own errors: the graph does not run
        raise ValueError(f"the exported graph does not run ({error_line(err)})") from err
    with torch.no_grad():
        expected = [t.detach().numpy() for t in module(*args)]
    for name, ours, theirs in zip([o.name for o in graph.graph.output], got, expected):
        scale = max(1.0, float(np.abs(theirs).max())) if theirs.size else 1.0
        if ours.shape != theirs.shape or (theirs.size and float(np.abs(ours - theirs).max()) > within * scale):
            raise ValueError(f"the exported graph's {name} is not the model's")
    return graph


def check(folder: Path) -> None:
    """onnx's full check of every graph written into `folder` with their weights beside them; raises if one fails."""
    import onnx

    for path in sorted(folder.glob("*.onnx")):
        onnx.checker.check_model(str(path), full_check=True)
