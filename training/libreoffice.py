"""German-English sentence pairs from LibreOffice's help pages, aligned by paragraph id.

Debian ships the help as HTML in libreoffice-help-de and libreoffice-help-en-us (MPL-2.0). Every page exists in both
languages under the same path, and its paragraphs and headings keep the same ids, so a paragraph and its translation
pair up without an alignment model. The text is software documentation: it widens the grammar and vocabulary the
translation model sees, while the Ding test split stays the yardstick.

    python -m training.data libreoffice --out data/de-en
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from .ding import is_sentence

HELP_PATH = Path("/usr/share/libreoffice/help")
HELP_MISSING = (
    "LibreOffice's German and English help pages were not found under {root} (de/ and en-US/). Either install them:\n"
    "    sudo apt-get update && sudo apt-get install -y libreoffice-help-de libreoffice-help-en-us\n"
    "or unpack the two packages without installing LibreOffice, and pass --source:\n"
    "    apt-get download libreoffice-help-de libreoffice-help-en-us\n"
    '    for deb in libreoffice-help-*.deb; do dpkg-deb -x "$deb" lo; done\n'
    "    python -m training.data libreoffice --source lo/usr/share/libreoffice/help"
)
_TEXT_ELEMENTS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "td", "li"}
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-ZÄÖÜ])")
_SPACES = re.compile(r"\s+")
MAX_WORDS = 40


class _Paragraphs(HTMLParser):
    """Collects the text of every element with an id, skipping hidden text (the help's macOS-only variants)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[tuple[str, str | None, list[str]]] = []  # (tag, id, text parts) of the text elements
        self.hidden: list[str] = []  # tags of the open hidden elements
        self.texts: dict[str, str] = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if self.hidden or "hidden" in attrs:
            self.hidden.append(tag)
        elif tag in _TEXT_ELEMENTS:
            self.open.append((tag, attrs.get("id"), []))

    def handle_endtag(self, tag):
        if self.hidden:
            if self.hidden[-1] == tag:
                self.hidden.pop()
            return
        if self.open and self.open[-1][0] == tag:
            _, element_id, parts = self.open.pop()
            if element_id:
                self.texts[element_id] = _SPACES.sub(" ", "".join(parts)).strip()

    def handle_data(self, data):
        if not self.hidden:
            for _, _, parts in self.open:
                parts.append(data)


def paragraphs(page: Path) -> dict[str, str]:
    """The text of a help page's paragraphs and headings, by id."""
    parser = _Paragraphs()
    parser.feed(Path(page).read_text(encoding="utf-8", errors="replace"))
    return parser.texts


def aligned_sentences(german: str, english: str) -> list[tuple[str, str]]:
    """A paragraph pair as sentence pairs when both sides split into the same number of sentences, else whole."""
    de, en = _SENTENCE_BREAK.split(german), _SENTENCE_BREAK.split(english)
    return list(zip(de, en)) if len(de) == len(en) else [(german, english)]


def _is_sentence(text: str) -> bool:
    return is_sentence(text) and len(text.split()) <= MAX_WORDS  # the Ding rule, without run-on paragraphs


def extract_help(root: Path = HELP_PATH, exclude: set[str] = frozenset()) -> list[tuple[str, str]]:
    """Sentence pairs from every help page present in both languages, de-duplicated on the German side; German
    sentences in `exclude` (the Ding valid and test splits) are left out."""
    root = Path(root)
    if not (root / "de").is_dir() or not (root / "en-US").is_dir():
        raise FileNotFoundError(HELP_MISSING.format(root=root))
    pairs, seen = [], set(exclude)
    for english_page in sorted((root / "en-US").rglob("*.html")):
        german_page = root / "de" / english_page.relative_to(root / "en-US")
        if not german_page.is_file():
            continue
        german_texts = paragraphs(german_page)
        for element_id, english in paragraphs(english_page).items():
            german = german_texts.get(element_id)
            if not german or german == english:  # untranslated
                continue
            for de, en in aligned_sentences(german, english):
                if _is_sentence(de) and _is_sentence(en) and de not in seen:
                    seen.add(de)
                    pairs.append((de, en))
    return pairs
