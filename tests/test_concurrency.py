"""Many users at once on the real app, through gradio_client: nobody fails, nobody sees another's state, answers are
deterministic, and the memory kept per session is bounded."""

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch
from gradio_client import Client

from attention_lab import cli
from attention_lab.app import SESSION_CAPACITY, build_demo, launch_options
from attention_lab.models.devices import available_cores
from attention_lab.models.registry import Registry
from attention_lab.page.wiring import CONCURRENCY
from attention_lab.run.state import UserState
from benchmarks.load import Request, answers_alone, fingerprint, load_test
from tests.conftest import close_app, free_port

# Four times the requests the queue decodes at once (CONCURRENCY): every request waits beside others of other users
# (the benchmark, benchmarks/load.py, sends 32). The test below shows that this many catch a state shared between them.
USERS = 8


@pytest.fixture(scope="module")
def alone(served_app):
    """What each of USERS users' 5 requests give that user alone: what both load tests compare with."""
    return answers_alone(served_app[0], users=USERS, requests_per_user=5)


@pytest.mark.slow
def test_8_users_at_once_get_what_each_gets_alone(served_app, alone):
    url, _, _ = served_app
    result = load_test(url, users=USERS, requests_per_user=5, expected=alone)
    assert result.requests == 40 and len(result.latencies) == 40
    assert result.failures == []
    assert result.mismatches == []  # equal outputs, figures and weights: no leak between sessions, no nondeterminism


@pytest.mark.slow
def test_the_load_test_catches_state_shared_between_sessions(served_app, alone, monkeypatch):
    """The check above can fail: the same models served by an app whose sessions share one decoding state."""
    registry = served_app[1]
    shared = UserState()
    monkeypatch.setattr(UserState, "__deepcopy__", lambda self, memo: shared)
    leaky = build_demo(registry)
    port = free_port()
    leaky.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **launch_options())
    try:
        result = load_test(f"http://127.0.0.1:{port}/", users=USERS, requests_per_user=5, expected=alone)
    finally:
        close_app(leaky)
    assert len(result.failures) + len(result.mismatches) > 0


@pytest.mark.slow
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


