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
        [NODE, "--input-type=module", "-e", script],
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
        [NODE, "-e", program], input=json.dumps(jsonable(data)), capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
