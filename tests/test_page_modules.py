"""The page's modules (attention_lab/**/*.mjs), run by Node: their unit tests (tests/js, Node's own test runner);
what they draw from a real decoding's payload equals what attention_lab.core.units and transformer.readings
define, for every kind, step, unit, specials and reading; and what they name equals what the server names (their
bundles: tests/test_bundles.py)."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from attention_lab.app import stylesheets
from attention_lab.assets import PACKAGE, PAGE_CSS, modules, styles
from attention_lab.core import payload
from attention_lab.core.kinds import NAMES
from attention_lab.core.looks import FOCUS_MEAN, READINGS, SCALES, names
from attention_lab.export.lesson import STYLESHEETS as LESSON
from attention_lab.export.markup import STYLESHEETS as LIVE
from attention_lab.messages import jsonable
from attention_lab.page.frame import STYLESHEET as FRAME
from attention_lab.tabs import features
from tests.conftest import tiny_pipelines
from tests.node import needs_node, node, run_modules
from tests.units_reference import Units, in_units
from transformer import DecodingSession
from transformer.readings import rollout, value_weighted

pytestmark = needs_node
TESTS = Path(__file__).resolve().parent / "js"
OUTPUT = "This is a <b>house</b>."  # forced: words of several pieces, markup, and </s> at the end
MAX_MODULE_LINES = 400


def test_the_page_modules_unit_tests_pass(tmp_path):
    """Every file of tests/js in one Node process, as the page holds its modules: one store, one set of names (Node's
    runner starting a process a file spent 8.5 of its 12 s starting them). So a test must not lean on what another
    file's tests left, nor leave anything another leans on."""
    files = sorted(TESTS.glob("*.test.mjs"))
    assert len(files) >= 8
    everything = tmp_path / "every.test.mjs"
    everything.write_text("".join(f"import {json.dumps(p.as_uri())};\n" for p in files), encoding="utf-8")
    env = {**os.environ, "PYTHON": sys.executable}  # a test that checks the page against Python's own writing
    done = subprocess.run(
        node("--test", str(everything)), capture_output=True, text=True, timeout=120, check=False, env=env
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"# fail 0", done.stdout) and re.search(r"# pass [1-9]", done.stdout), done.stdout[-2000:]


def test_every_module_is_short_and_defines_each_helper_once():
    defined: dict[str, str] = {}
    for path in modules():
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= MAX_MODULE_LINES, path
        for name in re.findall(r"^export\s+(?:async\s+)?(?:function\*?|class|const|let)\s+(\w+)", text, re.MULTILINE):
            # a drawn component's module mounts; an offline page's starts; a tab's in_page.mjs makes its message
            if name not in ("mount", "start", "made"):
                assert name not in defined, f"{name} in {path.name} and {defined[name]}"
                defined[name] = path.name


# A style written from a script: node.style.x = ..., node.style = ..., node.style["x"] = ..., style.cssText,
# Object.assign(node.style, ...), setAttribute("style", ...), markup with a style attribute, or setProperty of
# anything but a custom property (--name).
INLINE_STYLE = re.compile(
    r"\.style(?:\.(?!setProperty\b|getPropertyValue\b|removeProperty\b)[\w$]+|\s*\[[^\]]*\])?\s*[-+]?=(?!=)"
    r"|style\.cssText|Object\.assign\(\s*[\w$.]+\.style\b|setAttribute\(\s*[\"'`]style[\"'`]"
    r"|<[^>]*\sstyle\s*=|\.style\.setProperty\(\s*(?![\"'`]--)"
)
CUSTOM_PROPERTY = re.compile(r"\.style\.setProperty\(\s*[\"'`](--[\w-]+)")


