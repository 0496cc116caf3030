"""A model together with its tokenizer: load from a folder or a Hub repo, generate text, save, push.

>>> from transformer import bundled, load_pretrained
>>> m = load_pretrained(bundled("de-en"))      # or a folder, or a Hub repo id such as "user/attention-lab-de-en"
>>> m.generate(["Wo ist der Bahnhof?"])
['Where’s the station?']
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import torch

from . import checkpoint, snapshots
from .checkpoint import CheckpointError
from .contract import ModelConfig, Seq2SeqModel, Seq2SeqTokenizer
from .decoding import beam_search, greedy_decode
from .model import Transformer
from .tokenizer import Tokenizer

logger = logging.getLogger(__name__)


class Seq2SeqPipeline:
    """A model and the tokenizer it was trained with (any that meet transformer.contract); the tokenizer travels with
    the model."""

    def __init__(
        self, model: Seq2SeqModel, tokenizer: Seq2SeqTokenizer, name: str = "model", folder: Path | None = None
    ) -> None:
        check_compatible(model.config, tokenizer, name)
        self.folder = folder  # where it was loaded from (its model card is there), if anywhere
        self.model = model  # its train/eval mode is left alone: generate() switches to eval only while it runs
        self.tokenizer = tokenizer
        self.name = name

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def max_source_tokens(self) -> int:
        return self.model.config.max_len

    def truncate(self, ids: list[int]) -> list[int]:
        """Source ids (ending with eos) cut to what the model can read: the first max_len - 1 tokens, then eos.

        >>> from transformer import Transformer, TransformerConfig
        >>> from transformer.tokenizer import Tokenizer
        >>> tok = Tokenizer.characters("abc")
        >>> cfg = TransformerConfig(src_vocab_size=7, tgt_vocab_size=7, d_model=8, n_heads=2, n_encoder_layers=1,
        ...                         n_decoder_layers=1, d_ff=16, max_len=4)
        >>> pipeline = Seq2SeqPipeline(Transformer(cfg), tok)
        >>> pipeline.truncate(tok.encode("abcabc"))  # a, b, c, </s>
        [4, 5, 6, 2]
        """
        if len(ids) <= self.max_source_tokens:
            return ids
        return ids[: self.max_source_tokens - 1] + [self.tokenizer.eos_id]

    def encode_batch(self, texts: list[str]) -> torch.Tensor:
        """Right-padded (B, S) source ids; sources longer than max_len keep their first max_len - 1 tokens + eos."""
        rows = [self.truncate(self.tokenizer.encode(text)) for text in texts]
        width = max(len(r) for r in rows)
        pad = self.model.config.pad_id
        return torch.tensor([r + [pad] * (width - len(r)) for r in rows], device=self.device)

    @torch.no_grad()
    def generate(
        self,
        texts: list[str],
        strategy: str = "greedy",
        beam_size: int = 4,
        max_new_tokens: int | None = None,
        length_penalty: float = 1.0,
        batch_size: int = 64,
    ) -> list[str]:
        """Decode each text with "greedy" or "beam" search; returns the detokenized outputs in order.

        Without max_new_tokens, a batch may produce up to twice its longest source plus 10 tokens (and at most the
        model's config.max_new_tokens).
        """
        if strategy not in ("greedy", "beam"):
            raise ValueError(f'strategy must be "greedy" or "beam" (got {strategy!r})')
        if strategy == "greedy":
            decode = self.tokenizer.decode
            return self._in_batches(
                texts,
                batch_size,
                max_new_tokens,
                lambda src, limit: [decode(row) for row in greedy_decode(self.model, src, limit)],
            )
        return [rows[0] for rows in self.candidates(texts, beam_size, max_new_tokens, length_penalty, batch_size)]

    @torch.no_grad()
    def candidates(
        self,
        texts: list[str],
        beam_size: int = 4,
        max_new_tokens: int | None = None,
        length_penalty: float = 1.0,
        batch_size: int = 64,
    ) -> list[list[str]]:
        """Every hypothesis beam search ends with for each text, detokenized, best first."""

        def search(src: torch.Tensor, limit: int) -> list[list[str]]:
            results = beam_search(self.model, src, beam_size, limit, length_penalty)
            return [[self.tokenizer.decode(hyp) for hyp, _ in r.candidates] for r in results]

        return self._in_batches(texts, batch_size, max_new_tokens, search)

    def _in_batches(self, texts: list[str], batch_size: int, max_new_tokens: int | None, decode) -> list:
        """decode(src, limit) over batches of texts, in eval mode; its outputs in order."""
        outputs = []
        was_training = self.model.training
        self.model.eval()
        try:
            for start in range(0, len(texts), batch_size):
                src = self.encode_batch(texts[start : start + batch_size])
                outputs.extend(decode(src, max_new_tokens or default_limit(src)))
        finally:
            self.model.train(was_training)
        return outputs

    def save_pretrained(self, folder: str | Path) -> None:
        """config.json + model.safetensors + tokenizer.json (the model card is written separately)."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(folder)
        self.tokenizer.save(folder / checkpoint.TOKENIZER_FILE)

    def push_to_hub(self, repo_id: str, folder: str | Path, token: str | None = None, private: bool = False) -> str:
        """Upload a saved checkpoint folder (weights, config, tokenizer, model card, and its training snapshots if it
        has any) to the Hub; returns its URL."""
        from huggingface_hub import HfApi

        api = HfApi(token=token)
        api.create_repo(repo_id, private=private, exist_ok=True)
        return api.upload_folder(
            repo_id=repo_id, folder_path=str(folder), allow_patterns=[*checkpoint.CHECKPOINT_FILES, *snapshots.PATTERNS]
        )


def default_limit(src: torch.Tensor) -> int:
    """The most new tokens a batch src (B, S) decodes when no limit is asked for: twice its longest source plus 10
    (the model's config.max_new_tokens still caps it)."""
    return 2 * src.size(1) + 10


def check_compatible(config: ModelConfig, tokenizer: Seq2SeqTokenizer, name: str) -> None:
    # One tokenizer serves both sides, so both vocabularies must be exactly its size.
    if not tokenizer.vocab_size == config.src_vocab_size == config.tgt_vocab_size:
        raise CheckpointError(
            f"{name}/{checkpoint.TOKENIZER_FILE}: vocabulary of {tokenizer.vocab_size} tokens does not match "
            f"config.json (src_vocab_size={config.src_vocab_size}, tgt_vocab_size={config.tgt_vocab_size})"
        )
    specials = (config.pad_id, config.bos_id, config.eos_id)
    if specials != (tokenizer.pad_id, tokenizer.bos_id, tokenizer.eos_id):
        raise CheckpointError(f"{name}: special token ids in config.json {specials} differ from the tokenizer's")


Loader = Callable[..., Seq2SeqPipeline]  # (name_or_path, *, revision, local_files_only) -> a pipeline
# Loaders of other libraries' checkpoints, by the model_type their config.json names (None: any model_type), added by
# adapters for other families when they are imported (attention_lab.adapters; register_loader).
LOADERS: dict[str | None, Loader] = {}


def register_loader(loader: Loader, model_types: tuple[str, ...] | None = None) -> None:
    """Let load_pretrained read checkpoints of another library whose config.json names one of `model_types` (None:
    any model_type), through `loader`, which returns a pipeline whose model meets transformer.contract."""
    for name in model_types or (None,):
        LOADERS[name] = loader


def load_pretrained(
    name_or_path: str | Path, *, revision: str | None = None, local_files_only: bool = False, map_location: str = "cpu"
) -> Seq2SeqPipeline:
    """Load model and tokenizer from a folder or a Hub repo id; raises CheckpointError naming the file at fault.

    A checkpoint in this library's format loads here; one of another library (its config.json names a "model_type")
    loads through the loader registered for it (register_loader: `import attention_lab.adapters` registers the adapters beside
    this library), and is refused with a message saying so when there is none.
    """
    folder = checkpoint.resolve(name_or_path, revision=revision, local_files_only=local_files_only)
    family = checkpoint.model_type(folder)
    if family:
        loader = LOADERS.get(family) or LOADERS.get(None)
        if loader is None:
            raise CheckpointError(
                f"{name_or_path}: a {family} checkpoint of another library (its config.json names a model_type); "
                "`import attention_lab.adapters` first, which lets load_pretrained read the families it adapts"
            )
        return loader(name_or_path, revision=revision, local_files_only=local_files_only)
    model = Transformer.from_pretrained(folder, map_location=map_location)
    tokenizer_path = folder / checkpoint.TOKENIZER_FILE
    if not tokenizer_path.is_file():
        raise CheckpointError(f"{tokenizer_path}: missing")
    try:
        tokenizer = Tokenizer.load(tokenizer_path)
    except Exception as err:  # tokenizers raises plain Exceptions for malformed JSON
        raise CheckpointError(f"{tokenizer_path}: not a readable tokenizer ({err})") from err
    return Seq2SeqPipeline(model, tokenizer, name=str(name_or_path), folder=folder)
