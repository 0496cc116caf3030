"""The app's latency (server side and through gradio_client), what the page is sent, and memory with many users.

Run by benchmarks/run.py, which puts this folder on the import path.
"""

from __future__ import annotations

import json
import os
import time

import torch
from load import Request, free_port, lane_test, load_test, memory_over_sessions, percentile, rss_mb, start_app
from shaped_models import SHAPES, marian_shape, shaped_marian

SENTENCE_15 = "Ich habe gestern Abend mit meinem Bruder lange über die Zukunft unserer kleinen Firma gesprochen."
QUICK_SHAPE = (marian_shape(32, 2, 4, 64), 300)  # the quick run's Marian: 2+2 layers, 4 heads, 300 tokens


def app_bench(calls: int) -> dict[str, float]:
    """The real app in its own process, driven through gradio_client: Run and Step as the buttons call them."""
    from gradio_client import Client

    server, url = start_app()
    try:
        client = Client(url, verbose=False)
        loaded_mb = rss_mb(server.pid, "VmHWM")
        run, step = [], []
        for _ in range(calls):
            Request("reset", "de-en", SENTENCE_15).call(client)
            start = time.perf_counter()
            Request("run", "de-en", SENTENCE_15).call(client)
            run.append(time.perf_counter() - start)
        Request("reset", "de-en", SENTENCE_15).call(client)
        Request("step", "de-en", SENTENCE_15).call(client)  # the first step also encodes
        for _ in range(min(calls, 12)):
            start = time.perf_counter()
            Request("step", "de-en", SENTENCE_15).call(client)
            step.append(time.perf_counter() - start)
        result = {"rss_loaded_mb": loaded_mb, "rss_peak_mb": rss_mb(server.pid, "VmHWM")}
        for name, values in (("run", run), ("step", step)):
            result[f"{name}_p50"] = 1000 * percentile(values, 0.5)
            result[f"{name}_p95"] = 1000 * percentile(values, 0.95)
        return result
    finally:
        server.terminate()
        server.wait(timeout=30)


