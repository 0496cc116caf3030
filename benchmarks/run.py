"""Benchmarks: our Transformer against torch.nn.Transformer, KV-cached decoding, and the app's latency.

    python benchmarks/run.py            # the full run; writes benchmarks/RESULTS.md
    python benchmarks/run.py --quick    # a few repeats of small shapes: shows that the code runs (CI)

Machines are shared and noisy, so every comparison is measured side by side in one run, alternating the two
contenders, and reported as the ratio of medians.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
warnings.filterwarnings("ignore", message=".*nested tensor.*")  # torch.nn.Transformer's notes about its fast path
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from transformer import Transformer, TransformerConfig  # noqa: E402
from transformer.masks import to_torch_causal_mask, to_torch_key_padding_mask  # noqa: E402

from load import free_port, load_test, memory_over_sessions, percentile, rss_mb, start_app  # noqa: E402

SENTENCE_15 = "Ich habe gestern Abend mit meinem Bruder lange über die Zukunft unserer kleinen Firma gesprochen."


def median_ms(times: list[float]) -> float:
    return 1000 * statistics.median(times)


def alternate(fns: dict[str, Callable[[], object]], repeats: int, warmup: int = 2) -> dict[str, list[float]]:
    """Time each function `repeats` times, interleaved (A B A B ...) so that noise hits every contender alike."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


# 1. Training step ----------------------------------------------------------------------------------------------------


def torch_pair(cfg: TransformerConfig) -> tuple[Transformer, nn.Transformer]:
    torch.manual_seed(0)
    ours = Transformer(cfg)
    theirs = nn.Transformer(
        d_model=cfg.d_model,
        nhead=cfg.n_heads,
        num_encoder_layers=cfg.n_encoder_layers,
        num_decoder_layers=cfg.n_decoder_layers,
        dim_feedforward=cfg.d_ff,
        dropout=cfg.dropout,
        batch_first=True,
        norm_first=cfg.norm_first,
    )
    ours.load_torch_transformer(theirs)
    return ours, theirs


