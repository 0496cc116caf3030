"""Train a model from a task preset.

    python -m transformer.train --task reverse --out checkpoints/reverse      # minutes on a laptop CPU
    python -m transformer.train --task de-en --out checkpoints/de-en          # hours on CPU, minutes on a GPU
    torchrun --nproc_per_node 2 -m transformer.train --task de-en ...         # the same, data-parallel

The best checkpoint (by validation BLEU, or exact match for reversal) is written to --out as config.json,
model.safetensors and tokenizer.json. The latest state (weights, optimizer, progress) is kept in --run-dir so that
`--resume` continues where a run stopped.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import logging
import math
import os
import random
import sys
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import sacrebleu
import torch
import torch.distributed as dist
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from .config import TransformerConfig
from .data import REVERSAL_ALPHABET, ding_split, libreoffice_pairs, read_tsv, reversal_pairs, token_batches, write_tsv
from .hub import Seq2SeqPipeline
from .model import Transformer
from .tokenizer import Tokenizer

logger = logging.getLogger(__name__)


@dataclass
class Preset:
    """A task's model shape and training recipe; every field can be overridden on the command line."""

    d_model: int
    n_heads: int
    n_layers: int  # encoder and decoder each
    d_ff: int
    dropout: float
    max_len: int
    lr: float  # peak learning rate, reached after `warmup` steps, then decaying as 1/sqrt(step)
    warmup: int
    batch_tokens: int  # padded source or target tokens per batch (per process)
    epochs: int
    eval_every: int  # steps between validations
    label_smoothing: float = 0.1
    word_dropout: float = 0.0  # probability of replacing a source token by <unk> while training
    vocab_size: int = 0  # BPE vocabulary (joint German-English); 0 for the character vocabulary
    train_size: int = 0  # fresh random examples per epoch (reversal only)
    weight_decay: float = 0.01
    average_last: int = 1  # average the weights of the last N validations at the end
    phrases_per_epoch: int = 0  # dictionary word/phrase pairs sampled afresh each epoch (translation only)
    libreoffice_per_epoch: int = 0  # LibreOffice help sentence pairs sampled afresh each epoch (translation only)
    anneal_steps: int = 0  # decay the learning rate linearly to zero over the last N steps before --max-steps
    # In-domain finish: over the last N steps before --max-steps each epoch is the Ding sentences with fewer phrases
    # and no help pages, so that the end of training is spent on the kind of sentence the test split holds.
    focus_steps: int = 0
    focus_phrases_per_epoch: int = 0
    # By then the model underfits even its training sentences, so the finish may also train with less regularization.
    focus_dropout: float | None = None  # None: keep `dropout`
    focus_word_dropout: float | None = None  # None: keep `word_dropout`
    # Sequence-level self-distillation (Kim & Rush 2016): over the last N steps before --max-steps the Ding training
    # sentences' targets are the model's own beam-4 translations, made once when the window opens, so that greedy
    # decoding learns to follow beam search. Of the beam's 4 best, the one nearest the reference is kept (their
    # sequence-level interpolation), so that the model is not taught its own mistakes where the beam had it right.
    distill_steps: int = 0


PRESETS = {
    "reverse": Preset(
        d_model=128,
        n_heads=4,
        n_layers=2,
        d_ff=512,
        dropout=0.1,
        max_len=40,
        lr=1e-3,
        warmup=400,
        batch_tokens=3000,
        epochs=20,
        eval_every=500,
        train_size=50_000,
        average_last=3,
    ),
    # Low-resource recipe (Sennrich & Zhang 2019): a small joint BPE vocabulary, strong dropout and word dropout,
    # small batches (many updates per epoch), pre-LN for a high learning rate, checkpoint averaging.
    "de-en": Preset(
        d_model=256,
        n_heads=4,
        n_layers=3,
        d_ff=1024,
        dropout=0.3,
        max_len=128,
        lr=1e-3,
        warmup=1000,
        batch_tokens=1500,
        epochs=200,
        eval_every=600,
        word_dropout=0.1,
        vocab_size=4000,
        average_last=4,
        phrases_per_epoch=80_000,
        libreoffice_per_epoch=8_000,
        focus_phrases_per_epoch=20_000,
        focus_dropout=0.1,
        focus_word_dropout=0.0,
    ),
}


# Data ----------------------------------------------------------------------------------------------------------------


