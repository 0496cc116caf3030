"""Find a checkpoint folder (local or on the Hugging Face Hub), read its config, and load its weights.

Weights are read from model.safetensors only: nothing here unpickles, and pickled files are never even downloaded.
Every failure is a CheckpointError that names the file and the problem.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import torch
from huggingface_hub import snapshot_download
from huggingface_hub.errors import HFValidationError
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_model

from .config import TransformerConfig

logger = logging.getLogger(__name__)

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"
# What a checkpoint is made of: the model, its card, and a survey of its heads over a corpus where one was made
# (python -m attention_lab.survey, JSON). Anything else in a Hub repo (pickles included) is never fetched.
CHECKPOINT_FILES = [CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE, "README.md", "survey.json"]
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".ckpt")


class CheckpointError(ValueError):
    """A checkpoint that cannot be used, with the file and the reason."""


def resolve(
    name_or_path: str | Path,
    *,
    revision: str | None = None,
    cache_dir: str | Path | None = None,
    token: str | bool | None = None,
    local_files_only: bool = False,
    force_download: bool = False,
    extra_patterns: tuple[str, ...] = (),
) -> Path:
    """A local folder as it is, or a Hub repo id downloaded (or found in the cache) with snapshot_download: the
    checkpoint's own files, and those matching `extra_patterns` (the training snapshots, for example)."""
    path = Path(name_or_path)
    if path.is_dir():
        return path
    try:
        return Path(
            snapshot_download(
                repo_id=str(name_or_path),
                revision=revision,
                cache_dir=cache_dir,
                token=token,
                local_files_only=local_files_only,
                force_download=force_download,
                allow_patterns=[*CHECKPOINT_FILES, *extra_patterns],
            )
        )
    except HFValidationError as err:
        raise CheckpointError(f"{name_or_path}: not a folder and not a valid Hub repo id ({err})") from err
    except Exception as err:  # network, auth, missing repo, offline without a cached copy
        raise CheckpointError(
            f"{name_or_path}: could not get it from the Hugging Face Hub ({type(err).__name__}: {err})"
        ) from err


def model_type(folder: Path) -> str | None:
    """The "model_type" of the folder's config.json: another library's checkpoint names its model family there, ours
    has none. None for our format (or no readable config)."""
    try:
        data = json.loads((Path(folder) / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    kind = data.get("model_type") if isinstance(data, dict) else None
    return str(kind) if kind else None


def read_config(folder: Path) -> TransformerConfig:
    path = Path(folder) / CONFIG_FILE
    if not path.is_file():
        raise CheckpointError(f"{path}: missing")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"{path}: not valid JSON ({err})") from err
    try:
        return TransformerConfig.from_dict(data)
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"{path}: invalid config ({err})") from err


def check_size(model: torch.nn.Module, folder: Path) -> None:
    """Compare the parameter count `model` (built on the meta device, so nothing is allocated) would need with what
    model.safetensors holds, before the real model is built: a config.json that asks for a huge model is refused
    instead of exhausting memory."""
    path = Path(folder) / WEIGHTS_FILE
    if not path.is_file():
        return  # load_weights says what is missing
    try:
        with safe_open(str(path), framework="pt") as weights:
            stored = sum(math.prod(weights.get_slice(name).get_shape()) for name in weights.keys())  # noqa: SIM118 - safe_open is not iterable
    except (SafetensorError, OSError) as err:
        raise CheckpointError(f"{path}: not a readable safetensors file ({err})") from err
    needed = sum(p.numel() for p in model.parameters())
    if needed != stored:
        raise CheckpointError(
            f"{path}: weights do not match {CONFIG_FILE} (the config describes {needed:,} "
            f"parameters, the file holds {stored:,})"
        )


def load_weights(model: torch.nn.Module, folder: Path, device: str = "cpu") -> None:
    """Load model.safetensors into `model` strictly: a missing, unexpected or misshapen weight is an error."""
    path = Path(folder) / WEIGHTS_FILE
    if not path.is_file():
        pickles = pickled_files(folder)
        hint = (
            f"; found {', '.join(pickles)}, which is refused: weights are loaded from safetensors only"
            if pickles
            else ""
        )
        raise CheckpointError(f"{path}: missing{hint}")
    try:
        missing, unexpected = load_model(model, str(path), strict=False, device=device)
    except SafetensorError as err:
        raise CheckpointError(f"{path}: not a readable safetensors file ({err})") from err
    except (RuntimeError, ValueError) as err:  # shape mismatches, dtype problems
        raise CheckpointError(f"{path}: weights do not match {CONFIG_FILE} ({error_line(err)})") from err
    if missing or unexpected:
        raise CheckpointError(
            f"{path}: weights do not match {CONFIG_FILE} (missing: {_names(missing)}; unexpected: {_names(unexpected)})"
        )


def pickled_files(folder: Path) -> list[str]:
    """The names of the pickled weight files in `folder` (never opened: only named when they are refused)."""
    return sorted(p.name for p in Path(folder).iterdir() if p.suffix in PICKLE_SUFFIXES)


def _names(names: list[str], limit: int = 5) -> str:
    if not names:
        return "none"
    shown = ", ".join(sorted(names)[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


def error_line(err: BaseException) -> str:
    """An exception in one line, for a message: its text's first line, or its type's name when it has no text."""
    text = str(err).strip()
    return text.splitlines()[0].rstrip() if text else type(err).__name__
