"""Many users at once, through gradio_client, against the real app: failures, mismatches, latency, memory.

    python benchmarks/load.py                  # 32 users x 5 requests, then memory before/after 200 sessions
    python benchmarks/load.py --lanes          # /translate alone, then beside 8 clients calling /ablate
    python benchmarks/load.py --class 10       # 10 Chromium pages stepping, decoding in the page: server requests, CPU s
    python benchmarks/load.py --class 10 --tab Why --tab Flow   # and again with each tab open, the page explaining it
    python benchmarks/load.py --class 10 --tour   # each page through every tab: the server's requests per tab

Each user has its own session and its own texts and mixes Run, Step and Back on both bundled models. Every response
is compared with what the same requests give one user alone, so a wrong answer, a non-deterministic one or another
user's state showing through all count as mismatches. tests/test_concurrency.py runs the same load in CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SENTENCES = [
    "Ich habe Hunger.",
    "Das Haus ist alt.",
    "Wo ist der Bahnhof?",
    "Er kommt morgen.",
    "Wir gehen heute ins Kino.",
    "Sie liest ein Buch.",
    "Es regnet seit Tagen.",
    "Der Hund schläft.",
]


@dataclass(frozen=True)
class Buttons:
    """How a script calls the page's buttons (/ui_run, /ui_step, /ui_back, /ui_reset) by name, read from the served
    app: every control the page sends (attention_lab.tabs.CONTROLS), in the order its events send them, each at the
    value it has as the page opens unless given; the answer by output name (attention_lab.tabs.OUTPUTS, then the
    page's ask for slow outputs; the Step and Back buttons' own updates do not reach an API client)."""

    values: dict[str, object]  # control -> its value as the page opens
    outputs: tuple[str, ...]  # the names of what reaches an API client, in the answer's order

    @classmethod
    def of(cls, client) -> Buttons:
        from gradio_client.utils import SKIP_COMPONENTS

        from attention_lab.page.lab import ASK
        from attention_lab.tabs import CONTROLS, OUTPUTS

        config = client.config
        run = next(d for d in config["dependencies"] if d.get("api_name") == "ui_run")
        components = {c["id"]: c for c in config["components"]}

        def sent(ids: list[int]) -> list[int]:  # as gradio_client sends and answers: without state, rows, buttons
            return [i for i in ids if not components[i].get("skip_api", components[i]["type"] in SKIP_COMPONENTS)]

        inputs, outputs = sent(run["inputs"]), run["outputs"][1:]  # the outputs after the user's state
        names = [output.name for output in (*OUTPUTS, ASK)]
        if len(inputs) != len(CONTROLS) or len(outputs) != len(names):
            raise ValueError(
                f"the app's buttons send {len(inputs)} controls and answer {len(outputs)} outputs; this checkout "
                f"names {len(CONTROLS)} and {len(names)} (attention_lab.tabs): serve this checkout's app"
            )
        values = {name: components[i].get("props", {}).get("value") for name, i in zip(CONTROLS, inputs)}
        return cls(values, tuple(name for name, i in zip(names, outputs) if sent([i])))

    def inputs(self, **controls) -> list:
        """The values a button's endpoint takes: each control by name, the page's own value for the rest."""
        if unknown := sorted(set(controls) - set(self.values)):
            raise ValueError(f"no control named {', '.join(unknown)} (the page's: {', '.join(self.values)})")
        return list({**self.values, **controls}.values())

    def answer(self, response: tuple) -> dict:
        """The endpoint's answer by output name (gr.skip() as gradio_client returns it for what did not change)."""
        return dict(zip(self.outputs, response, strict=True))


_BUTTONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a client -> its app's Buttons, read once


def buttons(client) -> Buttons:
    if client not in _BUTTONS:
        _BUTTONS[client] = Buttons.of(client)
    return _BUTTONS[client]


@dataclass
class Request:
    action: str  # "run", "step", "back" or "reset": the page's buttons
    model: str = ""
    text: str = ""

    def call(self, client, **controls) -> dict:
        """The button's endpoint, with every control as the page sends it (the model and the source this request's,
        the others `controls`, by name, or the page's own); the page's outputs by name (Buttons.answer)."""
        press = buttons(client)
        sent = press.inputs(model=self.model, source=self.text, **controls)
        return press.answer(client.predict(*sent, api_name=f"/ui_{self.action}"))


def user_requests(user: int, n: int = 5) -> list[Request]:
    """User `user`'s requests: its own texts, both models, Run, Step and Back mixed (always starting from a clean
    session, so the sequence's answers do not depend on anything else)."""
    rng = random.Random(user)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    own = {
        "de-en": f"{SENTENCES[user % len(SENTENCES)][:-1]} {user}.",
        "reverse": "".join(rng.choice(alphabet) for _ in range(rng.randint(6, 20))),
    }
    first, second = ("de-en", "reverse") if user % 2 else ("reverse", "de-en")
    plan = [
        Request("step", first, own[first]),
        Request("step", first, own[first]),
        Request("back", first, own[first]),
        Request("run", second, own[second]),
        Request("step", first, own[first]),
        Request("run", first, own[first]),
        Request("step", second, own[second]),
    ]
    return plan[:n]


