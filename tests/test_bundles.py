"""The bundles a page with no server inlines (attention_lab/assets/bundles.py, made by esbuild at build time): the kept
ones are what esbuild makes of the modules now; a bundle understands the whole module grammar (a default import, a
namespace import, a re-export), which a page module cannot use unbundled in a classic script; and a bundle of the
page's modules draws as the modules do."""

from __future__ import annotations

import json
import subprocess

import pytest

from attention_lab.assets.build import ESBUILD, build, build_all
from attention_lab.assets.bundles import BUNDLED, ENTRIES, NAME, PACKAGE, REMAKE, modules, script
from attention_lab.core import payload
from attention_lab.core.looks import names
from attention_lab.messages import jsonable
from tests.conftest import tiny_pipelines
from tests.node import needs_node, node, run_modules, run_script
from transformer import DecodingSession

pytestmark = [needs_node, pytest.mark.skipif(not ESBUILD.is_file(), reason="esbuild is not installed (npm ci)")]

# Every form of import and export the old bundler of regular expressions refused: a default import, a namespace
# import, and re-exports (a default re-exported under a name, one renamed).
GRAMMAR = {
    "one.mjs": "export default function twice(x) { return 2 * x; }\n",
    "many.mjs": "export const a = 1;\nexport const b = 2;\n",
    "again.mjs": 'export {a as first} from "./many.mjs";\nexport {default as twice} from "./one.mjs";\n',
    "entry.mjs": (
        'import twice from "./one.mjs";\nimport * as many from "./many.mjs";\nimport {first} from "./again.mjs";\n'
        'export {twice as double} from "./again.mjs";\n'
        "export function start(x) { return [twice(x), Object.keys(many).sort(), first]; }\n"
    ),
}


def test_the_kept_bundles_are_what_esbuild_makes_of_the_modules_now(tmp_path):
    build_all(tmp_path)
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made == sorted(p.name for p in BUNDLED.iterdir()), f"run {REMAKE}"
    stale = [name for name in made if (tmp_path / name).read_bytes() != (BUNDLED / name).read_bytes()]
    assert not stale, f"{', '.join(stale)} differ from the page modules: run {REMAKE}"
    for entry in ENTRIES:  # what a served page (a live folder) loads as it is: the entry and all it imports
        assert entry in modules(entry) and all(path.is_file() for path in modules(entry))
        assert script(entry).replace(" ", "").startswith(f"var{NAME}=")  # a classic script that sets it


def test_a_bundle_understands_default_and_namespace_imports_and_re_exports(tmp_path):
    for name, code in GRAMMAR.items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    out = tmp_path / "bundle.js"
    taken = build(tmp_path / "entry.mjs", out)
    result = run_script(f"{out.read_text(encoding='utf-8')}\nconst result = [...{NAME}.start(21), {NAME}.double(5)];")
    assert result == [42, ["a", "b"], 1, 10]
    assert sorted(p.name for p in taken) == sorted(GRAMMAR)
    # the bundler's step skipped: the page modules, inlined as they are, do not even parse as a classic script
    unbundled = "\n".join(code for name, code in GRAMMAR.items()) + f"\nconst result = {NAME}.start(21);"
    ran = subprocess.run(node("-e", unbundled), capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode != 0 and "SyntaxError" in ran.stderr


def test_a_bundle_of_the_page_modules_draws_as_the_modules_do(tmp_path):
    pipeline = tiny_pipelines()["de-en"]
    session = DecodingSession(pipeline.model, pipeline.tokenizer.encode("Ich habe Hunger."), max_new_tokens=20)
    for token in pipeline.tokenizer.encode("This is a house."):  # forced: steps enough, whatever the tiny model says
        session.step(force=token)
    data = payload.full(session, pipeline.tokenizer, "tiny")
    entry = tmp_path / "figures.mjs"  # the page's own modules, re-exported by absolute path
    entry.write_text(
        "".join(
            f"export {{{names_}}} from {json.dumps(str(PACKAGE / path))};\n"
            for names_, path in (
                ("kindFigures", "core/figures.mjs"),
                ("setNames", "assets/store.mjs"),
                ("Decoding", "assets/decoding.mjs"),
            )
        ),
        encoding="utf-8",
    )
    out = tmp_path / "bundle.js"
    build(entry, out)
    look = '{words: true, hideSpecials: true, reading: "value", scale: "row", focus: [0, 1]}'
    size = "{focusHeight: 300, gridWidth: 250, gridHeight: 250}"
    bundled = run_script(
        f"{out.read_text(encoding='utf-8')}\n{NAME}.setNames({json.dumps(jsonable(names()))});\n"
        f"const result = {NAME}.kindFigures(new {NAME}.Decoding(data), 'decoder_self', 3, {look}, {size});",
        data,
    )
    body = f"return F.kindFigures(new D.Decoding(data), 'decoder_self', 3, {look}, {size});"
    assert bundled == run_modules({"D": "assets/decoding.mjs", "F": "core/figures.mjs"}, body, data)
