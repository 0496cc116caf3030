"""Shapes, masks, invariances, config validation and the save/load round trip of the core model."""

import json

import pytest
import torch
from safetensors.torch import load_file, save_file

from tests.conftest import random_ids, tiny_config
from transformer import Transformer, TransformerConfig
from transformer.attention import MultiHeadAttention


def test_output_and_attention_shapes(model):
    g = torch.Generator().manual_seed(1)
    src, tgt = random_ids(g, 3, 7, 13), random_ids(g, 3, 5, 11)
    out = model(src, tgt, output_attentions=True)
    assert out.logits.shape == (3, 5, 11)
    att = out.attentions
    assert len(att.encoder) == 2 and len(att.decoder_self) == 2 and len(att.cross) == 2
    assert all(w.shape == (3, 4, 7, 7) for w in att.encoder)
    assert all(w.shape == (3, 4, 5, 5) for w in att.decoder_self)
    assert all(w.shape == (3, 4, 5, 7) for w in att.cross)
    assert model.add_positions(model.embed_source(src)).shape == (3, 7, 16) and model.add_positions(
        model.embed_target(tgt)
    ).shape == (3, 5, 16)
    assert model(src, tgt).attentions is None


def test_heads_are_not_averaged(model):
    g = torch.Generator().manual_seed(2)
    out = model(random_ids(g, 1, 6, 13), random_ids(g, 1, 4, 11), output_attentions=True)
    for w in out.attentions.encoder + out.attentions.cross:
        assert not torch.allclose(w[:, 0], w[:, 1])


def test_rows_sum_to_one_and_masked_cells_are_exactly_zero(model):
    g = torch.Generator().manual_seed(3)
    src_lengths, tgt_lengths = [7, 4, 2], [5, 3, 1]
    src = random_ids(g, 3, 7, 13, src_lengths)
    tgt = random_ids(g, 3, 5, 11, tgt_lengths)
    att = model(src, tgt, output_attentions=True).attentions
    for w in att.encoder + att.decoder_self + att.cross:
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]))
    for b, n in enumerate(src_lengths):  # source padding is never attended, from either side
        for w in att.encoder + att.cross:
            assert torch.all(w[b, :, :, n:] == 0)
    for b, n in enumerate(tgt_lengths):  # target padding, and every future position, get exactly 0
        for w in att.decoder_self:
            assert torch.all(w[b, :, :, n:] == 0)
            assert torch.all(w[b].triu(diagonal=1) == 0)
            allowed = torch.ones(n, n, dtype=torch.bool).tril()
            assert torch.all(w[b, :, :n, :n][:, allowed] > 0)


def test_changing_a_future_target_token_leaves_earlier_logits_unchanged(model):
    g = torch.Generator().manual_seed(4)
    src, tgt = random_ids(g, 2, 6, 13), random_ids(g, 2, 6, 11)
    changed = tgt.clone()
    changed[:, 4] = (changed[:, 4] - 3 + 1) % 8 + 3  # another non-special token
    before, after = model(src, tgt).logits, model(src, changed).logits
    torch.testing.assert_close(before[:, :4], after[:, :4], rtol=0, atol=1e-6)
    assert not torch.allclose(before[:, 4:], after[:, 4:])


def test_appending_source_padding_changes_nothing(model):
    g = torch.Generator().manual_seed(5)
    src, tgt = random_ids(g, 2, 5, 13), random_ids(g, 2, 4, 11)
    padded = torch.cat([src, torch.zeros(2, 3, dtype=torch.long)], dim=1)
    a = model(src, tgt, output_attentions=True)
    b = model(padded, tgt, output_attentions=True)
    torch.testing.assert_close(a.logits, b.logits, rtol=0, atol=1e-5)
    torch.testing.assert_close(a.attentions.cross[-1], b.attentions.cross[-1][..., :5], rtol=0, atol=1e-6)


def test_fast_path_without_weights_equals_explicit_attention(model):
    g = torch.Generator().manual_seed(6)
    src, tgt = random_ids(g, 3, 7, 13, [7, 5, 2]), random_ids(g, 3, 5, 11, [5, 2, 4])
    torch.testing.assert_close(
        model(src, tgt).logits, model(src, tgt, output_attentions=True).logits, rtol=0, atol=1e-5
    )


