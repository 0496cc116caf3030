"""Train a model from a task preset.

    python -m training.train --task reverse --out checkpoints/reverse      # minutes on a laptop CPU
    python -m training.train --task de-en --out checkpoints/de-en          # hours on CPU, minutes on a GPU
    torchrun --nproc_per_node 2 -m training.train --task de-en ...         # the same, data-parallel

The best checkpoint (by validation BLEU, or exact match for reversal) is written to --out as config.json,
model.safetensors and tokenizer.json. The latest state (weights, optimizer, progress) is kept in --run-dir so that
`--resume` continues where a run stopped.
"""

from __future__ import annotations

import argparse
import datetime
import logging
import math
import os
import random
import sys
import time
from contextlib import nullcontext
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from transformer import Transformer, TransformerConfig
from transformer.tokenizer import Tokenizer

from . import snapshots
from .batching import Batch, make_batches, word_dropout
from .distill import distilled_sentences
from .log import report
from .presets import PRESETS, Preset, add_override_arguments, with_overrides
from .schedule import in_window, learning_rate, regularization
from .state import Progress, TrainState, load_state
from .tasks import build_tokenizer, load_task_data, validation_data
from .validation import average_and_keep_if_better, validate

logger = logging.getLogger(__name__)


# Setting up ----------------------------------------------------------------------------------------------------------


def init_distributed() -> tuple[torch.device, int, int]:
    """(device, rank, world size): CUDA when there is a GPU; a process group when torchrun started several."""
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return device, 0, 1
    # Rank 0 validates alone while the others wait at a barrier: allow for a slow validation.
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo", timeout=datetime.timedelta(hours=2))
    if device.type == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(device)
    return device, dist.get_rank(), dist.get_world_size()


def shared_tokenizer(args: argparse.Namespace, preset: Preset, run_dir: Path, rank: int, world: int) -> Tokenizer:
    """The resumed run's tokenizer, or a new one: rank 0 extracts the corpus and learns the vocabulary, and the other
    ranks wait and load exactly that."""
    if args.resume:
        return Tokenizer.load(Path(args.resume) / "last" / "tokenizer.json")
    path = run_dir / "tokenizer.json"
    if rank == 0:
        tokenizer = build_tokenizer(args.task, preset)
        run_dir.mkdir(parents=True, exist_ok=True)
        tokenizer.save(path)
    if world > 1:
        dist.barrier()
    return tokenizer if rank == 0 else Tokenizer.load(path)


def model_config(preset: Preset, tokenizer: Tokenizer) -> TransformerConfig:
    """Pre-LN, with one embedding matrix shared by source, target and output (the tokenizer is joint)."""
    return TransformerConfig(
        src_vocab_size=tokenizer.vocab_size,
        tgt_vocab_size=tokenizer.vocab_size,
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


def setup(args: argparse.Namespace) -> TrainState:
    device, rank, world = init_distributed()
    if args.threads:
        torch.set_num_threads(args.threads)
    preset = with_overrides(PRESETS[args.task], args)
    random.seed(args.seed)
    torch.manual_seed(args.seed)  # same seed on every rank: identical initial weights
    run_dir = Path(args.run_dir or f"runs/{args.task}")
    tokenizer = shared_tokenizer(args, preset, run_dir, rank, world)
    model = Transformer(model_config(preset, tokenizer)).to(device)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=preset.lr, betas=(0.9, 0.98), eps=1e-9, weight_decay=preset.weight_decay
    )
    progress = load_state(Path(args.resume), model, optimizer) if args.resume else Progress()
    if args.reset_best:  # a new stage, judged on its own validations
        progress.best = -math.inf
    state = TrainState(
        args=args,
        preset=preset,
        device=device,
        rank=rank,
        world=world,
        tokenizer=tokenizer,
        model=model,
        wrapped=DistributedDataParallel(model) if world > 1 else model,
        optimizer=optimizer,
        # bfloat16 autocast: matmuls in bf16 (about 1.6x faster on a CPU with AVX512-BF16), weights and loss in fp32.
        autocast=torch.autocast(device.type, dtype=torch.bfloat16) if args.bf16 else nullcontext(),
        progress=progress,
        run_dir=run_dir,
        valid=validation_data(args.task),
        started=time.time() - progress.seconds,
    )
    if state.is_main:
        n_params = sum(p.numel() for p in model.parameters()) / 1e6
        logger.info(
            "%s: %.2fM parameters, vocabulary %d, %d process(es) on %s",
            args.task,
            n_params,
            tokenizer.vocab_size,
            world,
            device,
        )
    return state


