"""The shipped checkpoints: Hub format, size, quality, and loading from a folder or (offline) from the Hub cache."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from training.reversal import reversal_pairs
from transformer import CheckpointError, Transformer
from transformer.hub import load_pretrained

REPO = Path(__file__).resolve().parent.parent
CHECKPOINTS = REPO / "checkpoints"
NAMES = ["reverse", "de-en"]


@pytest.fixture(scope="module")
def reverse():
    return load_pretrained(CHECKPOINTS / "reverse")


@pytest.fixture(scope="module")
def de_en():
    return load_pretrained(CHECKPOINTS / "de-en")


@pytest.mark.parametrize("name", NAMES)
def test_checkpoint_is_in_hub_format_and_small(name):
    folder = CHECKPOINTS / name
    files = {p.name for p in folder.iterdir() if p.is_file()}
    assert files == {"config.json", "model.safetensors", "tokenizer.json", "README.md", "survey.json"}  # its heads
    assert {p.name for p in folder.iterdir() if p.is_dir()} <= {"snapshots"}  # the training snapshots, if any
    assert sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) < 30 * 2**20  # snapshots included
    card = (folder / "README.md").read_text(encoding="utf-8")
    front_matter = re.match(r"---\n(.*?)\n---\n", card, flags=re.DOTALL).group(1)
    for key in ("license:", "library_name:", "tags:", "metrics:"):
        assert key in front_matter, key
    assert "python -m training.train" in card  # the exact training command
    if name == "de-en":
        assert "license: gpl-2.0" in front_matter and "GPL" in card and "datasets:" in front_matter


@pytest.mark.parametrize("name", NAMES)
def test_both_loaders_read_the_checkpoint(name):
    model = Transformer.from_pretrained(CHECKPOINTS / name)
    pipeline = load_pretrained(CHECKPOINTS / name)
    assert model.state_dict().keys() == pipeline.model.state_dict().keys()
    for key, tensor in model.state_dict().items():
        assert torch.equal(tensor, pipeline.model.state_dict()[key]), key
    assert not model.training


def test_reversal_is_exact_on_fresh_random_strings(reverse):
    pairs = reversal_pairs(400, 1, 24, seed=20261122)
    outputs = reverse.generate([s for s, _ in pairs])
    accuracy = sum(o == t for o, (_, t) in zip(outputs, pairs)) / len(pairs)
    assert accuracy >= 0.99, [(s, o) for o, (s, t) in zip(outputs, pairs) if o != t][:5]


# Everyday sentences, each with the translations a fluent speaker would accept.
EVERYDAY = {
    "Ich habe Hunger.": {"I am hungry.", "I'm hungry."},
    "Ich habe heute keine Zeit.": {
        "I have no time today.",
        "I don't have time today.",
        "I haven't got time today.",
        "I have no time today!",
    },
    "Das ist mein Haus.": {
        "This is my house.",
        "That is my house.",
        "That's my house.",
        "This is my home.",
        "That's my home.",
    },
    "Wo ist der Bahnhof?": {
        "Where is the station?",
        "Where's the station?",
        "Where is the railway station?",
        "Where is the train station?",
        "Where's the railway station?",
    },
    "Ich liebe dich.": {"I love you."},
    "Er ist mein Freund.": {"He is my friend.", "He's my friend.", "He is my boyfriend.", "He's my boyfriend."},
    "Das Wetter ist heute schön.": {
        "The weather is nice today.",
        "The weather is fine today.",
        "The weather is beautiful today.",
        "The weather is lovely today.",
        "The weather's nice today.",
        "It's a nice day today.",
    },
    "Ich weiß es nicht.": {"I don't know.", "I do not know."},
    "Wie spät ist es?": {"What time is it?", "What's the time?"},
    "Das Essen war sehr gut.": {
        "The food was very good.",
        "The meal was very good.",
        "The food was excellent.",
        "The meal was excellent.",
    },
}


def right(source: str, output: str) -> bool:
    same = lambda s: s.replace("’", "'")
    return same(output) in {same(t) for t in EVERYDAY[source]}


def test_simple_everyday_sentences_come_out_right(de_en):
    sources = list(EVERYDAY)
    for strategy in ("beam", "greedy"):
        outputs = de_en.generate(sources, strategy=strategy, beam_size=4)
        wrong = {s: o for s, o in zip(sources, outputs) if not right(s, o)}
        assert len(wrong) <= 3, (strategy, wrong)


def test_the_translations_the_readme_shows_are_what_the_model_gives(de_en):
    """Each `m.generate([...])  # [...]` line of the README states the real output (the hub module's example is a
    doctest, which the test command runs)."""
    import ast

    claim = re.compile(r"m\.generate\((\[[^\]]*\])(?:, strategy=\"(\w+)\", beam_size=(\d+))?\)\s+#\s*(\[[^\]]*\])")
    claims = [m.groups() for m in claim.finditer((REPO / "README.md").read_text(encoding="utf-8"))]
    assert len(claims) >= 2, claims
    for sources, strategy, beam_size, expected in claims:
        outputs = de_en.generate(
            ast.literal_eval(sources), strategy=strategy or "greedy", beam_size=int(beam_size or 4)
        )
        assert outputs == ast.literal_eval(expected), (sources, strategy)


def test_candidates_are_the_beams_hypotheses_best_first(reverse):
    texts = ["abc123", "zyx", "q"]
    candidates = reverse.candidates(texts, beam_size=4)
    assert [rows[0] for rows in candidates] == reverse.generate(texts, strategy="beam", beam_size=4)
    assert [rows[0] for rows in candidates] == ["321cba", "xyz", "q"]
    assert all(len(rows) >= 2 and len(set(rows)) == len(rows) for rows in candidates)


def test_generate_rejects_unknown_strategy(reverse):
    with pytest.raises(ValueError, match="strategy"):
        reverse.generate(["abc"], strategy="sampling")


def test_tokenizer_that_does_not_match_the_vocabulary_is_refused(tmp_path):
    folder = tmp_path / "mixed"
    shutil.copytree(CHECKPOINTS / "reverse", folder)
    shutil.copy(CHECKPOINTS / "de-en" / "tokenizer.json", folder / "tokenizer.json")
    with pytest.raises(CheckpointError, match=r"tokenizer.json: vocabulary of \d+ tokens does not match config.json"):
        load_pretrained(folder)


def make_hub_cache(cache: Path, repo_id: str, source: Path, commit: str = "0" * 40) -> None:
    """Lay out `source` the way huggingface_hub caches a downloaded repo."""
    repo_dir = cache / f"models--{repo_id.replace('/', '--')}"
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(commit)
    shutil.copytree(source, repo_dir / "snapshots" / commit)


HUB_SCRIPT = """
import sys
from transformer import CheckpointError, Transformer
from transformer.hub import load_pretrained
model = Transformer.from_pretrained("attention-lab/reverse")
print("from_pretrained", model.config.d_model)
print("generate", load_pretrained("attention-lab/reverse").generate(["abc123"])[0])
try:
    load_pretrained("attention-lab/not-cached")
