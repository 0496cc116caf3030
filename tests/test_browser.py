"""A real browser (Debian's Chromium, driven by Playwright) uses the app as a person would."""

import shutil
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]
SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def test_step_run_and_the_three_heatmap_sections(served_app, browser):
    from playwright.sync_api import expect

    url, registry, _ = served_app
    text = "Ich habe heute keine Zeit."
    expected = registry.models["de-en"].generate([text], max_new_tokens=64)[0]  # 64: the app's default max length
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url)
    source, output = page.get_by_label("Source"), page.get_by_label("Output")
    source.fill(text)
    page.get_by_role("button", name="Step", exact=True).click()
    expect(output).not_to_have_value("", timeout=30_000)
    first = output.input_value()
    assert expected.startswith(first)
    page.get_by_role("button", name="Run", exact=True).click()
    expect(output).to_have_value(expected, timeout=30_000)
    for heading in ("Encoder self-attention", "Decoder self-attention", "Cross-attention"):
        expect(page.get_by_role("heading", name=heading, exact=True)).to_be_visible()
    # every plot has drawn: spotlight, top-k, and the three grids of heatmaps
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 5", timeout=30_000)
    heatmap_traces = page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot')]"
        ".map(p => (p.data || []).filter(t => t.type === 'heatmap').length)")
    assert sum(1 for n in heatmap_traces if n > 0) >= 4 and max(heatmap_traces) >= 4, heatmap_traces
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "app.png"), full_page=True)
    page.close()