# The loop ------------------------------------------------------------------------------------------------------------


def epoch_batches(state: TrainState, focus: bool, distill: bool) -> list[Batch]:
    """This process's share of the current epoch's batches, equal in number on every rank so that no process waits
    for a missing step. The distillation targets are made when their window first opens."""
    args, preset, progress = state.args, state.preset, state.progress
    if distill and state.distilled is None:
        start = args.max_steps - preset.distill_steps
        state.distilled = distilled_sentences(
            state.model, state.tokenizer, state.run_dir, state.is_main, state.distributed, start
        )
    sentences = state.distilled if distill else None
    pairs = load_task_data(args.task, progress.epoch, preset, args.seed, focus, sentences)
    seed = args.seed * 1000 + progress.epoch
    batches = list(make_batches(pairs, state.tokenizer, preset.batch_tokens, preset.max_len, seed=seed))
    per_rank = len(batches) // state.world
    return batches[state.rank :: state.world][:per_rank]


def batch_loss(state: TrainState, batch: Batch, word_p: float) -> tuple[torch.Tensor, int]:
    """The label-smoothed loss of one batch, and the target tokens it counts (this process's)."""
    tokenizer = state.tokenizer
    src, tgt_in, labels = batch
    src = word_dropout(src, word_p, tokenizer.unk_id, tokenizer.pad_id, tokenizer.eos_id)
    src, tgt_in, labels = src.to(state.device), tgt_in.to(state.device), labels.to(state.device)
    with state.autocast:
        logits = state.wrapped(src, tgt_in).logits
    loss = F.cross_entropy(
        logits.float().transpose(1, 2),
        labels,
        ignore_index=tokenizer.pad_id,
        label_smoothing=state.preset.label_smoothing,
    )
    return loss, int((labels != tokenizer.pad_id).sum())


def train_step(state: TrainState, batch: Batch, word_p: float) -> tuple[float, float, int]:
    """One update; returns the loss, the learning rate and the target tokens it trained on (all ranks)."""
    lr = learning_rate(state.progress.step + 1, state.preset, state.args.max_steps)
    for group in state.optimizer.param_groups:
        group["lr"] = lr
    loss, tokens = batch_loss(state, batch, word_p)
    state.optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(state.model.parameters(), 1.0)
    state.optimizer.step()
    state.progress.step += 1
    state.progress.batch_in_epoch += 1
    state.losses.append(loss.item())
    return loss.item(), lr, tokens * state.world


def out_of_time(state: TrainState) -> bool:
    """--time-limit or --max-steps reached; every rank agrees, or the next all-reduce would wait forever."""
    args = state.args
    over = bool(args.time_limit and state.elapsed() / 60 >= args.time_limit)
    if state.distributed:
        flag = torch.tensor([float(over)], device=state.device)
        dist.all_reduce(flag)
        over = flag.item() > 0
    return over or bool(args.max_steps and state.progress.step >= args.max_steps)


def validate_on_main(state: TrainState) -> None:
    state.progress.seconds = state.elapsed()
    if state.is_main:
        validate(state)
    state.model.train()  # validation ran in eval mode; dropout must come back on
    if state.distributed:
        dist.barrier()


def snapshot_on_main(state: TrainState, train_loss: float | None = None) -> None:
    if state.is_main:
        snapshots.take(state, train_loss)
    state.model.train()
    if state.distributed:
        dist.barrier()


