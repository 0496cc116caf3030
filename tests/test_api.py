"""The real app over HTTP with gradio_client: the buttons' endpoints as the page calls them, and the documented API.

All slow: they share one served app (tests/conftest.py, served_app), which the fast loop leaves out.
"""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from gradio_client import Client

from attention_lab.controls import Controls
from attention_lab.feature import BUTTON, DATA
from attention_lab.page.lab import ASK
from attention_lab.tabs import CONTROLS, OUTPUTS, features
from benchmarks.load import Buttons, Request, buttons

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(served_app):
    url, registry, _ = served_app
    return Client(url, verbose=False), registry


def ui(client, action: str, model: str, text: str, **controls) -> dict:
    """A button's endpoint called as the page calls it (benchmarks/load.py's Request: every control, by name, the
    page's own value for those not given); the answer by name, the page modules' data parsed."""
    answer = Request(action, model, text).call(client, **controls)
    return {name: data(value) if name in DRAWN else value for name, value in answer.items()}


DRAWN = {output.name for output in (*OUTPUTS, ASK) if output.kind == DATA}  # the page modules' data


def data(value):
    """A drawn component's value as data: it must travel as JSON text (assets/components.py says why)."""
    if skipped(value):
        return value
    assert isinstance(value, str), value
    return json.loads(value)


def skipped(value) -> bool:
    """gr.skip() as gradio_client returns it: an update without a value."""
    return isinstance(value, dict) and value.get("__type__") == "update" and "value" not in value.get("props", value)


def test_the_buttons_endpoints_answer_with_only_what_changed(served):
    client, _ = served
    client.reset_session()
    ran = ui(client, "run", "reverse", "abc123")
    assert ran["output"] == "321cba" and ran["status"]["value"].startswith("Finished") and ran["status"]["visible"]
    assert ran["steps"]["op"] == "full" and ran["steps"]["shown"] == 6  # the whole decoding, for the page to draw
    assert len(ran["steps"]["data"]["steps"]) == 7
    assert skipped(ran["heads"]) and skipped(ran["film"])  # closed tabs: not drawn
    stepped = ui(client, "step", "reverse", "abc123")
    assert all(map(skipped, stepped.values()))  # a warning that the run has finished; the page keeps what it has
    client.reset_session()
    first = ui(client, "step", "reverse", "abc123")
    assert first["output"] == "3" and first["steps"]["shown"] == 1 and first["steps"]["op"] == "full"
    second = ui(client, "step", "reverse", "abc123")
    assert second["output"] == "32" and second["steps"]["op"] == "step"  # one step more, not the whole decoding
    assert second["steps"]["after"] == first["steps"]["key"] and "data" not in second["steps"]
    back = ui(client, "back", "reverse", "abc123")
    assert back["output"] == "3" and skipped(back["status"])
    assert back["steps"] == {"op": "back", "key": back["steps"]["key"], "after": second["steps"]["key"], "shown": 1,
                             "steps": 1}  # fmt: skip


def test_the_api_page_documents_the_api_endpoints_only(served):
    client, _ = served
    documented = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
    # no stray /UserState from the state's default, and none of the page's own events
    assert set(documented) == {f"/{endpoint.name}" for feature in features() for endpoint in feature.endpoints}


def test_a_user_error_is_one_line_in_the_server_log_not_a_traceback(served, capfd, caplog):
    client, _ = served
    caplog.set_level("INFO", logger="attention_lab")
    with pytest.raises(Exception, match="empty"):
        client.predict("de-en", "   ", "greedy", 4, api_name="/translate")
    _, err = capfd.readouterr()
    assert "Traceback" not in err
    assert [r.getMessage() for r in caplog.records if r.name == "attention_lab"] == [
        "user error: Type a source text first: it is empty."
    ]


def test_api_translate_matches_the_model(served):
    client, registry = served
    assert {"reverse", "de-en"} <= set(registry.names)
    assert client.predict("reverse", "abc123", "greedy", 4, api_name="/translate") == "321cba"
    text = "Ich habe Hunger."
    expected = registry.entry("de-en").pipeline.generate([text])[0]
    assert client.predict("de-en", text, "greedy", 4, api_name="/translate") == expected
    beam = registry.entry("de-en").pipeline.generate([text], strategy="beam", beam_size=4)[0]
    assert client.predict("de-en", text, "beam", 4, api_name="/translate") == beam


