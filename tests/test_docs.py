"""The README and docs/ stay true: every relative link (file and #anchor, in GitHub's anchor style) resolves, every
code block still runs (Python is executed, a shell command's program exists and its flags parse), no page states a
measured number (those live in benchmarks/RESULTS.md), and docs/api.md is what the endpoint declarations generate.

Each check is a function of a root folder, so that it runs on the repository and on a copy with one thing broken.
A Python block that must not run (it needs the Hub or a served app) starts with `# not run: why`; it is compiled.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import itertools
import os
import re
import runpy
import shlex
import shutil
import sys
import warnings
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from markdown_it import MarkdownIt

REPO = Path(__file__).resolve().parent.parent
NOT_RUN = "# not run:"
MARKDOWN = MarkdownIt("commonmark").enable("table")


def pages(root: Path) -> list[Path]:
    """The pages a reader sees: the README and every page of docs/."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def tokens(page: Path) -> list:
    return parsed(page.read_text(encoding="utf-8"))


@functools.cache
def parsed(text: str) -> list:
    """A page's tokens, parsed once per text (each link to an #anchor reads its target's headings)."""
    return MARKDOWN.parse(text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every #anchor a link may name in `page`: its headings' (a repeated one gets -1, -2, ... as on GitHub)."""
    found: dict[str, int] = {}
    parsed = tokens(page)
    for opening, inline in itertools.pairwise(parsed):
        if opening.type == "heading_open":
            text = "".join(child.content for child in inline.children if child.type in ("text", "code_inline"))
            name = slug(text)
            found[name] = found.get(name, -1) + 1
            if found[name]:
                found[f"{name}-{found[name]}"] = 0
    return set(found)


def links(page: Path) -> list[str]:
    """The targets of every link and image in `page`, outside code."""
    targets = []
    for token in tokens(page):
        for child in token.children or ():
            if child.type == "link_open":
                targets.append(child.attrs["href"])
            elif child.type == "image":
                targets.append(child.attrs["src"])
    return targets


def broken_links(root: Path) -> list[str]:
    """Each link of the pages (and of benchmarks/RESULTS.md, which they cite) that does not resolve: a file that is not
    there, an #anchor its page lacks, or an external address that is not a well-formed http(s) URL."""
    broken = []
    for page in [*pages(root), root / "benchmarks" / "RESULTS.md"]:
        for target in links(page):
            parts = urlsplit(target)
            if parts.scheme:
                if parts.scheme not in ("http", "https") or not parts.netloc or " " in target:
                    broken.append(f"{page.name}: {target} (not an http(s) address)")
                continue
            file = (page.parent / parts.path).resolve() if parts.path else page
            if not file.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif parts.fragment and (file.suffix != ".md" or parts.fragment not in anchors(file)):
                broken.append(f"{page.name}: {target} (no such anchor)")
    return broken


# A measured number: a time, size, ratio, share, entropy or count of tests with its unit; a score named beside its
# value; a tally ("N of M"); a decimal alone in a table's cell. Not one: a limit or threshold (after at most, under,
# ≤ ...), a version, a screen's size (1440×900, 390 px), a number in a link's address.
NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
UNIT = r"ms|s|min|minutes?|hours?|KB|kB|MB|GB|%|×|nats|eps|tests|cases"
MEASURED = re.compile(
    rf"(?<![\w.=/^+-])(?:{NUMBER})(?:\s?(?:–|-|to)\s?(?:{NUMBER}))?\s?(?:{UNIT})(?![\w\d])"
    rf"|\b(?:BLEU|chrF|AUROC|p50|p95|exact match)\s(?:of\s)?(?:{NUMBER})"
    rf"|(?<![\w.])(?:{NUMBER}) of (?:the )?(?:{NUMBER})\b"
    r"|(?<=\| )-?\d+\.\d+(?= \|)"
)
LIMIT = re.compile(
    r"(?:≤|≥|<|>|at least|at most|under|over|up to|within|beyond|below|above|less than|more than|limit of)\s*(?:the\s)?$"
)


def measured_numbers(root: Path) -> list[str]:
    """Each measured number the pages state (they belong in benchmarks/RESULTS.md, which the pages link to)."""
    found = []
    for page in pages(root):
        text = re.sub(r"\A---\n.*?\n---\n", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)  # the Space card
        for number, line in enumerate(text.splitlines(), 1):
            line = re.sub(r"\]\([^)]*\)", "]", line)  # a link's address
            for match in MEASURED.finditer(line):
                if not LIMIT.search(line[: match.start()][-20:]):
                    found.append(f"{page.name}:{number}: {match.group(0)!r}")
    return found


def blocks(page: Path) -> list[tuple[str, str]]:
    """Each fenced code block of `page`: (its language, its text)."""
    return [
        (token.info.split()[0] if token.info else "", token.content) for token in tokens(page) if token.type == "fence"
    ]


class Parsed(Exception):
    """A command's flags parsed: stop before it runs."""


@contextlib.contextmanager
def parse_only(argv: list[str]):
    """While inside, any argparse parser parses its arguments and then stops the program (Parsed); a flag it does not
    take ends it as argparse does (SystemExit 2)."""
    original = argparse.ArgumentParser.parse_args

    def parse_args(self, args=None, namespace=None):
        original(self, args, namespace)
        raise Parsed

    saved = sys.argv
    argparse.ArgumentParser.parse_args, sys.argv = parse_args, argv
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_args, sys.argv = original, saved


def flags_parse(run, argv: list[str]) -> str:
    """Empty when `run` parses `argv` without complaint, else why not."""
    try:
        with parse_only(argv), contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # runpy: the module was imported before, by another page
            run()
    except Parsed:
        return ""
    except SystemExit as done:
        return f"its flags do not parse (exit {done.code})"
    return "it ran without parsing any flags"


EXTERNAL = {"sudo", "apt-get", "hf", "git", "npm"}  # programs of the system, checked for form only


def command_problem(root: Path, words: list[str]) -> str:
    """Empty when one shell command of a page would start as written: its program or script exists and its flags parse."""
    while words and re.fullmatch(r"\w+=\S*", words[0]):  # an environment variable set for the command
        words = words[1:]
    program, args = words[0], words[1:]
    if program == "torchrun":
        program, args = "python", args[args.index("-m") :]
    if program in ("python", "python3") and args[:1] == ["-m"]:
        return flags_parse(lambda: runpy.run_module(args[1], run_name="__main__", alter_sys=True), args[1:])
    if program in ("python", "python3"):
        script = root / args[0]
        if not script.is_file():
            return f"{args[0]} is not there"
        return flags_parse(lambda: runpy.run_path(str(script), run_name="__main__"), args)
    if program == "attention-lab":
        from attention_lab import cli

        return flags_parse(lambda: cli.main(args), ["attention-lab", *args])
    if program in ("bash", "node"):
        paths = [a for a in args if not a.startswith("-") and "/" in a]
        return "" if paths and all((root / p).exists() for p in paths) else f"{' '.join(args)}: no such file"
    if program == "pip":
        files = [args[i + 1] for i, a in enumerate(args) if a == "-r"]
        return "" if all((root / f).is_file() for f in files) else f"{files}: no such requirements file"
    return "" if program in EXTERNAL else f"{program}: not a command these pages know"


def shell_commands(text: str) -> list[list[str]]:
    """The commands of a shell block, its comments and line continuations taken away, each `&&` part alone."""
    commands = []
    for line in text.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        part: list[str] = []
        for word in [*words, "&&"]:
            if word in ("&&", "||", ";", "|"):
                commands += [part] if part else []
                part = []
            else:
                part.append(word)
    return commands


def run_in(root: Path, code, number: int) -> None:
    """Run a page's Python block from the root folder, as a reader would from a clone."""
    here = Path.cwd()
    os.chdir(root)
    try:
        exec(code, {"__name__": f"docs_block_{number}"})  # noqa: S102 - the page's own example
    finally:
        os.chdir(here)


def failing_blocks(root: Path, page: Path) -> list[str]:
    """Each code block of `page` that no longer runs: a Python block that raises (one marked not to run that does not
    compile), a shell command whose program is missing or whose flags do not parse."""
    failing = []
    for number, (language, text) in enumerate(blocks(page), 1):
        where = f"{page.name}, block {number}"
        if language == "python":
            try:
                code = compile(text, where, "exec")
                if not text.startswith(NOT_RUN):
                    run_in(root, code, number)
            except Exception as err:  # noqa: BLE001 - any failure of the example is the finding
                failing.append(f"{where}: {type(err).__name__}: {err}")
        elif language in ("bash", "sh", "shell"):
            failing += [
                f"{where}: `{' '.join(c)}`: {p}" for c in shell_commands(text) if (p := command_problem(root, c))
            ]
    return failing


def api_page_differs(root: Path, tabs: tuple | None = None) -> bool:
    """Whether docs/api.md under `root` is not what the endpoint declarations of the tab table `tabs` (the app's, by
    default) generate."""
    from attention_lab.api_page import api_page

    page = root / "docs" / "api.md"
    return not page.is_file() or page.read_text(encoding="utf-8") != (api_page() if tabs is None else api_page(tabs))


def test_every_link_of_the_pages_resolves():
    assert not broken_links(REPO)


def test_no_page_states_a_measured_number():
    assert not measured_numbers(REPO), "measured numbers belong in benchmarks/RESULTS.md: cite them from there"


# The README's example loads the German–English model and decodes with beam search (seconds): the whole suite runs
# it; the fast loop has its outputs already (tests/test_checkpoints.py).
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.slow) if name == "README.md" else name
        for name in (p.relative_to(REPO).as_posix() for p in pages(REPO))
    ],
)
def test_every_code_block_of_the_page_runs(name):
    assert not failing_blocks(REPO, REPO / name)