def test_set_dropout_reaches_every_dropout_and_the_config():
    torch.manual_seed(0)
    model = Transformer(tiny_config(dropout=0.5)).train()
    g = torch.Generator().manual_seed(5)
    src, tgt = random_ids(g, 2, 6, 13), random_ids(g, 2, 5, 11)
    assert not torch.allclose(model(src, tgt).logits, model(src, tgt).logits)  # dropout is on
    model.set_dropout(0.0)
    assert model.config.dropout == 0.0
    torch.testing.assert_close(model(src, tgt).logits, model.eval()(src, tgt).logits, rtol=0, atol=1e-6)


def test_too_long_input_is_a_clear_error(model):
    with pytest.raises(ValueError, match="max_len"):
        model(torch.ones(1, 40, dtype=torch.long), torch.ones(1, 2, dtype=torch.long))


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"d_model": 18, "n_heads": 4}, "divisible"),
        ({"n_heads": 0}, "n_heads"),
        ({"dropout": 1.5}, "dropout"),
        ({"pad_id": 99}, "pad_id"),
        ({"eos_id": 11}, "eos_id"),
        ({"share_embeddings": True}, "share_embeddings"),
        ({"d_model": 16.0}, "d_model must be int"),
        ({"norm_first": "yes"}, "norm_first must be bool"),
    ],
)
def test_bad_config_is_a_value_error_saying_what_is_wrong(overrides, message):
    with pytest.raises(ValueError, match=message):
        tiny_config(**overrides)


def test_config_from_dict_refuses_unknown_and_missing_keys():
    data = tiny_config().to_dict()
    assert TransformerConfig.from_dict(data) == tiny_config()
    with pytest.raises(ValueError, match="unknown config keys: d_modle"):
        TransformerConfig.from_dict({**data, "d_modle": 3})
    del data["src_vocab_size"]
    with pytest.raises(ValueError, match="missing config keys: src_vocab_size"):
        TransformerConfig.from_dict(data)


def test_attention_module_rejects_indivisible_width():
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(10, 4, 0.0)


@pytest.mark.parametrize(
    "overrides",
    [{}, {"norm_first": True, "tie_output_embeddings": False}, {"src_vocab_size": 11, "share_embeddings": True}],
)
def test_save_and_load_round_trip_is_bit_exact(tmp_path, overrides):
    torch.manual_seed(0)
    model = Transformer(tiny_config(**overrides)).eval()
    model.save_pretrained(tmp_path)
    assert (tmp_path / "config.json").is_file() and (tmp_path / "model.safetensors").is_file()
    assert json.loads((tmp_path / "config.json").read_text()) == model.config.to_dict()
    loaded = Transformer.from_pretrained(tmp_path)
    assert loaded.config == model.config
    assert model.state_dict().keys() == loaded.state_dict().keys()
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, loaded.state_dict()[name]), name
    g = torch.Generator().manual_seed(7)
    src, tgt = random_ids(g, 2, 6, 11), random_ids(g, 2, 4, 11)
    assert torch.equal(model(src, tgt).logits, loaded(src, tgt).logits)
    if model.config.tie_output_embeddings:  # tied weights are stored once and still tied after loading
        assert loaded.output_proj.weight is loaded.tgt_embed.weight
        assert len(load_file(tmp_path / "model.safetensors")) == len(model.state_dict()) - 1 - overrides.get(
            "share_embeddings", 0
        )


def test_loading_is_strict(tmp_path):
    torch.manual_seed(0)
    Transformer(tiny_config()).save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["n_decoder_layers"] = 3  # the file now lacks a layer's weights
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"model.safetensors: weights do not match config.json \(the config describes"):
        Transformer.from_pretrained(tmp_path)
    config["n_decoder_layers"] = 2
    (tmp_path / "config.json").write_text(json.dumps(config))
    # Same sizes, different names: one weight missing, one unexpected.
    weights = load_file(tmp_path / "model.safetensors")
    weights["decoder.layers.1.ff.linear9.bias"] = weights.pop("decoder.layers.1.ff.linear2.bias")
    save_file(weights, tmp_path / "model.safetensors")
    with pytest.raises(
        ValueError,
        match=r"missing: decoder.layers.1.ff.linear2.bias; "
        r"unexpected: decoder.layers.1.ff.linear9.bias",
    ):
        Transformer.from_pretrained(tmp_path)