def test_api_attention_returns_every_head(served):
    client, registry = served
    record = client.predict("reverse", "abc", "greedy", 4, api_name="/attention")
    cfg = registry.entry("reverse").pipeline.model.config
    assert record["output_text"] == "cba" and record["output_tokens"][-1] == "</s>"
    assert len(record["encoder"]) == cfg.n_encoder_layers and len(record["encoder"][0]) == cfg.n_heads
    assert len(record["steps"]) == 4 and len(record["steps"][0]["cross"][0][0]) == 4  # a, b, c, </s>


def test_api_bad_input_is_a_clear_error_and_the_app_keeps_working(served):
    client, _ = served
    with pytest.raises(Exception, match="only knows lowercase letters and digits"):
        client.predict("reverse", "Hello!", "greedy", 4, api_name="/translate")
    with pytest.raises(Exception, match="empty"):
        client.predict("de-en", "   ", "greedy", 4, api_name="/translate")
    assert client.predict("reverse", "ok", "greedy", 4, api_name="/translate") == "ko"


def test_api_heads_ablate_and_edit_answer_in_their_documented_shapes(served):
    client, registry = served
    cfg = registry.entry("reverse").pipeline.model.config
    heads = client.predict("reverse", "abc", api_name="/heads")
    assert set(heads) == {"encoder", "decoder_self", "cross"}
    assert [len(layer) for layer in heads["cross"]] == [cfg.n_heads] * cfg.n_decoder_layers
    assert set(heads["cross"][0][0]) == {"entropy", "special", "alignment"}
    assert heads["encoder"][0][0]["alignment"] is None and 0 <= heads["cross"][1][2]["alignment"] <= 1
    ablated = client.predict("reverse", "abc", ["cross:*:*"], api_name="/ablate")
    assert set(ablated) == {"output_text", "steps"} and len(ablated["steps"]) == 4  # a, b, c, </s>
    assert set(ablated["steps"][0]) == {"step", "token", "kl", "top_k"} and ablated["steps"][0]["token"] == "c"
    assert client.predict("reverse", "abc", [], api_name="/ablate")["output_text"] == "cba"
    edited = client.predict("reverse", "abc", 1, 2, ["cross:*:*"], api_name="/edit")
    assert set(edited) == {"token", "probability", "top_k", "output_text"}
    assert edited["token"] == "b" and edited["output_text"].startswith("b")


def test_api_attribute_and_lens_say_why_each_token(served):
    client, registry = served
    config = registry.entries["reverse"].pipeline.model.config
    for method in ("input_x_gradient", "integrated_gradients", "occlusion"):
        why = client.predict("reverse", "abc", method, api_name="/attribute")
        assert set(why) == {"source_tokens", "method", "aggregate", "note", "steps"} and why["aggregate"] == "sum"
        assert why["source_tokens"][:3] == ["a", "b", "c"]
        assert [s["token"] for s in why["steps"]] == ["c", "b", "a", "</s>"]
        for s in why["steps"]:
            assert set(s) == {"step", "token", "source", "prefix", "source_share"}
            assert len(s["source"]) == len(why["source_tokens"]) and len(s["prefix"]) == s["step"]
            assert 0 <= s["source_share"] <= 1
        first = why["steps"][0]["source"]  # the first step writes the last character: it reads "c" most
        assert max(range(3), key=lambda j: abs(first[j])) == 2, (method, first)
    lens = client.predict("reverse", "abc", api_name="/lens")
    assert [s["token"] for s in lens["steps"]] == ["c", "b", "a", "</s>"]
    for s in lens["steps"]:
        assert [layer["layer"] for layer in s["layers"]] == list(range(1, config.n_decoder_layers + 1))
        assert s["layers"][-1]["top_k"][0]["token"] == s["token"] and 1 <= s["settled"] <= config.n_decoder_layers
        assert len(s["layers"][0]["top_k"]) == 5 and set(s["layers"][0]["top_k"][0]) == {"token", "probability"}


