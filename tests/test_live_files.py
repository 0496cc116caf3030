"""The runtime and the tokenizer library the live page carries, and the plotly.js every page draws with, are the npm
packages package.json pins, unchanged; that plotly.js is plotly.py's version."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MODULES = REPO / "node_modules"
CARRIED = {  # file in its folder -> its npm package, and the file there
    "page_copy/vendor/ort.wasm.bundle.min.mjs": ("onnxruntime-web", "dist/ort.wasm.bundle.min.mjs"),
    "page_copy/vendor/ort-wasm-simd-threaded.wasm.gz": ("onnxruntime-web", "dist/ort-wasm-simd-threaded.wasm"),
    "page_copy/vendor/tokenizers.min.mjs": ("@huggingface/tokenizers", "dist/tokenizers.min.mjs"),
    "assets/vendor/plotly-cartesian.min.js": ("plotly.js-cartesian-dist-min", "plotly-cartesian.min.js"),
}


def test_package_json_pins_the_packages_the_page_carries():
    pinned = json.loads((REPO / "package.json").read_text(encoding="utf-8"))["devDependencies"]
    for name, (package, _) in CARRIED.items():
        readme = (REPO / "attention_lab" / name).parent / "README.md"
        assert f"{package} {pinned[package]}" in readme.read_text(encoding="utf-8"), name


def test_the_pages_plotly_js_is_plotly_pys_version():
    """The page draws what plotly.py lays out (a figure's JSON) with the same plotly.js release that plotly.py ships."""
    import plotly

    from attention_lab.assets import PLOTLY

    # its banner's line, "* plotly.js v4.1.1" or "* plotly.js (cartesian - minified) v4.1.1"
    banner = re.compile(r"^\* plotly\.js (?:\([^)]*\) )?v(\S+)$", re.MULTILINE)
    ours = banner.search(PLOTLY.read_text(encoding="utf-8")[:400])
    theirs = banner.search((Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text()[:400])
    assert ours and theirs and ours.group(1) == theirs.group(1), (ours, theirs)


@pytest.mark.skipif(not MODULES.is_dir(), reason="the npm packages are not installed (tests/run.sh installs them)")
@pytest.mark.parametrize("name", sorted(CARRIED))
def test_each_carried_file_is_the_pinned_packages_own(name):
    package, path = CARRIED[name]
    version = json.loads((MODULES / package / "package.json").read_text(encoding="utf-8"))["version"]
    pinned = json.loads((REPO / "package.json").read_text(encoding="utf-8"))["devDependencies"][package]
    assert version == pinned
    carried = (REPO / "attention_lab" / name).read_bytes()
    if name.endswith(".gz"):
        carried = gzip.decompress(carried)
    assert carried == (MODULES / package / path).read_bytes()
