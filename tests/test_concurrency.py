"""Many users at once on the real app, through gradio_client: nobody fails, nobody sees another's state, answers are
deterministic, and the memory kept per session is bounded."""

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import torch
from gradio_client import Client

import app
from benchmarks.load import Request, answers_alone, fingerprint, load_test
from tests.conftest import free_port


def test_32_users_at_once_get_what_each_gets_alone(served_app):
    url, _, _ = served_app
    result = load_test(url, users=32, requests_per_user=5)
    assert result.requests == 160 and len(result.latencies) == 160
    assert result.failures == []
    assert result.mismatches == []  # equal outputs, figures and weights: no leak between sessions, no nondeterminism


def test_the_load_test_catches_state_shared_between_sessions(served_app, monkeypatch):
    """The check above can fail: the same models served by an app whose sessions share one decoding state."""
    url, registry, _ = served_app
    expected = answers_alone(url, users=8, requests_per_user=5)
    shared = app.UserState()
    monkeypatch.setattr(app.UserState, "__deepcopy__", lambda self, memo: shared)
    leaky = app.build_demo(registry)
    port = free_port()
    leaky.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        result = load_test(f"http://127.0.0.1:{port}/", users=8, requests_per_user=5, expected=expected)
    finally:
        leaky.close()
    assert len(result.failures) + len(result.mismatches) > 0


def test_the_same_request_gives_identical_tokens_and_weights(served_app):
    url, _, _ = served_app
    client = Client(url, verbose=False)
    answers = set()
    for _ in range(3):
        client.reset_session()
        answers.add(fingerprint(Request("step", "de-en", "Der Hund schläft im Garten.").call(client)) + "step")
        answers.add(fingerprint(Request("run", "de-en", "Der Hund schläft im Garten.").call(client)) + "run")
    assert len(answers) == 2, "repeating a request changed its answer"
    record = [client.predict("reverse", "abc123", "greedy", 4, api_name="/attention") for _ in range(2)]
    assert record[0] == record[1]


def test_sessions_beyond_the_capacity_are_evicted_oldest_first(served_app):
    url, _, demo = served_app
    holder = demo.state_holder
    assert holder.capacity == app.SESSION_CAPACITY < 1000
    clients = [Client(url, verbose=False) for _ in range(4)]

    def new_sessions(client: Client) -> None:
        for _ in range(app.SESSION_CAPACITY // len(clients) + 2):
            client.reset_session()
            client.predict(api_name="/ui_reset")

    with ThreadPoolExecutor(len(clients)) as pool:
        list(pool.map(new_sessions, clients))
    client = clients[0]
    client.reset_session()
    assert Request("run", "reverse", "abc").call(client)[0] == "cba"
    assert len(holder.session_data) <= app.SESSION_CAPACITY
    assert client.session_hash in holder.session_data  # the newest session is kept


def test_the_queue_decodes_two_requests_at_once_and_no_more(served_app, monkeypatch):
    url, _, _ = served_app
    active, most = [0], [0]
    lock = threading.Lock()
    run = app.Lab.run

    def slow_run(self, *args, **kwargs):
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        time.sleep(0.3)
        try:
            return run(self, *args, **kwargs)
        finally:
            with lock:
                active[0] -= 1

    monkeypatch.setattr(app.Lab, "run", slow_run)
    clients = [Client(url, verbose=False) for _ in range(6)]
    with ThreadPoolExecutor(len(clients)) as pool:
        outputs = list(pool.map(lambda c: Request("run", "reverse", "abc").call(c)[0], clients))
    assert outputs == ["cba"] * 6
    assert most[0] == app.CONCURRENCY == 2


def test_each_request_gets_its_share_of_the_cores(monkeypatch):
    from tests.conftest import tiny_pipelines

    monkeypatch.setattr(app, "load_models", lambda hub_models: app.Registry(models=tiny_pipelines()))
    monkeypatch.setattr(app.gr.Blocks, "launch", lambda self, **kwargs: launched.update(kwargs))
    launched: dict = {}
    threads = torch.get_num_threads()
    try:
        app.main([])
        assert torch.get_num_threads() == max(1, (os.cpu_count() or 2) // app.CONCURRENCY)
    finally:
        torch.set_num_threads(threads)
    assert launched["state_session_capacity"] == app.SESSION_CAPACITY
