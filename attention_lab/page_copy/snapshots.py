"""A model's training snapshots in its page copy, for the Training tab's film made in the page (training/in_page.mjs).

Each snapshot is the copy's own two decoding graphs with the snapshot's weights put in by name: the graphs are the
model's, traced once, and a snapshot differs from it only in the values of its parameters (the exporter names each
initializer by its parameter, `model.<name in the state dict>`; a tensor named otherwise, the positional table, is a
constant every snapshot shares). A snapshot's parameter that float16 holds exactly (training saves them in float16:
transformer/snapshots.py) is stored as float16 and cast back to float32 inside the graph, which ONNX Runtime folds
as it loads it: the weights are the very numbers the library decodes the snapshot with, in half the bytes. A
snapshot's files are in the copy's `snapshots/<its folder>/` (encoder.onnx, decoder.onnx, weights.bin, read as the
copy's own), and config.json's "snapshots" lists every one in training order: its step, its measures, where its
files are (none: the model itself) or why it has none.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from transformer.checkpoint import error_line

from ..checks import InputError
from .graphs import WEIGHTS, shared_weights

if TYPE_CHECKING:
    from transformer import Seq2SeqPipeline
    from transformer.snapshots import Snapshot

    from ..models.snapshots import SnapshotModels

logger = logging.getLogger("attention_lab")
FOLDER = "snapshots"  # the copy's folder of them
PREFIX = "model."  # the exported module's name for the model (page_copy/graphs.py): before each parameter's name
GRAPHS = ("encoder.onnx", "decoder.onnx")


def snapshot_files(
    encoder: bytes, decoder: bytes, weights: bytes, snapshots: list[tuple[Snapshot, Seq2SeqPipeline | str]]
) -> tuple[list[dict], dict[str, bytes]]:
    """The listing of `snapshots` (each with its model, or why it could not be loaded) for config.json, and the files
    of each but the model itself by their paths in the copy, from the copy's float32 graphs (`encoder`, `decoder`)
    and the weights they read."""
    listed, files = [], {}
    for snapshot, pipeline in snapshots:
        entry = {"step": snapshot.step, "metrics": dict(snapshot.metrics), "model": snapshot.is_checkpoint}
        entry.update({"folder": None, "error": ""})
        if isinstance(pipeline, str):
            entry["error"] = pipeline
        elif not snapshot.is_checkpoint:
            folder = f"{FOLDER}/{snapshot.folder.name}/"
            try:
                state = pipeline.model.state_dict()
                graphs = [with_weights(graph, weights, state) for graph in (encoder, decoder)]
            except Exception as err:  # noqa: BLE001 - onnx raises many kinds; one snapshot must not take the copy down
                entry["error"] = f"The snapshot at {snapshot.label} cannot be made for the page: {error_line(err)}"
            else:
                blob = shared_weights(*graphs)
                files.update({folder + name: g.SerializeToString() for name, g in zip(GRAPHS, graphs, strict=True)})
                files[folder + WEIGHTS] = blob
                entry["folder"] = folder
        listed.append(entry)
    return listed, files


def with_weights(graph: bytes, weights: bytes, state: dict):
    """The graph `graph` (ONNX bytes reading `weights` as external data) with each parameter's initializer holding
    `state`'s tensor of that name instead (an onnx ModelProto, its tensors inside it: shared_weights stores them);
    KeyError for a parameter `state` lacks, ValueError for one of another shape."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    proto = onnx.load_from_string(graph)
    casts, kept = [], []
    for tensor in proto.graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:  # read from the weights: made whole again
            where = {entry.key: entry.value for entry in tensor.external_data}
            offset, length = int(where["offset"]), int(where["length"])
            tensor.raw_data = weights[offset : offset + length]
            tensor.data_location = onnx.TensorProto.DEFAULT
            del tensor.external_data[:]
        if not tensor.name.startswith(PREFIX):  # a constant the tracer wrote: every snapshot's own too
            kept.append(tensor)
            continue
        value = state[tensor.name.removeprefix(PREFIX)].detach().float().numpy()
        if list(value.shape) != list(tensor.dims):
            raise ValueError(f"{tensor.name} is {list(value.shape)} in the snapshot, {list(tensor.dims)} in the model")
        half = value.astype(np.float16)
        if np.array_equal(half.astype(np.float32), value):  # float16 holds it: half the bytes, cast back in the graph
            kept.append(numpy_helper.from_array(half, f"{tensor.name}.float16"))
            casts.append(helper.make_node("Cast", [f"{tensor.name}.float16"], [tensor.name], to=onnx.TensorProto.FLOAT))
        else:
            kept.append(numpy_helper.from_array(value, tensor.name))
    del proto.graph.initializer[:]
    proto.graph.initializer.extend(kept)
    nodes = casts + list(proto.graph.node)  # the casts first: every node reading a weight comes after them
    del proto.graph.node[:]
    proto.graph.node.extend(nodes)
    return proto


def loaded(models: SnapshotModels, name: str) -> list[tuple[Snapshot, Seq2SeqPipeline | str]] | str:
    """The snapshots of model `name`, each loaded, or the message saying why it is not; where it has none, the
    message the server gives (the copy carries it: the page says it too); none where they cannot be listed (the copy
    is made without them, and the server films them)."""
    try:
        return [(snapshot, models.pipeline(name, snapshot)) for snapshot in models.listed(name)]
    except InputError as err:
        return str(err)
    except Exception:  # a Hub that cannot be reached, and the like: the copy goes on without them
        logger.exception("the training snapshots of %s are left out of its page copy", name)
        return []
