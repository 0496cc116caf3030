"""The app's latency (server side and through gradio_client), figure building, and memory with many users.

Run by benchmarks/run.py, which puts this folder on the import path.
"""

from __future__ import annotations

import os
import time

import torch
from load import REPO, free_port, load_test, memory_over_sessions, percentile, rss_mb, start_app

SENTENCE_15 = "Ich habe gestern Abend mit meinem Bruder lange über die Zukunft unserer kleinen Firma gesprochen."


def app_bench(calls: int) -> dict[str, float]:
    """The real app in its own process, driven through gradio_client: Run and Step as the buttons call them."""
    from gradio_client import Client

    server, url = start_app()
    try:
        client = Client(url, verbose=False)
        loaded_mb = rss_mb(server.pid, "VmHWM")
        view = ["All layers", "All heads"]
        run, step = [], []
        for _ in range(calls):
            client.predict(api_name="/ui_reset")
            start = time.perf_counter()
            client.predict("de-en", SENTENCE_15, "greedy", 4, 64, 8, *view, api_name="/ui_run")
            run.append(time.perf_counter() - start)
        client.predict(api_name="/ui_reset")
        client.predict("de-en", SENTENCE_15, 64, 8, *view, api_name="/ui_step")  # the first step also encodes
        for _ in range(min(calls, 12)):
            start = time.perf_counter()
            client.predict("de-en", SENTENCE_15, 64, 8, *view, api_name="/ui_step")
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
    from lab.actions import Lab

    timings: dict[str, list[float]] = {"run": [], "step": []}
    original = {name: getattr(Lab, name) for name in timings}

    def timed(name):
        def wrapper(self, *args, **kwargs):
            start = time.perf_counter()
            screen = original[name](self, *args, **kwargs)
            for figure in screen.figures.values():
                figure.to_json()  # what gr.Plot's postprocess does with each figure
            timings[name].append(time.perf_counter() - start)
            return screen

        return wrapper

    for name in timings:
        setattr(Lab, name, timed(name))
    threads = torch.get_num_threads()
    torch.set_num_threads(max(1, (os.cpu_count() or 2) // app.CONCURRENCY))  # as app.main() sets it
    demo = app.build_demo(app.load_models([]))
    port = free_port()
    try:
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, show_error=True)
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        view = ["All layers", "All heads"]
        for _ in range(calls):
            client.predict("de-en", SENTENCE_15, "greedy", 4, 64, 8, *view, api_name="/ui_run")
        client.predict(api_name="/ui_reset")
        for _ in range(5):  # into the sentence, so that the timed Steps are ordinary mid-sentence ones
            client.predict("de-en", SENTENCE_15, 64, 8, *view, api_name="/ui_step")
        timings["step"].clear()
        for _ in range(calls):
            client.predict("de-en", SENTENCE_15, 64, 8, *view, api_name="/ui_step")  # step 6, timed
            client.predict(*view, api_name="/ui_back")  # and back to 5
    finally:
        demo.close()
        torch.set_num_threads(threads)
        for name, fn in original.items():
            setattr(Lab, name, fn)
    result = {}
    for name, values in timings.items():
        values = values[1:]  # the first call of each warms up
        result[f"server_{name}_p50"] = 1000 * percentile(values, 0.5)
        result[f"server_{name}_p95"] = 1000 * percentile(values, 0.95)
    return result


def figures_bench(calls: int) -> dict[str, float]:
    """Figure building alone (in-process), and the JSON size of every figure for 20 output tokens."""
    from lab.views import View, session_figures
    from transformer import DecodingSession
    from transformer.hub import load_pretrained

    pipeline = load_pretrained(REPO / "checkpoints" / "de-en")
    session = DecodingSession(pipeline.model, pipeline.tokenizer.encode(SENTENCE_15), max_new_tokens=64)
    session.run()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        figures = session_figures(session, pipeline.tokenizer, len(session.steps) - 1, View())
        for fig in figures.values():
            fig.to_json()  # what gr.Plot sends
        times.append(time.perf_counter() - start)
    session.reset()
    for token in list(range(10, 30)):  # 20 output tokens, whatever the model would say
        session.step(force=token)
    sizes = sum(len(f.to_json()) for f in session_figures(session, pipeline.tokenizer, 19, View()).values())
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
