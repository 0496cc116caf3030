"""The notebook in docs/, as a new user runs it: in a fresh virtual environment after `pip install .` (the one
tests/test_packaging.py checks too), from a folder outside the repository, executed by nbclient; the installed
distribution's top-level names are exactly `transformer` and `attention_lab`; each view it shows opens in Chromium
with every network request refused, draws its heatmaps, and its step slider changes what is drawn."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = REPO / "docs" / "attention_lab.ipynb"
FOCUS = ".views-focus .js-plotly-plot"


def test_the_notebook_is_stored_without_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)


@pytest.fixture(scope="module")
def installed(pip_installed) -> Path:
    """The python of a fresh virtual environment with the project installed by pip (tests/conftest.py)."""
    return pip_installed


def test_the_installed_distribution_has_two_top_level_names(installed, tmp_path):
    script = (
        "import importlib.metadata as m, json; files = m.distribution('attention-lab').files; "
        "print(json.dumps(sorted({f.parts[0] for f in files if f.parts[0].isidentifier()})))"
    )
    done = subprocess.run([str(installed), "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == ["attention_lab", "transformer"]
    command = installed.parent / "attention-lab"
    helped = subprocess.run([str(command), "--help"], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert all(
        flag in helped for flag in ("--host", "--port", "--share", "--model", "--device", "attention-lab export")
    )
    lesson = tmp_path / "lesson.html"
    subprocess.run(
        [str(command), "export", "reverse", "abc", "-o", str(lesson)], cwd=tmp_path, check=True, capture_output=True
    )
    assert lesson.stat().st_size > 1_000_000


def test_the_notebook_runs_and_each_view_draws_offline_and_steps(installed, tmp_path, browser):
    kernel = subprocess.run(
        [str(installed), "-m", "ipykernel", "install", "--prefix", str(installed.parent.parent), "--name", "lab-test"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert kernel.returncode == 0, kernel.stderr
    run = tmp_path / "run"
    run.mkdir()
    executed = run / "executed.ipynb"
    script = (
        "import sys, nbformat; from nbclient import NotebookClient; "
        f"nb = nbformat.read({str(NOTEBOOK)!r}, as_version=4); "
        "NotebookClient(nb, timeout=600, kernel_name='lab-test').execute(); "
        f"nbformat.write(nb, {str(executed)!r})"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=run,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={  # the kernel in the new environment, nothing of this checkout on the path
            "PATH": f"{installed.parent}:/usr/bin:/bin",
            "HOME": str(Path.home()),
            "HF_HUB_OFFLINE": "1",
            "JUPYTER_PATH": str(installed.parent.parent / "share" / "jupyter"),
        },
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert (run / "lesson.html").is_file()
    notebook = nbformat.read(executed, as_version=4)
    views = [
        o["data"]["text/html"] for c in notebook.cells for o in c.get("outputs", []) if "text/html" in o.get("data", {})
    ]
    assert len(views) == 3
    page = tmp_path / "cells.html"  # the outputs in one page, as Jupyter shows them
    page.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>' + "".join(views) + "</body></html>"
    )
    tab = browser.new_page(viewport={"width": 1200, "height": 900})
    asked = []
    tab.route("http*://**", lambda route: (asked.append(route.request.url), route.abort()))
    tab.goto(page.as_uri())
    count = f"() => document.querySelectorAll('.attention-lab-cell {FOCUS}').length"
    tab.wait_for_function(f"() => ({count})() === {len(views)}", timeout=30_000)
    outline = (
        f"() => [...document.querySelectorAll('.attention-lab-cell {FOCUS}')].map(g => JSON.stringify(g.layout.shapes))"
    )
    before = tab.evaluate(outline)
    tab.locator(".attention-lab-cell input[type=range]").first.fill("2")
    tab.wait_for_function(f"b => JSON.stringify(({outline})()) !== JSON.stringify(b)", arg=before, timeout=10_000)
    after = tab.evaluate(outline)
    assert after[0] != before[0] and after[1:] == before[1:]  # that cell's view moved, the others stayed
    assert asked == []
    tab.close()
