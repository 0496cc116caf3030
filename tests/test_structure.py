"""The project's shape: the library stands alone, data flows one way, no import cycles, short functions and files.

transformer/   the library: may import torch, numpy, safetensors, tokenizers, huggingface_hub and itself; it never
               names transformers or sentencepiece (other model families come in through adapters/)
attention_lab/adapters/
               other model families meeting the library's contract: may import the library, never the rest of the app
training/      how the checkpoints were made: may import the library (and the adapters, to evaluate any model), never the
               rest of the app
attention_lab/ the app: may import its adapters and the library, never training/; app.py (the Space's entry) imports
               attention_lab alone
attention_lab/*/ the app's parts: each imports only the parts below it (lab_layers()); the features, read from the
               tab table, import the shared layers and never each other; a feature's per-run state is written by
               that feature alone; no class has more than 20 methods
"""

import ast
import functools
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("transformer", "training", "attention_lab", "benchmarks")
ADAPTERS = "attention_lab.adapters"  # a part of its own: the app's lowest layer, which training/ may import too
APP_FILES = (REPO / "app.py",)  # the Space's entry point
LIBRARY_MAY_IMPORT = {"torch", "numpy", "safetensors", "tokenizers", "huggingface_hub"}
NEVER_IN_THE_LIBRARY = re.compile(r"\b(transformers|sentencepiece)\b")  # the packages, by their own (lower-case) names
MAY_NOT_IMPORT = {  # the parts each must not reach: app -> attention_lab -> adapters -> transformer; training -> adapters
    "transformer": {"adapters", "training", "attention_lab", "app", "benchmarks", "tests"},
    "adapters": {"training", "attention_lab", "app", "benchmarks", "tests"},
    "training": {"attention_lab", "app", "benchmarks", "tests"},
    "attention_lab": {"training", "app", "benchmarks", "tests"},
    "app": {"training", "benchmarks", "tests", "transformer", "adapters"},  # app.py: the app's entry, nothing else
    "benchmarks": {"training", "tests"},
}
# The app's parts, bottom up. Below the features, the layers they share: each may import the ones before it in this
# list and itself. The page (frame, wiring, Lab) sits below the features: they meet it only through what it hands
# their `wire`. The features (every folder of the tab table's features, attention_lab.tabs.features(), not named
# here) import the layers below them and themselves, never each other. Above them, the faces over every feature and
# the command: each may import everything below it.
BELOW_FEATURES = (
    *("adapters", "checks", "controls", "messages", "feature", "assets", "models", "page_copy", "core", "run"),
    *("request", "attribution", "decoding", "export", "page"),
)
ABOVE_FEATURES = ("notebook", "serving", "tabs", "schema", "api_page", "app", "cli", "__main__")
LAB_COMMANDS = {"space": {"serving"}, "faithfulness": {"why", "adapters"}}  # python -m attention_lab.X and what it runs
MAX_FUNCTION_LINES = 60  # docstring excluded
MAX_FILE_LINES = 400  # tests aside; the page's modules (.mjs) too
MAX_CLASS_METHODS = 20


def source_files() -> list[Path]:
    return sorted([*APP_FILES, *(p for package in PACKAGES for p in (REPO / package).rglob("*.py"))])


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, modules: frozenset[str] = frozenset()) -> set[str]:
    """Every module `path` imports, at any depth of its code (function-level imports count), as absolute names.

    `from pkg import name` counts as importing pkg.name where that is one of `modules`, and as importing pkg otherwise.
    A script's import of a sibling file (benchmarks/run.py's `from load import ...`) counts as that sibling.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]

    def absolute(name: str) -> str:
        sibling = f"{package}.{name}" if package else name
        return sibling if name not in modules and sibling in modules else name

    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(absolute(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node.module or "")
            if node.level:  # relative: resolve against this module's package
                base = node.module or ""
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
    return found


@functools.cache
def project_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (read once: the tests below only read it)."""
    names = {module_name(p): p for p in source_files()}
    modules = frozenset(names)
    return {name: {m for m in imports(path, modules) if m in names and m != name} for name, path in names.items()}


