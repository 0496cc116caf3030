"""Training snapshots: when they are taken, how they are saved and listed (folder and Hub cache), the bundled reversal
run's snapshots, and the app's Training view and /training API over them, bad snapshots included."""

import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors import safe_open

from attention_lab.app import endpoints, make_lab
from attention_lab.checks import InputError
from attention_lab.controls import Controls
from attention_lab.models.registry import load_models
from attention_lab.run.state import UserState
from tests.test_checkpoints import make_hub_cache
from tests.test_training import TINY, TRAIN, run
from training.snapshots import plan
from transformer import CheckpointError, load_pretrained
from transformer.snapshots import list_snapshots

REPO = Path(__file__).resolve().parent.parent
BUNDLED = REPO / "checkpoints"
REVERSE = BUNDLED / "reverse"
FIXED = "abcdef12"  # the string whose alignment per snapshot RESULTS.md quotes


def test_the_plan_is_log_spaced_from_step_0_to_the_last():
    steps = plan(6000, 10)
    assert steps[0] == 0 and steps[-1] == 6000 and len(steps) == 10
    ratios = [b / a for a, b in itertools.pairwise(steps[1:])]
    assert max(ratios) / min(ratios) < 1.1  # a geometric series after step 0
    assert plan(6000, 2) == [0, 6000] and plan(3, 10) == [0, 1, 2, 3]  # fewer steps than snapshots: each step once
    with pytest.raises(ValueError):
        plan(100, 1)


@pytest.mark.slow
def test_training_with_snapshots_saves_them_and_ends_with_the_checkpoint_itself(tmp_path):
    run([*TRAIN, "--task", "reverse", "--max-steps", "12", "--snapshots", "4", *TINY], tmp_path)
    out = tmp_path / "checkpoints" / "reverse"
    snapshots = list_snapshots(out)
    assert snapshots[0].step == 0 and snapshots[-1].folder.resolve() == out.resolve()
    state = json.loads((tmp_path / "runs" / "reverse" / "state.json").read_text())
    assert snapshots[-1].step == state["progress"]["best_metrics"]["step"]  # the step the shipped weights are from
    for snapshot in snapshots:
        assert {"train_loss", "valid_loss", "exact_match"} <= set(snapshot.metrics)
        load_pretrained(snapshot.folder)
    with safe_open(str(snapshots[0].folder / "model.safetensors"), framework="pt") as weights:
        assert {weights.get_tensor(k).dtype for k in weights.keys()} == {torch.float16}  # noqa: SIM118
    first = load_pretrained(snapshots[0].folder).model.state_dict()
    last = load_pretrained(out).model.state_dict()
    assert any(not torch.equal(first[k].float(), last[k]) for k in last)  # it trained between them


@pytest.mark.slow
def test_a_resumed_run_keeps_its_snapshots_and_ends_with_the_checkpoint_once(tmp_path):
    out, run_dir = tmp_path / "checkpoints" / "reverse", tmp_path / "runs" / "reverse"
    resume = [*TRAIN, "--task", "reverse", "--resume", str(run_dir), "--snapshots", "6"]
    run([*TRAIN, "--task", "reverse", "--max-steps", "12", "--snapshots", "4", *TINY], tmp_path)
    first = list_snapshots(out)
    run([*resume, "--max-steps", "24", *TINY], tmp_path)  # no new best (exact match stays 0): --out is unchanged
    kept = list_snapshots(out)
    assert (out / "model.safetensors").is_file() and [s.step for s in kept] == [s.step for s in first]
    assert kept[-1].is_checkpoint and not any(s.is_checkpoint for s in kept[:-1])
    run([*resume, "--max-steps", "40", "--reset-best", *TINY], tmp_path)  # this stage's own best: a later step
    resumed = list_snapshots(out)
    assert [s.is_checkpoint for s in resumed].count(True) == 1 and resumed[-1].is_checkpoint
    assert resumed[-1].step > first[-1].step
    assert [s.step for s in first[:-1]] == [s.step for s in resumed[: len(first) - 1]]  # the first stage's are kept
    assert resumed[len(first) - 1].step == first[-1].step  # the old checkpoint, now a float16 snapshot
    for snapshot in resumed:
        load_pretrained(snapshot.folder)  # every folder the index names is there
    run([*TRAIN, "--task", "reverse", "--max-steps", "3", *TINY], tmp_path)  # a fresh run, without snapshots
    assert not (out / "snapshots").exists()  # the old run's would have named this run's checkpoint


