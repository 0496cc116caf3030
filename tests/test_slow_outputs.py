"""A slow output (the head summary, an ablation's effects, the training film) never holds up the click that asks for
it, and reaches the page in one of three ways: with the answer, when it was made before (Ready); on the answer's own
stream, when the background work begun with the answer makes it within a moment (Lab.after); or by the fill the page
asks for (its Ask) when it takes longer. Whichever way, it is made once, and it is what a fill alone would send."""

from __future__ import annotations

import threading

import pytest

from attention_lab.app import make_lab
from attention_lab.controls import Controls
from attention_lab.feature import slow_value
from attention_lab.flow import feature as flow_feature
from attention_lab.heads import feature as heads_feature
from attention_lab.models.registry import Registry, load_models
from attention_lab.page.lab import ASK
from attention_lab.run.state import UserState
from tests.conftest import tiny_pipelines

SOURCE = "Das ist ein Haus."


@pytest.fixture(scope="module")
def registry():
    return Registry.of(tiny_pipelines(), trained_length={"reverse": 6})


@pytest.fixture
def lab(registry):
    lab = make_lab(registry, ahead=True)
    yield lab
    lab.ahead.shutdown(wait=True)
    lab.early.shutdown(wait=True)


@pytest.fixture
def measured(monkeypatch):
    """How often every head's importance is measured (the summary's slow part), and a gate that holds it."""
    calls, gate = [], threading.Event()
    gate.set()
    importance = heads_feature.importance

    def counted(*args, **kwargs):
        calls.append(args[2])
        assert gate.wait(30)
        return importance(*args, **kwargs)

    monkeypatch.setattr(heads_feature, "importance", counted)
    return calls, gate


def ran_with_heads_open(lab, text: str = SOURCE) -> tuple[UserState, dict]:
    user, c = UserState(), Controls("de-en", text, max_len=8)
    user.tab = "heads"
    return user, lab.do(lab.decoding.run, user, c)


def test_one_made_within_a_moment_follows_the_answer_and_is_what_a_fill_alone_sends(lab, registry, measured):
    user, answer = ran_with_heads_open(lab)
    assert answer["heads"]["op"] == "computing"  # the answer did not wait for it
    after = lab.after(user, 30)
    assert after["heads"]["op"] == "summary" and ASK.name not in after  # on the answer's stream: no ask
    assert lab.fill(user) == {} and lab.after(user, 0) == {}  # nothing left to send, nothing to ask for
    plain = make_lab(registry)  # no background work: the fill makes it
    other, _ = ran_with_heads_open(plain)
    assert plain.fill(other)["heads"] == after["heads"]
    assert len(measured[0]) == 2  # once per Lab (each keeps its own summaries)


def test_one_not_made_in_time_is_asked_for_then_filled_and_made_once(lab, measured):
    calls, gate = measured
    gate.clear()
    user, answer = ran_with_heads_open(lab)
    assert answer["heads"]["op"] == "computing"
    after = lab.after(user, 0.05)
    assert set(after) == {ASK.name} and after[ASK.name]["op"] == "ask"  # the page is told to ask for it
    assert lab.after(user, 0)[ASK.name]["n"] != after[ASK.name]["n"]  # each ask is told from the last
    gate.set()
    filled = lab.fill(user)  # the ask: it waits for the work begun with the answer
    assert filled["heads"]["op"] == "summary" and len(calls) == 1  # not measured again


def test_one_made_before_goes_out_with_the_answer(lab, measured):
    user, _ = ran_with_heads_open(lab)
    first = lab.fill(user)["heads"]
    lab.do(lab.decoding.run, user, Controls("de-en", "Wo ist der Bahnhof?", max_len=8))
    lab.fill(user)
    again = lab.do(lab.decoding.run, user, Controls("de-en", SOURCE, max_len=8))  # the first source again
    assert again["heads"] == first and lab.after(user, 0) == {}  # sent with the answer: no placeholder, no ask
    assert len(measured[0]) == 2  # each source measured once
    effects = lab.do(lab.decoding.run, user, Controls("de-en", "Ein Hund.", max_len=8))["effects"]
    assert effects["op"] == "none"  # nothing to compute (no ablation): a hint, with the answer


