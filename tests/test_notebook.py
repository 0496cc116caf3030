"""Attention Lab in a notebook: attention_lab.show decodes as the app does (its JSON is /attention's), its cell brings
plotly.js once where the notebook's cells share a page and in every cell where they do not, it fetches nothing, and
`attention-lab export` writes the same view as a lesson file, or says in one line why it cannot."""

from __future__ import annotations

import base64
import re

import numpy as np
import pytest

import attention_lab
from attention_lab.export.__main__ import main as export_main
from attention_lab.messages import jsonable
from attention_lab.notebook import view as notebook
from transformer import bundled, load_pretrained

PLOTLY_MARK = "* plotly.js (cartesian - minified) v"  # in the bundle's banner (assets/vendor)


def weights16(b64: str, shape) -> np.ndarray:
    return np.frombuffer(base64.b64decode(b64), dtype="<u2").reshape(shape) / 65535


@pytest.fixture(scope="module")
def api(bundled):
    from attention_lab.app import endpoints, make_lab

    return endpoints(make_lab(bundled))


def test_show_decodes_as_the_app_and_its_json_is_the_attention_export(api):
    view = attention_lab.show("reverse", "hello42world")
    assert view.output == "dlrow24olleh"
    assert view.to_json() == api.attention("reverse", "hello42world")
    beam = attention_lab.show("de-en", "Ich muss den Rasen mähen.", strategy="beam", beam_size=4)
    assert beam.output == api.translate("de-en", "Ich muss den Rasen mähen.", "beam", 4)


def test_a_loaded_pipeline_or_a_folder_is_shown_too():
    folder = bundled("reverse")
    assert attention_lab.show(str(folder), "abc").output == "cba"
    assert attention_lab.show(load_pretrained(str(folder)), "abc").output == "cba"


def test_plotly_comes_once_where_the_cells_share_a_page_and_in_every_cell_where_they_do_not(monkeypatch):
    view = attention_lab.show("reverse", "abc")
    monkeypatch.delenv("VSCODE_PID", raising=False)
    monkeypatch.setattr(notebook.Sent, "plotly", False)
    first, second = view._repr_html_(), view._repr_html_()
    assert PLOTLY_MARK in first and PLOTLY_MARK not in second
    assert len(second) < len(first) / 20
    monkeypatch.setenv("VSCODE_PID", "1")  # VS Code: each output is a page of its own
    assert PLOTLY_MARK in view._repr_html_() and PLOTLY_MARK in view._repr_html_()
    for html in (first, second):
        assert not re.search(r"<script[^>]+src=|<link[^>]+href=", html), "a cell must not fetch anything"
        assert html.count("attention-lab-") >= 2  # its own element, which its script starts on


def test_save_writes_one_self_contained_lesson_file(tmp_path):
    path = attention_lab.show("reverse", "abc").save(tmp_path / "lesson.html")
    text = path.read_text(encoding="utf-8")
    assert PLOTLY_MARK in text and '<meta charset="utf-8">' in text and not re.search(r"<script[^>]+src=", text)
    assert "dlrow" not in text and "cba" in text


def test_the_export_command_writes_a_lesson_or_says_why_in_one_line(tmp_path, capsys):
    assert export_main(["reverse", "abc", "-o", str(tmp_path / "l.html")]) == 0
    assert (tmp_path / "l.html").stat().st_size > 1_000_000 and "“abc” → “cba”" in capsys.readouterr().out
    assert export_main(["reverse", "ABC", "-o", str(tmp_path / "bad.html")]) == 2
    said = capsys.readouterr().err
    assert said.startswith("attention-lab export: This model only knows") and said.count("\n") == 1
    assert not (tmp_path / "bad.html").exists()


def test_any_encoder_decoders_output_attentions_is_shown_with_our_views(tmp_path_factory):
    """A transformers model's own output_attentions=True, with bertviz's keywords (transformers' names, and
    bertviz's singular ones), gives the same weights as the adapter's decoding of the same tokens."""
    import torch

    from tests import hf_models

    pipeline = hf_models.loaded("marian", tmp_path_factory)
    hf, tokenizer = pipeline.model.hf, pipeline.tokenizer
    src = tokenizer.encode("ein kleiner Test")
    written = attention_lab.show(pipeline, "ein kleiner Test").to_json()
    out_ids = [tokenizer.token_to_id(t) for t in written["output_tokens"]]
    decoder_ids = [pipeline.model.config.bos_id, *out_ids[:-1]]
    with torch.no_grad():
        outputs = hf(
            input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([decoder_ids]), output_attentions=True
        )
    tokens = {"encoder_tokens": tokenizer.tokens(src), "decoder_tokens": tokenizer.tokens(decoder_ids)}
    view = attention_lab.show_attentions(encoder_attentions=outputs.encoder_attentions,
        decoder_attentions=outputs.decoder_attentions, cross_attentions=outputs.cross_attentions, **tokens)  # fmt: skip
    record = view.to_json()
    assert len(record["steps"]) == len(written["steps"])
    for mine, theirs in zip(record["steps"], written["steps"]):
        assert torch.allclose(torch.tensor(mine["cross"]), torch.tensor(theirs["cross"]), atol=2e-5)
        assert torch.allclose(torch.tensor(mine["decoder_self"]), torch.tensor(theirs["decoder_self"]), atol=2e-5)
    assert torch.allclose(torch.tensor(record["encoder"]), torch.tensor(written["encoder"]), atol=2e-5)
    assert view.data.out.labels[-1] == "…" and PLOTLY_MARK in view._repr_html_() + view.html()
    drawn = jsonable(view.data)["steps"]  # what the cell draws: each step's rows, as 16-bit weights
    for t, theirs in enumerate(written["steps"]):
        for key, exported in (("cross", theirs["cross"]), ("self", theirs["decoder_self"])):
            shape = torch.tensor(exported).shape
            assert np.abs(weights16(drawn[t][key], shape) - np.array(exported)).max() < 2e-5, (t, key)
    bertviz = attention_lab.show_attentions(encoder_attention=outputs.encoder_attentions,
        decoder_attention=outputs.decoder_attentions, cross_attention=outputs.cross_attentions, **tokens)  # fmt: skip
    assert bertviz.to_json() == record
    with pytest.raises(ValueError, match="the shapes disagree"):
        attention_lab.show_attentions(encoder_attentions=outputs.encoder_attentions,
            decoder_attentions=outputs.decoder_attentions, cross_attentions=outputs.cross_attentions,
            encoder_tokens=tokens["encoder_tokens"][:-1], decoder_tokens=tokens["decoder_tokens"])  # fmt: skip
