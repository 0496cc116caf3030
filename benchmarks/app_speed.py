"""The app's latency (server side and through gradio_client), figure building, and memory with many users.

Run by benchmarks/run.py, which puts this folder on the import path.
"""

from __future__ import annotations

import os
import time

import torch
from load import Request, free_port, load_test, memory_over_sessions, percentile, rss_mb, start_app

SENTENCE_15 = "Ich habe gestern Abend mit meinem Bruder lange über die Zukunft unserer kleinen Firma gesprochen."


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
    in-process, its handlers timed where they run, including the JSON encoding gradio does for the figures."""
    from gradio_client import Client

    import app
    from lab.page.lab import Lab

    timings: dict[str, list[float]] = {"run": [], "step": []}
    original = Lab.do

    def timed(self, action, *args):
        """Lab.do (the action, then what the page must change), with its figures encoded as gr.Plot encodes them."""
        start = time.perf_counter()
        changes = original(self, action, *args)
        for value in changes.values():
            if hasattr(value, "to_json"):
                value.to_json()  # what gr.Plot's postprocess does with each figure it sends
        if getattr(action, "__name__", "") in timings:
            timings[action.__name__].append(time.perf_counter() - start)
        return changes

    Lab.do = timed
    threads = torch.get_num_threads()
    torch.set_num_threads(max(1, (os.cpu_count() or 2) // app.CONCURRENCY))  # as app.main() sets it
    demo = app.build_demo(app.load_models([]))
    port = free_port()
    try:
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, show_error=True)
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


def figures_bench(calls: int) -> dict[str, float]:
    """Figure building alone (in-process): what a Run sends (the cross-attention view, the now view, the top-k), and
    the JSON size of every view (all three kinds) for 20 output tokens."""
    from lab.attention.drawing import Drawing, Look
    from transformer import KINDS, DecodingSession, bundled, load_pretrained

    pipeline = load_pretrained(bundled("de-en"))
    session = DecodingSession(pipeline.model, pipeline.tokenizer.encode(SENTENCE_15), max_new_tokens=64)
    session.run()

    def drawing() -> Drawing:
        return Drawing.of(session, pipeline.tokenizer, Look())

    times = []
    for _ in range(calls):
        start = time.perf_counter()
        shown = len(session.steps) - 1
        view = drawing()
        view.view("cross", shown).to_json()  # what gr.Plot sends
        view.now(shown)
        view.top_k(shown)
        times.append(time.perf_counter() - start)
    session.reset()
    for token in list(range(10, 30)):  # 20 output tokens, whatever the model would say
        session.step(force=token)
    sizes = sum(len(drawing().view(kind, 20).to_json()) for kind in KINDS)
    return {
        "figures_p50": 1000 * percentile(times, 0.5),
        "figures_p95": 1000 * percentile(times, 0.95),
        "figures_json_bytes_20": sizes,
    }


def crowd_bench(users: int, requests: int, sessions: int) -> dict[str, float]:
    """Many users at once, and memory over many sessions, against the app in its own process (benchmarks/load.py)."""
    import app

    server, url = start_app()
    try:
        before, after, again = memory_over_sessions(url, server.pid, sessions)  # on the fresh app
        result = load_test(url, users, requests)
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
        "capacity": app.SESSION_CAPACITY,
    }