def test_api_flow_gives_a_steps_contribution_graph(served):
    client, _ = served
    graph = client.predict("reverse", "abcdef", 2, 0.04, api_name="/flow")
    assert graph["step"] == 2 and graph["threshold"] == 0.04 and graph["nodes"][-1]["label"] == "e"
    assert set(graph["edges"][0]) == {"from", "to", "kind", "layer", "head", "weight"}
    whole = client.predict("reverse", "abcdef", 2, 0, api_name="/flow")
    into = {}
    for edge in whole["edges"]:
        into[edge["to"]] = into.get(edge["to"], 0) + edge["weight"]
    assert all(abs(total - 1) < 1e-5 for total in into.values())  # unpruned: the edges into each node add up to 1
    with pytest.raises(Exception, match="Step must be a whole number from 1 to 7"):
        client.predict("reverse", "abcdef", 9, 0.04, api_name="/flow")


def test_api_decoder_lens_writes_from_each_encoder_layer_the_last_the_models_own_output(served):
    client, registry = served
    for model, text in (("reverse", "stack42"), ("de-en", "Der Hund schläft im Garten.")):
        lens = client.predict(model, text, api_name="/decoder_lens")
        config = registry.entries[model].pipeline.model.config
        assert [layer["layer"] for layer in lens["layers"]] == list(range(config.n_encoder_layers + 1))
        assert all(set(layer) == {"layer", "output_tokens", "output_text"} for layer in lens["layers"])
        own = client.predict(model, text, "greedy", 4, api_name="/attention")
        assert lens["layers"][-1]["output_tokens"] == own["output_tokens"] and own["output_tokens"][-1] == "</s>"
        assert lens["layers"][-1]["output_text"] == client.predict(model, text, "greedy", 4, api_name="/translate")
    assert lens["layers"][0]["output_text"] != lens["layers"][-1]["output_text"]  # the embeddings alone write another


def test_api_aggregate_and_contrast_find_the_mirror_position(served):
    client, _ = served
    l2 = client.predict("reverse", "abcdef", "input_x_gradient", "l2", api_name="/attribute")
    assert l2["aggregate"] == "l2" and all(min(s["source"]) >= 0 for s in l2["steps"])
    for s in l2["steps"][:6]:  # step j writes the character at the mirror position, 6 - j (0-based)
        assert max(range(7), key=lambda j: s["source"][j]) == 6 - s["step"], s
    why = client.predict("reverse", "abcdef", 2, "</s>", api_name="/contrast")  # defaults: input x gradient, l2
    assert set(why) == {"step", "token", "alternative", "logit_difference", "source", "prefix"}
    assert why["token"] == "e" and why["alternative"] == "</s>" and why["logit_difference"] > 0
    assert len(why["source"]) == 7 and len(why["prefix"]) == 2 and max(range(7), key=why["source"].__getitem__) == 4


def test_api_patch_restores_the_changed_character_from_its_mirror_position(served):
    client, registry = served
    config = registry.entries["reverse"].pipeline.model.config
    patched = client.predict("reverse", "abcdef", "abcxef", None, api_name="/patch")
    assert set(patched) == {"source_tokens", "corrupted_tokens", "output_tokens", "corrupted_output_text", "steps"}
    assert patched["source_tokens"][:6] == list("abcdef") and patched["corrupted_tokens"][3] == "x"
    assert patched["output_tokens"] == [*"fedcba", "</s>"] and patched["corrupted_output_text"] == "fexcba"
    for s in patched["steps"]:
        assert set(s) == {"step", "token", "clean_logp", "corrupted_logp", "encoder_states", "decoder_states", "heads"}
        assert len(s["encoder_states"]) == config.n_encoder_layers and len(s["encoder_states"][0]) == 7
        assert [len(row) for row in s["decoder_states"]] == [s["step"]] * config.n_decoder_layers
        assert set(s["heads"]) == {"encoder", "decoder_self", "cross"}
    d = patched["steps"][2]
    assert d["token"] == "d" and d["encoder_states"][-1][3] >= 0.9
    assert all(abs(r) <= 0.1 for j, r in enumerate(d["encoder_states"][-1]) if j != 3)
    assert all(r is None for row in patched["steps"][0]["encoder_states"] for r in row)  # |Δ log p| < 0.1 nats
    noisy = client.predict("reverse", "abcdef", "", [4], api_name="/patch")
    assert noisy["corrupted_tokens"] == noisy["source_tokens"] and noisy["steps"][2]["encoder_states"][-1][3] >= 0.9