def in_window(step: int, steps: int, max_steps: int) -> bool:
    """Whether `step` lies in the last `steps` steps before `max_steps` (the in-domain finish, or distillation)."""
    return bool(steps and max_steps and step >= max_steps - steps)


def regularization(preset: Preset, focus: bool) -> tuple[float, float]:
    """(dropout, source word dropout) for the current stage: the in-domain finish may set its own."""
    dropout, word_p = preset.dropout, preset.word_dropout
    if focus:
        dropout = dropout if preset.focus_dropout is None else preset.focus_dropout
        word_p = word_p if preset.focus_word_dropout is None else preset.focus_word_dropout
    return dropout, word_p


def load_task_data(
    task: str,
    epoch: int,
    preset: Preset,
    seed: int,
    focus: bool = False,
    sentences: list[tuple[str, str]] | None = None,
) -> list[tuple[str, str]]:
    """One epoch's training pairs; `sentences` replaces the Ding training sentences (their distilled version)."""
    if task == "reverse":  # a fresh sample each epoch: the task has unlimited data
        return reversal_pairs(preset.train_size, 1, 24, seed=seed * 1000 + epoch)
    pairs = sentences or ding_split("train")
    rng = random.Random(seed * 1000 + epoch)
    n_phrases = preset.focus_phrases_per_epoch if focus else preset.phrases_per_epoch
    if n_phrases:  # the dictionary's words and phrases: vocabulary the 17k sentences lack
        phrases = ding_split("phrases")
        pairs = pairs + rng.sample(phrases, min(n_phrases, len(phrases)))
    if preset.libreoffice_per_epoch and not focus:  # another domain's sentences: grammar the 17k sentences lack
        extra = libreoffice_pairs()
        pairs = pairs + rng.sample(extra, min(preset.libreoffice_per_epoch, len(extra)))
    return pairs


def distilled_sentences(
    model: Transformer, tokenizer: Tokenizer, run_dir: Path, is_main: bool, distributed: bool, start: int
) -> list[tuple[str, str]]:
    """The Ding training sentences with targets from the model's own beam search, for the distillation window that
    opens at step `start`. They are made once, by rank 0, and kept in the run dir, so that --resume goes on with the
    same targets; a later window (a resumed run with a later --max-steps) makes its own."""
    path = run_dir / f"distilled-{start}.tsv"
    if is_main and not path.is_file():
        pairs = sorted(ding_split("train"), key=lambda pair: len(pair[0]))  # similar lengths batch faster
        report(f"self-distillation: translating the {len(pairs):,} training sentences with beam 4")
        candidates = Seq2SeqPipeline(model, tokenizer).candidates([de for de, _ in pairs], beam_size=4)
        run_dir.mkdir(parents=True, exist_ok=True)
        write_tsv([(de, nearest(hyps[:4], en)) for (de, en), hyps in zip(pairs, candidates)], path)
    if distributed:
        dist.barrier()
    return read_tsv(path)


def nearest(candidates: list[str], reference: str) -> str:
    """The candidate with the highest sentence BLEU against the reference, the better-ranked one on ties; the reference
    itself when no candidate has any words. Curly and straight apostrophes count as the same."""
    candidates = [c for c in candidates if c.strip()]
    if not candidates:
        return reference
    bleu = sacrebleu.BLEU(effective_order=True)
    straight = reference.replace("’", "'")
    return max(candidates, key=lambda c: bleu.sentence_score(c.replace("’", "'"), [straight]).score)


def validation_data(task: str) -> list[tuple[str, str]]:
    if task == "reverse":
        return reversal_pairs(500, 1, 24, seed=999_999)
    return ding_split("valid")


def build_tokenizer(task: str, preset: Preset) -> Tokenizer:
    if task == "reverse":
        return Tokenizer.characters(REVERSAL_ALPHABET)
    pairs = ding_split("train")
    return Tokenizer.train_bpe([text for pair in pairs for text in pair], preset.vocab_size)


def make_batches(pairs, tokenizer: Tokenizer, max_tokens: int, max_len: int, seed: int):
    """Encoded, length-bucketed (src, decoder input, labels) tensors; pairs longer than max_len are skipped."""
    encoded = [(tokenizer.encode(s), tokenizer.encode_target(t)) for s, t in pairs]
    encoded = [(s, t) for s, t in encoded if len(s) <= max_len and len(t) - 1 <= max_len]
    lengths = [max(len(s), len(t) - 1) for s, t in encoded]
    for indices in token_batches(lengths, max_tokens, shuffle=True, seed=seed):
        yield collate([encoded[i] for i in indices], tokenizer.pad_id)