def fingerprint(response: dict) -> str:
    """What the user sees (output, notice, figures with every weight), as a hash: equal answers, equal hashes."""
    return hashlib.sha256(json.dumps(response, sort_keys=True, default=str).encode()).hexdigest()


def fingerprints(response: dict) -> dict[str, str]:
    """Each output's fingerprint, by name: which of them an answer differs in."""
    return {name: fingerprint({name: value}) for name, value in response.items()}


def output_of(response: dict) -> str:
    return response["output"]


@dataclass
class LoadResult:
    users: int
    requests: int
    failures: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def p50_ms(self) -> float:
        return 1000 * percentile(self.latencies, 0.5)

    @property
    def p95_ms(self) -> float:
        return 1000 * percentile(self.latencies, 0.95)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


def play(client, requests: list[Request]) -> list[tuple[str, dict[str, str], float]]:
    """(output, each output's fingerprint, seconds) for each request, in a fresh session."""
    client.reset_session()
    answers = []
    for request in requests:
        start = time.perf_counter()
        response = request.call(client)
        answers.append((output_of(response), fingerprints(response), time.perf_counter() - start))
    return answers


def answers_alone(url: str, users: int = 32, requests_per_user: int = 5) -> list[list[tuple[str, dict[str, str]]]]:
    """(output, each output's fingerprint) of each user's requests, played one user at a time."""
    from gradio_client import Client

    solo = Client(url, verbose=False)
    return [[(out, fp) for out, fp, _ in play(solo, user_requests(u, requests_per_user))] for u in range(users)]


