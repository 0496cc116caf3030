"""Smoke runs of the training and evaluation CLIs: a few steps, resumed, and data-parallel with torchrun (gloo)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from transformer import Transformer
from transformer.data import DING_PATH
from transformer.hub import load_pretrained

REPO = Path(__file__).resolve().parent.parent
TINY = ["--d-model", "32", "--n-heads", "2", "--n-layers", "1", "--d-ff", "64", "--train-size", "300",
        "--batch-tokens", "400", "--eval-every", "1000", "--quiet", "--threads", "1"]


def run(args: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_train_a_few_steps_then_resume(tmp_path):
    run([sys.executable, "-m", "transformer.train", "--task", "reverse", "--max-steps", "4", *TINY], tmp_path)
    out, run_dir = tmp_path / "checkpoints" / "reverse", tmp_path / "runs" / "reverse"
    assert {p.name for p in out.iterdir()} >= {"config.json", "model.safetensors", "tokenizer.json"}
    state = json.loads((run_dir / "state.json").read_text())
    assert state["progress"]["step"] == 4 and len(state["progress"]["history"]) == 1
    result = run([sys.executable, "-m", "transformer.train", "--task", "reverse", "--resume", str(run_dir),
                  "--max-steps", "7", *TINY], tmp_path)
    state = json.loads((run_dir / "state.json").read_text())
    assert state["progress"]["step"] == 7, result.stdout + result.stderr
    assert len(state["progress"]["history"]) == 2  # the first run's validation is kept
    model = Transformer.from_pretrained(run_dir / "last")
    assert model.config.d_model == 32 and model.config.norm_first


@pytest.mark.skipif(not DING_PATH.is_file(), reason="the trans-de-en package is not installed")
def test_translation_training_smoke(tmp_path):
    result = run([sys.executable, "-m", "transformer.train", "--task", "de-en", "--max-steps", "2", "--vocab-size",
                  "300", *TINY], tmp_path)
    assert "bleu" in result.stdout + result.stderr
    assert (tmp_path / "data" / "de-en" / "test.tsv").is_file()
    pipeline = load_pretrained(tmp_path / "checkpoints" / "de-en")
    assert pipeline.tokenizer.vocab_size == 300 and not pipeline.tokenizer.is_character_level


def test_distributed_data_parallel_on_cpu_with_gloo(tmp_path):
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    result = run([*torchrun, "-m", "transformer.train", "--task", "reverse", "--max-steps", "3", *TINY], tmp_path)
    assert "2 process(es)" in result.stdout + result.stderr
    state = json.loads((tmp_path / "runs" / "reverse" / "state.json").read_text())
    assert state["progress"]["step"] == 3
    Transformer.from_pretrained(tmp_path / "checkpoints" / "reverse")


def test_missing_corpus_is_a_message_not_a_traceback(tmp_path):
    from transformer.data import main

    assert main(["ding", "--source", str(tmp_path / "missing"), "--out", str(tmp_path / "d")]) == 1


def test_dropout_stays_on_after_each_validation(tmp_path, monkeypatch):
    """Validation switches the model to eval mode; every training step after it must run in train mode again."""
    import torch

    from transformer import train as train_module

    modes = []
    original = Transformer.forward

    def spy(self, src, tgt, output_attentions=False):
        if torch.is_grad_enabled():  # a training step, not validation
            modes.append(self.training)
        return original(self, src, tgt, output_attentions)

    monkeypatch.setattr(Transformer, "forward", spy)
    monkeypatch.chdir(tmp_path)
    in_process = TINY[: TINY.index("--threads")]  # keep this process's own torch thread setting
    args = train_module.parse_args(["--task", "reverse", "--max-steps", "6", *in_process, "--eval-every", "2",
                                    "--average-last", "1"])
    progress = train_module.train(args)
    assert len(progress.history) == 3
    assert modes == [True] * 6