def first_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, str] = {}  # "visiting" or "done"

    def visit(node: str, trail: list[str]) -> list[str] | None:
        state[node] = "visiting"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "visiting":
                return [*trail[trail.index(nxt) :], nxt] if nxt in trail else [node, nxt]
            if nxt not in state and (cycle := visit(nxt, [*trail, nxt])):
                return cycle
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start, [start])):
            return cycle
    return None


def missing_modules(imported: dict[str, set[str]], modules: frozenset[str]) -> list[str]:
    """Imports of project modules that do not exist (a module moved and an importer left behind); `imported` maps a
    file to the modules it imports."""
    tops = {name.split(".")[0] for name in modules}
    return sorted(
        f"{where} imports {name}"
        for where, names in imported.items()
        for name in names
        if name.split(".")[0] in tops and name not in modules
    )


def test_every_project_import_names_a_module_that_exists():
    modules = frozenset(module_name(p) for p in source_files())
    imported = {str(p.relative_to(REPO)): imports(p, modules) for p in source_files()}
    assert not missing_modules(imported, modules)


def test_the_missing_module_check_finds_one():
    imported = {"stale.py": {"lab.drawing", "lab.checks", "torch"}}
    assert missing_modules(imported, frozenset({"lab", "lab.checks"})) == ["stale.py imports lab.drawing"]


def test_no_import_cycles():
    assert first_cycle(project_graph()) is None, " -> ".join(first_cycle(project_graph()))


def test_the_cycle_check_finds_a_cycle():
    assert first_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert first_cycle({"a": {"b"}, "b": set()}) is None


def part_of(module: str) -> str:
    """The part a module belongs to, by MAY_NOT_IMPORT's names: attention_lab.adapters.hf.model -> "adapters";
    attention_lab.heads.ablation -> "attention_lab"; app -> "app"."""
    return "adapters" if module == ADAPTERS or module.startswith(ADAPTERS + ".") else module.split(".")[0]


def part_files(part: str) -> list[Path]:
    if part == "app":
        return list(APP_FILES)
    if part == "adapters":
        return sorted((REPO / "attention_lab" / "adapters").rglob("*.py"))
    return sorted(p for p in (REPO / part).rglob("*.py") if part_of(module_name(p)) == part)


@pytest.mark.parametrize("part", sorted(MAY_NOT_IMPORT))
def test_data_flows_one_way(part):
    modules = frozenset(module_name(p) for p in source_files())
    wrong = {
        f"{path.relative_to(REPO)} imports {name}"
        for path in part_files(part)
        for name in imports(path, modules)
        if part_of(name) in MAY_NOT_IMPORT[part]
    }
    assert not wrong, sorted(wrong)


def test_the_adapters_are_a_part_of_their_own():
    assert [part_of(m) for m in ("attention_lab.adapters.hf.model", "attention_lab.heads", "adapters_x", "app")] == [
        "adapters", "attention_lab", "adapters_x", "app"]  # fmt: skip
    assert part_files("adapters") and not set(part_files("adapters")) & set(part_files("attention_lab"))


def lab_part(module: str) -> str:
    """attention_lab.heads.ablation -> "heads"; attention_lab.checks -> "checks"; the package itself -> ""."""
    return module.split(".")[1] if module.count(".") else ""


@functools.cache
def table_folders() -> tuple[str, ...]:
    """The folders of the tab table's features (attention_lab.tabs.features()), in its order: where each one's
    layout (or view, or wiring) is defined."""
    from attention_lab.tabs import features

    made = ((f.layout or f.view or f.wire).__module__ for f in features())
    return tuple(dict.fromkeys(lab_part(module) for module in made))