def collate(examples, pad_id: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    src_width = max(len(s) for s, _ in examples)
    tgt_width = max(len(t) for _, t in examples)
    src = torch.full((len(examples), src_width), pad_id, dtype=torch.long)
    tgt = torch.full((len(examples), tgt_width), pad_id, dtype=torch.long)
    for i, (s, t) in enumerate(examples):
        src[i, : len(s)] = torch.tensor(s)
        tgt[i, : len(t)] = torch.tensor(t)
    return src, tgt[:, :-1], tgt[:, 1:]


def word_dropout(src: torch.Tensor, p: float, unk_id: int, pad_id: int, eos_id: int) -> torch.Tensor:
    if p <= 0:
        return src
    drop = (torch.rand(src.shape) < p) & (src != pad_id) & (src != eos_id)
    return src.masked_fill(drop, unk_id)


# Evaluation ----------------------------------------------------------------------------------------------------------


@torch.no_grad()
def evaluate(model: Transformer, tokenizer: Tokenizer, task: str, pairs, preset: Preset, device) -> dict[str, float]:
    """Validation loss, plus BLEU/chrF (translation) or exact match (reversal) with greedy decoding.

    Leaves the model in eval mode; the training loop switches it back.
    """
    model.eval()
    total_loss, total_tokens = 0.0, 0
    for src, tgt_in, labels in make_batches(pairs, tokenizer, 4000, preset.max_len, seed=0):
        src, tgt_in, labels = src.to(device), tgt_in.to(device), labels.to(device)
        logits = model(src, tgt_in).logits
        total_loss += F.cross_entropy(
            logits.transpose(1, 2), labels, ignore_index=tokenizer.pad_id, reduction="sum"
        ).item()
        total_tokens += (labels != tokenizer.pad_id).sum().item()
    pipeline = Seq2SeqPipeline(model, tokenizer, name=task)
    hypotheses = pipeline.generate([s for s, _ in pairs])
    references = [t for _, t in pairs]
    metrics = {"valid_loss": total_loss / max(total_tokens, 1)}
    if task == "reverse":
        metrics["exact_match"] = sum(h == r for h, r in zip(hypotheses, references)) / len(pairs)
    else:
        metrics["bleu"] = sacrebleu.corpus_bleu(hypotheses, [references]).score
        metrics["chrf"] = sacrebleu.corpus_chrf(hypotheses, [references]).score
    return metrics


def selection_metric(task: str, metrics: dict[str, float]) -> float:
    return metrics["exact_match"] if task == "reverse" else metrics["bleu"]


# Training state ------------------------------------------------------------------------------------------------------


@dataclass
class Progress:
    step: int = 0
    epoch: int = 0
    batch_in_epoch: int = 0  # batches of the current epoch already trained on
    best: float = -math.inf
    seconds: float = 0.0
    history: list[dict] = field(default_factory=list)


def learning_rate(step: int, preset: Preset, max_steps: int = 0) -> float:
    """Linear warm-up to preset.lr, then inverse square-root decay (Vaswani et al. 2017); with anneal_steps and
    max_steps, a linear decay to zero over the last anneal_steps steps (a short final cool-down lowers the loss)."""
    step = max(step, 1)
    lr = preset.lr * min(step / preset.warmup, math.sqrt(preset.warmup / step))
    if preset.anneal_steps and max_steps:
        lr *= min(1.0, max(max_steps - step + 1, 0) / preset.anneal_steps)
    return lr


def save_state(run_dir: Path, model: Transformer, tokenizer: Tokenizer, optimizer, progress: Progress, args) -> None:
    """Everything --resume needs, without pickle: weights and optimizer tensors as safetensors, the rest as JSON."""
    run_dir.mkdir(parents=True, exist_ok=True)
    Seq2SeqPipeline(model, tokenizer).save_pretrained(run_dir / "last")
    state = optimizer.state_dict()
    tensors = {
        f"{i}.{name}": value.contiguous() for i, slots in state["state"].items() for name, value in slots.items()
    }
    save_file(tensors, str(run_dir / "optimizer.safetensors"))
    meta = {"progress": progress.__dict__, "param_groups": state["param_groups"], "args": vars(args)}
    (run_dir / "state.json").write_text(json.dumps(meta, indent=1, default=str))


def load_state(run_dir: Path, model: Transformer, optimizer) -> Progress:
    from .checkpoint import load_weights

    load_weights(model, run_dir / "last")
    meta = json.loads((run_dir / "state.json").read_text())
    tensors = load_file(str(run_dir / "optimizer.safetensors"))
    slots: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in tensors.items():
        index, name = key.split(".", 1)
        slots.setdefault(int(index), {})[name] = value
    optimizer.load_state_dict({"state": slots, "param_groups": meta["param_groups"]})
    return Progress(**meta["progress"])


# The loop ------------------------------------------------------------------------------------------------------------


def train(args: argparse.Namespace) -> Progress:
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if distributed:
        # Rank 0 validates alone while the others wait at a barrier: allow for a slow validation.
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo", timeout=datetime.timedelta(hours=2))
        if device.type == "cuda":
            device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
            torch.cuda.set_device(device)
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    is_main = rank == 0
    if args.threads:
        torch.set_num_threads(args.threads)

    preset = dataclasses.replace(PRESETS[args.task])  # a copy: overrides must not leak into the shared presets
    for name in (
        "lr",
        "warmup",
        "batch_tokens",
        "epochs",
        "eval_every",
        "dropout",
        "d_model",
        "n_layers",
        "d_ff",
        "n_heads",
        "vocab_size",
        "word_dropout",
        "average_last",
        "train_size",
        "phrases_per_epoch",
        "libreoffice_per_epoch",
        "anneal_steps",
        "focus_steps",
        "focus_phrases_per_epoch",
        "focus_dropout",
        "focus_word_dropout",
        "distill_steps",
    ):
        if getattr(args, name, None) is not None:
            setattr(preset, name, getattr(args, name))
    random.seed(args.seed)
    torch.manual_seed(args.seed)  # same seed on every rank: identical initial weights

    run_dir = Path(args.run_dir or f"runs/{args.task}")
    resume_dir = Path(args.resume) if args.resume else None
    if resume_dir:
        tokenizer = Tokenizer.load(resume_dir / "last" / "tokenizer.json")
    else:
        # Rank 0 extracts the corpus and learns the vocabulary; the other ranks wait and load exactly that.
        shared_tokenizer = run_dir / "tokenizer.json"
        if is_main:
            tokenizer = build_tokenizer(args.task, preset)
            run_dir.mkdir(parents=True, exist_ok=True)
            tokenizer.save(shared_tokenizer)
        if distributed:
            dist.barrier()
        if not is_main:
            tokenizer = Tokenizer.load(shared_tokenizer)
    vocab = tokenizer.vocab_size
    config = TransformerConfig(
        src_vocab_size=vocab,
        tgt_vocab_size=vocab,
        d_model=preset.d_model,
        n_heads=preset.n_heads,
        n_encoder_layers=preset.n_layers,
        n_decoder_layers=preset.n_layers,
        d_ff=preset.d_ff,
        dropout=preset.dropout,
        max_len=preset.max_len,
        pad_id=tokenizer.pad_id,
        bos_id=tokenizer.bos_id,
        eos_id=tokenizer.eos_id,
        norm_first=True,
        tie_output_embeddings=True,
        share_embeddings=True,
    )
    model = Transformer(config).to(device)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=preset.lr, betas=(0.9, 0.98), eps=1e-9, weight_decay=preset.weight_decay
    )
    progress = load_state(resume_dir, model, optimizer) if resume_dir else Progress()
    if args.reset_best:  # a new stage, judged on its own validations
        progress.best = -math.inf
    wrapped = DistributedDataParallel(model) if distributed else model
    valid = validation_data(args.task)
    snapshots: list[dict[str, torch.Tensor]] = []  # the last few validated weights, for averaging
    if is_main:
        n_params = sum(p.numel() for p in model.parameters())
        logger.info(
            "%s: %.2fM parameters, vocabulary %d, %d process(es) on %s", args.task, n_params / 1e6, vocab, world, device
        )

    # bfloat16 autocast: matmuls in bf16 (about 1.6x faster on a CPU with AVX512-BF16), weights and loss in fp32.
    autocast = torch.autocast(device.type, dtype=torch.bfloat16) if args.bf16 else nullcontext()
    started = time.time() - progress.seconds
    stop = False
    distilled = None
    while progress.epoch < preset.epochs and not stop:
        focus = in_window(progress.step, preset.focus_steps, args.max_steps)
        distill = args.task != "reverse" and in_window(progress.step, preset.distill_steps, args.max_steps)
        if distill and distilled is None:
            distilled = distilled_sentences(
                model, tokenizer, run_dir, is_main, distributed, start=args.max_steps - preset.distill_steps
            )
        pairs = load_task_data(args.task, progress.epoch, preset, args.seed, focus, distilled if distill else None)
        dropout, word_p = regularization(preset, focus)
        model.set_dropout(dropout)
        batches = list(
            make_batches(pairs, tokenizer, preset.batch_tokens, preset.max_len, seed=args.seed * 1000 + progress.epoch)
        )
        per_rank = len(batches) // world  # equal counts on every rank, so no process waits for a missing step
        mine = batches[rank::world][:per_rank]
        bar = tqdm(
            total=per_rank,
            initial=progress.batch_in_epoch,
            disable=not is_main or args.quiet,
            desc=f"epoch {progress.epoch + 1}/{preset.epochs}",
            dynamic_ncols=True,
            mininterval=2,
        )
        tokens_seen, window_start = 0, time.time()
        for src, tgt_in, labels in mine[progress.batch_in_epoch :]:
            src = word_dropout(src, word_p, tokenizer.unk_id, tokenizer.pad_id, tokenizer.eos_id)
            src, tgt_in, labels = src.to(device), tgt_in.to(device), labels.to(device)
            lr = learning_rate(progress.step + 1, preset, args.max_steps)
            for group in optimizer.param_groups:
                group["lr"] = lr
            with autocast:
                logits = wrapped(src, tgt_in).logits
            loss = F.cross_entropy(
                logits.float().transpose(1, 2),
                labels,
                ignore_index=tokenizer.pad_id,
                label_smoothing=preset.label_smoothing,
            )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            progress.step += 1
            progress.batch_in_epoch += 1
            tokens_seen += int((labels != tokenizer.pad_id).sum()) * world
            bar.update(1)
            tok_s = tokens_seen / max(time.time() - window_start, 1e-9)
            bar.set_postfix(loss=f"{loss.item():.3f}", lr=f"{lr:.1e}", tok_s=f"{tok_s:.0f}")
            if args.quiet and is_main and progress.step % 100 == 0:  # a log line instead of the bar
                logger.info(
                    "step %d epoch %d loss %.3f lr %.1e %.0f tok/s",
                    progress.step,
                    progress.epoch + 1,
                    loss.item(),
                    lr,
                    tok_s,
                )
            last_batch = progress.batch_in_epoch == per_rank and progress.epoch == preset.epochs - 1
            out_of_time = args.time_limit and (time.time() - started) / 60 >= args.time_limit
            if distributed:  # every rank must agree to stop, or the next all-reduce waits forever
                flag = torch.tensor([float(bool(out_of_time))], device=device)
                dist.all_reduce(flag)
                out_of_time = flag.item() > 0
            if args.max_steps and progress.step >= args.max_steps:
                out_of_time = True
            if progress.step % preset.eval_every == 0 or last_batch or out_of_time:
                progress.seconds = time.time() - started
                if is_main:
                    validate(args, model, tokenizer, preset, valid, device, progress, snapshots, optimizer, run_dir)
                model.train()  # validation ran in eval mode; dropout must come back on
                if distributed:
                    dist.barrier()
            if out_of_time:
                stop = True
                break
            if (
                not focus
                and in_window(progress.step, preset.focus_steps, args.max_steps)
                or not distill
                and in_window(progress.step, preset.distill_steps, args.max_steps)
            ):
                break  # a window of the finish opens now, with a fresh epoch of its own data
        bar.close()
        if not stop:
            progress.epoch += 1
            progress.batch_in_epoch = 0

    if is_main and preset.average_last > 1 and len(snapshots) > 1:
        average_and_keep_if_better(args, model, tokenizer, preset, valid, device, progress, snapshots)
    if distributed:
        dist.barrier()
        dist.destroy_process_group()
    return progress