def test_the_api_page_is_the_declarations_own():
    assert not api_page_differs(REPO), "the endpoints changed: run python -m attention_lab.api_page"


def test_an_endpoint_a_feature_adds_is_on_the_api_page():
    from attention_lab.api_page import api_page
    from attention_lab.feature import Endpoint, Feature, Limits
    from attention_lab.tabs import TABS

    def length(request, model: str, text: str, twice: bool = False) -> str:
        """The source's tokens, counted."""
        return str(len(text))

    more = (*TABS, Feature("notes", "Notes", endpoints=(Endpoint("length", length, str, "Counted.", Limits(12)),)))
    page = api_page(more)
    assert page.startswith(api_page().split("\n## `/")[0].split("\n| endpoint |")[0])  # the same introduction
    assert "| [`/length`](#length) | Counted. | 12 | the model’s own | heavy |" in page
    assert "- **Inputs:** `model: str`, `text: str`, `twice: bool = false`." in page and "## `/length`" in page


def test_the_pages_have_examples_and_few_that_do_not_run():
    every = [(language, text) for page in pages(REPO) for language, text in blocks(page)]
    python = [text for language, text in every if language == "python"]
    assert len(python) >= 8 and sum(text.startswith(NOT_RUN) for text in python) <= len(python) // 3


