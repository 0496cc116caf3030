"""Attention Lab in a notebook: attention_lab.show decodes as the app does (its JSON is /attention's), its cell brings
plotly.js once where the notebook's cells share a page and in every cell where they do not, it fetches nothing, and
`attention-lab export` writes the same view as a lesson file, or says in one line why it cannot."""

from __future__ import annotations

import re

import pytest

import attention_lab
from attention_lab.notebook import view as notebook
from attention_lab.notebook.lesson import main as export_main
from transformer import bundled, load_pretrained

PLOTLY_MARK = "plotly.js v"  # in plotly.min.js's banner


@pytest.fixture(scope="module")
def api(bundled):
    from attention_lab.serving.api import Api

    return Api(bundled, None)


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