def test_snapshots_are_fetched_from_the_hub_with_their_checkpoint_files_only(monkeypatch):
    from fnmatch import fnmatch

    from transformer import checkpoint

    asked = {}

    def snapshot_download(repo_id, allow_patterns, revision=None, **kwargs):
        asked.update(repo_id=repo_id, patterns=allow_patterns, revision=revision)
        return str(REVERSE)

    monkeypatch.setattr(checkpoint, "snapshot_download", snapshot_download)
    found = list_snapshots("someone/reverse-film", revision="abc")
    assert asked["repo_id"] == "someone/reverse-film" and asked["revision"] == "abc" and len(found) >= 8

    def fetched(name: str) -> bool:
        return any(fnmatch(name, pattern) for pattern in asked["patterns"])

    assert fetched("snapshots/index.json") and fetched("snapshots/step-000012/model.safetensors")
    assert fetched("model.safetensors") and fetched("snapshots/step-000012/tokenizer.json")
    assert not fetched("snapshots/step-000012/optimizer.pt") and not fetched("pytorch_model.bin")


@pytest.mark.slow  # a fresh interpreter
def test_snapshots_load_from_a_hub_cache_offline(tmp_path):
    make_hub_cache(tmp_path, "someone/reverse-film", REVERSE)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path), "PYTHONPATH": str(REPO)}
    code = (
        "from transformer import load_pretrained\n"
        "from transformer.snapshots import list_snapshots\n"
        "found = list_snapshots('someone/reverse-film')\n"
        "print([s.step for s in found], [load_pretrained(s.folder).generate(['abc'])[0] for s in found][-1])"
    )
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{[s.step for s in list_snapshots(REVERSE)]} cba"


# The bundled reversal run --------------------------------------------------------------------------------------------


def test_the_bundled_reversal_model_ships_its_training_film():
    snapshots = list_snapshots(REVERSE)
    assert len(snapshots) >= 8 and snapshots[0].step == 0
    assert snapshots[-1].folder.resolve() == REVERSE.resolve()  # the last snapshot is the shipped model itself
    for snapshot in snapshots[:-1]:
        with safe_open(str(snapshot.folder / "model.safetensors"), framework="pt") as weights:
            assert weights.get_tensor("encoder.layers.0.ff.linear1.weight").dtype == torch.float16
    losses = [s.metrics["valid_loss"] for s in snapshots]
    assert losses[-1] < losses[0] / 10
    assert not (BUNDLED / "de-en" / "snapshots").exists()  # they would not fit in 20 MB


def test_checkpoints_stay_within_60_mb():
    size = sum(p.stat().st_size for p in BUNDLED.rglob("*") if p.is_file())
    assert size < 60e6, f"checkpoints/ is {size / 1e6:.1f} MB"


# The app ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lab():
    return make_lab(load_models([]))


@pytest.fixture(scope="module")
def api(lab):
    return endpoints(lab)


def test_the_training_api_decodes_the_source_with_every_snapshot(lab, api):
    film = api.training("reverse", FIXED)["snapshots"]
    index = list_snapshots(REVERSE)
    assert [f["step"] for f in film] == [s.step for s in index]
    assert [f["loss"] for f in film] == [s.metrics["valid_loss"] for s in index]
    assert set(film[0]) == {"step", "output_text", "alignment", "loss"}
    assert film[-1]["output_text"] == api.translate("reverse", FIXED) == FIXED[::-1]
    assert film[0]["output_text"] != FIXED[::-1]
    assert film[0]["alignment"] < 0.5 and film[-1]["alignment"] >= 0.95  # the mirror forms during training
    heads = api.heads("reverse", FIXED)["cross"]
    assert film[-1]["alignment"] == pytest.approx(max(h["alignment"] for layer in heads for h in layer), abs=1e-6)


