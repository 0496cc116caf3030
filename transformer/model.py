"""The encoder-decoder Transformer: embeddings, encode / decode / forward, and the output projection.

It meets the library's model contract (transformer.contract.Seq2SeqModel) natively: decoding, the readings and the
app's head tests drive it through that contract alone.

Dimension key: B batch, H heads, S source positions, T target positions, P cached target positions, D d_model, V vocabulary.
Masks follow the package convention (bool, True = may attend; see attention.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import torch
from huggingface_hub import PyTorchModelHubMixin
from torch import nn

from . import checkpoint
from .attention import MultiHeadAttention
from .config import TransformerConfig
from .contract import KINDS, AttentionSublayer, DecoderOutput, EncoderOutput, NextTokenRules
from .hooks import name_points
from .interventions import Interventions, held
from .layers import Decoder, Encoder, LayerCache
from .masks import causal_mask, padding_mask


@dataclass
class Attentions:
    """Every head's attention weights, one tensor per layer, never averaged. Masked cells are exactly 0."""

    encoder: tuple[torch.Tensor, ...]  # per encoder layer: (B, H, S, S)
    decoder_self: tuple[torch.Tensor, ...]  # per decoder layer: (B, H, T, T), or (B, H, T, P+T) with a cache
    cross: tuple[torch.Tensor, ...]  # per decoder layer: (B, H, T, S)


@dataclass
class Seq2SeqOutput:
    logits: torch.Tensor  # (B, T, V)
    attentions: Attentions | None = None


