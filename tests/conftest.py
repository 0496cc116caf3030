import pytest
import torch

from transformer import Transformer, TransformerConfig


def tiny_config(**overrides) -> TransformerConfig:
    """Hidden 16, 4 heads, 2+2 layers: big enough to have every part, small enough to be instant."""
    values = dict(src_vocab_size=13, tgt_vocab_size=11, d_model=16, n_heads=4, n_encoder_layers=2,
                  n_decoder_layers=2, d_ff=32, dropout=0.0, max_len=32, pad_id=0)
    values.update(overrides)
    return TransformerConfig(**values)


@pytest.fixture
def model() -> Transformer:
    torch.manual_seed(0)
    return Transformer(tiny_config()).eval()


def random_ids(generator: torch.Generator, batch: int, length: int, vocab: int, lengths=None) -> torch.Tensor:
    """Ids in 3..vocab-1 (never pad/bos/eos), right-padded with 0 after `lengths[b]` tokens when given."""
    ids = torch.randint(3, vocab, (batch, length), generator=generator)
    if lengths is not None:
        for b, n in enumerate(lengths):
            ids[b, n:] = 0
    return ids
