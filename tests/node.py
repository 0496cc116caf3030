"""Running the page's modules in Node: `run_modules` imports modules of attention_lab/ by path and runs a body of
JavaScript with them and `data`; its result comes back from JSON."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from attention_lab.core.looks import names
from attention_lab.messages import jsonable

PACKAGE = Path(__file__).resolve().parent.parent / "attention_lab"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="Node.js is not installed (tests/run.sh installs it)")
# V8 runs a WebAssembly function compiled fast (Liftoff), then compiles it again, optimized (TurboFan), once it has
# run enough. ONNX Runtime's functions are many and large, and in a test's few seconds most of them got there: the
# runners of the page's explanations spent more of their CPU compiling than computing. With a budget 555 times V8's
# default (1,800,000), only the hottest are optimized. On those runners' 20 runs of tests/test_*_in_page.py:
# 181 s of CPU with the default, 77-91 s with this, 120 s with --liftoff-only (whose longest run took 40 s, not 28).
# What a function computes is the same at either tier.
WASM_TIERING = "--wasm-tiering-budget=1000000000"


def node(*args: str) -> list[str]:
    """The command line that runs Node with `args` (and WASM_TIERING)."""
    return [NODE, WASM_TIERING, *args]


def run_modules(modules: dict[str, str], body: str, data=None) -> object:
    """`body` (an async function's body, returning a value) run in Node with each of `modules` (name -> path under
    attention_lab/) imported as that name and `data` as `data`, on a page that holds the server's names of the kinds
    and the looks, as the app's page does once it has opened."""
    store = json.dumps((PACKAGE / "assets" / "store.mjs").as_uri())
    imports = "\n".join(
        [
            f"(await import({store})).setNames({json.dumps(jsonable(names()))});",
            *(
                f"const {name} = await import({json.dumps((PACKAGE / path).as_uri())});"
                for name, path in modules.items()
            ),
        ]
    )
    script = (
        "import {readFileSync} from 'node:fs';\n"
        f"{imports}\nconst data = JSON.parse(readFileSync(0, 'utf8'));\n"
        f"const result = await (async () => {{ {body} }})();\n"
        "process.stdout.write(JSON.stringify(result));"
    )
    done = subprocess.run(
        node("--input-type=module", "-e", script),
        input=json.dumps(jsonable(data)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def run_script(script: str, data=None) -> object:
    """A classic script (a bundle) run in Node, then `result` read back from JSON."""
    program = f"const data = JSON.parse(require('fs').readFileSync(0, 'utf8'));\n{script}\nprocess.stdout.write(JSON.stringify(result));"
    done = subprocess.run(
        node("-e", program), input=json.dumps(jsonable(data)), capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
