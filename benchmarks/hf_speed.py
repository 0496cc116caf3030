"""A transformers model in the app against transformers' own generate(): time per decoded token, on CPU.

    python benchmarks/hf_speed.py            # opus-mt-de-en's shapes, random weights; prints the table
    python benchmarks/hf_speed.py --write    # and puts it into benchmarks/RESULTS.md
    python benchmarks/hf_speed.py --quick    # tiny shapes, few repeats: shows that the code runs

The model has Helsinki-NLP/opus-mt-de-en's shapes (Marian, 6+6 layers, d=512, 8 heads, feed-forward 2048, a 58,101
token vocabulary) and random weights. Every contender decodes the same source greedily to the same number of tokens
(eos is held off with min_length), alternating, at one thread (what the app gives a request) and at all threads.
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import sys
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import torch
from model_speed import alternate, median_ms
from results import put_block

from attention_lab.adapters.hf.calls import ATTENTION
from attention_lab.adapters.hf.model import HFSeq2Seq
from transformer import DecodingSession, greedy_decode

OPUS_MT_DE_EN = {  # Helsinki-NLP/opus-mt-de-en's config.json, without its weights
    "vocab_size": 58101,
    "d_model": 512,
    "encoder_layers": 6,
    "decoder_layers": 6,
    "encoder_attention_heads": 8,
    "decoder_attention_heads": 8,
    "encoder_ffn_dim": 2048,
    "decoder_ffn_dim": 2048,
    "max_position_embeddings": 512,
    "pad_token_id": 58100,
    "decoder_start_token_id": 58100,
    "eos_token_id": 0,
    "forced_eos_token_id": 0,
}
TINY = {**OPUS_MT_DE_EN, "vocab_size": 101, "pad_token_id": 100, "decoder_start_token_id": 100, "d_model": 32}
TINY.update(encoder_layers=1, decoder_layers=1, encoder_attention_heads=4, decoder_attention_heads=4)
TINY.update(encoder_ffn_dim=64, decoder_ffn_dim=64)


def models(shape: dict, new_tokens: int):
    """(the adapter over a random Marian model, transformers' default sdpa model with the same weights)."""
    from transformers import AutoModelForSeq2SeqLM, MarianConfig

    config = MarianConfig(**shape)
    torch.manual_seed(0)
    eager = AutoModelForSeq2SeqLM.from_config(config, attn_implementation=ATTENTION).eval()
    sdpa = AutoModelForSeq2SeqLM.from_config(copy.deepcopy(config), attn_implementation="sdpa").eval()
    sdpa.load_state_dict(eager.state_dict())
    for model in (eager, sdpa):
        model.generation_config.bad_words_ids = [[shape["pad_token_id"]]]
        model.generation_config.min_length = new_tokens + 1  # eos held off: every contender decodes new_tokens
    return HFSeq2Seq(eager, "opus-mt shapes"), sdpa


def bench(shape: dict, source_len: int, new_tokens: int, repeats: int) -> dict:
    adapter, sdpa = models(shape, new_tokens)
    generator = torch.Generator().manual_seed(1)
    src_ids = [*torch.randint(1, shape["pad_token_id"], (source_len - 1,), generator=generator).tolist(), 0]
    src = torch.tensor([src_ids])
    limits = {"max_new_tokens": new_tokens, "num_beams": 1, "do_sample": False}
    tokens: dict[str, list[int]] = {}

    def session():
        tokens["session"] = DecodingSession(adapter, src_ids, top_k=8, max_new_tokens=new_tokens).run()

    def generate_eager():
        tokens["generate"] = adapter.hf.generate(src, **limits)[0, 1:].tolist()

    contenders = {
        "session": session,  # the app's Run: every head's weights recorded at every step, top-k kept
        "greedy": lambda: greedy_decode(adapter, src, new_tokens),  # the same loop, nothing recorded
        "generate_eager": generate_eager,
        "generate_attentions": lambda: adapter.hf.generate(
            src, output_attentions=True, return_dict_in_generate=True, **limits
        ),
        "generate_sdpa": lambda: sdpa.generate(src, **limits),  # transformers' default attention
    }
    with torch.no_grad():
        times = alternate(contenders, repeats, warmup=1)
    result = {name: median_ms(t) / new_tokens for name, t in times.items()}
    result["same_tokens"] = tokens["session"] == tokens["generate"]
    return result


def table(results: dict[int, dict], shape_name: str, source_len: int, new_tokens: int, repeats: int) -> str:
    lines = [
        f"### A transformers model in the app ({shape_name}): time per decoded token\n",
        (
            f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}. "
            f"Greedy, a {source_len}-token source, {new_tokens} tokens, medians of {repeats} alternated repeats, "
            "ms per token. `python benchmarks/hf_speed.py --write`.\n"
        ),
        (
            "| threads | app session (weights recorded) | our loop, nothing recorded | generate, eager | "
            "generate, eager + output_attentions | generate, sdpa (transformers' default) | session ÷ generate eager | "
            "session ÷ generate sdpa | same tokens |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for threads, r in results.items():
        lines.append(
            f"| {threads} | {r['session']:.1f} | {r['greedy']:.1f} | {r['generate_eager']:.1f} | "
            f"{r['generate_attentions']:.1f} | {r['generate_sdpa']:.1f} | {r['session'] / r['generate_eager']:.2f} | "
            f"{r['session'] / r['generate_sdpa']:.2f} | {'yes' if r['same_tokens'] else 'NO'} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny shapes and few repeats (a smoke run)")
    parser.add_argument("--write", action="store_true", help="put the table into benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    shape, name = (TINY, "tiny Marian") if args.quick else (OPUS_MT_DE_EN, "opus-mt-de-en's shapes, random weights")
    source_len, new_tokens, repeats = (8, 8, 2) if args.quick else (24, 32, 7)
    threads = torch.get_num_threads()
    results = {}
    for n in sorted({1, threads}):
        torch.set_num_threads(n)
        results[n] = bench(shape, source_len, new_tokens, repeats)
    torch.set_num_threads(threads)
    report = table(results, name, source_len, new_tokens, repeats)
    print(report)
    if args.write and not args.quick:
        put_block("transformers", report)
    return 0 if all(r["same_tokens"] for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
