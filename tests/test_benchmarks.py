"""The benchmark commands run (quick mode, tiny shapes); timings are reported, never asserted."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def quick(script: str) -> subprocess.CompletedProcess:
    """benchmarks/`script` --quick, run as a user runs it."""
    return subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), "--quick"],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_quick_benchmark_runs_and_prints_the_table():
    result = quick("run.py")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "| measure | ours (ms) | reference (ms) | ratio | bar |" in result.stdout
    assert "greedy 16 tokens, 1 thread: KV cache vs recompute" in result.stdout and "same tokens" in result.stdout
    assert "App (quick): server Run p50" in result.stdout  # the app's server-side timings still run


@pytest.mark.slow
def test_the_transformers_benchmark_runs_and_decodes_the_same_tokens_as_generate():
    result = quick("hf_speed.py")
    assert result.returncode == 0, result.stderr[-3000:]  # exit 1 when the tokens differ from generate()'s
    assert "session ÷ generate eager" in result.stdout and "| yes |" in result.stdout


@pytest.mark.slow
def test_the_why_benchmark_times_every_method_and_the_lens():
    result = quick("why_speed.py")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "| input_x_gradient | integrated_gradients | occlusion | lens |" in result.stdout
    assert "| de-en |" in result.stdout


@pytest.mark.slow
def test_the_survey_benchmark_runs_one_and_two_processes_and_they_agree():
    result = quick("survey_speed.py")
    assert result.returncode == 0, result.stderr[-3000:]  # exit 1 when two processes' survey differs from one's
    assert "| reverse | 1 | cpu |" in result.stdout and "| reverse | 2 | cpu |" in result.stdout


@pytest.mark.slow
def test_the_patching_benchmark_times_patch_against_one_forward_pass():
    result = quick("patch_speed.py")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "| threads | corruption | /patch ms | one forward pass ms | ratio | bar |" in result.stdout
    assert "| 2 | a swapped word |" in result.stdout


@pytest.mark.slow
def test_the_detector_benchmark_scores_every_comparison():
    result = quick("trust_detect.py")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "| comparison | rows (0 / 1) | mean_logp | source_share | coverage |" in result.stdout
    assert "| reference vs detached | 10 / 10 |" in result.stdout