def test_api_score_forces_a_translation_and_flags_what_it_leaves_unread(served):
    client, _ = served
    answer = client.predict("reverse", "abcdef", "fed", "input_x_gradient", api_name="/score")
    assert set(answer) == {"source_tokens", "target_tokens", "method", "steps", "sentence", "flags"}
    assert answer["target_tokens"] == [*"fed", "</s>"] and answer["method"] == "input_x_gradient"
    for s in answer["steps"]:
        assert set(s) == {"step", "token", "logp", "source_share", "source", "prefix"}
        assert len(s["source"]) == 7 and len(s["prefix"]) == s["step"] and s["logp"] <= 0
    assert answer["sentence"]["uncovered"] == ["a", "b"] and answer["sentence"]["coverage"] == pytest.approx(4 / 6)
    assert [(f["kind"], f["at"]) for f in answer["flags"]] == [("uncovered", 1), ("uncovered", 2)]
    own = client.predict("reverse", "abcdef", "", "input_x_gradient", api_name="/score")  # its own greedy output
    assert own["target_tokens"] == [*"fedcba", "</s>"] and own["flags"] == []
    assert own["sentence"]["mean_logp"] > answer["sentence"]["mean_logp"]


@pytest.mark.parametrize(
    ("endpoint", "args", "message"),
    [
        ("/patch", ("reverse", "abcdef", "abc", None), "corrupted source is 4 tokens and the clean one 7"),
        ("/patch", ("reverse", "abcdef", "", None), "Type a corrupted source, or choose source words"),
        ("/patch", ("reverse", "abcdef", "", [9]), "Noise words must be whole numbers from 1 to 6"),
        ("/patch", ("reverse", "abcdef", "abcxef", [1]), "not both"),
        ("/patch", ("reverse", "a" * 70, "b" * 70, None), "The source is 71 tokens; /patch takes at most 64"),
        ("/ablate", ("reverse", "abc", ["mlp:1:1"]), "Unknown kind 'mlp'"),
        ("/ablate", ("reverse", "abc", ["cross:9:1"]), "No layer 9"),
        ("/edit", ("reverse", "abc", 7, 1, ["cross:*:*"]), "Step must be a whole number from 1 to 4"),
        ("/edit", ("reverse", "abc", 1, 7, ["cross:*:*"]), "Position must be a whole number from 1 to 4"),
        ("/heads", ("reverse", "  "), "empty"),
        ("/attribute", ("reverse", "abc", "saliency"), "Unknown method 'saliency'"),
        ("/attribute", ("reverse", "", "occlusion"), "empty"),
        ("/attribute", ("reverse", "abc", "occlusion", "max"), "Unknown aggregate 'max': use one of sum, l2"),
        ("/contrast", ("reverse", "abc", 9, "x"), "Step must be a whole number from 1 to 4"),
        ("/contrast", ("reverse", "abc", 1, "zz"), "Unknown token 'zz'"),
        ("/contrast", ("reverse", "abc", 1, "c"), "That is the token written at step 1"),
        ("/contrast", ("reverse", "abc", 1, "x", "saliency"), "Unknown method 'saliency'"),
        ("/contrast", ("reverse", "abc", 1, "x", "occlusion", "max"), "Unknown aggregate 'max'"),
        ("/contrast", ("reverse", "a" * 70, 1, "x"), "The source is 71 tokens; /contrast takes at most 64"),
        ("/lens", ("reverse", "   "), "empty"),
        ("/beam_tree", ("reverse", "abc", 17), r"Beam size must be a whole number from 1 to 16 \(got 17\)"),
        ("/continue", ("reverse", "abc", ["zz"], "greedy", 4), "Unknown token 'zz' in the prefix"),
        ("/lens", ("reverse", "a" * 70), "The source is 71 tokens; /lens takes at most 64"),
        ("/decoder_lens", ("reverse", "a" * 70), "The source is 71 tokens; /decoder_lens takes at most 64"),
        ("/decoder_lens", ("reverse", "  "), "empty"),
        ("/decoder_lens", ("nope", "abc"), "Unknown model 'nope'; choose one of"),
        ("/decoder_lens", ("reverse", "Hello!"), "only knows lowercase letters and digits"),
        ("/score", ("reverse", "abc", "cba", "saliency"), "Unknown method 'saliency': use one of alti,"),
        ("/score", ("reverse", "a" * 70, "", "alti"), "The source is 71 tokens; /score takes at most 64"),
        ("/score", ("reverse", "", "cba", "alti"), "empty"),
        ("/score", ("reverse", "abc", "c" * 40, "alti"), "The translation is 41 tokens with its end token; /score"),
        ("/score", ("de-en", "Hallo.", " ".join(["a"] * 128), "occlusion"), "is 129 tokens with its end token"),
        ("/score", ("reverse", "abc", "cbA", "alti"), "This model only knows lowercase letters and digits; remove"),
    ],
)
def test_api_bad_head_test_requests_get_one_line_and_the_server_keeps_answering(served, endpoint, args, message):
    client, _ = served
    with pytest.raises(Exception, match=message):
        client.predict(*args, api_name=endpoint)
    assert client.predict("reverse", "ok", "greedy", 4, api_name="/translate") == "ko"


