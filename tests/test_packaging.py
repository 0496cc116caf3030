"""The installable package: pyproject.toml agrees with the requirements files, lists every package, and, installed,
gives the attention-lab command and the README's and docs/ snippets that work from any folder."""

from __future__ import annotations

import os
import re
import runpy
import shutil
import subprocess
from pathlib import Path

import pytest

from attention_lab.cli import serve_parser
from attention_lab.page_copy import copies
from tests.conftest import exports_shared

tomllib = pytest.importorskip("tomllib")  # Python 3.11's; on 3.10 these checks are skipped
REPO = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def pins(path: Path) -> set[str]:
    """The requirement lines of a requirements file, comments dropped."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return {line for line in lines if line}


def test_the_dependencies_are_the_requirements_files():
    project = PROJECT["project"]
    assert set(project["dependencies"]) == pins(REPO / "requirements.txt")
    assert set(project["optional-dependencies"]["hf"]) == pins(REPO / "requirements-hf.txt")
    assert all(re.fullmatch(r"[\w-]+==[\w.]+", pin) for pin in project["dependencies"])  # tested versions, pinned


def test_the_agreement_check_sees_a_difference(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch==2.13.0  # a comment\n\ngradio==6.0.0\n")
    assert pins(tmp_path / "requirements.txt") == {"torch==2.13.0", "gradio==6.0.0"}
    assert pins(tmp_path / "requirements.txt") != set(PROJECT["project"]["dependencies"])


def test_every_package_of_the_project_is_installed_under_two_names():
    on_disk = {
        ".".join(init.parent.relative_to(REPO).parts)
        for top in ("transformer", "attention_lab")
        for init in (REPO / top).rglob("__init__.py")
    }
    found = set(runpy.run_path(str(REPO / "setup.py"), run_name="packages")["PACKAGES"])
    assert found == on_disk | {"attention_lab.checkpoints"}
    setuptools = PROJECT["tool"]["setuptools"]
    assert "packages" not in setuptools  # found on disk (setup.py), never listed by hand
    assert setuptools["package-dir"] == {"attention_lab.checkpoints": "checkpoints"}  # the repository's folder
    assert "py-modules" not in setuptools  # app.py stays in the repository: nothing installed beside the packages
    assert {name.split(".")[0] for name in found} == {"transformer", "attention_lab"}


def test_a_new_feature_folder_is_installed_with_no_entry_for_it(tmp_path, monkeypatch):
    for package in ("transformer", "attention_lab", "attention_lab/notes", "training", "tests"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").write_text("")
    shutil.copy(REPO / "setup.py", tmp_path)
    monkeypatch.chdir(tmp_path)
    found = runpy.run_path(str(tmp_path / "setup.py"), run_name="packages")["PACKAGES"]
    assert sorted(found) == ["attention_lab", "attention_lab.checkpoints", "attention_lab.notes", "transformer"]


def test_only_the_checkpoint_files_of_the_bundled_models_are_packaged():
    from transformer import checkpoint, snapshots

    named = {
        *(f"*/{name}" for name in checkpoint.CHECKPOINT_FILES),
        *(f"*/{pattern}" for pattern in snapshots.PATTERNS),
    }
    assert set(PROJECT["tool"]["setuptools"]["package-data"]["attention_lab.checkpoints"]) == named


def test_the_command_serves_the_app_with_its_flags_and_runs_its_commands(capsys):
    from attention_lab import cli

    assert PROJECT["project"]["scripts"] == {"attention-lab": "attention_lab.cli:main"}
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    for flag in ("--host", "--port", "--share", "--model", "--device", "attention-lab survey"):
        assert flag in shown, flag
    for command in cli.COMMANDS:
        with pytest.raises(SystemExit) as done:
            cli.main([command, "--help"])
        assert done.value.code == 0 and f"attention-lab {command}" in capsys.readouterr().out


SNIPPETS = """
import re, sys
ran = 0
for page in sys.argv[1:]:  # the README and the docs pages; a block marked "# not run:" needs the Hub or a server
    text = open(page, encoding="utf-8").read()
    for block in re.findall(r"```python\\n(.*?)```", text, flags=re.DOTALL):
        if not block.startswith("# not run:"):
            exec(compile(block, page, "exec"), {})
            ran += 1
print(ran, "snippets ran")
"""


@pytest.mark.slow
def test_installed_the_command_and_the_pages_snippets_work_from_any_folder(
    pip_installed, bundled, tmp_path, tmp_path_factory
):
    """In the fresh virtual environment `pip install .` made from a clean copy (tests/conftest.py's pip_installed).
    Its live page is made from the page copy the app keeps in its cache, put there as the app puts it from the run's
    shared export (the export itself, half a minute more, is tested from this checkout: test_live.py)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    bin_folder = pip_installed.parent
    where = [str(pip_installed), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    target = Path(subprocess.run(where, capture_output=True, text=True, check=True).stdout.strip())
    assert (target / "attention_lab" / "checkpoints" / "reverse" / "model.safetensors").is_file()
    assert (target / "attention_lab" / "assets" / "store.mjs").is_file()
    sheets = [p.relative_to(REPO) for p in sorted((REPO / "attention_lab").rglob("*.css"))]  # each feature's, page.css
    assert len(sheets) > 1 and all((target / sheet).is_file() for sheet in sheets), sheets
    assert sorted(p.name for p in target.iterdir() if not p.name.endswith((".dist-info", ".pth"))) == [
        "attention_lab", "transformer"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing of this checkout importable
    env.update(GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1")
    ran = subprocess.run(
        [
            str(pip_installed),
            "-c",
            SNIPPETS,
            *(str(page) for page in [REPO / "README.md", *sorted(REPO.glob("docs/*.md"))]),
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    count, *said = ran.stdout.splitlines()[-1].split()  # the examples print too (a snapshot's output, say)
    assert said == ["snippets", "ran"] and int(count) >= 8  # most load a model
    command = [str(bin_folder / "attention-lab"), "--help"]
    env["COLUMNS"] = "100"  # argparse wraps the help to it, here and in this process
    theirs = subprocess.run(command, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert theirs.returncode == 0, theirs.stderr
    with pytest.MonkeyPatch.context() as patch:  # app.py's own flags: its parser, as `python app.py --help` prints it
        for name in ("COLUMNS", "GRADIO_SERVER_NAME", "GRADIO_SERVER_PORT"):
            patch.delenv(name, raising=False) if name not in env else patch.setenv(name, env[name])
        ours = serve_parser().format_help()
    assert theirs.stdout == ours  # the same flags and defaults
    cache = tmp_path / "cache"
    with exports_shared(tmp_path_factory, gradients=True), pytest.MonkeyPatch.context() as patch:
        patch.setattr(copies, "CACHE", cache / "page")
        kept = copies.make(bundled.entries["reverse"])
    env["ATTENTION_LAB_CACHE"] = str(cache)
    live = elsewhere / "reverse.html"  # the installed package makes a live page with no Node anywhere
    command = [str(bin_folder / "attention-lab"), "export", "--live", "reverse", "-o", str(live)]
    made = subprocess.run(command, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert made.returncode == 0, made.stderr
    assert live.stat().st_size > 5e6 and "ort.wasm.bundle.min.mjs" in live.read_text(encoding="utf-8")
    assert [p for p in (cache / "page").iterdir() if p.is_dir()] == [kept]  # the installed code found the same copy