def plan_snapshots(state: TrainState, batches: list[Batch], word_p: float) -> None:
    """With --snapshots, once per process: when to take them (up to --max-steps, or the preset's epochs of batches
    like this one's; a resumed run with new limits gets a new plan), and the snapshot of the untrained model."""
    args, progress = state.args, state.progress
    if not args.snapshots or state.snapshot_steps:
        return
    total = args.max_steps or state.preset.epochs * len(batches)
    state.snapshot_steps = snapshots.plan(total, args.snapshots)
    if progress.step > 0:
        if state.is_main and not (args.out / snapshots.SNAPSHOTS_DIR).is_dir():
            report("--snapshots on a resumed run: there is no snapshot of the steps before this one")
        return
    with torch.no_grad(), torch.random.fork_rng():  # the run's random stream stays as it is without snapshots
        loss, _ = batch_loss(state, batches[0], word_p)
    snapshot_on_main(state, loss.item())


def run_epoch(state: TrainState) -> bool:
    """The current epoch, or what is left of it; True when training stops (time or step limit)."""
    args, preset, progress = state.args, state.preset, state.progress
    focus = in_window(progress.step, preset.focus_steps, args.max_steps)
    distill = args.task != "reverse" and in_window(progress.step, preset.distill_steps, args.max_steps)
    dropout, word_p = regularization(preset, focus)
    state.model.set_dropout(dropout)
    batches = epoch_batches(state, focus, distill)
    plan_snapshots(state, batches, word_p)
    bar = tqdm(
        total=len(batches),
        initial=progress.batch_in_epoch,
        disable=not state.is_main or args.quiet,
        desc=f"epoch {progress.epoch + 1}/{preset.epochs}",
        dynamic_ncols=True,
        mininterval=2,
    )
    tokens_seen, window_start = 0, time.time()
    for batch in batches[progress.batch_in_epoch :]:
        loss, lr, tokens = train_step(state, batch, word_p)
        tokens_seen += tokens
        tok_s = tokens_seen / max(time.time() - window_start, 1e-9)
        bar.update(1)
        bar.set_postfix(loss=f"{loss:.3f}", lr=f"{lr:.1e}", tok_s=f"{tok_s:.0f}")
        if args.quiet and state.is_main and progress.step % 100 == 0:  # a log line instead of the bar
            logger.info(
                "step %d epoch %d loss %.3f lr %.1e %.0f tok/s", progress.step, progress.epoch + 1, loss, lr, tok_s
            )
        if progress.step in state.snapshot_steps[:-1]:  # the last one is the checkpoint that training ends with
            snapshot_on_main(state)
        last_batch = progress.batch_in_epoch == len(batches) and progress.epoch == preset.epochs - 1
        stop = out_of_time(state)
        if progress.step % preset.eval_every == 0 or last_batch or stop:
            validate_on_main(state)
        if stop:
            bar.close()
            return True
        opens = (not focus and in_window(progress.step, preset.focus_steps, args.max_steps)) or (
            not distill and in_window(progress.step, preset.distill_steps, args.max_steps)
        )
        if opens:
            break  # a window of the finish opens now, with a fresh epoch of its own data
    bar.close()
    progress.epoch += 1
    progress.batch_in_epoch = 0
    return False


def train(args: argparse.Namespace) -> Progress:
    state = setup(args)
    if state.is_main:
        snapshots.start(state)
    while state.progress.epoch < state.preset.epochs:
        if run_epoch(state):
            break
    if state.is_main and state.preset.average_last > 1 and len(state.recent_weights) > 1:
        average_and_keep_if_better(state)
    if state.is_main:
        snapshots.finish(state)
    if state.distributed:
        dist.barrier()
        dist.destroy_process_group()
    return state.progress


# The command line ----------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m training.train", description=__doc__.split("\n")[0])
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
    parser.add_argument(
        "--snapshots",
        type=int,
        default=0,
        metavar="N",
        help="save N snapshots at roughly log-spaced steps, from step 0 to the final checkpoint, in OUT/snapshots "
        "(for the app's Training view)",
    )
    add_override_arguments(parser)
    args = parser.parse_args(argv)
    for window in ("anneal_steps", "focus_steps", "distill_steps"):
        if getattr(args, window) and not args.max_steps:
            flag = "--" + window.replace("_", "-")
            parser.error(f"{flag} counts back from --max-steps: give --max-steps too")
    if args.snapshots == 1 or args.snapshots < 0:
        parser.error("--snapshots needs at least 2: the untrained model and the final one")
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
