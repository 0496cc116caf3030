"""The runtime and the tokenizer library the live page carries are the npm packages package.json pins, unchanged."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
VENDOR = REPO / "attention_lab" / "page_copy" / "vendor"
MODULES = REPO / "node_modules"
CARRIED = {
    "ort.wasm.bundle.min.mjs": ("onnxruntime-web", "dist/ort.wasm.bundle.min.mjs"),
    "ort-wasm-simd-threaded.wasm.gz": ("onnxruntime-web", "dist/ort-wasm-simd-threaded.wasm"),
    "tokenizers.min.mjs": ("@huggingface/tokenizers", "dist/tokenizers.min.mjs"),
}


def test_package_json_pins_the_packages_the_page_carries():
    pinned = json.loads((REPO / "package.json").read_text(encoding="utf-8"))["devDependencies"]
    readme = (VENDOR / "README.md").read_text(encoding="utf-8")
    for package, _ in CARRIED.values():
        assert f"{package} {pinned[package]}" in readme


@pytest.mark.skipif(not MODULES.is_dir(), reason="the npm packages are not installed (tests/run.sh installs them)")
@pytest.mark.parametrize("name", sorted(CARRIED))
def test_each_carried_file_is_the_pinned_packages_own(name):
    package, path = CARRIED[name]
    version = json.loads((MODULES / package / "package.json").read_text(encoding="utf-8"))["version"]
    pinned = json.loads((REPO / "package.json").read_text(encoding="utf-8"))["devDependencies"][package]
    assert version == pinned
    carried = (VENDOR / name).read_bytes()
    if name.endswith(".gz"):
        carried = gzip.decompress(carried)
    assert carried == (MODULES / package / path).read_bytes()