UNREACHABLE = """
from attention_lab.models.registry import load_models
registry = load_models(["someone/not-cached"])
print(sorted(registry.names))
print(registry.errors["someone/not-cached"])
"""


def test_unreachable_hub_model_is_reported_and_the_bundled_models_still_work():
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(repo)}
    result = subprocess.run(
        [sys.executable, "-c", UNREACHABLE], env=env, capture_output=True, text=True, timeout=120, cwd=repo, check=False
    )
    assert result.returncode == 0, result.stderr
    models, error = result.stdout.splitlines()[:2]
    assert models == "['de-en', 'reverse']"
    assert error.startswith("someone/not-cached: could not get it from the Hugging Face Hub")


def test_api_beam_tree_is_the_beam_search_and_continue_decodes_on_from_a_prefix(served):
    client, _ = served
    text = "Ich muss den Rasen mähen."
    tree = client.predict("de-en", text, 4, api_name="/beam_tree")
    nodes = {n["id"]: n for n in tree["nodes"]}
    path, node = [], nodes[tree["best"]]
    while node["parent"] is not None:
        path.append(node["token"])
        node = nodes[node["parent"]]
    beam = client.predict("de-en", text, "beam", 4, api_name="/attention")
    assert path[::-1] == beam["output_tokens"]
    assert tree["output_text"] == client.predict("de-en", text, "beam", 4, api_name="/translate")
    greedy = client.predict("de-en", text, api_name="/attention")["output_tokens"]
    answer = client.predict("de-en", text, greedy[:3], "greedy", 4, api_name="/continue")
    assert answer["output_tokens"] == greedy


def test_the_load_test_sends_every_control_by_name(served):
    """benchmarks/load.py calls the buttons' endpoints as the page does: every control of the tab table, by name, at
    the page's own value unless given; it reads the answer by name."""
    client, _ = served
    press = buttons(client)
    assert list(press.values) == list(CONTROLS)
    assert (press.values["max_len"], press.values["strategy"]) == (Controls().max_len, Controls().strategy)
    assert set(press.outputs) == {o.name for o in (*OUTPUTS, ASK)} - {o.name for o in OUTPUTS if o.kind == BUTTON}
    client.reset_session()
    assert Request("run", "reverse", "abc123").call(client, max_len=3)["output"] == "321"
    with pytest.raises(ValueError, match="no control named max_length"):
        press.inputs(max_length=3)


def test_the_load_test_says_when_the_app_sends_other_controls():
    stale = SimpleNamespace(  # a client of an app served from another checkout, whose buttons send one control fewer
        config={
            "dependencies": [{"api_name": "ui_run", "inputs": [0, *range(1, len(CONTROLS))], "outputs": [0]}],
            "components": [{"id": 0, "type": "state"}, *({"id": i, "type": "textbox"} for i in range(1, 99))],
        }
    )
    with pytest.raises(ValueError, match=f"send {len(CONTROLS) - 1} controls"):
        Buttons.of(stale)