@pytest.fixture
def copy(tmp_path) -> Path:
    """The pages and RESULTS.md, copied, with what their links and commands name."""
    for name in ("README.md", "docs", "benchmarks", "tests", "requirements.txt", "requirements-hf.txt", "app.py"):
        source, target = REPO / name, tmp_path / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.png", "sets"))
        else:
            shutil.copy(source, target)
    (tmp_path / "docs" / "screenshots").mkdir(exist_ok=True)
    for picture in (REPO / "docs" / "screenshots").glob("*.png"):
        (tmp_path / "docs" / "screenshots" / picture.name).touch()
    return tmp_path


def test_each_check_finds_its_break(copy):
    assert not broken_links(copy) and not measured_numbers(copy) and not api_page_differs(copy)
    tabs = copy / "docs" / "tabs.md"
    tabs.write_text(tabs.read_text(encoding="utf-8").replace("(findings.md#why-this-token)", "(findings.md#why)", 1))
    assert broken_links(copy) == ["tabs.md: findings.md#why (no such anchor)"]
    (copy / "docs" / "library.md").unlink()
    assert any("library.md (no such file)" in b for b in broken_links(copy))
    readme = copy / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8") + "\nA Step takes 41 ms, at most 100 ms; 1440×900.\n")
    assert [m.split(": ", 1)[1] for m in measured_numbers(copy)] == ["'41 ms'"]
    api = copy / "docs" / "api.md"
    api.write_text(api.read_text(encoding="utf-8").replace("| 256 | 256 | decode |", "| 255 | 256 | decode |", 1))
    assert api_page_differs(copy)


def test_the_block_check_finds_a_broken_example_and_a_bad_flag(copy):
    page = copy / "docs" / "broken.md"
    page.write_text(
        "```python\nfrom transformer import bundled\n\nbundled('no such model')\n```\n\n"
        "```python\n# not run: it needs the Hub\nfrom transformer import load_pretrained\n```\n\n"
        "```bash\npython -m training.evaluate --model checkpoints/reverse --no-such-flag\n"
        "attention-lab export --live de-en -o de-en.html   # fine\nbash tests/nothing.sh\nfrobnicate --now\n```\n",
        encoding="utf-8",
    )
    failing = failing_blocks(copy, page)
    assert [f.split(":")[0] for f in failing] == ["broken.md, block 1", *["broken.md, block 3"] * 3], failing
    assert "flags do not parse" in failing[1] and "no such file" in failing[2] and "not a command" in failing[3]
