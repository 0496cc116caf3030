"""python -m attention_lab.survey: every head over a corpus, on the bundled models (the tiny transformers models' survey is in
test_hf.py). Each number is checked against a computation that does not share the survey's batching: one sentence's
head summary, a head ablated with plain greedy decoding, training.evaluate's score, and one process against two."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from attention_lab.core.summaries import head_summaries
from attention_lab.survey.__main__ import main as survey_main
from attention_lab.survey.feature import ChosenSurveys
from attention_lab.survey.report import read_survey
from training import evaluate
from training.reversal import reversal_pairs
from transformer import DecodingSession, Head, Interventions, bundled, greedy_decode, load_pretrained
from transformer.config import KINDS, n_layers

REPO = Path(__file__).resolve().parent.parent
GERMAN = [
    ("Bitte schließen Sie das Fenster.", "Please close the window."),
    ("Ich habe Hunger.", "I am hungry."),
    ("Wo ist der Bahnhof?", "Where is the station?"),
    ("Das ist ein Haus.", "This is a house."),
    ("Er hatte keine Zeit.", "He had no time."),
    ("Die Kinder spielen im Garten.", "The children are playing in the garden."),
    ("Wir haben es geschafft.", "We made it."),
    ("Sie kommt morgen.", "She is coming tomorrow."),
]


def write_tsv(pairs, path: Path, references: bool = True) -> Path:
    path.write_text("".join(f"{s}\t{t}\n" if references else f"{s}\n" for s, t in pairs), encoding="utf-8")
    return path


def run_survey(tmp_path: Path, model: str, data: Path, *more: str) -> dict:
    out = tmp_path / "out"
    assert survey_main(["--model", model, "--data", str(data), "--out", str(out), "--device", "cpu", *more]) == 0
    return json.loads((out / "survey.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def reversal(tmp_path_factory):
    """The bundled reversal model's survey of 40 fresh strings: (survey, the pairs, the output folder)."""
    folder = tmp_path_factory.mktemp("reversal")
    pairs = reversal_pairs(40, 1, 16, seed=77)
    data = write_tsv(pairs, folder / "strings.tsv")
    return run_survey(folder, "reverse", data), pairs, folder


@pytest.mark.slow
def test_survey_json_has_the_contracts_fields_for_every_head(reversal):
    survey, pairs, folder = reversal
    config = load_pretrained(bundled("reverse")).model.config
    assert survey["model"] == "reverse" and survey["sentences"] == len(pairs)
    assert survey["score"]["name"] == "exact match"
    for kind in KINDS:
        grid = survey["heads"][kind]
        assert len(grid) == n_layers(config, kind) and all(len(row) == config.n_heads for row in grid)
        for cell in (c for row in grid for c in row):
            assert set(cell) == {"entropy", "special", "offset", "alignment", "importance"}
            assert (cell["alignment"] is None) == (kind != "cross")  # reversal's gold alignment is known
            assert cell["entropy"] >= 0 and 0 <= cell["special"] <= 1 and 0 <= cell["importance"] <= 100
    assert [p["fraction"] for p in survey["pruning"]] == [i / 10 for i in range(11)]
    assert survey["pruning"][0] == {"fraction": 0.0, "heads": 0, "score": survey["score"]["value"]}
    n_heads = sum(n_layers(config, k) for k in KINDS) * config.n_heads
    assert survey["pruning"][-1]["heads"] == n_heads and len(survey["pruning_order"]) == n_heads
    for kind in KINDS:
        points = survey["pruning_by_kind"][kind]
        assert points[0]["score"] == survey["score"]["value"]
        assert points[-1]["heads"] == n_layers(config, kind) * config.n_heads
    assert read_survey(folder / "out" / "survey.json", config) == survey


@pytest.mark.slow
def test_the_score_is_training_evaluates_and_each_importance_is_that_head_ablated_in_plain_greedy_decoding(
    reversal, capsys
):
    survey, pairs, folder = reversal
    capsys.readouterr()
    assert evaluate.main(["--model", str(bundled("reverse")), "--data", str(folder / "strings.tsv")]) == 0
    assert f"exact match: {survey['score']['value']:.2f}%" in capsys.readouterr().out
    pipeline = load_pretrained(bundled("reverse"))
    src = pipeline.encode_batch([s for s, _ in pairs])
    for cell_head in (survey["pruning_order"][0], survey["pruning_order"][-1]):  # the least and the most needed
        head = Head(cell_head["kind"], cell_head["layer"], cell_head["head"])
        tokens = greedy_decode(pipeline.model, src, 2 * src.size(1) + 10, Interventions(ablate=frozenset({head})))
        exact = 100 * np.mean([pipeline.tokenizer.decode(t) == r for t, (_, r) in zip(tokens, pairs)])
        assert survey["heads"][head.kind][head.layer][head.head]["importance"] == pytest.approx(exact, abs=1e-4)
    ranked = [survey["heads"][h["kind"]][h["layer"]][h["head"]]["importance"] for h in survey["pruning_order"]]
    assert ranked == sorted(ranked, reverse=True)  # least needed first