def training_step_bench(cfg: TransformerConfig, batch: int, length: int, repeats: int) -> dict[str, float]:
    ours, theirs = torch_pair(cfg)
    shell = copy.deepcopy(ours)  # our embeddings and projection around torch's stacks
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, cfg.src_vocab_size, (batch, length), generator=g)
    tgt = torch.randint(4, cfg.tgt_vocab_size, (batch, length + 1), generator=g)
    tgt_in, labels = tgt[:, :-1], tgt[:, 1:]
    opt_ours = torch.optim.AdamW(ours.parameters(), lr=1e-4)
    opt_theirs = torch.optim.AdamW([*theirs.parameters(), *shell.parameters()], lr=1e-4)
    causal = to_torch_causal_mask(length)
    src_pad, tgt_pad = to_torch_key_padding_mask(src, cfg.pad_id), to_torch_key_padding_mask(tgt_in, cfg.pad_id)

    def step(model_logits, optimizer):
        loss = F.cross_entropy(model_logits().transpose(1, 2), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    def torch_logits():
        hidden = theirs(
            shell.embed_src(src),
            shell.embed_tgt(tgt_in),
            tgt_mask=causal,
            src_key_padding_mask=src_pad,
            tgt_key_padding_mask=tgt_pad,
            memory_key_padding_mask=src_pad,
        )
        return shell.project(hidden)

    ours.train(), theirs.train(), shell.train()
    times = alternate(
        {
            "torch": lambda: step(torch_logits, opt_theirs),
            "ours": lambda: step(lambda: ours(src, tgt_in).logits, opt_ours),
            "ours_weights": lambda: step(lambda: ours(src, tgt_in, output_attentions=True).logits, opt_ours),
        },
        repeats,
    )
    return {name: median_ms(t) for name, t in times.items()}


# 2. Inference --------------------------------------------------------------------------------------------------------


@torch.no_grad()
def greedy_fixed(model: Transformer, src: torch.Tensor, steps: int, cached: bool) -> list[int]:
    """Greedy decoding of exactly `steps` tokens (eos ignored), with the KV cache or re-running the whole prefix."""
    enc = model.encode(src)
    tokens = torch.full((src.size(0), 1), model.config.bos_id)
    cache = None
    for _ in range(steps):
        if cached:
            dec = model.decode(tokens[:, -1:], enc.memory, enc.src_mask, cache, use_cache=True)
            cache = dec.cache
        else:
            dec = model.decode(tokens, enc.memory, enc.src_mask)
        tokens = torch.cat([tokens, model.project(dec.hidden[:, -1:]).argmax(-1)], dim=1)
    return tokens[0].tolist()


@torch.no_grad()
def torch_greedy(ours: Transformer, theirs: nn.Transformer, src: torch.Tensor, steps: int) -> list[int]:
    """The same greedy loop through torch.nn.Transformer's modules, which have no KV cache."""
    src_pad = to_torch_key_padding_mask(src, ours.config.pad_id)
    memory = theirs.encoder(ours.embed_src(src), src_key_padding_mask=src_pad)
    tokens = torch.full((src.size(0), 1), ours.config.bos_id)
    for _ in range(steps):
        hidden = theirs.decoder(
            ours.embed_tgt(tokens),
            memory,
            tgt_mask=to_torch_causal_mask(tokens.size(1)),
            memory_key_padding_mask=src_pad,
        )
        tokens = torch.cat([tokens, ours.project(hidden[:, -1:]).argmax(-1)], dim=1)
    return tokens[0].tolist()


@torch.no_grad()
def step_at(model: Transformer, src: torch.Tensor, position: int, repeats: int) -> float:
    """Median time of one cached decoder step when `position` tokens are already in the cache."""
    enc = model.encode(src)
    tokens = torch.randint(4, model.config.tgt_vocab_size, (1, position))
    cache = model.decode(tokens, enc.memory, enc.src_mask, use_cache=True).cache
    nxt = tokens[:, -1:]
    times = alternate({"step": lambda: model.decode(nxt, enc.memory, enc.src_mask, cache, use_cache=True)}, repeats)
    return median_ms(times["step"])


def inference_bench(cfg: TransformerConfig, steps: int, repeats: int) -> dict[str, float]:
    ours, theirs = torch_pair(cfg)
    ours.eval(), theirs.eval()
    src = torch.randint(4, cfg.src_vocab_size, (1, 20), generator=torch.Generator().manual_seed(1))
    same = (
        greedy_fixed(ours, src, steps, True)
        == greedy_fixed(ours, src, steps, False)
        == torch_greedy(ours, theirs, src, steps)
    )
    times = alternate(
        {
            "cached": lambda: greedy_fixed(ours, src, steps, True),
            "recompute": lambda: greedy_fixed(ours, src, steps, False),
            "torch": lambda: torch_greedy(ours, theirs, src, steps),
        },
        repeats,
    )
    result = {name: median_ms(t) for name, t in times.items()}
    result["same_tokens"] = float(same)
    result["step_at_8"] = step_at(ours, src, 8, repeats * 5)
    result["step_at_64"] = step_at(ours, src, min(64, cfg.max_len - 1), repeats * 5)
    return result


# 3. App latency, through gradio_client, and 4. memory -----------------------------------------------------------------


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
    import app
    from gradio_client import Client

    timings: dict[str, list[float]] = {"run": [], "step": []}
    original = {name: getattr(app.Lab, name) for name in timings}

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
        setattr(app.Lab, name, timed(name))
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
            setattr(app.Lab, name, fn)
    result = {}
    for name, values in timings.items():
        values = values[1:]  # the first call of each warms up
        result[f"server_{name}_p50"] = 1000 * percentile(values, 0.5)
        result[f"server_{name}_p95"] = 1000 * percentile(values, 0.95)
    return result


def figures_bench(calls: int) -> dict[str, float]:
    """Figure building alone (in-process), and the JSON size of every figure for 20 output tokens."""
    from transformer import DecodingSession
    from transformer.hub import load_pretrained
    from transformer.viz import View, session_figures

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


# Report --------------------------------------------------------------------------------------------------------------


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
    return dict(
        users=users,
        requests=requests,
        failures=len(result.failures),
        mismatches=len(result.mismatches),
        p50=result.p50_ms,
        p95=result.p95_ms,
        sessions=sessions,
        rss_before=before,
        rss_after=after,
        rss_again=again,
        capacity=app.SESSION_CAPACITY,
    )


def machine() -> str:
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
        f"{torch.get_num_threads()} threads, Python {platform.python_version()}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny shapes and few repeats (a smoke run)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "RESULTS.md")
    args = parser.parse_args(argv)
    quick = args.quick
    repeats = 3 if quick else 15
    deen = TransformerConfig.from_dict(json.loads((REPO / "checkpoints" / "de-en" / "config.json").read_text()))
    base = TransformerConfig(
        src_vocab_size=deen.src_vocab_size,
        tgt_vocab_size=deen.tgt_vocab_size,
        d_model=512,
        n_heads=8,
        n_encoder_layers=6,
        n_decoder_layers=6,
        d_ff=2048,
        dropout=0.1,
    )
    configs = {"de-en (shipped)": deen, "base (512, 6+6)": base}
    if quick:
        configs = {
            "tiny": TransformerConfig(
                src_vocab_size=100,
                tgt_vocab_size=100,
                d_model=32,
                n_heads=4,
                n_encoder_layers=1,
                n_decoder_layers=1,
                d_ff=64,
                max_len=80,
            )
        }
    batch, length = (4, 8) if quick else (32, 32)
    rows = []

    def row(measure, ours, theirs, ratio_bar=None, note=""):
        rows.append((measure, ours, theirs, ratio_bar, note))

    for name, cfg in configs.items():
        t = training_step_bench(cfg, batch, length, repeats if not name.startswith("base") else max(3, repeats // 2))
        row(f"training step, {name}, weights off", t["ours"], t["torch"], 1.10)
        row(f"training step, {name}, weights on", t["ours_weights"], t["torch"], None)
    steps = 16 if quick else 64
    inf_cfg = configs[next(iter(configs))]
    threads = torch.get_num_threads()
    # The app decodes with one thread per request; small decoding steps also pay a thread pool's fork/join.
    for n_threads in sorted({1, threads}):
        torch.set_num_threads(n_threads)
        inf = inference_bench(inf_cfg, steps, repeats)
        tag = f"{n_threads} thread{'s' if n_threads > 1 else ''}"
        row(
            f"greedy {steps} tokens, {tag}: KV cache vs recompute",
            inf["cached"],
            inf["recompute"],
            0.5,
            "same tokens" if inf["same_tokens"] else "TOKENS DIFFER",
        )
        row(f"greedy {steps} tokens, {tag}: KV cache vs torch.nn.Transformer", inf["cached"], inf["torch"], None)
        row(f"greedy {steps} tokens, {tag}: recompute vs torch.nn.Transformer", inf["recompute"], inf["torch"], None)
        row(f"one cached step, {tag}: position 64 vs position 8", inf["step_at_64"], inf["step_at_8"], None)
    torch.set_num_threads(threads)

    app_rows = []
    if not quick:
        app = {**app_bench(calls=20), **server_bench(calls=21), **figures_bench(calls=20)}
        app_rows = [
            ("Run, 15-word sentence, server side (p50 / p95)", app["server_run_p50"], app["server_run_p95"], 400),
            ("one Step, server side (p50 / p95)", app["server_step_p50"], app["server_step_p95"], 100),
            ("Run, 15-word sentence, gradio_client round trip (p50 / p95)", app["run_p50"], app["run_p95"], None),
            ("one Step, gradio_client round trip (p50 / p95)", app["step_p50"], app["step_p95"], None),
            ("figure building alone, per Run (p50 / p95)", app["figures_p50"], app["figures_p95"], None),
        ]
        figures_kb, rss = app["figures_json_bytes_20"] / 1024, app["rss_peak_mb"]
        crowd = crowd_bench(users=32, requests=5, sessions=200)

    lines = [
        "# Benchmark results\n",
        f"Machine: {machine()}. Medians of {repeats} interleaved repeats "
        f"({max(3, repeats // 2)} for the base config){' (quick mode: tiny shapes)' if quick else ''}; "
        f"batch {batch} × {length} tokens for training.\n",
        "| measure | ours (ms) | reference (ms) | ratio | bar |",
        "|---|---|---|---|---|",
    ]
    for measure, ours, theirs, bar, note in rows:
        ratio = ours / theirs
        verdict = "" if bar is None else ("✓" if ratio <= bar else "✗") + f" ≤ {bar:.2f}"
        lines.append(f"| {measure} | {ours:.1f} | {theirs:.1f} | {ratio:.2f} | {verdict} {note} |".replace("  ", " "))
    if app_rows:
        lines += ["", "| app measure | p50 (ms) | p95 (ms) | bar |", "|---|---|---|---|"]
        for measure, p50, p95, bar in app_rows:
            verdict = "" if bar is None else ("✓" if p95 <= bar else "✗") + f" ≤ {bar} ms"
            lines.append(f"| {measure} | {p50:.0f} | {p95:.0f} | {verdict} |")
        lines += [
            "",
            f"- Figures' JSON for 20 output tokens, all layers and heads: {figures_kb:.0f} KB "
            f"({'✓' if figures_kb <= 1024 else '✗'} ≤ 1 MB).",
            f"- Peak memory of the app process with both models loaded: {app['rss_loaded_mb']:.0f} MB at start, "
            f"{rss:.0f} MB after the calls above.",
            f"- {crowd['users']} gradio_client users at once, {crowd['requests']} requests each (Run, Step and Back "
            f"on both models; `benchmarks/load.py`): {crowd['failures']} failures, {crowd['mismatches']} answers "
            f"that differ from the same requests made alone; latency p50 {crowd['p50']:.0f} ms, p95 "
            f"{crowd['p95']:.0f} ms (queued: 2 requests decode at once).",
            f"- App memory (RSS) over new sessions, each a Run and a Step: {crowd['rss_before']:.0f} MB after 10, "
            f"{crowd['rss_after']:.0f} MB after {crowd['sessions']} more, {crowd['rss_again']:.0f} MB after "
            f"{crowd['sessions']} more again (at most {crowd['capacity']} sessions are kept).",
        ]
    report = "\n".join(lines) + "\n"
    print(report)
    if not quick:
        args.out.write_text(report, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
