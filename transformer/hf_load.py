"""Load a transformers encoder–decoder (a Hub repo or a folder with transformers' config.json) as a Seq2SeqPipeline.

A checkpoint's kind is told from its config.json: transformers writes a "model_type", our own format has none.
transformers and sentencepiece are an optional extra (requirements-hf.txt); without them such a model gets a
message saying what to install. trust_remote_code is never set, and weights load from safetensors only: a repo with
only pickled weights (pytorch_model.bin) is refused, as our own loader refuses pickles.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path

from huggingface_hub import HfApi

from . import checkpoint
from .checkpoint import CONFIG_FILE, CheckpointError, pickled_files
from .tokenizer import WORD_BOUNDARY

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


def model_type(folder: Path) -> str | None:
    """transformers' "model_type" from the folder's config.json, or None for our own format (or no readable config)."""
    try:
        data = json.loads((Path(folder) / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    kind = data.get("model_type") if isinstance(data, dict) else None
    return str(kind) if kind else None


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
    from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer
    from transformers.models.auto.modeling_auto import MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES as SEQ2SEQ

    from .hf_model import ATTENTION, HFSeq2Seq

    config = _guarded(name, "config.json", lambda: AutoConfig.from_pretrained(folder, trust_remote_code=False))
    if not getattr(config, "is_encoder_decoder", False) or config.model_type not in SEQ2SEQ:
        raise CheckpointError(
            f"{name} is a {kind} model, not an encoder–decoder: Attention Lab shows models with an encoder, a decoder "
            "and cross-attention, such as Marian/opus-mt, BART, mBART, NLLB and T5"
        )
    _check_safetensors(Path(folder), name)
    hf = _guarded(
        name,
        "weights",
        lambda: AutoModelForSeq2SeqLM.from_pretrained(
            folder, attn_implementation=ATTENTION, use_safetensors=True, trust_remote_code=False
        ),
    )
    tokenizer = _guarded(name, "tokenizer", lambda: AutoTokenizer.from_pretrained(folder, trust_remote_code=False))
    if isinstance(tokenizer, bool) or not hasattr(tokenizer, "convert_ids_to_tokens"):
        raise CheckpointError(f"{name}: has no tokenizer (no tokenizer files next to config.json)")
    model = HFSeq2Seq(hf, name, special_ids=tokenizer.all_special_ids)
    return model, TransformersTokenizer(tokenizer, model.config)


def _guarded(name: str, what: str, load):
    """load(), with any failure as one CheckpointError naming the model and the part that failed."""
    try:
        return load()
    except CheckpointError:
        raise
    except Exception as err:  # transformers raises OSError, ValueError, KeyError... for a bad repo
        text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        if what == "tokenizer":
            raise CheckpointError(f"{name}: has no usable tokenizer ({text})") from err
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


class TransformersTokenizer:
    """A transformers tokenizer with our Tokenizer's interface. Sources get the family's own special tokens (eos at
    the end; BART's <s>, NLLB's language code first); bos_id is the decoder's start token, as in the model's config."""

    is_character_level = False

    def __init__(self, hf, config) -> None:
        self.hf = hf
        self.pad_id, self.bos_id, self.eos_id = config.pad_id, config.bos_id, config.eos_id
        self.unk_id = hf.unk_token_id
        self.vocab_size = config.tgt_vocab_size  # the model's; tokenizers may have fewer ids (T5 pads its vocabulary)
        self._special = set(hf.all_special_ids)
        self._pieces: dict[int, str] = {}

    def encode(self, text: str, add_eos: bool = True) -> list[int]:
        return list(self.hf(text, add_special_tokens=add_eos)["input_ids"])

    def decode(self, ids: Iterable[int]) -> str:
        """Text for ids, detokenised by the family's tokenizer; special tokens are dropped."""
        return self.hf.decode([int(i) for i in ids], skip_special_tokens=True)

    def id_to_token(self, token_id: int) -> str:
        """The piece for display: a word's first piece starts with "▁" (sentencepiece's mark; byte-level BPE's "Ġ" is
        shown the same way), and bytes are shown as the text they decode to."""
        if token_id not in self._pieces:
            self._pieces[token_id] = self._piece(token_id)
        return self._pieces[token_id]

    def _piece(self, token_id: int) -> str:
        piece = self.hf.convert_ids_to_tokens(token_id)
        if piece is None:
            return self.hf.unk_token or f"<{token_id}>"
        if token_id in self._special or piece.startswith(WORD_BOUNDARY):
            return piece
        text = self.hf.decode([token_id], clean_up_tokenization_spaces=False)
        return WORD_BOUNDARY + text[1:] if text.startswith(" ") else text or piece

    def token_to_id(self, token: str) -> int | None:
        token_id = self.hf.convert_tokens_to_ids(token)
        return None if token_id is None or token_id == self.unk_id and token != self.hf.unk_token else token_id

    def tokens(self, ids: Iterable[int]) -> list[str]:
        return [self.id_to_token(int(i)) for i in ids]

    def unknown_characters(self, text: str) -> list[str]:
        """Characters of `text` that come out as the unknown token, in order of first appearance."""
        if self.unk_id is None:
            return []
        found: list[str] = []
        for char in dict.fromkeys(text):
            if not char.isspace() and self.unk_id in self.hf(char, add_special_tokens=False)["input_ids"]:
                found.append(char)
        return found

    def save(self, path: str | Path) -> None:
        self.hf.save_pretrained(Path(path).parent)
