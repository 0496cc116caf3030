"""Other model families, wrapped to meet the library's model contract (transformer.contract).

    adapters.hf     transformers encoder–decoders: Marian/opus-mt, BART, mBART, M2M100/NLLB, T5

`load_pretrained` reads a checkpoint of any family the project knows, from a folder or a Hub repo: it picks the
loader from the checkpoint's config.json (another library names its "model_type" there; ours names none).

Data flows one way: the app -> adapters -> transformer. Nothing here imports the app.
"""

from __future__ import annotations

from pathlib import Path

from transformer import Seq2SeqPipeline
from transformer import load_pretrained as load_ours
from transformer.checkpoint import model_type, resolve

from .hf import load as hf_load


def load_pretrained(
    name_or_path: str | Path, *, revision: str | None = None, local_files_only: bool = False
) -> Seq2SeqPipeline:
    """A model and its tokenizer from a folder or a Hub repo id, in our format or a transformers encoder–decoder;
    raises CheckpointError (a ValueError) saying what is wrong, as one line."""
    folder = resolve(name_or_path, revision=revision, local_files_only=local_files_only)
    if model_type(folder):
        return hf_load.load_pretrained(name_or_path, revision=revision, local_files_only=local_files_only)
    return load_ours(name_or_path, revision=revision, local_files_only=local_files_only)
