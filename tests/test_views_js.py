"""The page's drawing code (lab/assets/views.js), run by Node on a real decoding's payload: what it draws equals what
lab.attention.units and transformer.readings define, for every kind, step, unit, specials and reading."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from lab.attention import payload
from lab.attention.units import Units, in_units
from tests.conftest import tiny_pipelines
from transformer import DecodingSession
from transformer.readings import rollout, value_weighted

VIEWS = Path(__file__).resolve().parent.parent / "lab" / "assets" / "views.js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed (tests/run.sh installs it)")


def run_js(body: str, data) -> object:
    """Run `body` (JavaScript with V = AttentionViews and `data` = the argument) in Node; its result, from JSON."""
    script = f"const V = require({json.dumps(str(VIEWS))}); const data = JSON.parse(require('fs').readFileSync(0));\n"
    script += f"const result = (() => {{ {body} }})();\nprocess.stdout.write(JSON.stringify(result));"
    done = subprocess.run(
        [NODE, "-e", script], input=json.dumps(data), capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


OUTPUT = "This is a <b>house</b>."  # forced: words of several pieces, markup, and </s> at the end


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


DRAWN = """
const d = new V.Decoding(data.payload);
return data.cases.map(([kind, shown, words, hide, reading]) => {
  const w = V.weights(d, kind, shown, {words, hideSpecials: hide, reading});
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
    drawn = run_js(DRAWN, {"payload": payload.full(session, tokenizer, "tiny"), "cases": cases})
    for case, page in zip(cases, drawn):
        expected, rows, cols = oracle(session, tokenizer, *case)
        assert page["rows"] == rows and page["cols"] == cols, case
        assert page["shape"] == list(expected.shape), case
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
    const a = new V.Decoding(data.whole), b = new V.Decoding(data.start);
    data.deltas.forEach(d => b.addStep(d));
    const look = {words: true, hideSpecials: false, reading: "value"};
    const drawn = ["cross", "decoder_self"].map(kind => [a, b].map(x => Array.from(V.weights(x, kind, x.steps.length, look).stack.data)));
    return {drawn, out: [a.out, b.out], steps: [a.steps.length, b.steps.length]};
    """
    result = run_js(body, {"whole": whole, "start": start, "deltas": deltas})
    assert result["out"][0] == result["out"][1] and result["steps"] == [len(session.steps)] * 2
    assert len(set(result["out"][0]["group"])) > 3 and result["out"][0]["special"][-1]  # several words, then </s>
    for one, other in result["drawn"]:
        np.testing.assert_allclose(one, other, atol=1e-6)


def test_the_focused_head_the_mean_and_the_figure(decoded):
    session, tokenizer = decoded
    n = len(session.steps)
    body = """
    const d = new V.Decoding(data);
    const look = {words: false, hideSpecials: false, reading: "weights", scale: "linear", focus: [1, 2]};
    const fig = V.view(d, "cross", 2, look), mean = V.view(d, "cross", 2, {...look, focus: null});
    const none = V.view(d, "cross", 0, look), encoder = V.view(d, "encoder", 0, {...look, scale: "log"});
    return {traces: fig.data.length, focus: fig.data[1].customdata, mean: mean.data[1].customdata, y: fig.data[1].y,
      x: fig.data[1].x, shapes: fig.layout.shapes.length, title: fig.layout.yaxis2.title.text, none: none.data.length,
      log: encoder.layout.coloraxis.cmin, note: none.layout.annotations[0].text};
    """
    drawn = run_js(body, payload.full(session, tokenizer, "tiny"))
    expected, _, _ = oracle(session, tokenizer, "cross", 2, False, False, "weights")
    np.testing.assert_allclose(drawn["focus"], expected[1, 2], atol=1e-4)
    np.testing.assert_allclose(drawn["mean"], expected.mean(axis=(0, 1)), atol=1e-4)
    assert drawn["traces"] == 2 and drawn["title"] == "layer 2, head 3" and drawn["none"] == 0
    assert drawn["shapes"] == 1 + 1 + 1  # the step's row in every tile (one path), in the focus; the focused tile
    assert "<" not in "".join(drawn["x"]) and "&lt;b&gt;" in "".join(drawn["x"])  # markup escaped for plotly
    assert drawn["log"] == -4 and drawn["note"].startswith("Nothing written yet") and n > 2


def test_what_is_worked_out_once_is_kept_only_while_it_holds(decoded):
    """Another focus redraws from the same overview (plotly then leaves it as it is); a step more or fewer, another
    scale or reading, works it out again."""
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
    const d = new V.Decoding(data.start), whole = new V.Decoding(data.whole), whatif = new V.Decoding(data.whatif);
    const look = {words: false, hideSpecials: false, reading: "weights", scale: "linear", focus: [0, 0]};
    const z = (x, n, l) => V.view(x, "cross", n, l).data[0].z;
    const text = (x, n) => JSON.stringify(z(x, n, look));
    const first = text(d, 1);
    const same = z(d, 1, look) === z(d, 1, {...look, focus: [1, 1]});
    const rescaled = z(d, 1, look) !== z(d, 1, {...look, scale: "log"});
    data.plain.forEach(step => d.addStep(step));
    const grown = text(d, 3) === text(whole, 3);
    d.keep(1);
    data.other.forEach(step => d.addStep(step));  // as many steps, another decoding
    const other = text(d, 3) === text(whatif, 3) && text(whole, 3) !== text(whatif, 3);
    d.keep(1);
    const back = text(d, 1) === first;
    return {same, rescaled, grown, other, back};
    """
    result = run_js(body, {"start": start, "plain": plain, "whole": whole, "other": other, "whatif": whatif})
    assert result == {"same": True, "rescaled": True, "grown": True, "other": True, "back": True}
