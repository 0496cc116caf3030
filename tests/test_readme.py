"""The README's and docs/ pages' Python examples say what they do: their claims about shapes and outputs hold (each
block also runs in tests/test_docs.py), and the README is the Space card that opens with the two commands."""

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
PAGES = [README, *sorted((README.parent / "docs").glob("*.md"))]


def example(marker: str) -> tuple[str, Path]:
    """The first Python block of the pages that holds `marker`, and its page."""
    for page in PAGES:
        for block in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.DOTALL):
            if marker in block:
                return block, page
    raise AssertionError(f"no page has a Python example with {marker}")


def test_the_model_example_gives_the_shapes_it_states():
    block, page = example("TransformerConfig(")
    namespace: dict = {}
    exec(compile(block, str(page), "exec"), namespace)  # noqa: S102 - the page's own example
    out = namespace["out"]
    assert out.logits.shape == (2, 3, 100)
    assert out.attentions.cross[0].shape == (2, 4, 3, 4)


def test_the_intervention_example_gives_the_outputs_it_states():
    block, page = example("Interventions(")
    namespace: dict = {}
    claims = re.findall(r"^(m\.tokenizer\.decode\(.*\))  # '(.*?)'", block, flags=re.MULTILINE)
    exec(compile(block, str(page), "exec"), namespace)  # noqa: S102 - the page's own example
    assert len(claims) == 3
    for expression, stated in claims:
        assert eval(expression, namespace) == stated, expression


def test_readme_model_example_gives_the_outputs_it_states():
    import ast

    text = README.read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL) if "m.generate(" in b)
    claims = re.findall(r"^(m\.generate\(.*\))\s+# (\[.*\])$", block, flags=re.MULTILINE)
    namespace: dict = {}
    exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - the README's own example
    assert len(claims) == 2
    for expression, stated in claims:
        assert eval(expression, namespace) == ast.literal_eval(stated), expression


def test_readme_opens_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```bash\n(.*?)```", text, flags=re.DOTALL).group(1)
    assert "python app.py" in first_block and "bash tests/run.sh" in first_block
    assert "bash tests/run.sh" in (README.parent / ".ci" / "run").read_text()


def test_space_front_matter_matches_the_requirements():
    text = README.read_text(encoding="utf-8")
    front = re.match(r"---\n(.*?)\n---\n", text, flags=re.DOTALL).group(1)
    fields = dict(line.split(": ", 1) for line in front.splitlines() if ": " in line and not line.startswith(" "))
    requirements = (README.parent / "requirements.txt").read_text()
    gradio_pin = re.search(r"^gradio==(\S+)$", requirements, flags=re.MULTILINE).group(1)
    assert fields["sdk"] == "gradio" and fields["sdk_version"] == gradio_pin
    assert fields["app_file"] == "app.py" and "python_version" in fields and "models:" in front


# Names the pages give that a clone does not have: what a command writes (data, surveys, runs), placeholders (DIR,
# OUT, TASK; training/ inside a checkpoint folder) and a Hub repo's git refs.
NOT_IN_A_CLONE = {"DIR", "OUT", "data", "surveys", "runs", "snapshots", "refs", "checkpoints/TASK"}


def named_paths(text: str) -> set[str]:
    """The repository paths a page names: a folder or file path in backticks, and every image."""
    quoted = re.findall(r"`([\w.-]+/(?:[\w.*-]+/?)*)`", text)
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text)
    paths = {p.rstrip("/") for p in [*quoted, *images]}
    return {p for p in paths if not {p, p.split("/")[0]} & NOT_IN_A_CLONE and "*" not in p}


def named_modules(text: str) -> set[str]:
    """The modules a page runs with python -m (or torchrun -m)."""
    return set(re.findall(r"(?:python3? -m|torchrun\b[^\n`]*? -m) ([A-Za-z_][\w.]*)", text))


def test_every_path_and_module_the_pages_name_exists():
    import importlib.util

    missing, modules = [], set()
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        modules |= named_modules(text)  # a path is the repository's, or (an image) beside its page
        missing += [
            p for p in sorted(named_paths(text)) if not (README.parent / p).exists() | (page.parent / p).exists()
        ]
    assert "attention_lab.survey" in modules, "the check reads the modules the pages run"
    assert not missing, f"paths the pages name are missing: {missing}"
    assert not [m for m in sorted(modules) if importlib.util.find_spec(m) is None], "modules they run are missing"


def test_the_name_checks_find_a_stale_name():
    text = "see `lab/assets/views.js`, ![x](docs/screenshots/gone.png) and run `python -m lab.survey --out d`"
    assert named_paths(text) == {"lab/assets/views.js", "docs/screenshots/gone.png"}
    assert named_modules(text) == {"lab.survey"}
    assert not any((README.parent / p).exists() for p in named_paths(text))


def test_the_patching_example_gives_what_it_says():
    block, page = example("Pair(")
    namespace: dict = {}
    exec(compile(block, str(page), "exec"), namespace)  # noqa: S102 - the page's own example
    r = namespace["swept"].encoder_states[-1, :, 2]
    assert float(r[3]) >= 0.99 and float(r[[0, 1, 2, 4, 5, 6]].abs().max()) <= 0.01
