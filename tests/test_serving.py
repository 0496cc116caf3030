"""What serving costs: every API request is bounded (a length cap it states, and a clear message past it), and heavy
work runs in its own lane of the queue, so that it never keeps a Step or a /translate waiting."""

from __future__ import annotations

import inspect
import re
from dataclasses import replace

import pytest

from attention_lab.app import build_demo, endpoints, make_lab
from attention_lab.checks import InputError
from attention_lab.decoding.events import READ_OPTIONS, TAKE_PROPOSED, WRITE
from attention_lab.feature import DECODE, HEAVY, Limits
from attention_lab.heads import feature as heads
from attention_lab.models.registry import Registry
from attention_lab.page.frame import OPEN_LINK
from attention_lab.page.wiring import ANSWERED
from attention_lab.patch import feature as patch
from attention_lab.serving.api import documentation
from attention_lab.tabs import features
from attention_lab.why import feature as why
from tests.conftest import tiny_pipelines

SAMPLES = {  # an argument for each required parameter an endpoint declares, beyond its model and its source
    "prefix": ["a"],
    "method": "occlusion",
    "step": 1,
    "alternative": "a",
    "heads": ["cross:1:*"],
    "position": 1,
    "translation": "a a",
    "corrupted": None,  # the source itself (its cap is the source's)
}
MODELS = ("model", "model_a", "model_b")
SOURCES = ("text", "clean", "source")
DECLARED = [endpoint for feature in features() for endpoint in feature.endpoints]
# each endpoint as a test case; /training loads the bundled model's ten snapshots (seconds): in the whole suite
CASES = [pytest.param(e, id=e.name, marks=[pytest.mark.slow] if e.name == "training" else []) for e in DECLARED]


def call(api, endpoint, text: str, model: str = "de-en", samples: dict = SAMPLES):
    """`endpoint` called through the API with `text` as its source (and as every other text it takes), `model` as
    its model(s), and SAMPLES for its other required parameters: derived from its declaration, as docs/api.md is."""
    arguments = []
    for parameter in list(inspect.signature(endpoint.fn).parameters.values())[1:]:  # the request is the server's
        if parameter.name in MODELS:
            arguments.append(model)
        elif parameter.name in SOURCES or (parameter.name in samples and samples[parameter.name] is None):
            arguments.append(text)
        elif parameter.default is not inspect.Parameter.empty:
            break  # the rest take their defaults
        else:
            assert parameter.name in samples, f"/{endpoint.name}: add a sample of {parameter.name!r} to SAMPLES"
            arguments.append(samples[parameter.name])
    return api(endpoint.name, *arguments)


@pytest.fixture(scope="module")
def api():
    lab = make_lab(Registry.of(tiny_pipelines()))
    return endpoints(lab)


def limited(api, endpoint: str, monkeypatch, **limits) -> None:
    """The endpoint's limits changed for this test (the endpoints are frozen records: one is replaced)."""
    monkeypatch.setitem(
        api.by_name, endpoint, replace(api.by_name[endpoint], limits=replace(api.by_name[endpoint].limits, **limits))
    )


def words(api, n_tokens: int, model: str = "de-en") -> str:
    """A source of exactly `n_tokens` tokens for `model` (its end-of-sentence token included)."""
    tokenizer = api.shared.registry.entry(model).pipeline.tokenizer
    text, more = "a", " a" if model == "de-en" else "a"
    while len(tokenizer.encode(text)) < n_tokens:
        text += more
    assert len(tokenizer.encode(text)) == n_tokens
    return text


@pytest.mark.parametrize("endpoint", CASES)
def test_each_endpoint_takes_its_cap_and_refuses_more_with_a_message(api, endpoint, monkeypatch, request):
    most = 12  # the tiny model reads 24 tokens: a cap below it, as the real caps are below a real model's
    model = "de-en"
    if endpoint.name == "training":  # it needs a model with training snapshots: the bundled reversal model's
        api, model = endpoints(make_lab(request.getfixturevalue("bundled"))), "reverse"
    limited(api, endpoint.name, monkeypatch, source=most)
    call(api, api.by_name[endpoint.name], words(api, most, model), model)  # answers
    with pytest.raises(InputError) as refused:
        call(api, api.by_name[endpoint.name], words(api, most + 1, model), model)
    message = str(refused.value)
    assert message == (
        f"The source is {most + 1} tokens; /{endpoint.name} takes at most {most} (its cost grows with the length). "
        "Send a shorter text."
    )


@pytest.mark.parametrize("endpoint", [case for case in CASES if case.values[0].limits.new is not None])
def test_each_endpoint_decodes_at_most_its_new_tokens(api, endpoint, monkeypatch):
    from attention_lab.request import Request

    assert len(api.attention("de-en", "Das ist ein Haus.")["steps"]) > 3  # the tiny model writes more when let
    made = []
    run = Request.run
    monkeypatch.setattr(Request, "run", lambda self, *args: made.append(run(self, *args)) or made[-1])
    limited(api, endpoint.name, monkeypatch, new=3)
    call(api, api.by_name[endpoint.name], "Das ist ein Haus.", samples={**SAMPLES, "translation": ""})  # its own
    assert made, f"/{endpoint.name} decoded nothing through its request's run"
    assert all(made_run.max_len <= 3 for made_run in made) and all(len(r.session.steps) <= 3 for r in made)


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
    # each event that sends the page's decoding tells the page when its answer has come whole (page/wiring.py)
    sending = [fn for fn in demo.fns.values() if fn.fn is not None and "answers?.sending(" in (fn.js or "")]
    answered = {ANSWERED.format(number) for number in range(1, len(sending) + 1)}
    assert len(sending) > 20 and answered <= set(browser_only)
    browser_only = [js for js in browser_only if js not in answered]
    # the tabs the page explains tell it when their controls change (why/feature.py, patch/feature.py), and the
    # heads chosen for Ablate, which the page makes itself (heads/feature.py)
    told = [js for js in browser_only if any(f"{name}?." in js for name in ("Why", "Patch", "Heads"))]
    assert sorted(set(told)) == sorted({why.ASKED_AGAIN, *patch.BROWSER_ONLY, heads.CHOSEN})
    browser_only = [js for js in browser_only if js not in told]
    # the page's own step loop reading the decoding options and writing its outputs, the examples menu's, a model
    # switch's example taken only if nothing was typed, and a link's model and source written in
    assert len(browser_only) == 5
    assert browser_only[0] == OPEN_LINK and browser_only[1] == WRITE and browser_only[2] == READ_OPTIONS
    assert re.search(r"JSON\.parse\(example\)", browser_only[3]) and browser_only[4] == TAKE_PROPOSED
    assert not any(isinstance(block, (gr.Plot, gr.Timer, gr.JSON)) for block in demo.blocks.values())
