"""benchmarks/screenshots.py makes every screenshot that README.md and docs/*.md link, and none that no page links;
--only with a name it does not make says so in one line, before it starts anything."""

import re
import subprocess
import sys
from pathlib import Path

from benchmarks.screenshots import SHOTS

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "benchmarks" / "screenshots.py"
LINK = re.compile(r"\]\((?:docs/)?screenshots/([^)\s]+\.png)\)")  # a Markdown image or link into docs/screenshots


def made() -> set[str]:
    """The files the script's table makes."""
    return {shot.name for shot in SHOTS}


def linked() -> set[str]:
    """Every screenshots/*.png that README.md and docs/*.md link."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    return {name for page in pages for name in LINK.findall(page.read_text(encoding="utf-8"))}


def test_the_script_makes_every_linked_screenshot():
    assert linked(), "no screenshot links found: the pattern no longer matches the docs"
    assert linked() - made() == set(), "linked in the docs, not made by benchmarks/screenshots.py's SHOTS"


def test_every_screenshot_the_script_makes_is_linked():
    assert made() - linked() == set(), "made by benchmarks/screenshots.py, linked nowhere"


def test_only_with_an_unknown_name_says_so_in_one_line():
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--only", "app-1440", "no-such-shot"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("no shot named no-such-shot ("), result.stderr
