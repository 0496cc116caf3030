"""What the server sends the page and API clients of a decoding: the candidates, and the JSON record of every head
(the page's drawing of them: tests/test_page_modules.py and tests/js)."""

import json

import pytest
import torch

from attention_lab.core import payload
from attention_lab.core.attention_export import attention_record
from attention_lab.messages import jsonable
from tests.conftest import tiny_pipelines
from transformer import DecodingSession


@pytest.fixture(scope="module")
def decoded():
    pipeline = tiny_pipelines()["de-en"]
    ids = pipeline.tokenizer.encode("Ich habe <b>Hunger</b>.")
    session = DecodingSession(pipeline.model, ids, top_k=5, max_new_tokens=6)
    session.run()
    return session, pipeline.tokenizer


def test_candidates_leave_out_what_the_model_may_not_write(decoded):
    session, tokenizer = decoded
    step = session.steps[0]
    listed = payload.candidates(step, tokenizer, session.model.special_ids)
    assert [token for _, token, _ in listed] == [t for t, p in zip(step.top_ids, step.top_probs) if p > 0]
    assert listed[0][2] == round(step.top_probs[0], 6)


def test_weights_travel_as_16_bits_within_8e_6(decoded):
    session, _ = decoded
    weights = torch.stack(list(session.encoder_attention)).numpy()
    sent = payload.q16(weights)
    back = torch.frombuffer(bytearray(__import__("base64").b64decode(sent)), dtype=torch.uint16).float() / payload.SCALE
    assert float((back - torch.from_numpy(weights).flatten()).abs().max()) <= 0.5 / payload.SCALE + 1e-9


def test_attention_record_is_json_with_every_head(decoded):
    session, tokenizer = decoded
    record = json.loads(json.dumps(jsonable(attention_record(session, tokenizer, "tiny"))))
    cfg = session.model.config
    assert record["source_tokens"] == tokenizer.tokens(session.src_ids)
    assert len(record["steps"]) == len(session.steps)
    step = record["steps"][1]
    assert len(step["cross"]) == cfg.n_decoder_layers and len(step["cross"][0]) == cfg.n_heads
    assert len(step["decoder_self"][0][0]) == 2 and len(record["encoder"][0][0]) == len(session.src_ids)
    assert abs(sum(step["cross"][0][0]) - 1) < 1e-3
    torch.testing.assert_close(torch.tensor(step["cross"][1]), session.steps[1].cross_attention[1], atol=1e-5, rtol=0)


def test_a_drawn_components_value_travels_as_json_text():
    """gradio copies a component's value whole whenever it updates its other properties (its loading status, at
    every answer); as text, that copy costs nothing. The page reads it as data (assets.mount's READ_VALUE); the
    answers of the buttons' endpoints are checked to send it so in tests/test_api.py."""
    import numpy as np

    from attention_lab.assets.components import as_text, drawn

    value = {"op": "full", "data": {"weights": "AAEC", "shape": [np.int64(2), 3], "gap": float("nan"), "ok": True}}
    sent = as_text(value)
    assert isinstance(sent, str)
    assert json.loads(sent) == {"op": "full", "data": {"weights": "AAEC", "shape": [2, 3], "gap": None, "ok": True}}
    assert as_text(None) is None  # nothing to draw: gradio's empty value, which the page reads as none
    assert json.loads(drawn("core/views.mjs", "a-view", value={"names": [1]}).value) == {"names": [1]}