def test_modules_write_no_inline_style_but_custom_properties_the_stylesheets_use():
    """How the page looks is in the stylesheets beside the modules: a module writes no inline style, only the custom
    properties of data-driven values (a bar's share, a word's shade), each read by a stylesheet."""
    bad = ['a.style.width = "3px";', "a.style.cssText = s;", "Object.assign(span.style, shade(w));", "a.style = s;",
           'a.setAttribute("style", s);', 'a.style["color"] = c;', 'a.style.setProperty("width", w);',
           "box.innerHTML = `<b style='color: red'>`;"]  # fmt: skip
    good = ['a.style.setProperty("--share", v);', "if (a.style.width === w) {}", 'a.style.getPropertyValue("--share")']
    assert all(INLINE_STYLE.search(line) for line in bad) and not any(INLINE_STYLE.search(line) for line in good)
    found, used = [], set()
    for path in modules():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if INLINE_STYLE.search(line):
                found.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
            used.update(CUSTOM_PROPERTY.findall(line))
    assert not found, "inline styles set from scripts:\n" + "\n".join(found)
    css = styles(sorted(PACKAGE.rglob("*.css")))
    assert not [name for name in sorted(used) if f"var({name}" not in css], "custom properties no stylesheet reads"


def test_the_stylesheets_are_the_page_wide_rules_then_each_features_beside_its_modules():
    sheets = stylesheets()
    declared = [feature.stylesheet for feature in features() if feature.stylesheet is not None]
    assert sheets == [PAGE_CSS, FRAME, *declared] and len(declared) >= 8  # the features', in the table's order
    assert set(sheets) | set(LESSON) | set(LIVE) == set(
        PACKAGE.rglob("*.css")
    )  # the page's, a lesson's or a live page's
    assert all(any(sheet.parent.glob("*.mjs")) for sheet in sheets)  # each beside the modules whose views it draws
    assert all(sheet.is_file() for sheet in LESSON)


def test_the_page_is_sent_the_names_and_keeps_none_of_its_own():
    """The names of the kinds and the looks live in Python alone: the page's modules name nothing themselves, and what
    they draw is named as the server's names say (sent once: the header's value, and a lesson file's state)."""
    sent = jsonable(names())
    looks = [name for kind, name in (*READINGS.items(), *SCALES.items()) if name != kind]  # ("linear" is its own id)
    written = [*(n.title for n in NAMES.values()), *looks, FOCUS_MEAN]
    kept = [(path.name, text) for path in modules() for text in written if f'"{text}"' in path.read_text("utf-8")]
    assert not kept, kept
    drawn = run_modules({"D": "assets/decoding.mjs", "F": "core/figures.mjs", "S": "assets/store.mjs"}, """
      const look = {words: true, hideSpecials: false, scale: "linear", focus: null, reading: "value"};
      const size = {focusHeight: 300, gridWidth: 300, gridHeight: 300};
      return {names: S.page.names, title: F.kindFigures(new D.Decoding(data), "encoder", 1, look, size).focus.layout.title.text};
    """, payload.full(forced(tiny_pipelines()["de-en"], 2), tiny_pipelines()["de-en"].tokenizer, "tiny"))  # fmt: skip
    assert drawn["names"] == sent and drawn["title"].startswith(f"{NAMES['encoder'].title} · {READINGS['value']}")


def forced(pipeline, upto: int | None = None) -> DecodingSession:
    session = DecodingSession(pipeline.model, pipeline.tokenizer.encode("Ich habe <b>Hunger</b>."), max_new_tokens=20)
    for token in pipeline.tokenizer.encode(OUTPUT)[:upto]:
        session.step(force=token)
    return session


@pytest.fixture(scope="module")
def decoded():
    pipeline = tiny_pipelines()["de-en"]
    return forced(pipeline), pipeline.tokenizer


def oracle(session, tokenizer, kind: str, shown: int, words: bool, hide: bool, reading: str):
    """The weights a view shows, as the Python definitions give them: (L, H, Q, K), row labels, column labels."""
    special, steps = session.model.special_ids, session.steps

    def units(ids):
        return Units.of(tokenizer.tokens(ids), [i in special for i in ids], words, tokenizer.is_character_level)

    out = [s.token for s in steps]
    self_norms, cross_norms = session.decoder_value_norms()
    stack = lambda ws: torch.stack([w.float() for w in ws])
    if kind == "encoder":
        pieces, norms = stack(session.encoder_attention), stack(session.encoder_value_norms)
        rows = cols = units(session.src_ids)
    else:
        rows = units(out[:shown])
        if kind == "cross":
            pieces = torch.stack([stack(s.cross_attention) for s in steps[:shown]], dim=2)
            cols, norms = units(session.src_ids), stack(cross_norms)
        else:
            pieces = torch.zeros(len(steps[0].self_attention), session.model.config.n_heads, shown, shown)
            for t, s in enumerate(steps[:shown]):
                pieces[:, :, t, : t + 1] = stack(s.self_attention)
            cols, norms = units([session.model.config.bos_id, *out[: shown - 1]]), stack(self_norms)[:, :, :shown]
    if reading == "value":
        weighted = value_weighted(pieces, norms)
        read = weighted / weighted.sum(-1, keepdim=True).clamp_min(1e-30)
    elif reading == "rollout" and kind == "cross":
        read = pieces @ rollout(list(session.encoder_attention))[-1]
    elif reading == "rollout":
        read = torch.stack(rollout(list(pieces)))[:, None]
    else:
        read = pieces
    merged = in_units(read.numpy(), rows, cols, hide)
    if hide:
        rows, cols = rows.without_specials()[0], cols.without_specials()[0]
    return merged, rows.labels, cols.labels