def server_bench(calls: int) -> dict[str, float]:
    """Server-side time of the Run and Step buttons for calls made through gradio_client: the app is served
    in-process, its handlers timed where they run, including the JSON encoding gradio does for what it sends."""
    from gradio_client import Client

    from attention_lab.app import COPIES, build_demo, launch_options
    from attention_lab.models.registry import load_models
    from attention_lab.page.lab import Lab
    from attention_lab.page.wiring import CONCURRENCY

    timings: dict[str, list[float]] = {"run": [], "step": []}
    original = Lab.do

    def timed(self, action, *args):
        """Lab.do (the action, then what the page must change), with what it sends encoded as JSON."""
        start = time.perf_counter()
        changes = original(self, action, *args)
        json.dumps(changes)
        if getattr(action, "__name__", "") in timings:
            timings[action.__name__].append(time.perf_counter() - start)
        return changes

    Lab.do = timed
    threads = torch.get_num_threads()
    torch.set_num_threads(max(1, (os.cpu_count() or 2) // CONCURRENCY))  # as the command sets it
    demo = build_demo(load_models([]))
    # the app makes its models' page copies in the background, one at a time (COPIES): they are made before any call
    # is timed, as in an app that has been up a minute; an export beside the timed calls took a core from them
    COPIES.submit(lambda: None).result()
    port = free_port()
    try:
        options = {"prevent_thread_lock": True, "quiet": True, "show_error": True, **launch_options()}
        demo.launch(server_name="127.0.0.1", server_port=port, **options)
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        for _ in range(calls):
            Request("run", "de-en", SENTENCE_15).call(client)
        Request("reset", "de-en", SENTENCE_15).call(client)
        for _ in range(5):  # into the sentence, so that the timed Steps are ordinary mid-sentence ones
            Request("step", "de-en", SENTENCE_15).call(client)
        timings["step"].clear()
        for _ in range(calls):
            Request("step", "de-en", SENTENCE_15).call(client)  # step 6, timed
            Request("back", "de-en", SENTENCE_15).call(client)  # and back to 5
    finally:
        demo.close()
        torch.set_num_threads(threads)
        Lab.do = original
    result = {}
    for name, values in timings.items():
        values = values[1:]  # the first call of each warms up
        result[f"server_{name}_p50"] = 1000 * percentile(values, 0.5)
        result[f"server_{name}_p95"] = 1000 * percentile(values, 0.95)
    return result


def payload_bench(calls: int, quick: bool = False) -> dict[str, float]:
    """What the page is sent (attention_lab.decoding.messages): the time to make a Run's message (the whole decoding, as JSON),
    and its size and a Step's, for the 15-word sentence on de-en and for a 24-token source decoded to 32 tokens on a
    random model of opus-mt-de-en's shapes (`quick`: of QUICK_SHAPE's, that the code runs)."""
    import json

    from attention_lab.core import payload
    from attention_lab.messages import jsonable
    from transformer import DecodingSession, bundled, load_pretrained

    pipeline = load_pretrained(bundled("de-en"))
    session = DecodingSession(pipeline.model, pipeline.tokenizer.encode(SENTENCE_15), max_new_tokens=64)
    session.run()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        json.dumps(jsonable(payload.full(session, pipeline.tokenizer, "de-en")))  # as gradio sends it
        times.append(time.perf_counter() - start)
    result = {"payload_p50": 1000 * percentile(times, 0.5), "payload_p95": 1000 * percentile(times, 0.95)}
    result.update({f"de_en_{k}": v for k, v in message_sizes(session, pipeline.tokenizer).items()})
    result.update({f"opus_{k}": v for k, v in message_sizes(*opus_session(quick)).items()})
    return result


def message_sizes(session, tokenizer) -> dict[str, float]:
    """JSON bytes of the session's whole decoding (a Run's message), and the median of its steps' (a Step's)."""
    import json

    from attention_lab.core import payload
    from attention_lab.messages import jsonable
    from transformer import DecodingSession

    run = len(json.dumps(jsonable(payload.full(session, tokenizer, "model"))))
    replay = DecodingSession(session.model, session.src_ids, max_new_tokens=session.max_new_tokens)
    steps = []
    for step in session.steps:
        replay.step(force=step.token)
        steps.append(len(json.dumps(jsonable(payload.step_delta(replay, tokenizer)))))
    return {"run_bytes": run, "step_bytes": percentile(steps, 0.5), "source": len(session.src_ids), "steps": len(steps)}


def opus_session(quick: bool = False):
    """A 24-token source decoded greedily to 32 tokens by a random model of opus-mt-de-en's shapes (`quick`: of
    QUICK_SHAPE's, built in a fraction of a second rather than in seconds), and its tokenizer."""
    import tempfile
    from pathlib import Path

    import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained
    from transformer import DecodingSession, load_pretrained

    shape, vocab = QUICK_SHAPE if quick else SHAPES["opus"]
    with tempfile.TemporaryDirectory() as folder:
        pipeline = load_pretrained(shaped_marian(Path(folder), shape, vocab, SENTENCE_15))
    ids = pipeline.tokenizer.encode(" ".join([SENTENCE_15] * 2))[:23] + [pipeline.model.config.eos_id]
    session = DecodingSession(pipeline.model, ids, max_new_tokens=32)
    for _ in range(31):  # 32 tokens, whatever the random model would say: 31 forced, then the end of sentence
        session.step(force=session.model.config.eos_id + 2)
    session.step()
    return session, pipeline.tokenizer


def crowd_bench(users: int, requests: int, sessions: int) -> dict[str, float]:
    """Many users at once, and memory over many sessions, against the app in its own process (benchmarks/load.py)."""
    from attention_lab.app import SESSION_CAPACITY

    server, url = start_app()
    try:
        before, after, again = memory_over_sessions(url, server.pid, sessions)  # on the fresh app
        result = load_test(url, users, requests)
        lanes = lane_test(url)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {
        "users": users,
        "requests": requests,
        "failures": len(result.failures),
        "mismatches": len(result.mismatches),
        "p50": result.p50_ms,
        "p95": result.p95_ms,
        "sessions": sessions,
        "rss_before": before,
        "rss_after": after,
        "rss_again": again,
        "capacity": SESSION_CAPACITY,
        "lane_alone": lanes.alone_ms,
        "lane_loaded": lanes.loaded_ms,
        "lane_clients": lanes.clients,
    }