def load_test(url: str, users: int = 32, requests_per_user: int = 5, expected=None) -> LoadResult:
    """All users at once, each answer compared with `expected` (by default: each user alone, measured first)."""
    from gradio_client import Client

    plans = [user_requests(u, requests_per_user) for u in range(users)]
    expected = expected or answers_alone(url, users, requests_per_user)
    clients = [Client(url, verbose=False) for _ in range(users)]
    result = LoadResult(users=users, requests=users * requests_per_user)
    start_line = threading.Barrier(users)
    lock = threading.Lock()

    def user(u: int) -> None:
        start_line.wait()
        try:
            answers = play(clients[u], plans[u])
        except Exception as err:  # noqa: BLE001 - a failure to report, whatever it is
            with lock:
                result.failures.append(f"user {u}: {type(err).__name__}: {err}")
            return
        with lock:
            for i, ((out, fp, seconds), (want_out, want_fp)) in enumerate(zip(answers, expected[u])):
                result.latencies.append(seconds)
                if fp != want_fp:
                    differ = sorted(name for name in fp.keys() | want_fp.keys() if fp.get(name) != want_fp.get(name))
                    result.mismatches.append(
                        f"user {u} request {i} ({plans[u][i].action}): got {out!r}, alone it gave {want_out!r};"
                        f" {', '.join(differ)} differ"
                    )

    threads = [threading.Thread(target=user, args=(u,)) for u in range(users)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.wall_s = time.perf_counter() - began
    return result


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    """A process's resident memory now (VmRSS), or its peak so far (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def sessions(url: str, count: int) -> None:
    """`count` new sessions, each running one de-en sentence and stepping once: state and figures to keep."""
    from gradio_client import Client

    client = Client(url, verbose=False)
    for i in range(count):
        client.reset_session()
        Request("run", "de-en", f"{SENTENCES[i % len(SENTENCES)][:-1]} {i}.").call(client)
        Request("step", "reverse", f"abc{i}").call(client)


def memory_over_sessions(url: str, pid: int, count: int) -> tuple[float, float, float]:
    """The app's RSS in MB after 10 warm-up sessions, after `count` more, and after `count` more again."""
    sessions(url, 10)  # the first sessions allocate what every later one reuses
    before = rss_mb(pid)
    sessions(url, count)
    after = rss_mb(pid)
    sessions(url, count)
    return before, after, rss_mb(pid)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(
    script: Path = REPO / "app.py", args: list[str] | tuple[str, ...] = (), timeout_s: float = 120
) -> tuple[subprocess.Popen, str]:
    """`script` (the app, or another Gradio app) with `args`, served on a free port in its own process; returns it
    and its URL once it answers (at most `timeout_s` seconds)."""
    from gradio_client import Client

    port = free_port()
    env = {**os.environ, "GRADIO_SERVER_PORT": str(port), "PYTHONPATH": str(script.parent)}
    server = subprocess.Popen(
        [sys.executable, str(script), *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + timeout_s
    while True:
        try:
            Client(url, verbose=False)
            return server, url
        except Exception:  # noqa: BLE001 - not up yet, whatever the client says
            if time.time() > deadline or server.poll() is not None:
                server.kill()
                raise RuntimeError("the app did not start") from None
            time.sleep(1)


LONG_SENTENCE = (  # 25 words
    "Gestern Abend habe ich mit meinem Bruder sehr lange über die Zukunft unserer kleinen Firma in der Stadt "
    "gesprochen, weil wir bald entscheiden müssen."
)


@dataclass
class LaneResult:
    alone_ms: float  # /translate of a short sentence, median, nothing else running
    loaded_ms: float  # the same, median, while `clients` call /ablate on LONG_SENTENCE without pause
    clients: int
    ablations: int  # /ablate answers received meanwhile

    @property
    def ratio(self) -> float:
        return self.loaded_ms / self.alone_ms


def lane_test(url: str, clients: int = 8, repeats: int = 15) -> LaneResult:
    """Heavy work in its own lane: /translate of "Ich habe Hunger." alone, then while `clients` gradio_client
    users call /ablate (every cross head of layer 1) on a 25-word sentence, one request after another."""
    from gradio_client import Client

    client = Client(url, verbose=False)

    def translate_ms() -> float:
        start = time.perf_counter()
        client.predict("de-en", SENTENCES[0], "greedy", 4, api_name="/translate")
        return 1000 * (time.perf_counter() - start)

    for _ in range(3):
        translate_ms()  # warm
    alone = sorted(translate_ms() for _ in range(repeats))[repeats // 2]
    stop, done = threading.Event(), []

    def ablating() -> None:
        heavy = Client(url, verbose=False)
        while not stop.is_set():
            heavy.predict("de-en", LONG_SENTENCE, ["cross:1:*"], api_name="/ablate")
            done.append(1)

    threads = [threading.Thread(target=ablating, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    time.sleep(3)  # every client has a request queued or running
    loaded = sorted(translate_ms() for _ in range(repeats))[repeats // 2]
    stop.set()
    for thread in threads:
        thread.join(timeout=120)
    return LaneResult(alone, loaded, clients, len(done))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--requests", type=int, default=5, help="requests per user")
    parser.add_argument("--sessions", type=int, default=200, help="sessions for the memory measure (0: skip)")
    parser.add_argument("--lanes", action="store_true", help="only: /translate beside 8 clients calling /ablate")
    parser.add_argument("--class", dest="pages", type=int, default=0, help="only: this many pages decoding in the page")
    parser.add_argument("--tab", dest="tabs", action="append", default=[], help="with --class: also with this tab open")
    parser.add_argument("--tour", action="store_true", help="with --class: each page through every tab, on its road")
    args = parser.parse_args(argv)
    server, url = start_app()
    try:
        if args.pages and args.tour:
            from load_class import class_tour  # a browser per page: only here

            print(class_tour(url, server.pid, args.pages).said())
            return 0
        if args.pages:
            from load_class import class_test  # a browser per page: only here

            for tab, road in [(tab, road) for tab in (None, *args.tabs) for road in ("page", "server")]:
                found = class_test(url, server.pid, args.pages, road=road, tab=tab)
                with_tab = f" with the {tab} tab open" if tab else ""
                print(
                    f"{found.pages} pages decoding on the {road}'s road{with_tab}, {found.clicks} clicks of Run, Step, Back and "
                    f"Reset in {found.wall_s:.1f} s: {found.requests} decoding requests to the server, "
                    f"{found.cpu_s:.2f} CPU s (with the pages open and nobody clicking, {found.idle_cpu_s:.2f} in as long)"
                )
            return 0
        if args.lanes:
            lanes = lane_test(url)
            print(
                f"/translate alone {lanes.alone_ms:.0f} ms; beside {lanes.clients} clients calling /ablate "
                f"({lanes.ablations} answered meanwhile) {lanes.loaded_ms:.0f} ms: {lanes.ratio:.2f}x"
            )
            return 0
        if args.sessions:  # first, on the fresh app
            before, after, again = memory_over_sessions(url, server.pid, args.sessions)
            print(
                f"app memory (RSS): {before:.0f} MB after 10 sessions, {after:.0f} MB after {args.sessions} more, "
                f"{again:.0f} MB after {args.sessions} more again"
            )
        result = load_test(url, args.users, args.requests)
        print(
            f"{result.users} users x {args.requests} requests = {result.requests} requests in {result.wall_s:.1f} s: "
            f"{len(result.failures)} failures, {len(result.mismatches)} mismatches; "
            f"latency p50 {result.p50_ms:.0f} ms, p95 {result.p95_ms:.0f} ms"
        )
        for line in result.failures + result.mismatches:
            print("  " + line)
        return 1 if result.failures or result.mismatches else 0
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