MODULES = {"D": "assets/decoding.mjs", "U": "assets/units.mjs", "F": "core/figures.mjs"}
DRAWN = """
const d = new D.Decoding(data.payload);
return data.cases.map(([kind, shown, words, hide, reading]) => {
  const w = U.weights(d, kind, shown, {words, hideSpecials: hide, reading});
  return {shape: [w.stack.L, w.stack.H, w.stack.Q, w.stack.K], data: Array.from(w.stack.data),
    rows: w.rows.labels, cols: w.cols.labels, current: w.current};
});
"""


def test_what_the_page_draws_equals_the_python_definitions(decoded):
    session, tokenizer = decoded
    n = len(session.steps)
    cases = [
        [kind, shown, words, hide, reading]
        for kind, shown in (("encoder", n), ("cross", 1), ("cross", n), ("decoder_self", 2), ("decoder_self", n))
        for words, hide, reading in itertools.product((True, False), (True, False), ("weights", "value", "rollout"))
    ]
    drawn = run_modules(MODULES, DRAWN, {"payload": payload.full(session, tokenizer, "tiny"), "cases": cases})
    for case, page in zip(cases, drawn):
        expected, rows, cols = oracle(session, tokenizer, *case)
        assert page["rows"] == rows and page["cols"] == cols, case
        assert page["shape"] == list(expected.shape), case
        # 16-bit weights (within 7.7e-6 each), summed over a word's pieces in float32
        np.testing.assert_allclose(
            np.array(page["data"]).reshape(expected.shape), expected, atol=2e-4, err_msg=str(case)
        )


def test_a_step_at_a_time_holds_what_the_whole_decoding_holds(decoded):
    session, tokenizer = decoded
    whole = payload.full(session, tokenizer, "tiny")
    stepped = DecodingSession(session.model, session.src_ids, max_new_tokens=20)
    stepped.step(force=session.steps[0].token)
    start, deltas = payload.full(stepped, tokenizer, "tiny"), []
    for step in session.steps[1:]:
        stepped.step(force=step.token)
        deltas.append(payload.step_delta(stepped, tokenizer))
    body = """
    const a = new D.Decoding(data.whole), b = new D.Decoding(data.start);
    data.deltas.forEach((d) => b.addStep(d));
    const look = {words: true, hideSpecials: false, reading: "value"};
    const drawn = ["cross", "decoder_self"].map((kind) => [a, b].map((x) => Array.from(U.weights(x, kind, x.steps.length, look).stack.data)));
    return {drawn, out: [a.out, b.out], steps: [a.steps.length, b.steps.length]};
    """
    result = run_modules(MODULES, body, {"whole": whole, "start": start, "deltas": deltas})
    assert result["out"][0] == result["out"][1] and result["steps"] == [len(session.steps)] * 2
    assert len(set(result["out"][0]["group"])) > 3 and result["out"][0]["special"][-1]  # several words, then </s>
    for one, other in result["drawn"]:
        np.testing.assert_allclose(one, other, atol=1e-6)


