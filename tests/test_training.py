"""Smoke runs of the training and evaluation CLIs: a few steps, resumed, and data-parallel with torchrun (gloo)."""

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from training.ding import DING_PATH
from transformer import Transformer
from transformer.hub import load_pretrained
from transformer.snapshots import list_snapshots

REPO = Path(__file__).resolve().parent.parent
TRAIN = [sys.executable, "-m", "training.train"]
TINY = [
    "--d-model",
    "32",
    "--n-heads",
    "2",
    "--n-layers",
    "1",
    "--d-ff",
    "64",
    "--train-size",
    "300",
    "--batch-tokens",
    "400",
    "--eval-every",
    "1000",
    "--quiet",
    "--threads",
    "1",
]


def run(args: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.mark.slow
def test_train_a_few_steps_then_resume(tmp_path):
    run([*TRAIN, "--task", "reverse", "--max-steps", "4", *TINY], tmp_path)
    out, run_dir = tmp_path / "checkpoints" / "reverse", tmp_path / "runs" / "reverse"
    assert {p.name for p in out.iterdir()} >= {"config.json", "model.safetensors", "tokenizer.json"}
    state = json.loads((run_dir / "state.json").read_text())
    assert state["progress"]["step"] == 4 and len(state["progress"]["history"]) == 1
    result = run(
        [*TRAIN, "--task", "reverse", "--resume", str(run_dir), "--max-steps", "7", *TINY],
        tmp_path,
    )
    state = json.loads((run_dir / "state.json").read_text())
    assert state["progress"]["step"] == 7, result.stdout + result.stderr
    assert len(state["progress"]["history"]) == 2  # the first run's validation is kept
    model = Transformer.from_pretrained(run_dir / "last")
    assert model.config.d_model == 32 and model.config.norm_first
    state["progress"]["best"] = 1e9  # a record this stage cannot beat, unless it is judged on its own
    (run_dir / "state.json").write_text(json.dumps(state))
    result = run(
        [*TRAIN, "--task", "reverse", "--resume", str(run_dir), "--max-steps", "9", "--reset-best", *TINY],
        tmp_path,
    )
    state = json.loads((run_dir / "state.json").read_text())
    assert "new best" in result.stdout + result.stderr
    assert state["progress"]["best"] == state["progress"]["history"][-1]["exact_match"]


@pytest.mark.slow
@pytest.mark.skipif(not DING_PATH.is_file(), reason="the trans-de-en package is not installed")
def test_translation_training_smoke(tmp_path):
    result = run(
        [
            *TRAIN,
            "--task",
            "de-en",
            "--max-steps",
            "4",
            "--focus-steps",
            "2",
            "--vocab-size",
            "300",
            "--libreoffice-per-epoch",
            "0",
            # 1,000 of the dictionary's phrases an epoch, and 500 in the finish's, rather than 80,000 and 20,000:
            # the sampling is the same and the first epoch, mostly Ding's 17k sentences, is still hundreds of
            # batches, while its batching (every pair tokenized) takes a quarter of the time
            "--phrases-per-epoch",
            "1000",
            "--focus-phrases-per-epoch",
            "500",
            "--focus-dropout",
            "0.05",
            *TINY,
        ],
        tmp_path,
    )
    assert "bleu" in result.stdout + result.stderr
    state = json.loads((tmp_path / "runs" / "de-en" / "state.json").read_text())
    assert state["progress"]["epoch"] == 1  # the first epoch (hundreds of batches) gave way to the in-domain finish
    last = Transformer.from_pretrained(tmp_path / "runs" / "de-en" / "last")
    assert last.config.dropout == 0.05  # the finish trained with its own dropout
    assert (tmp_path / "data" / "de-en" / "test.tsv").is_file()
    pipeline = load_pretrained(tmp_path / "checkpoints" / "de-en")
    assert pipeline.tokenizer.vocab_size == 300 and not pipeline.tokenizer.is_character_level


@pytest.mark.slow
def test_distributed_data_parallel_on_cpu_with_gloo(tmp_path):
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    result = run([*torchrun, "-m", "training.train", "--task", "reverse", "--max-steps", "3", *TINY], tmp_path)
    assert "2 process(es)" in result.stdout + result.stderr
    state = json.loads((tmp_path / "runs" / "reverse" / "state.json").read_text())
    assert state["progress"]["step"] == 3
    Transformer.from_pretrained(tmp_path / "checkpoints" / "reverse")


def test_missing_corpus_is_a_message_not_a_traceback(tmp_path):
    from training.data import main

    assert main(["ding", "--source", str(tmp_path / "missing"), "--out", str(tmp_path / "d")]) == 1


def test_dropout_stays_on_after_each_validation(tmp_path, monkeypatch):
    """Validation switches the model to eval mode; every training step after it must run in train mode again."""
    import torch

    from training import train as train_module

    modes = []
    original = Transformer.forward

    def spy(self, src, tgt, output_attentions=False):
        if torch.is_grad_enabled():  # a training step, not validation
            modes.append(self.training)
        return original(self, src, tgt, output_attentions)

    monkeypatch.setattr(Transformer, "forward", spy)
    monkeypatch.chdir(tmp_path)
    in_process = TINY[: TINY.index("--threads")]  # keep this process's own torch thread setting
    args = train_module.parse_args(
        ["--task", "reverse", "--max-steps", "6", *in_process, "--eval-every", "2", "--average-last", "1"]
    )
    progress = train_module.train(args)
    assert len(progress.history) == 3
    assert modes == [True] * 6


def test_learning_rate_warms_up_decays_and_anneals_to_zero():
    import dataclasses

    from training.presets import PRESETS
    from training.schedule import learning_rate

    preset = dataclasses.replace(PRESETS["de-en"], lr=1e-3, warmup=100, anneal_steps=50)
    plain = [learning_rate(step, preset) for step in range(1, 301)]
    assert plain[99] == pytest.approx(1e-3) and plain[49] == pytest.approx(5e-4)  # linear warm-up
    assert plain[-1] == pytest.approx(1e-3 * (100 / 300) ** 0.5)  # then 1/sqrt(step)
    annealed = [learning_rate(step, preset, max_steps=300) for step in range(1, 301)]
    assert annealed[:250] == plain[:250]  # untouched until the last 50 steps
    assert all(a > b for a, b in itertools.pairwise(annealed[249:]))
    assert annealed[-1] == pytest.approx(plain[-1] / 50)  # the last step takes one fiftieth; the next would take 0


def test_reset_best_needs_a_resumed_run():
    from training.train import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--task", "de-en", "--reset-best"])
    assert parse_args(["--task", "de-en", "--reset-best", "--resume", "runs/de-en"]).reset_best


@pytest.mark.parametrize("flag", ["--anneal-steps", "--focus-steps", "--distill-steps"])
def test_windows_counted_back_from_the_end_need_a_last_step(flag):
    from training.train import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--task", "de-en", flag, "100"])
    args = parse_args(["--task", "de-en", flag, "100", "--max-steps", "500"])
    assert getattr(args, flag[2:].replace("-", "_")) == 100


def test_each_epoch_samples_its_own_extra_pairs(tmp_path, monkeypatch):
    import dataclasses

    from training.presets import PRESETS
    from training.tasks import load_task_data

    data = tmp_path / "data" / "de-en"
    data.mkdir(parents=True)
    lines = {
        "train": ["Ein Satz hier.\tA sentence here."],
        "phrases": [f"Wort {i}\tword {i}" for i in range(50)],
        "libreoffice": [f"Klicken Sie {i} an.\tClick {i}." for i in range(50)],
    }
    for name, rows in lines.items():
        (data / f"{name}.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    preset = dataclasses.replace(PRESETS["de-en"], phrases_per_epoch=3, libreoffice_per_epoch=4)
    first, again, second = (load_task_data("de-en", epoch, preset, seed=0) for epoch in (0, 0, 1))
    assert first[0] == ("Ein Satz hier.", "A sentence here.") and len(first) == 1 + 3 + 4
    assert sum(de.startswith("Klicken") for de, _ in first) == 4
    assert first == again and first != second  # seeded by epoch

    preset = dataclasses.replace(preset, focus_phrases_per_epoch=2)
    focused = load_task_data("de-en", 0, preset, seed=0, focus=True)
    assert focused[0] == ("Ein Satz hier.", "A sentence here.") and len(focused) == 1 + 2
    assert not any(de.startswith("Klicken") for de, _ in focused)  # no help pages in the in-domain finish


def test_focus_finish_may_lower_dropout_and_word_dropout():
    import dataclasses

    from training.presets import PRESETS
    from training.schedule import regularization

    preset = dataclasses.replace(
        PRESETS["de-en"], dropout=0.3, word_dropout=0.1, focus_dropout=0.1, focus_word_dropout=0.0
    )
    assert regularization(preset, focus=False) == (0.3, 0.1)
    assert regularization(preset, focus=True) == (0.1, 0.0)
    unset = dataclasses.replace(preset, focus_dropout=None, focus_word_dropout=None)
    assert regularization(unset, focus=True) == (0.3, 0.1)


def test_focus_window_is_the_last_steps_before_max_steps():
    import dataclasses

    from training.presets import PRESETS
    from training.schedule import in_window

    preset = dataclasses.replace(PRESETS["de-en"], focus_steps=30)
    assert [step for step in range(101) if in_window(step, preset.focus_steps, max_steps=100)] == list(range(70, 101))
    assert not in_window(99, preset.focus_steps, max_steps=0)  # no last step, no window
    assert not in_window(99, 0, max_steps=100)


def test_distillation_targets_come_from_the_models_beam_and_are_kept_for_resume(tmp_path, monkeypatch):
    import dataclasses

    import torch

    from tests.conftest import tiny_config
    from training import distill
    from training.presets import PRESETS
    from training.tasks import load_task_data
    from transformer.hub import Seq2SeqPipeline
    from transformer.tokenizer import Tokenizer

    sentences = [("abc", "cba"), ("a1b2c3", "3c2b1a"), ("zz", "zz")]
    monkeypatch.setattr(distill, "ding_split", lambda split: list(sentences))
    tokenizer = Tokenizer.characters("abcz123")
    config = tiny_config(
        src_vocab_size=tokenizer.vocab_size,
        tgt_vocab_size=tokenizer.vocab_size,
        pad_id=tokenizer.pad_id,
        bos_id=tokenizer.bos_id,
        eos_id=tokenizer.eos_id,
    )
    torch.manual_seed(0)
    teacher = Transformer(config)
    distilled = distill.distilled_sentences(teacher, tokenizer, tmp_path, is_main=True, distributed=False, start=100)
    sources = [de for de, _ in distilled]
    assert sorted(sources) == sorted(de for de, _ in sentences)
    candidates = Seq2SeqPipeline(teacher, tokenizer).candidates(sources, beam_size=4)
    references = dict(sentences)
    assert [en for _, en in distilled] == [
        distill.nearest(hyps[:4], references[de]) for de, hyps in zip(sources, candidates)
    ]
    assert [en for _, en in distilled] != [references[de] for de in sources]  # an untrained teacher: its own targets
    assert (tmp_path / "distilled-100.tsv").is_file()
    torch.manual_seed(1)
    other = Transformer(config)  # a resumed run keeps the targets it made, whatever the weights are now
    again = distill.distilled_sentences(other, tokenizer, tmp_path, is_main=True, distributed=False, start=100)
    assert again == distilled
    later = distill.distilled_sentences(other, tokenizer, tmp_path, is_main=True, distributed=False, start=200)
    assert later != distilled  # a later window: the model as it is then makes new targets

    preset = PRESETS["de-en"]
    epoch = load_task_data(
        "de-en",
        0,
        dataclasses.replace(preset, phrases_per_epoch=0, libreoffice_per_epoch=0),
        seed=0,
        sentences=distilled,
    )
    assert epoch == distilled


def test_the_distillation_target_is_the_beam_hypothesis_nearest_the_reference():
    from training.distill import nearest

    beam = ["I don’t know it.", "I don't know it.", "I don’t know.", "I know."]
    assert nearest(beam, "I don't know.") == "I don’t know."  # a curly apostrophe matches a straight one
    assert nearest(beam, "I don't know it at all.") == "I don’t know it."  # a tie goes to the better-ranked
    assert nearest(["", "Where is it?"], "Where is the station?") == "Where is it?"
    assert nearest(["", " "], "Where is the station?") == "Where is the station?"  # nothing usable: the reference


def test_evaluate_prints_sacrebleu_scores_for_translation(monkeypatch, capsys):
    from training import evaluate

    pairs = [("Ich habe Hunger.", "I am hungry."), ("Wo ist der Bahnhof?", "Where is the station?")]
    monkeypatch.setattr(evaluate, "ding_split", lambda split: pairs)
    assert evaluate.main(["--model", str(REPO / "checkpoints" / "de-en"), "--split", "test", "--show", "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^BLEU = \d+\.\d+ ", out, flags=re.MULTILINE), out
    assert re.search(r"^chrF2 = \d+\.\d+", out, flags=re.MULTILINE) and "signature: nrefs:1" in out
    assert "2 sentences of the Ding test split, greedy" in out and "de:  Ich habe Hunger." in out


def test_evaluate_scores_a_transformers_model_too(monkeypatch, capsys, tmp_path):
    from tests import hf_models
    from training import evaluate

    folder = hf_models.marian(tmp_path / "marian")
    monkeypatch.setattr(evaluate, "ding_split", lambda split: [("Ich habe Hunger.", "I am hungry.")])
    assert evaluate.main(["--model", str(folder), "--split", "test"]) == 0
    assert "1 sentences of the Ding test split, greedy" in capsys.readouterr().out


def test_evaluate_prints_exact_match_by_length_for_reversal(capsys):
    from training import evaluate

    assert evaluate.main(["--model", str(REPO / "checkpoints" / "reverse"), "--per-length", "2"]) == 0
    out = capsys.readouterr().out
    assert "| 1 | 100.0% |" in out and "| 32 |" in out and "exact match, lengths 1-24: " in out


def test_evaluate_says_why_a_model_cannot_be_loaded(tmp_path, capsys):
    from training import evaluate

    assert evaluate.main(["--model", str(tmp_path)]) == 1
    assert "cannot load the model" in capsys.readouterr().err


def test_the_reversal_card_fills_every_placeholder(monkeypatch):
    import argparse

    from training import card

    monkeypatch.setattr(
        card, "reversal_accuracy_by_length", lambda pipeline, per_length: {n: 1.0 for n in range(1, 33)}
    )
    args = argparse.Namespace(
        command="python -m training.train --task reverse",
        minutes=22.4,
        hardware="a laptop",
        history="",
        model=REPO / "checkpoints" / "reverse",
    )
    text = card.reversal_card(load_pretrained(REPO / "checkpoints" / "reverse"), args)
    assert "$" not in text and "**100.00%** exact on lengths 1–24" in text and "| 32 | 100.0% |" in text
    assert "python -m training.train --task reverse" in text and "22 minutes on a laptop." in text
    steps = [s.step for s in list_snapshots(REPO / "checkpoints" / "reverse")]
    assert f"| {steps[1]:,} | `step-{steps[1]:06d}` |" in text and f"| {steps[-1]:,} | `.` |" in text
    assert text.startswith("---\nlibrary_name: attention-lab\nlicense: mit\n")
