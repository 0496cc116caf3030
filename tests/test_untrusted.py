"""Untrusted checkpoints: each broken or unsafe one is refused with a message naming the file and the problem."""

import json
import pickle
import shutil

import pytest
import torch

from attention_lab.app import endpoints, make_lab
from attention_lab.models.registry import load_models
from tests.conftest import tiny_pipelines
from transformer import CheckpointError, Transformer
from transformer.checkpoint import error_line
from transformer.hub import load_pretrained


@pytest.fixture
def good(tmp_path):
    """A valid checkpoint folder (tiny model, real tokenizer)."""
    folder = tmp_path / "good"
    tiny_pipelines()["reverse"].save_pretrained(folder)
    return folder


@pytest.fixture(autouse=True)
def no_unpickling(monkeypatch):
    """Any attempt to unpickle during these tests fails loudly."""

    def refuse(*args, **kwargs):
        raise AssertionError("something tried to unpickle")

    monkeypatch.setattr(torch, "load", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(pickle, "loads", refuse)


def refused(folder, pattern):
    with pytest.raises(CheckpointError, match=pattern) as info:
        load_pretrained(folder)
    assert str(folder) in str(info.value) or folder.name in str(info.value)
    return info.value


def test_the_good_checkpoint_loads_as_it_was_saved(good):
    saved, loaded = tiny_pipelines()["reverse"], load_pretrained(good)  # the same seed: the same weights
    theirs = saved.model.state_dict()
    assert all(torch.equal(tensor, theirs[name]) for name, tensor in loaded.model.state_dict().items())
    texts = ["abc", "hello123", "z"]
    assert loaded.generate(texts, max_new_tokens=5) == saved.generate(texts, max_new_tokens=5)


def test_missing_config(good):
    (good / "config.json").unlink()
    refused(good, r"config.json: missing")


@pytest.mark.parametrize(
    "content, pattern",
    [
        ("{not json", r"config.json: not valid JSON"),
        ("[1, 2]", r"config.json: invalid config \(config must be a JSON object"),
        (None, r"config.json: invalid config \(d_model must be divisible by n_heads"),
        ("unknown", r"config.json: invalid config \(unknown config keys: surprise"),
        ("types", r"config.json: invalid config \(n_heads must be int"),
    ],
)
def test_invalid_config(good, content, pattern):
    config = json.loads((good / "config.json").read_text())
    if content is None:
        config["d_model"] = 18
        content = json.dumps(config)
    elif content == "unknown":
        content = json.dumps({**config, "surprise": 1})
    elif content == "types":
        content = json.dumps({**config, "n_heads": "4"})
    (good / "config.json").write_text(content)
    refused(good, pattern)


def test_missing_weights(good):
    (good / "model.safetensors").unlink()
    refused(good, r"model.safetensors: missing$")


def test_pickled_weights_are_refused_not_loaded(good):
    (good / "model.safetensors").rename(good / "pytorch_model.bin")
    refused(
        good,
        r"model.safetensors: missing; found pytorch_model.bin, which is refused: weights are loaded from "
        r"safetensors only",
    )


@pytest.mark.parametrize("damage", ["truncate", "garbage", "empty", "header"])
def test_corrupt_weights(good, damage):
    path = good / "model.safetensors"
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"\x00\x01garbage" * 100)
    elif damage == "empty":
        path.write_bytes(b"")
    else:  # a header that claims an absurd length
        path.write_bytes((2**40).to_bytes(8, "little") + data[8:])
    refused(good, r"model.safetensors: not a readable safetensors file")


def test_weights_that_do_not_match_the_config(good, tmp_path):
    config = json.loads((good / "config.json").read_text())
    config["d_ff"] = 48  # same names, other shapes
    (good / "config.json").write_text(json.dumps(config))
    refused(good, r"model.safetensors: weights do not match config.json")


@pytest.mark.parametrize(
    "err, line",
    [
        (RuntimeError("size mismatch for w\n\tcopying a param with shape"), "size mismatch for w"),
        (ValueError("\n  padded first line  \nmore"), "padded first line"),
        (KeyError(), "KeyError"),  # no text: its type's name
        (OSError(" \n "), "OSError"),
    ],
)
def test_an_error_is_said_in_its_first_line_or_by_its_type(err, line):
    assert error_line(err) == line


@pytest.mark.parametrize("key, value", [("d_model", 4096), ("n_encoder_layers", 60), ("src_vocab_size", 10**7)])
def test_a_config_asking_for_a_huge_model_is_refused_before_building_it(good, key, value):
    config = json.loads((good / "config.json").read_text())
    config[key] = value
    if key == "src_vocab_size":
        config["tgt_vocab_size"] = value
    (good / "config.json").write_text(json.dumps(config))
    refused(good, r"model.safetensors: weights do not match config.json \(the config describes [\d,]+ parameters")


def test_huge_max_len_is_an_invalid_config(good):
    config = json.loads((good / "config.json").read_text())
    config["max_len"] = 10**9
    (good / "config.json").write_text(json.dumps(config))
    refused(good, r"config.json: invalid config \(max_len must be at most 8192")


def test_tokenizer_problems(good):
    (good / "tokenizer.json").write_text("{}")
    refused(good, r"tokenizer.json: not a readable tokenizer")
    (good / "tokenizer.json").unlink()
    refused(good, r"tokenizer.json: missing")


def test_a_broken_model_does_not_take_the_app_down(good, tmp_path):
    bundled = tmp_path / "bundled"
    shutil.copytree(good, bundled / "works")
    shutil.copytree(good, bundled / "broken")
    (bundled / "broken" / "model.safetensors").write_bytes(b"not weights")
    registry = load_models([], bundled=bundled)
    assert registry.names == ["works"]
    assert "broken/model.safetensors: not a readable safetensors file" in registry.errors["broken"]
    api = endpoints(make_lab(registry))
    assert api.translate("works", "abc") is not None


def test_from_pretrained_alone_is_strict_and_pickle_free(good):
    (good / "model.safetensors").rename(good / "pytorch_model.bin")
    with pytest.raises(CheckpointError, match="refused"):
        Transformer.from_pretrained(good)
