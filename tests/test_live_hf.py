"""transformers encoder–decoders in the page: each family's page copy (page_copy/copies.py) against transformers.

For a tiny random Marian, BART, mBART, T5 and M2M100 made with save_pretrained (tests/hf_models):
- the graphs, run by Python's onnxruntime, give transformers' logits and every head's weights (an eager
  output_attentions=True forward on the same tokens) and generate()'s greedy tokens on 6 sentences (50 each in
  benchmarks/hub_live.py), under the family's own rules (a token forced first, eos forced at the limit), applied
  from the copy's config;
- the page's own decoding (page_copy/model.mjs on the runtime and tokenizer library the page carries) run in Node
  reads each source as transformers' tokenizer does and writes generate()'s tokens;
- `attention-lab export --live` writes such a model as a folder and as one file, says in one line why it cannot, and
  leaves nothing half-written.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from attention_lab.checks import check_source
from attention_lab.core import payload
from attention_lab.export import live
from attention_lab.messages import jsonable
from attention_lab.page_copy import copies as page_copy
from attention_lab.page_copy import explanations
from attention_lab.page_copy.analyses import graph_file
from attention_lab.page_copy.graph_decoding import GraphDecoder
from tests import hf_models
from tests.node import needs_node
from tests.test_live import node_decode
from tests.tolerance import assert_close
from transformer import DecodingSession

pytestmark = pytest.mark.slow
transformers = pytest.importorskip("transformers")
pytest.importorskip("onnxruntime")
FAMILIES = sorted(getattr(hf_models, "PAGE_FAMILIES", hf_models.FAMILIES))
WORDS = (
    "Wo ist der Bahnhof ? Ich habe Hunger . Das Haus alt und klein Er liest ein Buch über Katzen Wir gehen morgen in "
    "die Stadt Kinder spielen im Garten Kannst du mir bitte helfen Heute Wetter schön where is the station I am hungry "
    "house old small reads book about cats 12 2026 3,5 Straße Grüße ! , :"
)
# The float32 eps of the largest value compared that each comparison allows (tests/tolerance.py): several times the
# worst measured (weights: M2M100 1,122, Marian 460, T5 248, BART and mBART 15; logits: M2M100 625, Marian 194). The
# tiny models are made with large weights (varied outputs), so their streams are large, and a float32 sum in another
# order (onnxruntime's kernels against torch's) moves a weight by more than eps; at a trained model's scale the
# differences are those of benchmarks/hub_live.py.
WEIGHT_ULPS, LOGIT_ULPS = 4000, 2500
LIMIT = 12


def sentences(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS.split(), k=rng.randint(1, 14))) for _ in range(n)]


@pytest.fixture(scope="module", params=FAMILIES)
def copied(request, tmp_path_factory, tiny_hf_models):
    """(family, pipeline through the adapter, transformers' own model with eager attention, its float32 copy's
    folder and config). The run's Marian and BART and their copies are shared (conftest.tiny_hf_models: an export
    takes seconds); the other families are made here."""
    from transformer import load_pretrained

    if request.param in tiny_hf_models:
        folder, copy = tiny_hf_models[request.param]
    else:  # the graphs that decode (this module's tests read no other: the explanations' are the Marian's and BART's)
        made = getattr(hf_models, "PAGE_FAMILIES", hf_models.FAMILIES)[request.param]
        folder = made(tmp_path_factory.mktemp(request.param))
        copy = tmp_path_factory.mktemp(f"{request.param}-copy")
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(explanations, "ANALYSES", ())
            files = page_copy.copy_files(load_pretrained(str(folder)), request.param, "float32")
        for name, data in files.items():
            (copy / name).write_bytes(data)
    pipeline = load_pretrained(str(folder))
    reference = transformers.AutoModelForSeq2SeqLM.from_pretrained(folder, attn_implementation="eager").eval()
    return request.param, pipeline, reference, copy, json.loads((copy / "config.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def bart(tmp_path_factory):
    """A tiny BART through the adapter: one family is enough for writing a page and for the app's copy (the graphs
    are tested for each)."""
    from transformer import load_pretrained

    return load_pretrained(str(hf_models.bart(tmp_path_factory.mktemp("bart"))))


def test_the_graphs_give_transformers_tokens_logits_and_every_heads_weights(copied):
    family, pipeline, reference, folder, config = copied
    assert config["precision"]["name"] == "float32" and "identical" not in config["precision"]
    config = {**config, "max_new_tokens": LIMIT}  # eos forced at a limit the test can reach
    decoder = GraphDecoder(folder, config)
    for text in sentences(6):  # benchmarks/hub_live.py measures 50 per family
        ids = check_source(pipeline, text)[0]
        decoding = decoder.decode(ids)
        tokens = hf_models.generated(reference, ids, LIMIT)
        assert decoding.tokens == tokens, (family, text)
        start = [config["bos_id"], *tokens[:-1]]
        with torch.no_grad():
            theirs = reference(
                input_ids=torch.tensor([ids]), decoder_input_ids=torch.tensor([start]), output_attentions=True
            )
        what = f"{family} {text!r}"
        for layer, weights in enumerate(theirs.encoder_attentions):
            assert_close(decoding.encoder["encoder"][layer], weights[0], ulps=WEIGHT_ULPS, what=f"{what} encoder")
        for t, step in enumerate(decoding.steps):
            for layer in range(config["n_decoder_layers"]):
                self_theirs = theirs.decoder_attentions[layer][0, :, t, : t + 1]
                assert_close(step.outputs["self"][layer], self_theirs, ulps=WEIGHT_ULPS, what=f"{what} self")
                cross = theirs.cross_attentions[layer][0, :, t]
                assert_close(step.outputs["cross"][layer], cross, ulps=WEIGHT_ULPS, what=f"{what} cross")
            logits = theirs.logits[0, t].numpy()
            allowed = np.isfinite(step.logits)
            if allowed.sum() == 1:  # a forced token: its rule wrote the logits
                continue
            assert_close(step.logits[allowed], logits[allowed], ulps=LOGIT_ULPS, what=f"{what} logits")


def test_the_copy_states_the_families_rules_and_markers(copied):
    family, pipeline, _, _, config = copied
    rules = pipeline.model.rules
    assert config["rules"]["forced_first"] == rules.forced_first and config["rules"]["forced_last"] == rules.forced_last
    assert config["marks_source"] and set(config["special_ids"]) >= {config["eos_id"], config["pad_id"]}
    if family in ("bart", "mbart", "m2m100"):
        assert config["rules"]["forced_first"] is not None  # the token the family writes first (<s>, a language)


@needs_node
def test_the_page_reads_and_decodes_as_transformers_in_node(copied, tmp_path):
    family, pipeline, reference, copy, config = copied
    folder = tmp_path / "copy"  # the copy, with a limit the test can reach (the whole answer comes back as JSON)
    folder.mkdir()
    for file in copy.iterdir():
        (folder / file.name).symlink_to(file)
    config = {**config, "max_new_tokens": LIMIT}
    (folder / "config.json").unlink()
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    texts = sentences(5, seed=1)
    answer = node_decode(folder, {"decode": texts, "tokenize": texts}, tmp_path)
    for text, read, page in zip(texts, answer["tokenize"], answer["decode"]):
        ids, notice = check_source(pipeline, text)
        assert read == {"ids": ids, "notice": notice}, (family, text)
        assert page["ids"] == ids and page["tokens"] == hf_models.generated(reference, ids, config["max_new_tokens"])
        assert not page["schema"], page["schema"]
        # the page labels the source, the decoding and each step's candidates as the server does
        session = DecodingSession(pipeline.model, ids, max_new_tokens=LIMIT)
        session.run()
        ours, theirs = page["full"]["data"], jsonable(payload.full(session, pipeline.tokenizer, family))
        for key in ("model", "layers", "heads", "bos", "src", "out"):
            assert ours[key] == theirs[key], (family, text, key)
        for a, b in zip(ours["steps"], theirs["steps"], strict=True):
            assert (a["token"], a["label"]) == (b["token"], b["label"]), (family, text)
            assert [c[:2] for c in a["top"]] == [c[:2] for c in b["top"]], (family, text)


def test_export_writes_a_folder_and_a_file_and_refuses_in_one_line_leaving_nothing(
    bart, tmp_path, monkeypatch, capsys, exported_once
):
    pipeline = bart
    source = str(pipeline.folder)
    index = live.write(source, tmp_path / "site", "float32")
    written = sorted(p.name for p in index.parent.iterdir())
    config = json.loads((index.parent / "config.json").read_text(encoding="utf-8"))
    beside = [graph_file(name) for name in config["analyses"]] + config.get("files", [])  # the explanations' graphs...
    wanted = [*page_copy.FILES, *beside, *live.RUNTIME, live.PAGE_MODULES, "README.md", "index.html"]
    assert written == sorted(wanted)
    readme = (index.parent / "README.md").read_text(encoding="utf-8")
    assert "sdk: static" in readme and "cross-origin-embedder-policy: require-corp" in readme
    assert "license: other\n" in readme  # the model's own licence: this one's card gives none
    page = live.write(source, tmp_path / "one.html", "float32").read_text(encoding="utf-8")
    assert "part:weights.bin" in page and f"<small>{Path(source).name}, decoding in this page" in page  # its name
    # written again, failing half-way: the folder written before stays whole, and nothing else is left
    before = {str(p.relative_to(index.parent)): p.read_bytes() for p in index.parent.rglob("*") if p.is_file()}
    writes, write_bytes = [], Path.write_bytes

    def failing(path, data):  # the third file written into the folder, or beside it, fails
        if path.parent.parent == tmp_path:
            writes.append(path)
            if len(writes) == 3:
                raise OSError("disk full")
        return write_bytes(path, data)

    monkeypatch.setattr(Path, "write_bytes", failing)
    with pytest.raises(OSError, match="disk full"):  # another precision: other bytes in every file
        live.write(source, tmp_path / "site", "float16")
    monkeypatch.setattr(Path, "write_bytes", write_bytes)
    assert {str(p.relative_to(index.parent)): p.read_bytes() for p in index.parent.rglob("*") if p.is_file()} == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no half-written folder beside it
    # over the one-file limit: refused in one line, nothing written
    monkeypatch.setattr(live, "LIMIT_MB", 0.01)
    assert live.main(["--live", source, "-o", str(tmp_path / "big.html")]) == 2
    message = capsys.readouterr().err.strip().splitlines()[-1]  # after transformers' loading bars
    assert (
        message.startswith("attention-lab export --live: ")
        and "write a folder (-o DIR/)" in message
        and not (tmp_path / "big.html").exists()
    )
    # a graph that cannot be exported (a model with no copy in the cache yet): one line naming the model, and no
    # folder half-written
    monkeypatch.setattr(page_copy, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(page_copy, "exported", lambda model: (_ for _ in ()).throw(ValueError("no graph")))
    assert live.main(["--live", source, "-o", str(tmp_path / "broken")]) == 2
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert message.endswith(f"{Path(source).name}: its graphs cannot be exported to ONNX (no graph)"), message
    assert not (tmp_path / "broken").exists() or not any((tmp_path / "broken").iterdir())


def test_the_app_gives_a_transformers_model_a_copy_in_the_smallest_precision_that_keeps_its_outputs(
    bart, tmp_path, monkeypatch, exported_once
):
    from concurrent.futures import ThreadPoolExecutor

    from attention_lab.decoding.from_page import road_config
    from attention_lab.models.registry import Registry
    from attention_lab.page_copy.precision import converted, drift

    family, pipeline = "bart", bart
    monkeypatch.setattr(page_copy, "CACHE", tmp_path)
    registry = Registry.of({family: pipeline})
    assert road_config(registry)["copies"][family] is not None  # the page loads it once it is made
    copies = page_copy.PageCopies(registry)
    with ThreadPoolExecutor(1) as executor:
        copies.start(executor)
        folder = copies.made[family].result(timeout=300)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    chosen = config["precision"]
    order = [*page_copy.REDUCED, "float32"]
    assert chosen["name"] in order
    if chosen["name"] != "float32":
        assert chosen["identical"] >= page_copy.KEPT and chosen["n"] == 50
    made, sources = page_copy.exported(pipeline.model.eval()), page_copy.drift_sources(pipeline)  # the app's, shared
    measured = {**config, "max_new_tokens": min(config["max_new_tokens"], page_copy.DRIFT_TOKENS)}
    for smaller in order[: order.index(chosen["name"])]:  # each smaller one changed too many outputs
        assert drift(made, converted(made, smaller), measured, sources).identical < page_copy.KEPT, smaller