def test_the_focused_head_the_mean_and_the_figures(decoded):
    session, tokenizer = decoded
    body = """
    const d = new D.Decoding(data);
    const look = {words: false, hideSpecials: false, reading: "weights", scale: "linear", focus: [1, 2]};
    const size = {focusHeight: 400, gridWidth: 300, gridHeight: 300};
    const figs = F.kindFigures(d, "cross", 2, look, size), mean = F.kindFigures(d, "cross", 2, {...look, focus: null}, size);
    const none = F.kindFigures(d, "cross", 0, look, size), encoder = F.kindFigures(d, "encoder", 0, {...look, scale: "log"}, size);
    return {focus: figs.focus.data[0].customdata, mean: mean.focus.data[0].customdata, x: figs.focus.data[0].x,
      title: figs.focus.layout.title.text, grid: T.outlines(figs.grid.tiles, figs.grid.row, figs.grid.focus),
      focusShapes: figs.focus.layout.shapes.length,
      none: [none.focus.data.length, none.grid], note: none.focus.layout.annotations[0].text, log: encoder.focus.layout.coloraxis.cmin,
      height: figs.focus.layout.height};
    """
    drawn = run_modules({**MODULES, "T": "core/tiles.mjs"}, body, payload.full(session, tokenizer, "tiny"))
    expected, _, _ = oracle(session, tokenizer, "cross", 2, False, False, "weights")
    np.testing.assert_allclose(drawn["focus"], expected[1, 2], atol=1e-4)
    np.testing.assert_allclose(drawn["mean"], expected.mean(axis=(0, 1)), atol=1e-4)
    assert drawn["title"] == "Cross-attention: layer 2, head 3" and drawn["none"] == [0, None]
    layers, heads = expected.shape[:2]
    assert len(drawn["grid"]["rows"]) == layers * heads and drawn["grid"]["framed"]  # the step's row, every tile
    assert drawn["focusShapes"] == 1  # and in the focused head
    assert "<" not in "".join(drawn["x"]) and "&lt;b&gt;" in "".join(drawn["x"])  # markup escaped for plotly
    assert drawn["log"] == -4 and drawn["note"].startswith("Nothing written yet") and 200 <= drawn["height"] <= 400


def test_what_is_worked_out_once_is_kept_only_while_it_holds(decoded):
    """Another focus redraws from the same grid; a step more or fewer, another scale or reading, works it out
    again."""
    session, tokenizer = decoded
    stepped = DecodingSession(session.model, session.src_ids, max_new_tokens=20)
    stepped.step(force=session.steps[0].token)
    start = payload.full(stepped, tokenizer, "tiny")

    def deltas(second: int) -> list[dict]:  # steps 2 and 3, step 2 writing `second`
        stepped.rewind(1)
        stepped.step(force=second)
        found = [payload.step_delta(stepped, tokenizer)]
        stepped.step()
        return [*found, payload.step_delta(stepped, tokenizer)]

    plain = deltas(session.steps[1].token)
    whole = payload.full(stepped, tokenizer, "tiny")
    other = deltas(session.steps[1].top_ids[1])  # what if step 2 had written its second choice?
    whatif = payload.full(stepped, tokenizer, "tiny")
    body = """
    const d = new D.Decoding(data.start), whole = new D.Decoding(data.whole), whatif = new D.Decoding(data.whatif);
    const look = {words: false, hideSpecials: false, reading: "weights", scale: "linear", focus: [0, 0]};
    const size = {focusHeight: 400, gridWidth: 300, gridHeight: 300};
    const z = (x, n, l) => F.kindFigures(x, "cross", n, l, size).grid.tiles;
    const text = (x, n) => JSON.stringify(Array.from(z(x, n, look).values));
    const first = text(d, 1);
    const same = z(d, 1, look) === z(d, 1, {...look, focus: [1, 1]});
    const rescaled = z(d, 1, look) !== z(d, 1, {...look, scale: "log"});
    data.plain.forEach((step) => d.addStep(step));
    const grown = text(d, 3) === text(whole, 3);
    d.keep(1);
    data.other.forEach((step) => d.addStep(step));  // as many steps, another decoding
    const other = text(d, 3) === text(whatif, 3) && text(whole, 3) !== text(whatif, 3);
    d.keep(1);
    const back = text(d, 1) === first;
    return {same, rescaled, grown, other, back};
    """
    result = run_modules(
        MODULES, body, {"start": start, "plain": plain, "whole": whole, "other": other, "whatif": whatif}
    )
    assert result == {"same": True, "rescaled": True, "grown": True, "other": True, "back": True}
