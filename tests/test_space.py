"""Deploying to a Hugging Face Space, offline at huggingface_hub's boundary: the repo type and SDK, which files go,
and that those files are enough to run the app."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from huggingface_hub import HfApi
from huggingface_hub.utils import filter_repo_objects

from attention_lab.serving import space

REPO = Path(__file__).resolve().parent.parent


def fake_hub(monkeypatch) -> list:
    """HfApi's create_repo and upload_folder, recording what they were asked and which files would be sent."""
    calls = []

    def create_repo(self, repo_id, **kwargs):
        calls.append(("create_repo", repo_id, kwargs))

    def upload_folder(self, *, repo_id, folder_path, allow_patterns=None, ignore_patterns=None, **kwargs):
        files = [str(p.relative_to(folder_path)) for p in Path(folder_path).rglob("*") if p.is_file()]
        sent = sorted(filter_repo_objects(files, allow_patterns=allow_patterns, ignore_patterns=ignore_patterns))
        calls.append(("upload_folder", repo_id, kwargs.get("repo_type"), sent))
        return f"https://huggingface.co/spaces/{repo_id}/commit/0"

    monkeypatch.setattr(HfApi, "create_repo", create_repo)
    monkeypatch.setattr(HfApi, "upload_folder", upload_folder)
    return calls


def test_deploy_creates_a_gradio_space_and_sends_what_the_app_runs_and_nothing_else(tmp_path, monkeypatch):
    wanted = [
        "app.py",
        "README.md",
        "requirements.txt",
        "attention_lab/page/lab.py",
        "attention_lab/assets/page.css",
        "attention_lab/decoding/steps.mjs",
        "attention_lab/adapters/hf/model.py",
        "transformer/model.py",
        "checkpoints/reverse/model.safetensors",
        "checkpoints/reverse/snapshots/index.json",
        "checkpoints/reverse/snapshots/step-000012/model.safetensors",
        "docs/screenshots/app-1440.png",
    ]
    unwanted = [
        "tests/test_app.py",
        "benchmarks/run.py",
        "training/train.py",
        "data/de-en/train.tsv",
        "runs/reverse/state.json",
        ".ci/run",
        "attention_lab/page/__pycache__/lab.cpython-311.pyc",
        "page.py",  # a file the app no longer has
        "checkpoints/reverse/pytorch_model.bin",
        "checkpoints/reverse/snapshots/step-000012/optimizer.pt",
    ]
    for name in wanted + unwanted:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x", encoding="utf-8")
    calls = fake_hub(monkeypatch)
    url = space.deploy("someone/attention-lab", folder=tmp_path, token="hf_x", private=True)
    assert url == "https://huggingface.co/spaces/someone/attention-lab/commit/0"
    assert calls[0] == (
        "create_repo",
        "someone/attention-lab",
        {"repo_type": "space", "space_sdk": "gradio", "private": True, "exist_ok": True},
    )
    assert calls[1][:3] == ("upload_folder", "someone/attention-lab", "space")
    assert calls[1][3] == sorted(wanted) == space.space_files(tmp_path)


@pytest.mark.slow  # a fresh process builds the app: gradio and both models
def test_the_files_sent_are_enough_to_run_the_app(tmp_path):
    for name in space.space_files(REPO):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, tmp_path / name)
    assert not (tmp_path / "tests").exists() and not (tmp_path / "training").exists()
    code = (
        "import app\n"  # the Space's entry point imports as it is
        "from attention_lab.app import build_demo, endpoints, make_lab\n"
        "from attention_lab.models.registry import load_models\n"
        "registry = load_models([])\n"
        "build_demo(registry)\n"
        "print(sorted(registry.names), registry.errors)\n"
        "print(endpoints(make_lab(registry)).translate('reverse', 'abc'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # only what was sent is importable
    env.update(HF_HUB_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False")
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["['de-en', 'reverse'] {}", "cba"]


def test_the_command_lists_the_files_in_a_dry_run_and_a_failed_upload_is_one_line(monkeypatch, capsys):
    assert space.main(["someone/attention-lab", "--dry-run"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[:-1] == space.space_files() and listed[-1].endswith("MB, to the Space someone/attention-lab")

    def refused(*args, **kwargs):
        raise PermissionError("401 Unauthorized: no token")

    monkeypatch.setattr(space, "deploy", refused)
    assert space.main(["someone/attention-lab"]) == 1
    err = capsys.readouterr().err
    assert err == "could not upload to the Space someone/attention-lab: PermissionError: 401 Unauthorized: no token\n"