def test_a_model_without_snapshots_and_an_empty_source_get_clear_messages(lab, api):
    with pytest.raises(InputError, match="de-en has no training snapshots"):
        api.training("de-en", "Hallo")
    with pytest.raises(InputError) as empty:
        api.training("reverse", "  ")
    with pytest.raises(InputError) as main_view:
        api.translate("reverse", "  ")
    assert str(empty.value) == str(main_view.value)


def test_the_training_tab_answers_at_once_then_sends_every_snapshot_for_the_page_to_draw(lab):
    user, controls = UserState(), Controls("reverse", FIXED)
    lab.do(lab.decoding.run, user, controls)
    opened = lab.open_tab(user, controls, "training")
    assert opened["film"]["op"] == "computing" and "every snapshot" in opened["film"]["text"]
    filled = lab.fill(user)
    film = filled["film"]
    frames = film["snapshots"]
    index = list_snapshots(REVERSE)
    assert [f["step"] for f in frames] == [s.step for s in index]
    assert frames[0]["output"] != FIXED[::-1] and frames[-1]["output"] == FIXED[::-1]
    assert frames[0]["info"].startswith("Step 0 ·") and "alignment on this source" in frames[0]["info"]
    assert "the reverse model the other tabs show" in frames[-1]["info"]
    assert frames[0]["data"]["steps"][0]["cross"] != frames[-1]["data"]["steps"][0]["cross"]  # a blur, a mirror
    # what the chart plots, a point per snapshot
    assert [f["loss"] for f in frames] == [s.metrics["valid_loss"] for s in index]
    assert frames[0]["alignment"] < 0.5 <= frames[-1]["alignment"] and film["model"] == "reverse"
    assert frames[-1]["scores"]["validation exact match"] == index[-1].metrics["exact_match"]
    assert lab.fill(user) == {}
    assert lab.show(user, controls) == {}  # a move of the slider, or play, is drawn in the page: nothing sent


def test_a_corrupt_or_missing_snapshot_is_named_and_the_rest_keep_working(tmp_path):
    bundled = tmp_path / "checkpoints"
    shutil.copytree(REVERSE, bundled / "reverse")
    snapshots = list_snapshots(bundled / "reverse")
    broken, missing = snapshots[2], snapshots[3]
    (broken.folder / "model.safetensors").write_bytes(b"not safetensors")
    shutil.rmtree(missing.folder)
    lab = make_lab(load_models([], bundled=bundled))
    api = endpoints(lab)
    film = api.training("reverse", FIXED)["snapshots"]
    assert f"step {broken.step:,}" in film[2]["error"] and "model.safetensors" in film[2]["error"]
    assert f"step {missing.step:,}" in film[3]["error"] and film[3]["output_text"] is None
    assert film[-1]["output_text"] == FIXED[::-1] and film[1]["output_text"] is not None
    user, controls = UserState(), Controls("reverse", FIXED)
    lab.open_tab(user, controls, "training")
    frames = lab.fill(user)["film"]["snapshots"]
    assert "could not be loaded" in frames[2]["info"] and frames[2]["output"] == "" and frames[2]["data"] is None
    assert frames[1]["data"] is not None and frames[-1]["output"] == FIXED[::-1]
    assert api.translate("reverse", "abc") == "cba"


def test_an_unreadable_index_is_named(tmp_path):
    folder = tmp_path / "reverse"
    shutil.copytree(REVERSE, folder)
    index = folder / "snapshots" / "index.json"
    index.parent.mkdir(exist_ok=True)
    index.write_text("{not json")
    with pytest.raises(CheckpointError, match="index.json: not a readable snapshot index"):
        list_snapshots(folder)
    index.write_text(json.dumps([{"step": 0, "folder": "../../etc"}]))
    with pytest.raises(CheckpointError, match="neither"):
        list_snapshots(folder)
    index.write_text(json.dumps([{"step": 5, "folder": "step-000005"}, {"step": 1, "folder": "step-000001"}]))
    with pytest.raises(CheckpointError, match="training order"):
        list_snapshots(folder)
    index.write_text(json.dumps([{"step": 0, "folder": ".."}, {"step": 1, "folder": "step-000001"}]))
    with pytest.raises(CheckpointError, match="only the last snapshot can be the checkpoint itself"):
        list_snapshots(folder)
