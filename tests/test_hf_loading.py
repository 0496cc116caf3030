"""Loading transformers checkpoints: what is told from config.json, what is fetched from the Hub, and every refusal.

The app with such a model: the Model dropdown and the API name it as given, and every view and the head tests answer.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from attention_lab.app import endpoints, make_lab
from attention_lab.attention import export
from attention_lab.checks import InputError
from attention_lab.controls import Controls
from attention_lab.models.registry import load_models
from attention_lab.run.state import UserState
from tests import hf_models
from tests.test_checkpoints import make_hub_cache
from transformer import CheckpointError, checkpoint, load_pretrained

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def marian(tmp_path_factory) -> Path:
    return hf_models.marian(tmp_path_factory.mktemp("marian"))


def test_a_decoder_only_or_encoder_only_model_is_named_and_refused(tmp_path):
    from transformers import BertConfig, BertModel, GPT2Config, GPT2LMHeadModel

    GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=50, n_positions=32)).save_pretrained(
        tmp_path / "gpt2"
    )
    small = {"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32}
    BertModel(BertConfig(vocab_size=50, **small)).save_pretrained(tmp_path / "bert")
    for name, kind in (("gpt2", "gpt2"), ("bert", "bert")):
        with pytest.raises(CheckpointError, match=f"{name} is a {kind} model, not an encoder–decoder"):
            load_pretrained(str(tmp_path / name))


def test_a_model_without_a_tokenizer_is_refused(marian, tmp_path):
    folder = tmp_path / "no-tokenizer"
    folder.mkdir()
    for name in ("config.json", "generation_config.json", "model.safetensors"):
        shutil.copy(marian / name, folder / name)
    with pytest.raises(CheckpointError, match="no-tokenizer: has no usable tokenizer"):
        load_pretrained(str(folder))


def test_pickled_weights_are_refused_and_never_read(marian, tmp_path, monkeypatch):
    folder = tmp_path / "pickled"
    shutil.copytree(marian, folder)
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(b"a pickle that must never be opened")
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load was called"))
    with pytest.raises(CheckpointError, match=r"no \.safetensors weights \(it has pytorch_model\.bin\).*refused"):
        load_pretrained(str(folder))


def test_a_family_the_adapter_cannot_read_is_refused_in_one_line(marian, tmp_path):
    """LED is an encoder–decoder of transformers' whose attention modules the adapter does not know: a one-line
    refusal (which the app reports on its page), not an AttributeError that stops the app."""
    from transformers import LEDConfig, LEDForConditionalGeneration

    sizes = {"d_model": 16, "encoder_layers": 1, "decoder_layers": 1, "encoder_ffn_dim": 32, "decoder_ffn_dim": 32}
    heads = {"encoder_attention_heads": 2, "decoder_attention_heads": 2, "attention_window": [4]}
    config = LEDConfig(vocab_size=64, max_encoder_position_embeddings=64, max_decoder_position_embeddings=64)
    config.update({**sizes, **heads})
    folder = tmp_path / "led"
    LEDForConditionalGeneration(config).save_pretrained(folder)
    for part in marian.iterdir():  # a tokenizer beside it, so that only its layout is in question
        if part.name not in ("config.json", "generation_config.json", "model.safetensors"):
            shutil.copy(part, folder / part.name)
    with pytest.raises(CheckpointError, match="led: the adapter cannot read this family's layout") as refused:
        load_pretrained(str(folder))
    assert "\n" not in str(refused.value)


def test_remote_code_is_never_run(tmp_path):
    folder = tmp_path / "remote"
    folder.mkdir()
    marker = tmp_path / "ran"
    (folder / "config.json").write_text(
        '{"model_type": "lab-remote", "is_encoder_decoder": true, '
        '"auto_map": {"AutoConfig": "remote.Config", "AutoModelForSeq2SeqLM": "remote.Model"}}'
    )
    (folder / "remote.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    with pytest.raises(CheckpointError, match="remote: its config.json could not be loaded"):
        load_pretrained(str(folder))
    assert not marker.exists()


def test_one_load_pretrained_reads_another_librarys_checkpoint_only_through_a_registered_loader(marian, monkeypatch):
    from transformer import hub

    assert hub.LOADERS, "import attention_lab.adapters registers its loaders"
    assert load_pretrained(str(marian)).model.config.n_heads == 4
    monkeypatch.setattr(hub, "LOADERS", {})  # as if the adapters had not been imported
    with pytest.raises(
        CheckpointError, match=r"a marian checkpoint of another library .*`import attention_lab.adapters` first"
    ):
        load_pretrained(str(marian))


def test_without_the_extra_a_transformers_model_says_what_to_install(marian, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers now fails
    with pytest.raises(
        CheckpointError, match=r"marian\): install the optional extra first, `pip install -r requirements-hf.txt`"
    ):
        load_pretrained(str(marian))


def test_the_hub_download_asks_for_configs_safetensors_and_tokenizer_files_only(marian, monkeypatch):
    asked = []

    def snapshot_download(**kwargs):
        asked.append(kwargs["allow_patterns"])
        return str(marian)

    monkeypatch.setattr(checkpoint, "snapshot_download", snapshot_download)
    pipeline = load_pretrained("Helsinki-NLP/opus-mt-tiny")
    assert pipeline.name == "Helsinki-NLP/opus-mt-tiny" and len(asked) == 2
    wanted = asked[-1]

    def fetched(name: str) -> bool:
        return any(fnmatch.fnmatch(name, pattern) for pattern in wanted)

    for name in (
        "config.json",
        "generation_config.json",
        "model.safetensors",
        "model-00001-of-00002.safetensors",
        "model.safetensors.index.json",
        "source.spm",
        "target.spm",
        "vocab.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "spiece.model",
        "sentencepiece.bpe.model",
    ):
        assert fetched(name), name
    for name in (
        "pytorch_model.bin",
        "tf_model.h5",
        "flax_model.msgpack",
        "rust_model.ot",
        "model.pt",
        "training_args.bin",
    ):
        assert not fetched(name), name


HUB_SCRIPT = """
import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
from transformer import load_pretrained
pipeline = load_pretrained("Helsinki-NLP/opus-mt-tiny")
print(type(pipeline.model).__name__, pipeline.model.config.n_heads, len(pipeline.generate(["Wo ist der Bahnhof?"], max_new_tokens=5)[0]) > 0)
"""


@pytest.mark.slow
def test_a_transformers_model_loads_offline_from_a_hub_cache(marian, tmp_path):
    make_hub_cache(tmp_path, "Helsinki-NLP/opus-mt-tiny", marian)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path), "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", HUB_SCRIPT], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["HFSeq2Seq", "4", "True"]


def test_the_app_serves_it_under_the_name_given_with_every_view_and_the_head_tests(marian, tmp_path):
    from transformers import GPT2Config, GPT2LMHeadModel

    GPT2LMHeadModel(GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=50, n_positions=32)).save_pretrained(
        tmp_path / "gpt2"
    )
    name = str(marian)
    registry = load_models([name, str(tmp_path / "gpt2")], bundled=tmp_path / "none")
    assert registry.names == [name] and "not an encoder–decoder" in registry.errors[str(tmp_path / "gpt2")]
    lab, user = make_lab(registry), UserState()
    api = endpoints(make_lab(registry))
    c = Controls(name, "Wo ist der Bahnhof?", max_len=10)
    changes = lab.do(lab.decoding.run, user, c)
    assert changes["output"] == registry.entry(name).pipeline.generate(["Wo ist der Bahnhof?"], max_new_tokens=10)[0]
    data = changes["steps"]["data"]  # every kind, layer and head, for the page to draw
    n = len(user.run.session.steps)
    assert data["layers"] == [2, 2] and data["heads"] == 4 and len(data["steps"]) == n
    assert data["src"]["labels"][-1] == "</s>" and len(data["src"]["labels"]) == len(user.run.session.src_ids)
    assert lab.open_tab(user, c, "compare") == {}  # drawn in the page from what it holds
    assert lab.do(lab.decoding.back, user, c)["steps"]["op"] == "back"
    assert len(user.run.session.steps) == n - 1
    assert lab.do(lab.decoding.step, user, c)["steps"]["op"] == "step"
    assert (
        len(user.run.session.steps) == n
        and registry.entry(name).pipeline.tokenizer.decode(user.run.session.tokens) == changes["output"]
    )
    user.tab = "beams"  # the Beams tab is open
    beam = lab.do(
        lab.decoding.run, user, Controls(name, "Wo ist der Bahnhof?", max_len=10, strategy="beam", beam_size=3)
    )
    assert beam["beams"]["rows"]
    record = json.loads(Path(export.as_json(user)).read_text(encoding="utf-8"))
    assert record["output_text"] == registry.entry(name).pipeline.tokenizer.decode(user.run.session.tokens)
    assert len(record["encoder"]) == 2 and record["source_tokens"][-1] == "</s>"
    heads = api.heads(name, "Wo ist der Bahnhof?")
    assert [len(layer) for layer in heads["cross"]] == [4, 4] and set(heads) == {"encoder", "decoder_self", "cross"}
    ablated = api.ablate(name, "Wo ist der Bahnhof?", ["cross:*:*"])
    assert any(step["kl"] > 0 for step in ablated["steps"])
    with pytest.raises(InputError, match="is a transformers model, published with its final weights only"):
        api.training(name, "Wo ist der Bahnhof?")
    edited = api.edit(name, "Wo ist der Bahnhof?", 2, 1, ["cross:*:*"])
    assert set(edited) == {"token", "probability", "top_k", "output_text"}


LIGHT_SCRIPT = """
import sys
sys.modules["transformers"] = None  # as if the extra were not installed
import transformer
print(transformer.load_pretrained("checkpoints/reverse").generate(["abc"])[0])
import attention_lab.adapters
print(transformer.load_pretrained("checkpoints/reverse").generate(["abc"])[0])
"""


@pytest.mark.slow  # a fresh interpreter
def test_the_library_and_our_models_need_no_transformers():
    result = subprocess.run(
        [sys.executable, "-c", LIGHT_SCRIPT], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["cba", "cba"]


def test_a_hub_repo_with_pickled_weights_only_is_read_from_the_hubs_safetensors_conversion(
    marian, tmp_path, monkeypatch
):
    from types import SimpleNamespace

    from attention_lab.adapters.hf import load as hf_load

    pickled = tmp_path / "main"
    shutil.copytree(marian, pickled)
    (pickled / "model.safetensors").unlink()
    (pickled / "pytorch_model.bin").write_bytes(b"never opened")
    revisions = []

    def snapshot_download(*, revision=None, **kwargs):
        revisions.append(revision)
        return str(marian if revision == "refs/pr/7" else pickled)

    bot = SimpleNamespace(author="SFconvertbot", title="Adding `safetensors` variant of this model", status="open")
    other = SimpleNamespace(author="someone", title="safetensors please", status="open", git_reference="refs/pr/3")
    discussions = [other, SimpleNamespace(**vars(bot), git_reference="refs/pr/7")]

    class FakeApi:
        def get_repo_discussions(self, repo_id, discussion_type=None):
            assert repo_id == "Helsinki-NLP/opus-mt-tiny" and discussion_type == "pull_request"
            return iter(discussions)

    monkeypatch.setattr(checkpoint, "snapshot_download", snapshot_download)
    monkeypatch.setattr(hf_load, "HfApi", FakeApi)
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load was called"))
    assert load_pretrained("Helsinki-NLP/opus-mt-tiny").model.config.n_heads == 4
    assert revisions[-1] == "refs/pr/7"
    discussions[:] = [other]  # no conversion: refused, naming the pickle
    with pytest.raises(CheckpointError, match=r"\(it has pytorch_model\.bin\), and no safetensors conversion"):
        load_pretrained("Helsinki-NLP/opus-mt-tiny")


def test_a_family_whose_attention_bypasses_the_interface_is_refused_not_drawn_from_nothing():
    import copy

    from transformers import MarianConfig, MarianMTModel

    from attention_lab.adapters.hf.model import HFSeq2Seq

    small = {"d_model": 16, "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_ffn_dim": 8}
    config = MarianConfig(
        vocab_size=50, pad_token_id=49, decoder_start_token_id=49, eos_token_id=0, decoder_ffn_dim=8, **small
    )
    hf = MarianMTModel(config).eval()
    assert HFSeq2Seq(hf, "marian").config.n_heads == 2
    cross = hf.model.decoder.layers[1].encoder_attn  # this one module now runs transformers' eager attention itself
    cross.config = copy.deepcopy(cross.config)
    cross.config._attn_implementation = "eager"
    with pytest.raises(CheckpointError, match="marian computes attention outside transformers' attention interface"):
        HFSeq2Seq(hf, "marian")