@pytest.mark.slow
def test_a_pruning_point_is_the_score_with_the_first_heads_of_the_order_ablated(reversal):
    survey, pairs, _ = reversal
    pipeline = load_pretrained(bundled("reverse"))
    src = pipeline.encode_batch([s for s, _ in pairs])
    point = survey["pruning"][3]
    pruned = frozenset(Head(h["kind"], h["layer"], h["head"]) for h in survey["pruning_order"][: point["heads"]])
    tokens = greedy_decode(pipeline.model, src, 2 * src.size(1) + 10, Interventions(ablate=pruned))
    exact = 100 * np.mean([pipeline.tokenizer.decode(t) == r for t, (_, r) in zip(tokens, pairs)])
    assert point["score"] == pytest.approx(exact, abs=1e-4)
    cross = [h for h in survey["pruning_order"] if h["kind"] == "cross"]
    point = survey["pruning_by_kind"]["cross"][5]
    pruned = frozenset(Head(h["kind"], h["layer"], h["head"]) for h in cross[: point["heads"]])
    tokens = greedy_decode(pipeline.model, src, 2 * src.size(1) + 10, Interventions(ablate=pruned))
    exact = 100 * np.mean([pipeline.tokenizer.decode(t) == r for t, (_, r) in zip(tokens, pairs)])
    assert point["score"] == pytest.approx(exact, abs=1e-4)


def test_over_one_sentence_the_statistics_are_that_sentences_head_summary(tmp_path):
    text = "stack42"
    survey = run_survey(tmp_path, "reverse", write_tsv([(text, text[::-1])], tmp_path / "one.tsv"))
    pipeline = load_pretrained(bundled("reverse"))
    session = DecodingSession(pipeline.model, pipeline.tokenizer.encode(text))
    session.run()
    summary = head_summaries(session, "reversal")
    offsets = {
        "encoder": [(w.argmax(-1) - torch.arange(w.size(-1))).float().mean(-1) for w in session.encoder_attention],
        "decoder_self": [
            torch.stack([s.self_attention[layer].argmax(-1) - t for t, s in enumerate(session.steps)], -1)
            .float()
            .mean(-1)
            for layer in range(len(session.steps[0].self_attention))
        ],
        "cross": [
            torch.stack([s.cross_attention[layer].argmax(-1) - t for t, s in enumerate(session.steps)], -1)
            .float()
            .mean(-1)
            for layer in range(len(session.steps[0].cross_attention))
        ],
    }
    for kind in KINDS:
        for layer, row in enumerate(survey["heads"][kind]):
            for h, cell in enumerate(row):
                expected = summary[kind][layer][h]
                assert cell["entropy"] == pytest.approx(expected["entropy"], abs=1e-4)
                assert cell["special"] == pytest.approx(expected["special"], abs=1e-4)
                assert cell["alignment"] == pytest.approx(expected["alignment"], abs=1e-5)
                assert cell["offset"] == pytest.approx(float(offsets[kind][layer][h]), abs=1e-5)


@pytest.mark.slow
def test_with_references_a_translation_is_scored_with_sacrebleus_bleu_as_training_evaluates_it(tmp_path):
    data = write_tsv(GERMAN, tmp_path / "de.tsv")
    survey = run_survey(tmp_path, "de-en", data)
    pipeline = load_pretrained(bundled("de-en"))
    assert survey["score"]["name"] == "BLEU"
    bleu = evaluate.score_translation(pipeline, GERMAN, "greedy", 1).bleu.score
    assert survey["score"]["value"] == pytest.approx(bleu, abs=1e-4)
    assert survey["pruning"][0]["score"] == survey["score"]["value"]
    assert all(cell["alignment"] is None for row in survey["heads"]["cross"] for cell in row)


@pytest.mark.slow
def test_without_references_a_head_is_scored_by_how_often_the_plain_decoding_is_kept(tmp_path):
    survey = run_survey(tmp_path, "de-en", write_tsv(GERMAN, tmp_path / "de.tsv", references=False), "--limit", "5")
    assert survey["sentences"] == 5
    assert survey["score"] == {"name": "exact match with the plain decoding", "value": 100.0}
    assert survey["pruning"][-1]["score"] < 100.0  # every head gone: nothing of the plain decoding is left


