"""A transformers model's live page in Chromium (a tiny random BART of tests/hf_models, its family's rules: eos
starts, <s> forced first): the one file opened from disk with the network refused, and the folder served by
`python -m http.server`, and served with the headers of cross-origin isolation its README asks for, where the runtime
decodes on several threads. Each writes transformers' generate() tokens and draws the heatmap, with no error."""

from __future__ import annotations

import functools
import http.server
import subprocess
import sys
import threading

import pytest

from attention_lab.checks import check_source
from attention_lab.export import live
from tests import hf_models
from tests.conftest import exports_shared, free_port
from tests.test_browser_live import wait_for

pytestmark = pytest.mark.slow  # a real browser, and an export
transformers = pytest.importorskip("transformers")
SENTENCE = "Die Kinder spielen im Garten."
ISOLATED = {
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "cross-origin",
}


@pytest.fixture(scope="module")
def bart(tmp_path_factory):
    """(pipeline, transformers' own model, the live file, the live folder), in float32."""
    from transformer import load_pretrained

    folder = hf_models.bart(tmp_path_factory.mktemp("bart"))
    out = tmp_path_factory.mktemp("live")
    with exports_shared(tmp_path_factory):  # the same graphs for both, as the run's other BARTs (conftest)
        page = live.write(str(folder), out / "bart.html", "float32")
        site = live.write(str(folder), out / "site", "float32").parent
    reference = transformers.AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    return load_pretrained(str(folder)), reference, page, site


def generated(pipeline, reference, text: str) -> list[int]:
    ids = check_source(pipeline, text)[0]
    return hf_models.generated(reference, ids, pipeline.model.config.max_new_tokens)


def decoded(browser, url: str, offline: bool) -> dict:
    """Open `url`, Run SENTENCE: its tokens, whether the heatmap is drawn, the page's errors, its requests beyond the
    page's own origin, and how many threads the runtime has."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, offline=offline)
    page = context.new_page()
    errors, requests = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "404" not in m.text else None)
    # what failed to load, but the icon a browser asks any host for
    page.on("response", lambda r: errors.append(r.url) if r.status >= 400 and "favicon" not in r.url else None)
    page.on("request", lambda r: requests.append(r.url))
    try:
        page.goto(url)
        ready = "document.body.dataset.busy === 'false' && !!window.attentionLabLive"
        page.wait_for_function(ready, timeout=120_000)
        page.fill("#lab-source", SENTENCE)
        page.click("#lab-run")
        page.wait_for_function(ready, timeout=60_000)
        page.evaluate("window.attentionLabLive.queue")
        return {
            "tokens": page.evaluate("window.attentionLabLive.session.tokens"),
            "drawn": page.locator("[data-part=views] .js-plotly-plot .heatmaplayer").count(),
            "precision": page.inner_text(".live-precision"),
            "errors": errors,
            "away": [
                r for r in requests if not r.startswith(url.rsplit("/", 1)[0]) and r.split(":")[0] in ("http", "https")
            ],
            "isolated": page.evaluate("globalThis.crossOriginIsolated === true"),
            "threads": page.evaluate("window.attentionLabLive.model.ort.env.wasm.numThreads"),
        }
    finally:
        context.close()


def test_the_file_decodes_a_transformers_model_from_disk_with_no_network(browser, bart):
    pipeline, reference, page, _ = bart
    answer = decoded(browser, page.as_uri(), offline=True)
    assert answer["tokens"] == generated(pipeline, reference, SENTENCE)
    assert answer["drawn"] >= 1 and not answer["errors"] and not answer["away"]
    assert answer["precision"].startswith("float32") and answer["threads"] == 1  # a file from disk: one thread


class Isolated(http.server.SimpleHTTPRequestHandler):
    """A static host that sends the headers of cross-origin isolation, as the folder's README asks a Space to."""

    def end_headers(self) -> None:
        for name, value in ISOLATED.items():
            self.send_header(name, value)
        super().end_headers()

    def log_message(self, *args) -> None:
        pass


def test_the_folder_decodes_served_and_on_threads_where_the_host_isolates_it(browser, bart):
    pipeline, reference, _, site = bart
    expected = generated(pipeline, reference, SENTENCE)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(site)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(port)
        plain = decoded(browser, f"http://127.0.0.1:{port}/index.html", offline=False)
    finally:
        server.terminate()
        server.wait()
    assert plain["tokens"] == expected and plain["drawn"] >= 1 and not plain["errors"] and not plain["away"]
    assert not plain["isolated"] and plain["threads"] == 1

    isolated_server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Isolated, directory=str(site))
    )
    threading.Thread(target=isolated_server.serve_forever, daemon=True).start()
    try:
        port = isolated_server.server_address[1]
        isolated = decoded(browser, f"http://127.0.0.1:{port}/index.html", offline=False)
    finally:
        isolated_server.shutdown()
        isolated_server.server_close()
    assert isolated["isolated"] and isolated["threads"] >= 2  # the runtime decodes on threads there
    assert isolated["tokens"] == expected and isolated["drawn"] >= 1 and not isolated["errors"]
