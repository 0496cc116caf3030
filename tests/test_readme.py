"""The README's Python example runs as written, and its claims about the shapes hold."""

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_python_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    model_code = [b for b in blocks if "TransformerConfig(" in b]
    assert model_code, "the README has no Python example of the model code"
    namespace: dict = {}
    exec(compile(model_code[0], str(README), "exec"), namespace)  # noqa: S102 - the README's own example
    out = namespace["out"]
    assert out.logits.shape == (2, 3, 100)
    assert out.attentions.cross[0].shape == (2, 4, 3, 4)


def test_readme_intervention_example_gives_the_outputs_it_states():
    text = README.read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL) if "Interventions(" in b)
    namespace: dict = {}
    claims = re.findall(r"^(m\.tokenizer\.decode\(.*\))  # '(.*?)'", block, flags=re.MULTILINE)
    exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - the README's own example
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


# Names the README gives that a clone does not have: what a command writes (data, surveys, runs), placeholders (DIR,
# OUT, TASK; snapshots/ inside a checkpoint folder) and a Hub repo's git refs.
NOT_IN_A_CLONE = {"DIR", "OUT", "data", "surveys", "runs", "snapshots", "refs", "checkpoints/TASK"}


def named_paths(text: str) -> set[str]:
    """The repository paths the README names: a folder or file path in backticks, and every image."""
    quoted = re.findall(r"`([\w.-]+/(?:[\w.*-]+/?)*)`", text)
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text)
    paths = {p.rstrip("/") for p in [*quoted, *images]}
    return {p for p in paths if not {p, p.split("/")[0]} & NOT_IN_A_CLONE and "*" not in p}


def named_modules(text: str) -> set[str]:
    """The modules the README runs with python -m (or torchrun -m)."""
    return set(re.findall(r"(?:python3? -m|torchrun\b[^\n`]*? -m) ([A-Za-z_][\w.]*)", text))


def test_every_path_and_module_the_readme_names_exists():
    import importlib.util

    text = README.read_text(encoding="utf-8")
    paths, modules = named_paths(text), named_modules(text)
    assert "attention_lab/attention/payload.py" in paths and "attention_lab.survey" in modules  # the checks read them
    assert not [p for p in sorted(paths) if not (README.parent / p).exists()], "paths the README names are missing"
    assert not [m for m in sorted(modules) if importlib.util.find_spec(m) is None], "modules it runs are missing"


def test_the_name_checks_find_a_stale_name():
    text = "see `lab/assets/views.js`, ![x](docs/screenshots/gone.png) and run `python -m lab.survey --out d`"
    assert named_paths(text) == {"lab/assets/views.js", "docs/screenshots/gone.png"}
    assert named_modules(text) == {"lab.survey"}
    assert not any((README.parent / p).exists() for p in named_paths(text))


def test_readme_patching_example_gives_what_it_says():
    text = README.read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL) if "Pair(" in b)
    namespace: dict = {}
    exec(compile(block, str(README), "exec"), namespace)  # noqa: S102 - the README's own example
    r = namespace["swept"].encoder_states[-1, :, 2]
    assert float(r[3]) >= 0.99 and float(r[[0, 1, 2, 4, 5, 6]].abs().max()) <= 0.01


def endpoint_rows(text: str) -> dict:
    """The README's endpoint table: name -> (source limit, new limit, lane), as written."""
    rows = re.findall(r"^\| `/(\w+)` \| .*? \| (\d+) \| (\d+|the model’s own) \| (\w+) \|$", text, flags=re.MULTILINE)
    return {name: (int(source), None if new.startswith("the") else int(new), lane) for name, source, new, lane in rows}


def test_the_readme_lists_every_endpoint_with_its_limits_and_lane():
    from attention_lab import tabs

    declared = {
        e.name: (e.limits.source, e.limits.new, e.lane) for feature in tabs.features() for e in feature.endpoints
    }
    assert endpoint_rows(README.read_text(encoding="utf-8")) == declared
    stale = README.read_text(encoding="utf-8").replace(
        "| `/ablate` | What ablating heads throughout changes, step by step. | 64 |",
        "| `/ablate` | What ablating heads throughout changes, step by step. | 65 |",
    )
    assert endpoint_rows(stale) != declared  # a limit changed in the code and not here is caught