def lab_layers(folders: tuple[str, ...] | None = None) -> dict[str, set[str]]:
    """Each part of the app -> the parts it may import: a shared layer those before it and itself, a feature folder
    (`folders`, by default the tab table's, less the shared layers) the shared layers and itself, and a face over the
    features everything below it."""
    features = [f for f in (table_folders() if folders is None else folders) if f not in BELOW_FEATURES]
    below = {part: set(BELOW_FEATURES[: i + 1]) for i, part in enumerate(BELOW_FEATURES)}
    beside = {part: {*BELOW_FEATURES, part} for part in features}
    above = {part: {*BELOW_FEATURES, *features, *ABOVE_FEATURES[: i + 1]} for i, part in enumerate(ABOVE_FEATURES)}
    return {**below, **beside, **above}


def lab_upward_imports(graph: dict[str, set[str]], layers: dict[str, set[str]] | None = None) -> list[str]:
    """Every import by an app module of a part it may not import (lab_layers()), as "a -> b"."""
    layers = lab_layers() if layers is None else layers
    wrong = []
    for module, imported in sorted(graph.items()):
        if not module.startswith("attention_lab."):
            continue
        part = lab_part(module)
        allowed = LAB_COMMANDS[part] if part in LAB_COMMANDS else layers.get(part, set())
        inside = (m for m in sorted(imported) if m.startswith("attention_lab."))
        wrong += [f"{module} -> {m}" for m in inside if lab_part(m) not in allowed]
    return wrong


def test_the_apps_parts_import_only_the_parts_below_them():
    assert not lab_upward_imports(project_graph())


def test_the_layer_check_finds_an_import_upwards():
    graph = {
        "attention_lab.heads.ablation": {"attention_lab.run.state", "attention_lab.checks"},
        "attention_lab.run.state": {"attention_lab.heads.naming"},
    }
    layers = lab_layers(("heads", "why"))
    assert lab_upward_imports(graph, layers) == ["attention_lab.run.state -> attention_lab.heads.naming"]
    assert lab_upward_imports({"attention_lab.why.feature": {"attention_lab.heads.naming"}}, layers) == [
        "attention_lab.why.feature -> attention_lab.heads.naming"
    ]  # features never import each other
    assert lab_upward_imports({"attention_lab.heads.feature": {"attention_lab.tabs"}}, layers) == [
        "attention_lab.heads.feature -> attention_lab.tabs"
    ]
    assert lab_upward_imports({"attention_lab.page.lab": {"attention_lab.heads.actions"}}, layers) == [
        "attention_lab.page.lab -> attention_lab.heads.actions"
    ]
    assert lab_upward_imports({"attention_lab.space": {"attention_lab.heads.feature"}}, layers) == [
        "attention_lab.space -> attention_lab.heads.feature"
    ]


def test_every_part_of_the_app_has_its_place_in_the_layers():
    parts = {lab_part(name) for name in project_graph() if name.startswith("attention_lab.")}
    assert parts == set(lab_layers()) | set(LAB_COMMANDS)


STATE_WRITERS = ("run", "decoding", "page")  # the run and the user's state are written here, and by nobody else


def feature_folders(root: Path = REPO / "attention_lab") -> list[str]:
    """The folders with a feature.py, less the shared layers (the step loop's, the Attention tab's vocabulary)."""
    return sorted(p.parent.name for p in root.glob("*/feature.py") if p.parent.name not in BELOW_FEATURES)


def cross_feature_imports(graph: dict[str, set[str]], folders: list[str]) -> list[str]:
    """Imports by a feature folder's module of another feature folder, as "a -> b"."""
    wrong = []
    for module, imported in sorted(graph.items()):
        part = lab_part(module)
        if module.startswith("attention_lab.") and part in folders:
            wrong += [f"{module} -> {m}" for m in sorted(imported) if lab_part(m) in folders and lab_part(m) != part]
    return wrong