@pytest.mark.slow
def test_sessions_beyond_the_capacity_are_evicted_oldest_first(served_app):
    """The app keeps SESSION_CAPACITY sessions; the eviction itself is shown on the same app launched with room for
    16, filled past it as the served one would be (8 sessions more than its capacity), in 24 requests, not 136."""
    _, registry, demo = served_app
    assert demo.state_holder.capacity == SESSION_CAPACITY < 1000
    capacity = 16
    small = build_demo(registry)
    port = free_port()
    options = {**launch_options(), "state_session_capacity": capacity}
    small.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **options)
    try:
        holder = small.state_holder
        clients = [Client(f"http://127.0.0.1:{port}/", verbose=False) for _ in range(4)]
        first_sessions = []

        def new_sessions(client: Client) -> None:
            for i in range(capacity // len(clients) + 2):
                client.reset_session()
                Request("reset", "reverse", "abc").call(client)
                if i == 0:
                    first_sessions.append(client.session_hash)

        with ThreadPoolExecutor(len(clients)) as pool:
            list(pool.map(new_sessions, clients))
        client = clients[0]
        client.reset_session()
        assert Request("run", "reverse", "abc").call(client)["output"] == "cba"
        assert holder.capacity == capacity and len(holder.session_data) <= capacity
        assert client.session_hash in holder.session_data  # the newest session is kept
        assert not any(session in holder.session_data for session in first_sessions)  # the oldest are gone
    finally:
        close_app(small)


@pytest.mark.slow
def test_the_queue_decodes_two_requests_at_once_and_no_more(served_app, monkeypatch):
    """Run, Step and both API endpoints share one limit: never more than CONCURRENCY requests decode at the same
    time; beside them, the next step decoded ahead (after a Step) runs one at a time, in a thread of its own."""
    from transformer.decoding import DecodingSession

    url, _, _ = served_app
    active, most = {"request": 0, "ahead": 0}, {"request": 0, "ahead": 0}
    lock = threading.Lock()
    step = DecodingSession.step

    def slow_step(self, *args, **kwargs):
        who = "ahead" if threading.current_thread().name.startswith("ahead") else "request"
        with lock:
            active[who] += 1
            most[who] = max(most[who], active[who])
        try:
            time.sleep(0.02)
            return step(self, *args, **kwargs)
        finally:
            with lock:
                active[who] -= 1

    monkeypatch.setattr(DecodingSession, "step", slow_step)
    calls = [
        lambda c: Request("run", "reverse", "abcdefgh").call(c)["output"],
        lambda c: Request("step", "reverse", "abcdefgh").call(c)["output"],
        lambda c: c.predict("reverse", "abcdefgh", "greedy", 4, api_name="/translate"),
        lambda c: c.predict("reverse", "abcdefgh", "greedy", 4, api_name="/attention")["output_text"],
    ] * 2
    clients = [Client(url, verbose=False) for _ in calls]
    with ThreadPoolExecutor(len(calls)) as pool:
        outputs = list(pool.map(lambda call, client: call(client), calls, clients))
    assert outputs == ["hgfedcba", "h", "hgfedcba", "hgfedcba"] * 2
    assert most["request"] == CONCURRENCY == 2 and most["ahead"] <= 1


@pytest.mark.parametrize("cores, threads", [(2, 1), (8, 4), (1, 1)])
def test_each_request_gets_its_share_of_the_cores(monkeypatch, cores, threads):
    import gradio as gr

    from attention_lab.models import devices as cores_module
    from attention_lab.models import registry
    from tests.conftest import tiny_pipelines

    launched: dict = {}
    monkeypatch.setattr(registry, "load_models", lambda hub_models, device: Registry.of(tiny_pipelines()))
    monkeypatch.setattr(gr.Blocks, "launch", lambda self, **kwargs: launched.update(kwargs))
    monkeypatch.setattr(cores_module, "available_cores", lambda: cores)
    before = torch.get_num_threads()
    try:
        cli.main([])
        assert torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(before)
    assert launched["state_session_capacity"] == SESSION_CAPACITY


@pytest.mark.parametrize(
    "cpu_max, cores", [("200000 100000\n", 2), ("150000 100000\n", 1), ("max 100000\n", None), ("garbage", None)]
)
def test_available_cores_follows_the_container_quota(tmp_path, cpu_max, cores):
    path = tmp_path / "cpu.max"
    path.write_text(cpu_max)
    everything = len(os.sched_getaffinity(0))
    assert available_cores(path) == (min(cores, everything) if cores else everything)
    assert available_cores(tmp_path / "missing") == everything


def test_the_apps_work_runs_on_its_own_threads_in_a_thread_that_first_computed_on_others(bundled):
    """OpenMP's thread count is per thread: a worker thread that first computed while torch's count was another (a
    test setting its own while a served app's thread worked) keeps that count, and float sums can follow it; the load
    test above then found steps that differed from the same user's alone (2 runs of 5). The app's work sets the count
    the app was built with (models/devices.py use_threads), in whatever thread it runs: a request through the API,
    here, and what it computes is then what the app's own thread computes."""
    from attention_lab.app import make_lab
    from attention_lab.decoding.api import TRANSLATE
    from attention_lab.models.devices import use_threads
    from attention_lab.serving.api import call
    from transformer.decoding import DecodingSession

    pipeline = bundled.entries["de-en"].pipeline
    src = pipeline.tokenizer.encode("Der Hund schläft im Garten 3.")

    def decoded() -> list[torch.Tensor]:
        session = DecodingSession(pipeline.model, src_ids=src, top_k=8)
        while not session.finished and len(session.steps) < 30:  # later steps' sums are long enough to be split
            session.step()
        self_norms, cross_norms = session.decoder_value_norms()
        weights = (w for s in session.steps for w in (*s.cross_attention, *s.self_attention, s.top_probs))
        return [*session.encoder_attention, *session.encoder_value_norms, *self_norms, *cross_norms, *weights]

    n = torch.get_num_threads()  # the process's own (conftest.keep_threads)

    def other_threads_first(worker: ThreadPoolExecutor) -> None:
        """The worker's thread settles its count while torch's is another; torch's is its own again after."""
        torch.set_num_threads(n + 1)
        worker.submit(torch.get_num_threads).result()
        torch.set_num_threads(n)

    own = decoded()
    with ThreadPoolExecutor(1) as worker:
        other_threads_first(worker)
        assert worker.submit(torch.get_num_threads).result() == n + 1  # it keeps the count it first computed with
        threads, got = worker.submit(lambda: (use_threads(n), torch.get_num_threads(), decoded())[1:]).result()
    assert threads == n
    assert all(torch.equal(torch.as_tensor(a), torch.as_tensor(b)) for a, b in zip(got, own, strict=True))

    lab = make_lab(bundled)
    with ThreadPoolExecutor(1) as worker:
        other_threads_first(worker)
        assert worker.submit(call, TRANSLATE, lab.shared, "reverse", "abc", "greedy", 4).result() == "cba"
        assert worker.submit(torch.get_num_threads).result() == lab.shared.threads == n
