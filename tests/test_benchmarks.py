"""The benchmark commands run (quick mode, tiny shapes); timings are reported, never asserted."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


# Each benchmark's quick run, as `python benchmarks/SCRIPT --quick` runs it (its __main__, with those arguments), one
# after the other in one interpreter: started for each, the interpreter and its imports (torch, transformers, gradio)
# took 4-6 s of a core before any benchmark ran. A benchmark that raises is recorded with its traceback, and the next
# runs.
QUICK = (
    "run.py",
    "hf_speed.py",
    "flow_speed.py",
    "compare_models_speed.py",
    "why_speed.py",
    "survey_speed.py",
    "patch_speed.py",
    "trust_detect.py",
)
RUNNER = """
import contextlib, io, json, os, runpy, sys, traceback
answers, scripts, ran = sys.argv[1], sys.argv[2:], {}
path = list(sys.path)
for script in scripts:
    out, err, code = io.StringIO(), io.StringIO(), 0
    sys.argv, sys.path[:] = [script, "--quick"], [os.path.dirname(script), *path]  # as python SCRIPT sets them
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as end:
            code = end.code if isinstance(end.code, int) else (0 if end.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
    ran[script] = [code, out.getvalue(), err.getvalue()]
with open(answers, "w", encoding="utf-8") as f:
    json.dump(ran, f)
"""


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory, cached_copies) -> dict[str, subprocess.CompletedProcess]:
    """benchmarks/SCRIPT --quick for each of QUICK: script -> its return code, stdout and stderr. The app that run.py
    serves finds its models' copies made (cached_copies): it made them in the background, and the process waited for
    them as it ended (60 s of CPU)."""
    import json

    answers = tmp_path_factory.mktemp("benchmarks") / "quick.json"
    scripts = [str(REPO / "benchmarks" / script) for script in QUICK]
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(answers), *scripts],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        check=False,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0 and answers.exists(), done.stderr[-3000:]
    ran = json.loads(answers.read_text(encoding="utf-8"))
    return {Path(script).name: subprocess.CompletedProcess(script, *ran[script]) for script in scripts}


@pytest.fixture
def quick(quick_runs):
    """benchmarks/`script` --quick, run as a user runs it: its return code, stdout and stderr."""
    return quick_runs.__getitem__


@pytest.mark.slow
def test_quick_benchmark_runs_and_prints_the_table(quick):
    result = quick("run.py")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "| measure | ours (ms) | reference (ms) | ratio | bar |" in result.stdout
    assert "greedy 16 tokens, 1 thread: KV cache vs recompute" in result.stdout and "same tokens" in result.stdout
    assert "App (quick): server Run p50" in result.stdout  # the app's server-side timings still run
    assert "Sent to the page, a tiny Marian (2+2 layers, 4 heads), a 24-token source" in result.stdout


@pytest.mark.slow
def test_the_transformers_benchmark_runs_and_decodes_the_same_tokens_as_generate(quick):
    result = quick("hf_speed.py")
    assert result.returncode == 0, result.stderr[-3000:]  # exit 1 when the tokens differ from generate()'s
    assert "session ÷ generate eager" in result.stdout and "| yes |" in result.stdout


@pytest.mark.slow
def test_the_flow_benchmark_times_flow_its_parts_and_the_decoder_lens(quick):
    result = quick("flow_speed.py")
    assert result.returncode == 0, result.stderr[-3000:]
    for row in (
        "| /flow, threshold 0.04",
        "| /flow, threshold 0 ",
        "greedy decoding",
        "cut and pruned",
        "| /decoder_lens",
    ):
        assert row in result.stdout, row


@pytest.mark.slow
def test_the_two_models_benchmark_times_compare_models_and_its_parts(quick):
    result = quick("compare_models_speed.py")
    assert result.returncode == 0, result.stderr[-3000:]
    for row in ("| /compare_models (the answer)", "de-en's greedy decoding", "the tiny Marian's greedy decoding"):
        assert row in result.stdout, row


@pytest.mark.slow
def test_the_why_benchmark_times_every_method_and_the_lens(quick):
    result = quick("why_speed.py")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "| input_x_gradient | integrated_gradients | occlusion | value_zeroing | lens |" in result.stdout
    assert "| DecoderLens (ms per sentence) |" in result.stdout  # a sentence's, not a step's
    assert "| de-en |" in result.stdout


@pytest.mark.slow
def test_the_survey_benchmark_runs_and_prints_its_table(quick):
    result = quick("survey_speed.py")  # one process (two processes' agreement: tests/test_survey.py, under torchrun)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "| reverse | 1 | cpu |" in result.stdout and "| sentences/s |" in result.stdout


@pytest.mark.slow
def test_the_patching_benchmark_times_patch_against_one_forward_pass(quick):
    result = quick("patch_speed.py")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "| threads | corruption | /patch ms | one forward pass ms | ratio | bar |" in result.stdout
    assert "| 2 | a swapped word |" in result.stdout


@pytest.mark.slow
def test_the_detector_benchmark_scores_every_comparison(quick):
    result = quick("trust_detect.py")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "| score | suspicious when | reference vs detached (10 / 10) |" in result.stdout
    for row in (
        "| mean_logp | lower |",
        "| coverage | lower |",
        "| wass_to_unif L3 | higher |",
        "| wass_combo | higher |",
    ):
        assert row in result.stdout, row


def test_the_browser_table_has_the_trust_contrast_and_beam_tree_rows_with_their_requests():
    sys.path.insert(0, str(REPO / "benchmarks"))
    from browser_table import report

    times = {"floor": [200.0], "step": [150.0], "run": [400.0], "first_run": [900.0], "paragraph": [1500.0]}
    times.update(trust_open=[900.0], trust_open_answered=[100.0], trust_open_requests=[4, 5, 4])
    times.update(trust_score=[600.0], trust_score_answered=[120.0], trust_score_requests=[4, 4, 4])
    times.update(why_not=[500.0], why_not_answered=[450.0], why_not_requests=[6, 6, 6])
    times.update(trust_show=[20.0, 30.0], trust_show_requests=[1])  # a look that asked the server fails its bar
    times.update(tree_open=[700.0], tree_open_answered=[250.0], tree_open_requests=[4, 6, 4])
    times.update(tree_node=[300.0], tree_node_answered=[280.0], tree_node_requests=[4, 4, 4])
    rows = {line.split(" | ")[0]: line for line in report(times, "test").splitlines() if line.startswith("| ")}
    assert rows["| Open the Trust tab after a Run, 10 words (the output forced and scored, after the answer)"] == (
        "| Open the Trust tab after a Run, 10 words (the output forced and scored, after the answer) | 100 (900) "
        "| 0.50 (4.50) | ✓ ≤ 1.5×; 4–5 server requests a click |"
    )
    assert rows["| Trust tab: Score a pasted translation, 10 words (forced and scored, after the answer)"].endswith(
        "| 120 (600) | 0.60 (3.00) | ✓ ≤ 1.5×; 4 server requests a click |"
    )
    why_not = next(line for name, line in rows.items() if "why not this?" in name)
    assert why_not.endswith("| 450 (500) | 2.25 (2.50) | ✗ ≤ 1.5×; 6 server requests a click |")
    tree_open = next(line for name, line in rows.items() if name.startswith("| Open the Beam tree tab"))
    assert tree_open.endswith("| 250 (700) | 1.25 (3.50) | ✓ ≤ 1.5×; 4–6 server requests a click |")
    tree_node = next(line for name, line in rows.items() if name.startswith("| Beam tree tab: click a node"))
    assert tree_node.endswith("| 280 (300) | 1.40 (1.50) | ✓ ≤ 1.5×; 4 server requests a click |")
    show = next(line for name, line in rows.items() if name.startswith("| Move Show step, Trust tab open"))
    assert show.endswith("| 25 | 0.12 | ✗ ≤ 0.35×; 1 server requests |")


def test_the_two_slow_fills_are_barred_on_the_pages_last_change():
    sys.path.insert(0, str(REPO / "benchmarks"))
    from browser_table import report

    times = {"floor": [200.0], "step": [150.0], "run": [400.0], "first_run": [900.0], "paragraph": [1500.0]}
    times.update(heads_run=[380.0], heads_run_answered=[250.0], training_open=[420.0], training_open_answered=[90.0])
    rows = [line for line in report(times, "test").splitlines() if line.startswith("| ")]
    heads = next(line for line in rows if line.startswith("| Run, 10 words, Heads tab open"))
    assert heads.endswith("| 250 (380) | 1.25 (1.90) | ✓ ≤ 1.5×, ✓ ≤ 2.0× filled |")
    training = next(line for line in rows if line.startswith("| Open the Training tab"))
    assert training.endswith("| 90 (420) | 0.45 (2.10) | ✓ ≤ 1.5×, ✗ ≤ 2.0× filled |")  # answered at once, filled late


@pytest.mark.slow
def test_the_road_table_gives_each_click_against_the_floor_and_its_requests():
    sys.path.insert(0, str(REPO / "benchmarks"))
    from road_speed import report

    times = {"floor": [100.0, 200.0, 300.0], "step_page": [40.0, 50.0], "step_page_requests": [0]}
    times.update(step_server=[180.0], step_server_requests=[8], page_work=[12.0], first_paint=[600.0, None])
    rows = {line.split(" | ")[0]: line for line in report(times).splitlines() if line.startswith("| ")}
    assert "median 200 ms over 3 clicks" in report(times)
    assert rows["| Step, the page decoding (15-word de-en sentence)"].endswith("| 45 | 40–50 | 0.23× | 0 |")
    assert rows["| Step, the server decoding (?road=server)"].endswith("| 0.90× | 8 |")
    assert rows["| the page's own work per Step (performance measure)"].endswith("| 12 | 12–12 |  |  |")  # no ratio
    assert "| first paint of the app (from opening it) | 600 |" in report(times)  # a missing sample is left out
    assert not any("beam" in row for row in rows)  # no samples: no row