def page_module_imports(root: Path = REPO / "attention_lab") -> list[str]:
    """Imports by a feature folder's page module (.mjs) of another feature folder's, as "a -> b"."""
    folders, wrong = feature_folders(root), []
    for path in sorted(root.glob("*/*.mjs")):
        for target in re.findall(
            r'^import\s*\{[^}]*\}\s*from\s*"\.\./([^/"]+)/', path.read_text(encoding="utf-8"), re.MULTILINE
        ):
            if path.parent.name in folders and target in folders and target != path.parent.name:
                wrong.append(f"{path.relative_to(root)} -> {target}")
    return wrong


def test_no_feature_folder_imports_another():
    folders = feature_folders()
    assert folders == sorted(set(table_folders()) - set(BELOW_FEATURES))  # every feature folder is in the tab table
    assert not cross_feature_imports(project_graph(), folders)
    assert not page_module_imports()


def test_the_feature_import_check_finds_one(tmp_path):
    graph = {"attention_lab.trust.score": {"attention_lab.why.methods", "attention_lab.core.units"}}
    assert cross_feature_imports(graph, ["trust", "why"]) == ["attention_lab.trust.score -> attention_lab.why.methods"]
    for folder in ("survey", "heads", "attention"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "feature.py").write_text("")
    (tmp_path / "survey" / "corpus.mjs").write_text('import {a} from "../heads/summary.mjs";\n')
    (tmp_path / "heads" / "summary.mjs").write_text('import {b} from "../core/views.mjs";\n')
    assert page_module_imports(tmp_path) == ["survey/corpus.mjs -> heads"]


def _owned(tree: ast.AST) -> set[str]:
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}


def _foreign_state(call: ast.AST, own: set[str]) -> bool:
    """Whether `call` gets a state that is not the module's folder's own: x.states.get(T) or x.states.clear(T) with T
    defined elsewhere, or the step loop's loop(run)."""
    if not isinstance(call, ast.Call):
        return False
    f = call.func
    if isinstance(f, ast.Name):
        return f.id == "loop"
    states = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) and f.value.attr == "states"
    first = call.args[0] if call.args else None
    return states and f.attr in ("get", "clear") and not (isinstance(first, ast.Name) and first.id in own)


def _rooted_at_run_or_user(node: ast.AST) -> bool:
    """run.x, user.x, s.run.x, user.run.x: an attribute of a user's state or run."""
    base = node.value
    return (isinstance(base, ast.Name) and base.id in ("run", "user")) or (
        isinstance(base, ast.Attribute) and base.attr in ("run", "user")
    )


def state_writes(path: Path, own: set[str] | None = None) -> list[str]:
    """Where a module writes state that is not its folder's own: an attribute of a run or a user's state, a state
    got for another feature's type (or the step loop's), or a name bound to one."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = _owned(tree) | (own or set())
    found = []
    for function in [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]:
        foreign = {
            t.id
            for n in ast.walk(function)
            if isinstance(n, ast.Assign) and _foreign_state(n.value, own)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and _foreign_state(node, own) and not isinstance(node.func, ast.Name):
                found.append(f"{path.name}:{node.lineno}: another feature's state")
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, (ast.AugAssign, ast.AnnAssign))
                else []
            )
            for target in (t for t in targets if isinstance(t, ast.Attribute)):
                base = target.value
                if (
                    _rooted_at_run_or_user(target)
                    or _foreign_state(base, own)
                    or (isinstance(base, ast.Name) and base.id in foreign)
                ):
                    found.append(f"{path.name}:{node.lineno}: writes {ast.unparse(target)}")
    return sorted(set(found), key=lambda hit: (int(hit.split(":")[1]), hit))


def test_no_feature_writes_another_features_state():
    """Outside the step loop and the page, a module writes only its own folder's state objects (the types its
    folder defines), never the run's or the user's fields, nor another feature's state."""
    root = REPO / "attention_lab"
    wrong = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in STATE_WRITERS):
        own = set().union(*(_owned(ast.parse(p.read_text(encoding="utf-8"))) for p in folder.rglob("*.py")))
        wrong += [hit for path in sorted(folder.rglob("*.py")) for hit in state_writes(path, own)]
    assert not wrong, wrong


