"""What serving costs: every API request is bounded (a length cap it states, and a clear message past it), and heavy
work runs in its own lane of the queue, so that it never keeps a Step or a /translate waiting."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from attention_lab.app import build_demo, endpoints, make_lab
from attention_lab.checks import InputError
from attention_lab.decoding.events import READ_OPTIONS, TAKE_PROPOSED, WRITE
from attention_lab.feature import DECODE, HEAVY, Limits
from attention_lab.models.registry import Registry
from attention_lab.serving.api import documentation
from attention_lab.tabs import features
from tests.conftest import tiny_pipelines

CALLS = {  # endpoint -> its call with a source `text`
    "translate": lambda api, text: api.translate("de-en", text),
    "attention": lambda api, text: api.attention("de-en", text),
    "heads": lambda api, text: api.heads("de-en", text),
    "ablate": lambda api, text: api.ablate("de-en", text, ["cross:1:*"]),
    "edit": lambda api, text: api.edit("de-en", text, 1, 1, ["cross:*:*"]),
}


@pytest.fixture(scope="module")
def api():
    lab = make_lab(Registry.of(tiny_pipelines()))
    return endpoints(lab)


def limited(api, endpoint: str, monkeypatch, **limits) -> None:
    """The endpoint's limits changed for this test (the endpoints are frozen records: one is replaced)."""
    monkeypatch.setitem(
        api.by_name, endpoint, replace(api.by_name[endpoint], limits=replace(api.by_name[endpoint].limits, **limits))
    )


def words(api, n_tokens: int) -> str:
    """A de-en source of exactly `n_tokens` tokens (its end-of-sentence token included)."""
    tokenizer = api.shared.registry.entry("de-en").pipeline.tokenizer
    text = "a"
    while len(tokenizer.encode(text)) < n_tokens:
        text += " a"
    assert len(tokenizer.encode(text)) == n_tokens
    return text


@pytest.mark.parametrize("endpoint", list(CALLS))
def test_each_endpoint_takes_its_cap_and_refuses_more_with_a_message(api, endpoint, monkeypatch):
    most = 12  # the tiny model reads 24 tokens: a cap below it, as the real caps are below a real model's
    limited(api, endpoint, monkeypatch, source=most)
    CALLS[endpoint](api, words(api, most))  # answers
    with pytest.raises(InputError) as refused:
        CALLS[endpoint](api, words(api, most + 1))
    message = str(refused.value)
    assert message == (
        f"The source is {most + 1} tokens; /{endpoint} takes at most {most} (its cost grows with the length). "
        "Send a shorter text."
    )


def test_each_endpoint_decodes_at_most_its_new_tokens(api, monkeypatch):
    record = api.attention("de-en", "Das ist ein Haus.")
    limited(api, "attention", monkeypatch, new=3)
    assert len(api.attention("de-en", "Das ist ein Haus.")["steps"]) == 3 < len(record["steps"])


def test_the_caps_are_stated_where_the_api_is_documented():
    declared = {endpoint.name: endpoint for feature in features() for endpoint in feature.endpoints}
    demo = build_demo(Registry.of(tiny_pipelines()))
    served = {fn.api_name: fn for fn in demo.fns.values() if fn.api_name in declared}
    assert set(served) == set(declared)
    for name, endpoint in declared.items():
        doc = " ".join(documentation(endpoint).split())
        assert " ".join(served[name].api_description.split()) == doc
        assert f"At most {endpoint.limits.source} source tokens" in doc, name
        if name != "training":  # a snapshot decodes to its model's own limit
            assert f"and {endpoint.limits.new} new tokens" in doc, name
    assert Limits(64, None).sentence() == "At most 64 source tokens (a longer text is refused, with a message)."


def test_heavy_work_has_its_own_lane_and_looking_never_reaches_the_server():
    import gradio as gr

    demo = build_demo(Registry.of(tiny_pipelines()))
    lanes = {}
    for fn in demo.fns.values():
        name = fn.api_name or fn.name
        lanes[name] = (fn.concurrency_id, fn.concurrency_limit)
    assert lanes["translate"][0] == lanes["attention"][0] == lanes["ui_step"][0] == lanes["ui_run"][0] == DECODE
    for heavy in ("heads", "training", "ablate", "edit", "attribute", "contrast", "lens", "patch", "score", "fill"):
        assert lanes[heavy] == (HEAVY, 1), heavy
    for feature in features():
        for endpoint in feature.endpoints:
            assert lanes[endpoint.name][0] == endpoint.lane, endpoint.name
    # Looking is the page's own: Show step, the kind, Focus head, the look and the film are not gradio components,
    # and the one listener that runs in the browser alone is the examples menu's.
    labels = {getattr(block, "label", None) for block in demo.blocks.values()}
    assert not labels & {"Show step", "Focus head", "Merge pieces into words", "Colour scale", "Reading", "Snapshot"}
    browser_only = sorted(fn.js or "" for fn in demo.fns.values() if fn.fn is None)
    # the page's own step loop reading the decoding options and writing its outputs, the examples menu's, and a model
    # switch's example taken only if nothing was typed
    assert len(browser_only) == 4
    assert browser_only[0] == WRITE and browser_only[1] == READ_OPTIONS
    assert re.search(r"JSON\.parse\(example\)", browser_only[2]) and browser_only[3] == TAKE_PROPOSED
    assert not any(isinstance(block, (gr.Plot, gr.Timer, gr.JSON)) for block in demo.blocks.values())