def report(message: str) -> None:
    tqdm.write(message, file=sys.stderr)  # stderr is unbuffered, so a log file shows it at once


def validate(args, model, tokenizer, preset, valid, device, progress, snapshots, optimizer, run_dir) -> None:
    metrics = evaluate(model, tokenizer, args.task, valid, preset, device)
    metrics.update(step=progress.step, epoch=progress.epoch, minutes=round(progress.seconds / 60, 2))
    progress.history.append(metrics)
    report(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items()}))
    snapshots.append({k: v.detach().clone() for k, v in model.state_dict().items()})
    del snapshots[: -max(preset.average_last, 1)]
    score = selection_metric(args.task, metrics)
    if score > progress.best:
        progress.best = score
        Seq2SeqPipeline(model, tokenizer).save_pretrained(args.out)
        report(f"new best ({score:.2f}), saved to {args.out}")
    save_state(run_dir, model, tokenizer, optimizer, progress, args)


def average_and_keep_if_better(args, model, tokenizer, preset, valid, device, progress, snapshots) -> None:
    """Checkpoint averaging: the mean of the last validated weights often beats each of them."""
    current = {k: v.clone() for k, v in model.state_dict().items()}
    averaged = {k: torch.stack([s[k].float() for s in snapshots]).mean(0).to(v.dtype) for k, v in current.items()}
    model.load_state_dict(averaged)
    metrics = evaluate(model, tokenizer, args.task, valid, preset, device)
    score = selection_metric(args.task, metrics)
    report(f"average of the last {len(snapshots)} validations: {json.dumps(metrics)}")
    progress.history.append({**metrics, "averaged": len(snapshots)})
    if score > progress.best:
        progress.best = score
        Seq2SeqPipeline(model, tokenizer).save_pretrained(args.out)
        report(f"averaged weights are the new best ({score:.2f}), saved to {args.out}")
    else:
        model.load_state_dict(current)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m transformer.train", description="Train a model from a task preset (see module docstring)."
    )
    parser.add_argument("--task", choices=sorted(PRESETS), required=True)
    parser.add_argument("--out", type=Path, help="where the best checkpoint goes (default checkpoints/TASK)")
    parser.add_argument("--run-dir", type=Path, help="where the resumable state goes (default runs/TASK)")
    parser.add_argument("--resume", type=Path, help="a run dir to continue from")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: torch's choice)")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=0,
        help="stop once the run has trained this many minutes in all, counting resumed parts (0: none)",
    )
    parser.add_argument("--max-steps", type=int, default=0, help="stop after this many updates (0: no limit)")
    parser.add_argument(
        "--reset-best",
        action="store_true",
        help="with --resume: --out gets the best of this run's own validations, not only a new record",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--bf16", action="store_true", help="bfloat16 autocast for the forward pass")
    for name, kind in [
        ("lr", float),
        ("warmup", int),
        ("batch-tokens", int),
        ("epochs", int),
        ("eval-every", int),
        ("dropout", float),
        ("word-dropout", float),
        ("d-model", int),
        ("n-layers", int),
        ("d-ff", int),
        ("n-heads", int),
        ("vocab-size", int),
        ("average-last", int),
        ("train-size", int),
        ("phrases-per-epoch", int),
        ("libreoffice-per-epoch", int),
        ("anneal-steps", int),
        ("focus-steps", int),
        ("focus-phrases-per-epoch", int),
        ("focus-dropout", float),
        ("focus-word-dropout", float),
        ("distill-steps", int),
    ]:
        parser.add_argument(f"--{name}", type=kind, help="override the preset")
    args = parser.parse_args(argv)
    if args.anneal_steps and not args.max_steps:
        parser.error("--anneal-steps counts back from --max-steps: give --max-steps too")
    if args.focus_steps and not args.max_steps:
        parser.error("--focus-steps counts back from --max-steps: give --max-steps too")
    if args.distill_steps and not args.max_steps:
        parser.error("--distill-steps counts back from --max-steps: give --max-steps too")
    if args.reset_best and not args.resume:
        parser.error("--reset-best applies to a resumed run: give --resume too")
    args.out = args.out or Path("checkpoints") / args.task
    return args


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args = parse_args(argv)
    try:
        progress = train(args)
    except FileNotFoundError as err:  # the Ding corpus is not installed
        print(err, file=sys.stderr)
        return 1
    if int(os.environ.get("RANK", "0")) == 0:
        print(f"done: {progress.step} steps in {progress.seconds / 60:.1f} min, best {progress.best:.3f} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