def test_the_state_check_finds_a_write_of_another_features_state(tmp_path):
    path = tmp_path / "feature.py"
    path.write_text(
        "class WhyState:\n    pass\n\n"
        "def act(user, run, kept):\n"
        "    run.states.get(WhyState).asked = True\n"  # its own: fine
        "    run.before = None\n"
        "    user.run.held = ''\n"
        "    run.states.get(HeadsState).ablated = None\n"
        "    loop(run).beams = []\n"
        "    mine = loop(run)\n"
        "    mine.before = None\n"
        "    kept.before = None\n"  # an argument of its own: not known to be state
    )
    assert state_writes(path) == [
        "feature.py:6: writes run.before",
        "feature.py:7: writes user.run.held",
        "feature.py:8: another feature's state",
        "feature.py:8: writes run.states.get(HeadsState).ablated",
        "feature.py:9: writes loop(run).beams",
        "feature.py:11: writes mine.before",
    ]


def class_sizes(path: Path) -> list[tuple[int, str]]:
    """(methods, name) of every class."""
    return [
        (
            sum(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) for item in node.body),
            f"{path.name}:{node.name}",
        )
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ClassDef)
    ]


def test_no_class_has_more_than_20_methods():
    too_big = [(n, name) for path in source_files() for n, name in class_sizes(path) if n > MAX_CLASS_METHODS]
    assert not too_big, too_big


def test_the_class_check_counts_methods(tmp_path):
    path = tmp_path / "big.py"
    path.write_text("class Big:\n" + "".join(f"    def m{i}(self):\n        pass\n" for i in range(21)))
    assert class_sizes(path) == [(21, "big.py:Big")]


def test_the_library_imports_only_what_it_may():
    allowed = LIBRARY_MAY_IMPORT | set(sys.stdlib_module_names) | {"transformer", "__future__"}
    wrong = {
        f"{path.relative_to(REPO)} imports {name}"
        for path in sorted((REPO / "transformer").rglob("*.py"))
        for name in imports(path)
        if name.split(".")[0] not in allowed
    }
    assert not wrong, sorted(wrong)  # gradio, plotly, sacrebleu, tqdm and transformers among them