@pytest.mark.slow
def test_the_html_opens_offline_and_the_terminal_gets_a_summary(reversal, tmp_path, capsys):
    _, pairs, folder = reversal
    page = (folder / "out" / "survey.html").read_text(encoding="utf-8")
    assert "<script src=" not in page and "lab.start(" in page and "id='pruning'" in page
    assert "function summaryElement" in page and ".summary-grid" in page  # the app's own summary (core/grids.mjs)
    run_survey(tmp_path, "reverse", write_tsv(pairs[:3], tmp_path / "three.tsv"))
    out = capsys.readouterr().out
    assert "most needed:" in out and "least needed:" in out and "survey.html" in out


@pytest.mark.parametrize(
    ("lines", "args", "message"),
    [
        ("", [], "has no sentences"),
        ("abc\tcba\nabd\n", [], "line 2 has no reference"),
        ("\tcba\n", [], "line 1: the source"),
        ("abc\n", ["--device", "cuda"], "no CUDA GPU"),
        ("abc\n", ["--model", "no/such-model-here"], "cannot load the model"),
        ("abc\n", ["--out", "data.tsv"], "cannot make that folder"),
    ],
)
def test_bad_input_gets_one_line_and_no_files(tmp_path, capsys, lines, args, message):
    if "cuda" in args and torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    data = tmp_path / "data.tsv"
    data.write_text(lines, encoding="utf-8")
    args = [str(tmp_path / a) if a == "data.tsv" else a for a in args]  # --out an existing file
    argv = ["--model", "reverse", "--data", str(data), "--out", str(tmp_path / "out"), *args]
    assert survey_main(argv[2:] if "--model" in args else argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


SMALL_BATCHES = """
import runpy
from attention_lab.survey import decoding
assert isinstance(decoding.BATCH, int)  # the batch size the survey splits its corpus by, made smaller here
decoding.BATCH = 8
runpy.run_module("attention_lab.survey", run_name="__main__", alter_sys=True)
"""


@pytest.mark.slow
def test_two_processes_under_torchrun_give_the_survey_of_one(tmp_path, monkeypatch):
    """The command as torchrun runs it, with batches of 8 rather than 64 (the split is the same, by whole batches,
    and the survey of 10 sentences takes seconds, not a minute): 2 batches of 8 and 2, one for each process; against
    the survey of one process, the command run here with the same batches (a third interpreter would only start)."""
    from attention_lab.survey import decoding

    data = write_tsv(reversal_pairs(10, 1, 12, seed=5), tmp_path / "strings.tsv")
    monkeypatch.setattr(decoding, "BATCH", 8)
    one = run_survey(tmp_path, "reverse", data)
    command_with_small_batches = tmp_path / "survey.py"
    command_with_small_batches.write_text(SMALL_BATCHES, encoding="utf-8")
    out = tmp_path / "out2"
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    command = [*launcher, str(command_with_small_batches), "--model", "reverse", "--data", str(data), "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run(command, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    two = json.loads((out / "survey.json").read_text(encoding="utf-8"))
    assert two["processes"] == 2 and one["processes"] == 1
    for key in ("model", "sentences", "score", "pruning", "pruning_by_kind", "pruning_order"):
        assert one[key] == two[key], key
    for kind in KINDS:
        for row_one, row_two in zip(one["heads"][kind], two["heads"][kind]):
            for a, b in zip(row_one, row_two):
                assert a.keys() == b.keys()
                for name in a:
                    assert a[name] == pytest.approx(b[name], abs=1e-5), (kind, name)


def tiny_survey(pipeline, name: str) -> dict:
    from attention_lab.survey.corpus import Corpus
    from attention_lab.survey.run import survey

    return survey(pipeline, Corpus(["Ich habe Hunger.", "Das ist ein Haus."], None), name)


def test_the_survey_tab_shows_the_survey_next_to_the_checkpoint_or_the_one_chosen(tmp_path):
    from attention_lab.app import make_lab
    from attention_lab.checks import InputError
    from attention_lab.controls import Controls
    from attention_lab.models.registry import Registry
    from attention_lab.run.state import UserState
    from attention_lab.survey.feature import chooser
    from tests.conftest import tiny_pipelines

    pipelines = tiny_pipelines()
    pipelines["de-en"].folder = tmp_path / "de-en"
    lab = make_lab(Registry.of(pipelines))
    user, c = UserState(), Controls("de-en", "Ich habe Hunger.", max_len=6)
    user.tab = "survey"
    assert "No survey of de-en" in lab.do(lab.decoding.run, user, c)["survey"]["text"]
    saved = tiny_survey(pipelines["de-en"], "saved")
    (tmp_path / "de-en").mkdir()
    (tmp_path / "de-en" / "survey.json").write_text(json.dumps(saved), encoding="utf-8")
    shown = lab.do(lab.decoding.run, user, Controls("de-en", "Das ist ein Haus.", max_len=6))["survey"]
    assert "over 2 sentences" in shown["title"] and "saved" in shown["title"] and shown["op"] == "summary"
    assert [row["key"] for row in shown["metrics"]] == ["entropy", "special", "offset", "lost"]  # no gold alignment
    lost = shown["metrics"][-1]["grids"]["cross"][1][3]
    cell = saved["heads"]["cross"][1][3]
    assert lost == pytest.approx(saved["score"]["value"] - cell["importance"], abs=1e-4)
    chosen = tmp_path / "chosen.json"
    chosen.write_text(json.dumps({**saved, "model": "chosen"}), encoding="utf-8")
    choose = chooser(lab.registry)
    redrawn = lab.do(choose, user, c, str(chosen))
    assert "chosen" in redrawn["survey"]["title"] and user.states.get(ChosenSurveys).paths == {"de-en": str(chosen)}
    other = tmp_path / "other.json"
    fewer = {**saved, "heads": {**saved["heads"], "cross": saved["heads"]["cross"][:1]}}  # one cross layer short
    other.write_text(json.dumps(fewer), encoding="utf-8")
    for wrong, message in ((other, "not this model's"), (tmp_path / "missing.json", "not a survey.json")):
        with pytest.raises(InputError, match=message):
            lab.do(choose, user, c, str(wrong))
    assert user.states.get(ChosenSurveys).paths == {"de-en": str(chosen)}  # a wrong file loses nothing


def test_a_broken_survey_file_is_refused_in_one_line(tmp_path):
    from attention_lab.checks import InputError

    cell = {"entropy": 1.0, "special": 0.1, "offset": 0.0, "alignment": None, "importance": 9.0}
    valid = {
        "model": "m",
        "sentences": 1,
        "score": {"name": "BLEU", "value": 10.0},
        "heads": {kind: [[cell]] for kind in KINDS},
        "pruning": [{"fraction": 0.0, "heads": 0, "score": 10.0}],
        "pruning_by_kind": {kind: [] for kind in KINDS},
    }
    path = tmp_path / "survey.json"
    path.write_text(json.dumps(valid), encoding="utf-8")
    assert read_survey(path) == valid
    broken = [
        "{not json",
        json.dumps({key: value for key, value in valid.items() if key != "model"}),
        json.dumps({**valid, "score": {"name": "BLEU", "value": "10.0"}}),  # a number as text
        json.dumps({**valid, "heads": {**valid["heads"], "other": [[cell]]}}),  # a kind the model has not
        json.dumps({**valid, "heads": {kind: [[{**cell, "importance": float("nan")}]] for kind in KINDS}}),  # NaN
        json.dumps({**valid, "heads": {kind: [[{**cell, "alignment": "high"}]] for kind in KINDS}}),
        json.dumps({**valid, "pruning_by_kind": [1]}),
    ]
    for text in broken:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError) as err:
            read_survey(path)
        assert "not a survey.json" in str(err.value) and "\n" not in str(err.value), text


def test_the_app_refuses_a_gpu_it_does_not_have_in_one_line():
    from attention_lab import cli

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(SystemExit) as done:
        cli.main(["--device", "cuda"])
    assert "no CUDA GPU" in str(done.value.code) and "\n" not in str(done.value.code)


@pytest.mark.slow
def test_in_bfloat16_the_survey_runs_and_the_plain_decoding_still_reverses(tmp_path):
    pairs = reversal_pairs(12, 1, 8, seed=3)
    survey = run_survey(tmp_path, "reverse", write_tsv(pairs, tmp_path / "strings.tsv"), "--dtype", "bfloat16")
    assert survey["score"]["value"] >= 90.0 and survey["device"] == "cpu" and survey["dtype"] == "bfloat16"
    assert all(np.isfinite(cell["entropy"]) for kind in KINDS for row in survey["heads"][kind] for cell in row)


def test_the_survey_reads_a_file_as_training_evaluate_reads_it(tmp_path):
    from attention_lab.survey.corpus import read_corpus
    from training.data import read_tsv

    path = tmp_path / "pairs.tsv"
    path.write_text(" ab \tba \ncd\tdc\tnote\ne\u2028f\tf\u2028e\n\n", encoding="utf-8")
    corpus = read_corpus(path)
    assert list(zip(corpus.sources, corpus.references)) == read_tsv(path)