@dataclass
class KVCache:
    """Keys and values of the target positions decoded so far, so that the next step costs one position."""

    layers: list[LayerCache]
    tgt_key_mask: torch.Tensor  # (B, P): True at real (non-padding) target tokens

    @property
    def length(self) -> int:
        return self.tgt_key_mask.size(1)

    def truncate(self, length: int) -> KVCache:
        """The cache as it was after `length` positions (for stepping back)."""
        return KVCache(
            [LayerCache(c.self_k[:, :, :length], c.self_v[:, :, :length], c.cross_k, c.cross_v) for c in self.layers],
            self.tgt_key_mask[:, :length],
        )

    def select(self, index: torch.Tensor) -> KVCache:
        """Reorder or repeat batch rows (beam search): row i of the result is row index[i] of this cache."""
        return KVCache(
            [
                LayerCache(*(t.index_select(0, index) for t in (c.self_k, c.self_v, c.cross_k, c.cross_v)))
                for c in self.layers
            ],
            self.tgt_key_mask.index_select(0, index),
        )

    def self_keys_values(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per decoder layer, the cached self-attention keys and values, each (B, H, P, K) (the page's graphs hand
        them from step to step)."""
        return [(c.self_k, c.self_v) for c in self.layers]


def sinusoidal_positions(max_len: int, d_model: int) -> torch.Tensor:
    """(max_len, D) table: PE[pos, 2i] = sin(pos / 10000^(2i/D)), PE[pos, 2i+1] = cos(same)."""
    position = torch.arange(max_len, dtype=torch.float32)[:, None]
    inv_freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    table = torch.zeros(max_len, d_model)
    table[:, 0::2] = torch.sin(position * inv_freq)
    table[:, 1::2] = torch.cos(position * inv_freq)[:, : d_model // 2]
    return table


class Transformer(
    nn.Module,
    PyTorchModelHubMixin,
    library_name="attention-lab",
    tags=["translation", "attention-visualization", "seq2seq"],
    paper_url="https://arxiv.org/abs/1706.03762",
):
    """Encoder-decoder Transformer (Vaswani et al. 2017) that can return every head's attention weights.

    Args:
        config: a TransformerConfig.

    Shape:
        forward(src, tgt): src (B, S) int64, tgt (B, T) int64 decoder input (starting with bos) -> logits (B, T, V).
        Padding (config.pad_id) in src or tgt is masked out as a key; the decoder's self-attention is also causal.

    Examples:
        >>> cfg = TransformerConfig(src_vocab_size=10, tgt_vocab_size=10, d_model=16, n_heads=4,
        ...                         n_encoder_layers=2, n_decoder_layers=2, d_ff=32)
        >>> out = Transformer(cfg)(torch.tensor([[5, 6, 7]]), torch.tensor([[1, 7]]), output_attentions=True)
        >>> out.logits.shape, out.attentions.cross[0].shape
        (torch.Size([1, 2, 10]), torch.Size([1, 4, 2, 3]))
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        if isinstance(config, dict):  # e.g. when rebuilt by generic Hub tooling
            config = TransformerConfig.from_dict(config)
        self.config = config
        D = config.d_model
        self.src_embed = nn.Embedding(config.src_vocab_size, D)
        self.tgt_embed = self.src_embed if config.share_embeddings else nn.Embedding(config.tgt_vocab_size, D)
        self.register_buffer("positional_encoding", sinusoidal_positions(config.max_len, D), persistent=False)
        self.embed_dropout = nn.Dropout(config.dropout)
        self.encoder = Encoder(config)
        self.decoder = Decoder(config)
        self.output_proj = nn.Linear(D, config.tgt_vocab_size, bias=False)
        self._init_weights()
        if config.tie_output_embeddings:
            self.output_proj.weight = self.tgt_embed.weight
        name_points(self)  # encoder.layers.0.self_attn.hook_v, ... (transformer.hooks)

    def _init_weights(self) -> None:
        # Xavier for every matrix, as torch.nn.Transformer does. Embeddings get std D^-0.5 so that, scaled by sqrt(D),
        # they enter at unit scale; with tied output weights, N(0, 1) would give huge initial logits.
        for name, p in self.named_parameters():
            if p.dim() > 1 and "embed" not in name:
                nn.init.xavier_uniform_(p)
            elif name.endswith("bias"):
                nn.init.zeros_(p)
        for embed in (self.src_embed, self.tgt_embed):
            nn.init.normal_(embed.weight, mean=0.0, std=self.config.d_model**-0.5)

    def set_dropout(self, p: float) -> None:
        """Set every dropout rate in the model to p (training lowers it for a final stage); the config follows."""
        self.config.dropout = p
        for module in self.modules():
            if isinstance(module, nn.Dropout):
                module.p = p
            elif isinstance(module, MultiHeadAttention):
                module.dropout = p

    # Embeddings and output -------------------------------------------------------------------------------------------

    def embed_source(self, src: torch.Tensor) -> torch.Tensor:
        """(B, S) ids -> (B, S, D): the token embeddings scaled by sqrt(D), before positions are added."""
        return self.src_embed(src) * math.sqrt(self.config.d_model)

    def embed_target(self, tgt: torch.Tensor) -> torch.Tensor:
        """(B, T) ids -> (B, T, D): the token embeddings scaled by sqrt(D), before positions are added."""
        return self.tgt_embed(tgt) * math.sqrt(self.config.d_model)

    def add_positions(self, tokens: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Token embeddings (B, T, D) at positions start..start+T-1 plus their sinusoidal positions (then dropout):
        what enters the encoder or decoder stack."""
        end = start + tokens.size(1)
        if end > self.config.max_len:
            raise ValueError(
                f"sequence is longer than the model's max_len (got {end} positions, max {self.config.max_len})"
            )
        return self.embed_dropout(tokens + self.positional_encoding[start:end])

    def project(self, hidden: torch.Tensor) -> torch.Tensor:
        """Decoder output (..., D) -> logits (..., V)."""
        return self.output_proj(hidden)

    def final_norm(self, states: torch.Tensor) -> torch.Tensor:
        """The decoder stack's closing LayerNorm (as torch.nn.Transformer's, post-LN too): of the last layer's state,
        it gives the decoder's output."""
        return self.decoder.norm(states)

    @property
    def special_ids(self) -> frozenset[int]:
        """Token ids that mark rather than mean: pad, bos, eos."""
        return frozenset({self.config.pad_id, self.config.bos_id, self.config.eos_id})

    @property
    def rules(self) -> NextTokenRules:
        """Pad and bos are never written, at any step."""
        return NextTokenRules(banned=(self.config.pad_id, self.config.bos_id))

    def encoder_value_norms(self, enc: EncoderOutput) -> list[torch.Tensor]:
        """Per encoder layer (B, H, S): ||v_j W_o^h|| for the values an encode(output_attentions=True) recorded."""
        return [layer.self_attn.value_norms(v) for layer, v in zip(self.encoder.layers, enc.values)]

    def decoder_value_norms(
        self, cache: KVCache, start: int = 0, cross: bool = True
    ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Per decoder layer, ||v_j W_o^h|| of the cached self-attention values of keys start.. (B, H, P - start) and,
        if `cross`, of the cross-attention values (B, H, S)."""
        layers = list(zip(self.decoder.layers, cache.layers))
        own = [layer.self_attn.value_norms(c.self_v[:, :, start:]) for layer, c in layers]
        return own, [layer.cross_attn.value_norms(c.cross_v) for layer, c in layers] if cross else []

    def cross_keys_values(self, memory: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per decoder layer, the cross-attention's keys and values of `memory` (B, S, D), each (B, H, S, K): what a
        cache holds for the source (the page's encoder graph computes them once)."""
        return [layer.cross_attn.project_kv(memory) for layer in self.decoder.layers]

    def cache_from(self, layers: list[tuple[torch.Tensor, ...]]) -> KVCache:
        """A cache of given tensors: per decoder layer (self_k, self_v, cross_k, cross_v), (B, H, P or S, K), every
        target position real (the page's decoder graph takes its cache as inputs)."""
        self_k = layers[0][0]
        mask = torch.ones(self_k.size(0), self_k.size(2), dtype=torch.bool, device=self_k.device)
        return KVCache([LayerCache(*tensors) for tensors in layers], mask)

    # Encode / decode / forward ---------------------------------------------------------------------------------------

    def sublayer(self, kind: str, layer: int) -> AttentionSublayer:
        """The attention sublayer of `kind` (one of KINDS) in `layer`: its output projection and, post-LN, the
        LayerNorm after its residual sum (what ALTI+ cannot read from a hook point)."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)} (got {kind!r})")
        stack = self.encoder if kind == "encoder" else self.decoder
        if not 0 <= layer < len(stack.layers):
            raise ValueError(f"layer must be in 0..{len(stack.layers) - 1} (got {layer})")
        block = stack.layers[layer]
        if kind == "cross":
            attention, norm = block.cross_attn, block.cross_attn_norm
        else:
            attention, norm = block.self_attn, block.self_attn_norm
        proj = attention.out_proj
        return AttentionSublayer(proj.weight, proj.bias, None if self.config.norm_first else norm)

    # Encode / decode / forward ---------------------------------------------------------------------------------------

    def encode(self, src: torch.Tensor, output_attentions: bool = False) -> EncoderOutput:
        """src (B, S) ids -> memory (B, S, D), the source padding mask, and per-layer attention and values if asked.

        The token embeddings pass through encoder.hook_embed (a hook may put other embeddings in their place), each
        layer through its hook points (transformer.hooks).
        """
        src_mask = padding_mask(src, self.config.pad_id)
        tokens = self.encoder.hook_embed(self.embed_source(src))
        stack = self.encoder(self.add_positions(tokens), src_mask, output_attentions)
        return EncoderOutput(stack.hidden, src_mask, stack.attentions, stack.values)

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor,
        cache: KVCache | None = None,
        use_cache: bool = False,
        output_attentions: bool = False,
    ) -> DecoderOutput:
        """Run the decoder over tgt (B, T): the whole prefix, or with `cache` only the new positions after it.

        The self-attention mask is causal and hides target padding; cross-attention hides source padding (src_mask).
        With `cache` or `use_cache`, the returned cache covers every position so far. Hook points see start = the
        cache's length (decoder.hook_embed reads the token embeddings before positions).
        """
        start = cache.length if cache is not None else 0
        tgt_key_mask = tgt != self.config.pad_id  # (B, T)
        if cache is not None:
            tgt_key_mask = torch.cat([cache.tgt_key_mask, tgt_key_mask], dim=1)  # (B, P+T)
        self_mask = causal_mask(tgt.size(1), tgt_key_mask.size(1), tgt.device) & tgt_key_mask[:, None, None, :]
        tokens = self.decoder.hook_embed(self.embed_target(tgt), start)
        stack = self.decoder(
            self.add_positions(tokens, start),
            memory,
            self_mask,
            src_mask,
            cache.layers if cache is not None else None,
            output_attentions,
        )
        new_cache = KVCache(stack.caches, tgt_key_mask) if (use_cache or cache is not None) else None
        return DecoderOutput(stack.hidden, stack.self_attentions, stack.cross_attentions, new_cache)

    def forward(
        self,
        src: torch.Tensor,
        tgt: torch.Tensor,
        output_attentions: bool = False,
        interventions: Interventions | None = None,
    ) -> Seq2SeqOutput:
        """src (B, S), tgt (B, T) decoder input -> logits (B, T, V), and every attention map if output_attentions.

        `interventions` ablates heads and edits cross-attention in this pass (see transformer.interventions).
        """
        with held(interventions):
            enc = self.encode(src, output_attentions)
            dec = self.decode(tgt, enc.memory, enc.src_mask, output_attentions=output_attentions)
        attentions = None
        if output_attentions:
            attentions = Attentions(enc.attentions, dec.self_attentions, dec.cross_attentions)
        return Seq2SeqOutput(self.project(dec.hidden), attentions)

    # Interop and persistence -----------------------------------------------------------------------------------------

    @torch.no_grad()
    def load_torch_transformer(self, reference: nn.Transformer) -> None:
        """Copy the weights of a torch.nn.Transformer(batch_first=True) of the same shape into this model's stacks.

        Embeddings and the output projection are ours alone (nn.Transformer has none) and stay as they are.
        """
        theirs = reference.state_dict()
        ours = {}
        for name, tensor in theirs.items():
            ours[_torch_to_ours(name)] = tensor
        stack_params = {k: v for k, v in self.state_dict().items() if k.startswith(("encoder.", "decoder."))}
        missing = sorted(set(stack_params) - set(ours))
        unexpected = sorted(set(ours) - set(stack_params))
        if missing or unexpected:
            raise ValueError(
                f"torch.nn.Transformer does not match this model (missing {missing}, unexpected {unexpected})"
            )
        for name, tensor in ours.items():
            if stack_params[name].shape != tensor.shape:
                raise ValueError(
                    f"shape mismatch for {name} (ours {tuple(stack_params[name].shape)}, theirs {tuple(tensor.shape)})"
                )
            stack_params[name].copy_(tensor)

    @classmethod
    def from_pretrained(
        cls,
        pretrained_model_name_or_path: str | Path,
        *,
        revision: str | None = None,
        cache_dir: str | Path | None = None,
        token: str | bool | None = None,
        local_files_only: bool = False,
        force_download: bool = False,
        map_location: str = "cpu",
    ) -> Transformer:
        """Load config.json + model.safetensors from a folder or a Hub repo id, strictly and without pickle.

        Raises checkpoint.CheckpointError (a ValueError) naming the file and the problem.
        """
        folder = checkpoint.resolve(
            pretrained_model_name_or_path,
            revision=revision,
            cache_dir=cache_dir,
            token=token,
            local_files_only=local_files_only,
            force_download=force_download,
        )
        config = checkpoint.read_config(folder)
        with torch.device("meta"):  # shapes only: check the file can fill this model before allocating it
            checkpoint.check_size(cls(config), folder)
        model = cls(config)
        checkpoint.load_weights(model, folder, device=map_location)
        return model.eval()


# nn.Transformer names -> ours, for load_torch_transformer.
_TORCH_NAMES = {
    "self_attn.in_proj_weight": "self_attn.in_proj.weight",
    "self_attn.in_proj_bias": "self_attn.in_proj.bias",
    "multihead_attn.in_proj_weight": "cross_attn.in_proj.weight",
    "multihead_attn.in_proj_bias": "cross_attn.in_proj.bias",
    "multihead_attn.out_proj": "cross_attn.out_proj",
    "linear1": "ff.linear1",
    "linear2": "ff.linear2",
}
_TORCH_NORMS = {
    "encoder": {"norm1": "self_attn_norm", "norm2": "ff_norm"},
    "decoder": {"norm1": "self_attn_norm", "norm2": "cross_attn_norm", "norm3": "ff_norm"},
}


def _torch_to_ours(name: str) -> str:
    stack = name.split(".", 1)[0]
    for theirs, ours in _TORCH_NAMES.items():
        name = name.replace(f".{theirs}", f".{ours}")
    for theirs, ours in _TORCH_NORMS[stack].items():
        name = name.replace(f".{theirs}.", f".{ours}.")
    return name
