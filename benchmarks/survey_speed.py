"""The head survey's throughput: corpus sentences surveyed per second (each decoded plainly, with every head alone
ablated, and along the pruning curves) with 1 and 2 processes under torchrun on this machine's CPU, and on a GPU
when there is one.

    python benchmarks/survey_speed.py [--sentences N] [--write]   # --write: into benchmarks/RESULTS.md
    python benchmarks/survey_speed.py --quick                     # 4 reversal strings, one process: that it runs

Two processes' survey is the same as one's: tests/test_survey.py checks it under torchrun on every head's figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from attention_lab.models.devices import available_cores
from benchmarks.results import put_block

DE_EN_TEST = REPO / "data" / "de-en" / "test.tsv"  # python -m training.data ding


def corpora(folder: Path, n: int) -> dict[str, Path]:
    """Fresh reversal strings (python -m training.reversal), and the Ding test split's first n where it is."""
    strings = folder / "strings.tsv"
    command = [sys.executable, "-m", "training.reversal", "--out", str(strings), "--n", str(n)]
    subprocess.run(command, cwd=REPO, check=True, capture_output=True)
    found = {"reverse": strings}
    if DE_EN_TEST.is_file():
        found["de-en"] = DE_EN_TEST
    return found


def timed_survey(model: str, data: Path, n: int, processes: int, device: str, out: Path) -> dict:
    """One survey under torchrun: its survey.json, with the launch's wall time."""
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}"]
    survey = ["-m", "attention_lab.survey", "--model", model, "--data", str(data), "--limit", str(n), "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [*launcher, *survey, "--device", device], check=False, cwd=REPO, env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"the survey failed:\n{done.stderr[-3000:]}")
    result = json.loads((out / "survey.json").read_text(encoding="utf-8"))
    result["wall"] = time.perf_counter() - started
    return result


def measure(n: int, quick: bool = False) -> list[dict]:
    rows = []
    runs = [(1, "cpu")] if quick else [(1, "cpu"), (2, "cpu")] + ([(1, "cuda")] if torch.cuda.is_available() else [])
    with tempfile.TemporaryDirectory() as folder:
        found = corpora(Path(folder), n)
        if quick:  # the reversal strings only: that it runs (the de-en survey itself: tests/test_survey.py)
            found = {"reverse": found["reverse"]}
        for model, data in found.items():
            one = None
            for processes, device in runs:
                out = Path(folder) / f"{model}-{processes}-{device}"
                result = timed_survey(model, data, n, processes, device, out)
                row = {"model": model, "processes": processes, "device": device, **_row(result)}
                if processes == 2:  # the same corpus split across processes gives the same survey
                    row["same"] = result["pruning"] == one["pruning"]
                one = one or result
                rows.append(row)
    return rows


def _row(result: dict) -> dict:
    return {
        "sentences": result["sentences"],
        "seconds": result["seconds"],
        "wall": result["wall"],
        "per_second": result["sentences"] / result["seconds"],
    }


def table(rows: list[dict]) -> str:
    lines = [
        f"Head survey throughput ({available_cores()} CPU cores"
        + (f", GPU: {torch.cuda.get_device_name()}" if torch.cuda.is_available() else "; no GPU on this machine")
        + "): corpus sentences surveyed per second, each decoded plainly, with every head alone ablated and along the "
        "pruning curves. `benchmarks/survey_speed.py`.",
        "",
        "| model | processes | device | sentences | survey (s) | with launch (s) | sentences/s | vs 1 process | same survey |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    base = {}
    for row in rows:
        base.setdefault(row["model"], row["per_second"])
        ratio = row["per_second"] / base[row["model"]]
        same = {True: "yes", False: "NO"}.get(row.get("same"), "")
        lines.append(
            f"| {row['model']} | {row['processes']} | {row['device']} | {row['sentences']} | {row['seconds']:.1f} | "
            f"{row['wall']:.1f} | {row['per_second']:.2f} | {ratio:.2f}× | {same} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=256, help="corpus sentences per model (4 batches of 64)")
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    parser.add_argument("--quick", action="store_true", help="4 reversal strings, one process: that it runs")
    args = parser.parse_args(argv)
    rows = measure(4 if args.quick else args.sentences, args.quick)
    report = table(rows)
    print(report)
    if args.write:
        put_block("survey", report)
    return 0 if all(row.get("same", True) for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