def library_mentions(folder: Path) -> list[str]:
    """Lines of the library that name transformers or sentencepiece, in code, strings or comments."""
    return [
        f"{path.relative_to(folder.parent)}:{n}: {line.strip()}"
        for path in sorted(folder.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if NEVER_IN_THE_LIBRARY.search(line)
    ]


def test_the_library_never_names_transformers_or_sentencepiece():
    assert not library_mentions(REPO / "transformer")


def test_the_mention_check_finds_a_mention(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "a.py").write_text('"""Attention Flow in Transformers (a title)."""\nimport torch\n')
    assert library_mentions(tmp_path / "lib") == []
    (tmp_path / "lib" / "b.py").write_text("x = 1  # see the transformers adapter\n")
    assert library_mentions(tmp_path / "lib") == ["lib/b.py:1: x = 1  # see the transformers adapter"]


def function_lengths(path: Path) -> list[tuple[int, str]]:
    """(lines, name) of every function and method, docstring excluded."""
    lengths = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            has_docstring = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            docstring_lines = body[0].end_lineno - body[0].lineno + 1 if has_docstring and len(body) > 1 else 0
            lengths.append((node.end_lineno - node.lineno + 1 - docstring_lines, f"{path.name}:{node.name}"))
    return lengths


def test_no_function_is_longer_than_60_lines():
    too_long = [(n, name) for path in source_files() for n, name in function_lengths(path) if n > MAX_FUNCTION_LINES]
    assert not too_long, too_long


def test_the_length_check_counts_a_long_function(tmp_path):
    path = tmp_path / "long.py"
    body = "\n".join(f"    x{i} = {i}" for i in range(61))
    path.write_text(f'def long():\n    """Doc\n    string."""\n{body}\n', encoding="utf-8")
    assert function_lengths(path) == [(62, "long.py:long")]


def file_lengths(paths: list[Path], root: Path = REPO) -> dict[str, int]:
    return {str(p.relative_to(root)): len(p.read_text(encoding="utf-8").splitlines()) for p in paths}


def test_no_module_is_longer_than_400_lines():
    modules = [*source_files(), *sorted((REPO / "attention_lab").rglob("*.mjs"))]
    assert any(p.suffix == ".mjs" for p in modules)
    assert not {name: n for name, n in file_lengths(modules).items() if n > MAX_FILE_LINES}


def test_the_length_check_counts_a_long_module(tmp_path):
    (tmp_path / "long.mjs").write_text("// a line\n" * 401)
    assert file_lengths([tmp_path / "long.mjs"], tmp_path) == {"long.mjs": 401}


# The modules that may run a model's encoder or decoder themselves: the model, decoding, the teacher-forced pass
# (transformer.forced.run_with_cache, which every reading of a decoding goes through), the adapters and the
# exported graphs' encoder and decoder step (the decoder graph and the DecoderLens's batched step share step.py's).
RUN_THE_MODEL = ("transformer/model.py", "transformer/decoding.py", "transformer/beams.py", "transformer/forced.py")
RUN_THE_MODEL += ("attention_lab/adapters/", "attention_lab/page_copy/graphs.py", "attention_lab/page_copy/step.py")


def forward_passes(folder: Path, root: Path = REPO, allowed: tuple[str, ...] = RUN_THE_MODEL) -> list[str]:
    """Lines outside `allowed` that run a model themselves: a decoder call (model.decode(tgt, memory, src_mask...)),
    an encoder call on a model (…model.encode(src)), or a teacher-forced decoder input built in a tensor
    (torch.tensor([[bos, *tokens[:-1]]]))."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name.startswith(allowed):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _runs_the_model(node):
                found.append(f"{name}:{node.lineno}: {ast.unparse(node)[:80]}")
    return found


def _runs_the_model(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr == "decode":
        return len(call.args) >= 3 or any("memory" in ast.unparse(a) for a in [*call.args, *call.keywords])
    if isinstance(func, ast.Attribute) and func.attr == "encode":
        return ast.unparse(func.value).endswith("model")
    if isinstance(func, ast.Attribute) and func.attr == "tensor":  # torch.tensor([[bos, *tokens[:-1]]])
        return any(_teacher_forced(node) for arg in call.args for node in ast.walk(arg))
    return False


def _teacher_forced(node: ast.AST) -> bool:
    """A list [..bos.., *x[:-1]]: the decoder inputs that force x."""
    if not isinstance(node, ast.List) or not node.elts or "bos" not in ast.unparse(node.elts[0]):
        return False
    return any(isinstance(e, ast.Starred) and isinstance(e.value, ast.Subscript) for e in node.elts[1:])


def test_no_reading_of_a_decoding_runs_the_model_itself():
    """Every probe reads a decoding through transformer.forced.run_with_cache: a copied forward pass fails here."""
    assert not [*forward_passes(REPO / "transformer"), *forward_passes(REPO / "attention_lab")]


def test_the_forward_pass_check_finds_a_copied_pass(tmp_path):
    probe = tmp_path / "transformer" / "probe.py"
    probe.parent.mkdir()
    probe.write_text("text = tokenizer.decode(ids)\nids = tokenizer.encode(text)\nlabels = [bos, *tokens[:-1]]\n")
    assert forward_passes(tmp_path / "transformer", tmp_path) == []
    copied = "tgt = torch.tensor([[model.config.bos_id, *tokens[:-1]]])\n"
    copied += "enc = self.model.encode(src)\nhidden = model.decode(tgt, enc.memory, enc.src_mask).hidden\n"
    probe.write_text(copied)
    assert [line.split(": ")[0] for line in forward_passes(tmp_path / "transformer", tmp_path)] == [
        "transformer/probe.py:1",
        "transformer/probe.py:2",
        "transformer/probe.py:3",
    ]