def test_a_stale_background_result_is_not_sent_for_a_later_click(lab, measured):
    _, gate = measured
    gate.clear()
    user, _ = ran_with_heads_open(lab)
    lab.do(lab.decoding.run, user, Controls("de-en", "Wo ist der Bahnhof?", max_len=8))  # a new Run meanwhile
    gate.set()
    filled = lab.fill(user)
    wanted = make_lab(lab.registry)
    other = UserState()
    other.tab = "heads"
    wanted.do(wanted.decoding.run, other, Controls("de-en", "Wo ist der Bahnhof?", max_len=8))
    assert filled["heads"] == wanted.fill(other)["heads"]  # the second source's summary, not the first's


def test_a_shut_tab_opened_before_is_made_ahead_and_opens_made():
    bundled = make_lab(load_models([]), ahead=True)
    try:
        user, c = UserState(), Controls("reverse", "abcdef12")
        bundled.do(bundled.decoding.run, user, c)
        assert bundled.open_tab(user, c, "training")["film"]["op"] == "computing"  # never opened: made when asked
        bundled.fill(user)
        bundled.open_tab(user, c, "attention")  # shut again
        new = Controls("reverse", "xyz987")
        bundled.do(bundled.decoding.run, user, new)  # the film of the new source is made in the background...
        for job in user.prepared:
            job.result(timeout=60)
        opened = bundled.open_tab(user, new, "training")
        assert opened["film"]["op"] == "film" and opened["film"]["snapshots"][-1]["output"] == "789zyx"  # ...and ready
        never = UserState()
        bundled.do(bundled.decoding.run, never, Controls("reverse", "qwerty"))
        assert never.prepared == []  # a user who never opened the tab has nothing made for it
    finally:
        bundled.ahead.shutdown(wait=True)
        bundled.early.shutdown(wait=True)


def test_a_slow_value_is_kept_for_its_key_alone_and_a_failure_is_said_in_one_line_logged_and_not_kept(caplog):
    caplog.set_level("ERROR", logger="attention_lab")
    kept, made = {}, []

    def make(value):
        def run():
            made.append(value)
            if isinstance(value, Exception):
                raise value
            return value

        return run

    said = slow_value("The view", make(KeyError()), lambda line: f"said: {line}", kept=kept, key="a")
    assert said == "said: The view failed: KeyError" and kept == {}  # no text: its type's name; not kept
    assert [(r.getMessage(), r.exc_info is not None) for r in caplog.records] == [("The view failed", True)]
    wrong = RuntimeError("the first line\nand a traceback's worth more")
    assert slow_value("The view", make(wrong), str) == "The view failed: the first line"
    assert slow_value("The view", make(1), str, kept=kept, key="a") == 1 and kept == {"a": 1}
    assert slow_value("The view", make(2), str, kept=kept, key="a") == 1  # found kept: not made again
    assert slow_value("The view", make(3), str, kept=kept, key="b") == 3 and kept == {"b": 3}  # the latest alone
    assert made[1:] == [wrong, 1, 3]  # 2 was never made


def test_a_failure_of_a_kind_told_is_said_its_way_and_not_logged(caplog):
    caplog.set_level("INFO", logger="attention_lab")
    told = {(ValueError, TypeError): lambda err: f"No view here: {err}", RuntimeError: lambda err: "no gradients"}

    def failing(err):
        def run():
            raise err

        return run

    assert slow_value("The view", failing(TypeError("odd")), str, told) == "No view here: odd"
    assert slow_value("The view", failing(RuntimeError("x")), str, told) == "no gradients"
    assert not caplog.records
    assert slow_value("The view", failing(OSError("disk")), str, told) == "The view failed: disk"  # not told
    assert len(caplog.records) == 1


def test_a_tab_whose_view_fails_says_why_in_one_line_and_makes_it_again_next_time(registry, monkeypatch, caplog):
    caplog.set_level("ERROR", logger="attention_lab")
    lab, user, c = make_lab(registry), UserState(), Controls("de-en", SOURCE, max_len=4)
    user.tab = "flow"

    def broken(*args, **kwargs):
        raise RuntimeError("the graph's sublayers moved\nTraceback (most recent call last): ...")

    monkeypatch.setattr(flow_feature, "flow", broken)
    lab.do(lab.decoding.run, user, c)
    assert lab.fill(user)["flow"]["error"] == "The graph failed: the graph's sublayers moved"
    assert [r.getMessage() for r in caplog.records] == ["The graph failed"]
    monkeypatch.undo()
    lab.do(lab.decoding.back, user, c)  # another decoding: made afresh, as the failure was not kept
    message = lab.fill(user)["flow"]
    assert "error" not in message and message["count"] > 0
