"""LibreOffice help pages as German-English training pairs, aligned by paragraph id."""

import pytest

from training.libreoffice import aligned_sentences, extract_help

ENGLISH = """<html><body>
<h1 id="hd_1">Load/Save options</h1>
<p id="par_1" class="paragraph"><span class="avis">Specifies general <span class="emph">Load/Save</span> settings.</span></p>
<p id="par_2">Choose <span hidden="true" class="MAC">LibreOffice - Preferences</span><span class="default">Tools - Options</span> to open the dialog. Then click OK.</p>
<p id="par_3">This sentence has no German twin.</p>
<p id="par_4">Text that stays untranslated here.</p>
<p>Select the area you want to use again.</p>
<p id="par_5">Opens the file. It is read-only.</p>
</body></html>"""

GERMAN = """<html><body>
<h1 id="hd_1">Laden/Speichern-Optionen</h1>
<p id="par_1" class="paragraph"><span class="avis">Legt allgemeine <span class="emph">Laden/Speichern</span>-Einstellungen fest.</span></p>
<p id="par_2">Wählen Sie <span hidden="true" class="MAC">LibreOffice – Einstellungen</span><span class="default">Extras – Optionen</span>, um den Dialog zu öffnen. Dann klicken Sie auf OK.</p>
<p id="par_4">Text that stays untranslated here.</p>
<p id="par_5">Öffnet die Datei, die schreibgeschützt ist.</p>
<p>Wählen Sie den Bereich erneut aus.</p>
</body></html>"""


@pytest.fixture
def help_root(tmp_path):
    for language, page in (("en-US", ENGLISH), ("de", GERMAN)):
        folder = tmp_path / language / "text" / "shared"
        folder.mkdir(parents=True)
        (folder / "options.html").write_text(page, encoding="utf-8")
    (tmp_path / "en-US" / "text" / "shared" / "english_only.html").write_text(ENGLISH, encoding="utf-8")
    return tmp_path


def test_paragraphs_pair_up_by_id_and_split_into_sentences(help_root):
    assert extract_help(help_root) == [
        ("Legt allgemeine Laden/Speichern-Einstellungen fest.", "Specifies general Load/Save settings."),
        # the hidden macOS variant is dropped and both sides split into two sentences
        ("Wählen Sie Extras – Optionen, um den Dialog zu öffnen.", "Choose Tools - Options to open the dialog."),
        ("Dann klicken Sie auf OK.", "Then click OK."),
        ("Öffnet die Datei, die schreibgeschützt ist.", "Opens the file. It is read-only."),  # 1 vs 2: kept whole
    ]  # headings are not sentences; paragraphs without an id or a twin, and untranslated ones, are left out


def test_held_out_sentences_and_repeats_are_left_out(help_root):
    held_out = {"Legt allgemeine Laden/Speichern-Einstellungen fest."}
    pairs = extract_help(help_root, exclude=held_out)
    assert [de for de, _ in pairs if de in held_out] == [] and len(pairs) == 3
    (help_root / "de" / "text" / "shared" / "again.html").write_text(GERMAN, encoding="utf-8")
    (help_root / "en-US" / "text" / "shared" / "again.html").write_text(ENGLISH, encoding="utf-8")
    assert len(extract_help(help_root)) == 4  # the same German sentence on a second page is kept once


def test_aligned_sentences_only_split_when_the_counts_agree():
    assert aligned_sentences("Eins ist hier. Zwei ist da.", "One is here. Two is there.") == [
        ("Eins ist hier.", "One is here."),
        ("Zwei ist da.", "Two is there."),
    ]
    assert aligned_sentences("Eins und zwei.", "One. Two.") == [("Eins und zwei.", "One. Two.")]


def test_missing_help_says_how_to_get_it(tmp_path):
    from training.data import main

    with pytest.raises(FileNotFoundError, match="apt-get install -y libreoffice-help-de libreoffice-help-en-us"):
        extract_help(tmp_path)
    (tmp_path / "d").mkdir()
    for name in ("train", "valid", "test"):  # a prepared Ding corpus, so only the help is missing
        (tmp_path / "d" / f"{name}.tsv").write_text("Ein Satz hier.\tA sentence here.\n", encoding="utf-8")
    assert main(["libreoffice", "--source", str(tmp_path / "missing"), "--out", str(tmp_path / "d")]) == 1