except CheckpointError as err:
    print("refused", err)
"""


@pytest.mark.slow
def test_loading_by_hub_repo_id_works_offline_from_the_cache(tmp_path):
    make_hub_cache(tmp_path, "attention-lab/reverse", CHECKPOINTS / "reverse")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path), "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", HUB_SCRIPT], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("from_pretrained ") and lines[1] == "generate 321cba"
    assert lines[2].startswith("refused attention-lab/not-cached: could not get it from the Hugging Face Hub")


def test_push_to_hub_uploads_the_checkpoint_and_nothing_else(tmp_path, monkeypatch):
    """Offline, at huggingface_hub's boundary: which repo is created, and which files upload_folder would send."""
    from huggingface_hub import HfApi
    from huggingface_hub.utils import filter_repo_objects

    folder = tmp_path / "reverse"
    shutil.copytree(CHECKPOINTS / "reverse", folder)
    (folder / "pytorch_model.bin").write_bytes(b"a pickle is never uploaded")
    (folder / "notes.txt").write_text("not part of a checkpoint", encoding="utf-8")
    (folder / "runs").mkdir()
    (folder / "runs" / "config.json").write_text("{}", encoding="utf-8")
    snapshots = sorted(p.name for p in (folder / "snapshots").glob("step-*"))
    (folder / "snapshots" / snapshots[0] / "optimizer.pt").write_bytes(b"nor is a pickle among the snapshots")
    calls = []

    def create_repo(self, repo_id, **kwargs):
        calls.append(("create_repo", self.token, repo_id, kwargs))

    def upload_folder(self, *, repo_id, folder_path, allow_patterns=None, ignore_patterns=None, **kwargs):
        files = [str(p.relative_to(folder_path)) for p in Path(folder_path).rglob("*") if p.is_file()]
        sent = filter_repo_objects(files, allow_patterns=allow_patterns, ignore_patterns=ignore_patterns)
        calls.append(("upload_folder", self.token, repo_id, sorted(sent)))
        return f"https://huggingface.co/{repo_id}/commit/0"

    monkeypatch.setattr(HfApi, "create_repo", create_repo)
    monkeypatch.setattr(HfApi, "upload_folder", upload_folder)
    url = load_pretrained(folder).push_to_hub("someone/lab-reverse", folder=folder, token="hf_x", private=True)
    assert url == "https://huggingface.co/someone/lab-reverse/commit/0"
    assert calls == [
        ("create_repo", "hf_x", "someone/lab-reverse", {"private": True, "exist_ok": True}),
        (
            "upload_folder",
            "hf_x",
            "someone/lab-reverse",
            sorted(
                [
                    "README.md",
                    "config.json",
                    "model.safetensors",
                    "survey.json",
                    "tokenizer.json",
                    "snapshots/index.json",
                    *(
                        f"snapshots/{name}/{file}"
                        for name in snapshots
                        for file in ("config.json", "model.safetensors", "tokenizer.json")
                    ),
                ]
            ),
        ),
    ]
