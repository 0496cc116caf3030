"""Load a transformers encoder–decoder (a Hub repo or a folder with transformers' config.json) as a Seq2SeqPipeline.

transformers and sentencepiece are an optional extra (requirements-hf.txt, or `pip install ".[hf]"`); without them
such a model gets a message saying what to install, and nothing here imports them until a model is loaded.
trust_remote_code is never set, and weights load from safetensors only: a repo with only pickled weights
(pytorch_model.bin) is refused, as our own loader refuses pickles.
"""

from __future__ import annotations

import logging
from pathlib import Path

from huggingface_hub import HfApi

from transformer import checkpoint
from transformer.checkpoint import CheckpointError, error_line, model_type, pickled_files
from transformer.hub import Seq2SeqPipeline

logger = logging.getLogger(__name__)

INSTALL = "pip install -r requirements-hf.txt"
# What a transformers checkpoint needs from a Hub repo: its configs, safetensors weights and tokenizer files. Pickled
# weights (.bin, .pt, .h5, .msgpack) are never fetched.
PATTERNS = (
    "generation_config.json",
    "*.safetensors",
    "*.safetensors.index.json",
    "tokenizer*.json",
    "special_tokens_map.json",
    "added_tokens.json",
    "vocab.json",
    "vocab.txt",
    "merges.txt",
    "*.spm",
    "*.model",
)
CONVERSION_BOT = "SFconvertbot"  # the Hub's bot that proposes a safetensors copy of pickled weights


def resolve(name_or_path: str | Path, *, revision: str | None = None, local_files_only: bool = False) -> Path:
    """The folder of a transformers checkpoint: a local folder, or the Hub repo's configs, safetensors weights and
    tokenizer files. A Hub repo whose weights are pickled only (many older ones, opus-mt among them) is read from the
    Hub's safetensors conversion of it, the pull request its bot opened, when there is one."""
    folder = checkpoint.resolve(
        name_or_path, revision=revision, local_files_only=local_files_only, extra_patterns=PATTERNS
    )
    if any(folder.glob("*.safetensors")) or Path(name_or_path).is_dir() or revision or local_files_only:
        return folder
    converted = safetensors_conversion(str(name_or_path))
    if converted is None:
        return folder  # load() says that the weights are pickled only
    logger.warning(
        "%s: the main branch has pickled weights only; reading the Hub's conversion, %s", name_or_path, converted
    )
    return checkpoint.resolve(name_or_path, revision=converted, extra_patterns=PATTERNS)


def safetensors_conversion(repo_id: str) -> str | None:
    """The git reference (refs/pr/N) of the safetensors conversion that the Hub's bot proposed for `repo_id`, or None
    (none, or the Hub cannot be asked)."""
    try:
        for discussion in HfApi().get_repo_discussions(repo_id, discussion_type="pull_request"):
            if (
                discussion.author == CONVERSION_BOT
                and "safetensors" in discussion.title
                and discussion.status == "open"
            ):
                return discussion.git_reference
    except Exception as err:  # noqa: BLE001 - offline, unknown repo, rate limit: the weights are refused as they are
        logger.info("%s: no safetensors conversion looked up (%s)", repo_id, err)
    return None


def load_transformers(
    name_or_path: str | Path, *, revision: str | None = None, local_files_only: bool = False
) -> Seq2SeqPipeline:
    """The transformers encoder–decoder of a folder or a Hub repo as a Seq2SeqPipeline; CheckpointError with a clear
    reason otherwise."""
    folder = resolve(name_or_path, revision=revision, local_files_only=local_files_only)
    model, tokenizer = load(folder, str(name_or_path))
    return Seq2SeqPipeline(model, tokenizer, name=str(name_or_path), folder=folder)


def load(folder: Path, name: str):
    """The transformers model in `folder` as (HFSeq2Seq, TransformersTokenizer); CheckpointError with a clear reason
    otherwise."""
    kind = model_type(folder)
    try:
        import sentencepiece  # noqa: F401 - Marian's and T5's original tokenizers need it
        import transformers  # noqa: F401
    except ImportError as err:
        raise CheckpointError(
            f"{name} is a transformers model ({kind}): install the optional extra first, `{INSTALL}` "
            f"(transformers and sentencepiece; {err.name} is missing)"
        ) from err
    from transformers import AutoConfig, AutoTokenizer
    from transformers.models.auto.modeling_auto import MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES as SEQ2SEQ

    from .model import HFSeq2Seq
    from .tokenizer import TransformersTokenizer

    config = _guarded(name, "config.json", lambda: AutoConfig.from_pretrained(folder, trust_remote_code=False))
    if not getattr(config, "is_encoder_decoder", False) or config.model_type not in SEQ2SEQ:
        raise CheckpointError(
            f"{name} is a {kind} model, not an encoder–decoder: Attention Lab shows models with an encoder, a decoder "
            "and cross-attention, such as Marian/opus-mt, BART, mBART, NLLB and T5"
        )
    hf = load_model(folder, name)
    tokenizer = _guarded(name, "tokenizer", lambda: AutoTokenizer.from_pretrained(folder, trust_remote_code=False))
    if isinstance(tokenizer, bool) or not hasattr(tokenizer, "convert_ids_to_tokens"):
        raise CheckpointError(f"{name}: has no tokenizer (no tokenizer files next to config.json)")
    # the tokenizer's markers count as special (BART's <s>, a language code), never <unk>: it stands for text
    markers = [i for i in tokenizer.all_special_ids if i != tokenizer.unk_token_id]
    model = _guarded(name, "layout", lambda: HFSeq2Seq(hf, name, special_ids=markers))
    return model, TransformersTokenizer(tokenizer, model.config)


def load_model(folder: Path, name: str):
    """The transformers model of `folder` (safetensors only, no remote code), as loaded for the adapter."""
    from transformers import AutoModelForSeq2SeqLM

    from .calls import ATTENTION

    _check_safetensors(Path(folder), name)
    return _guarded(
        name,
        "weights",
        lambda: AutoModelForSeq2SeqLM.from_pretrained(
            folder, attn_implementation=ATTENTION, use_safetensors=True, trust_remote_code=False
        ),
    )


def _guarded(name: str, what: str, load):
    """load(), with any failure as one CheckpointError naming the model and the part that failed."""
    try:
        return load()
    except CheckpointError:
        raise
    except Exception as err:  # transformers raises OSError, ValueError, KeyError... for a bad repo
        text = error_line(err)
        if what == "tokenizer":
            raise CheckpointError(f"{name}: has no usable tokenizer ({text})") from err
        if what == "layout":  # a family whose modules the adapter cannot read (docs/adapters.md: adding one)
            raise CheckpointError(f"{name}: the adapter cannot read this family's layout ({text})") from err
        raise CheckpointError(f"{name}: its {what} could not be loaded by transformers ({text})") from err


def _check_safetensors(folder: Path, name: str) -> None:
    if any(folder.glob("*.safetensors")):
        return
    pickles = pickled_files(folder)
    found = f" (it has {', '.join(pickles)})" if pickles else ""
    raise CheckpointError(
        f"{name}: no .safetensors weights{found}, and no safetensors conversion of them on the Hub; weights are "
        "loaded from safetensors only, and pickled weights such as pytorch_model.bin are refused"
    )
