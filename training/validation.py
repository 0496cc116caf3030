"""Validation during training: loss and scores, the best checkpoint, and checkpoint averaging at the end."""

from __future__ import annotations

import json

import sacrebleu
import torch
import torch.nn.functional as F

from transformer import Seq2SeqPipeline, Transformer
from transformer.tokenizer import Tokenizer

from .batching import make_batches
from .log import report
from .state import TrainState, save_best, save_state


@torch.no_grad()
def evaluate(model: Transformer, tokenizer: Tokenizer, task: str, pairs, max_len: int, device) -> dict[str, float]:
    """Validation loss, plus BLEU/chrF (translation) or exact match (reversal) with greedy decoding.

    Leaves the model in eval mode; the training loop switches it back.
    """
    model.eval()
    total_loss, total_tokens = 0.0, 0
    for src, tgt_in, labels in make_batches(pairs, tokenizer, 4000, max_len, seed=0):
        src, tgt_in, labels = src.to(device), tgt_in.to(device), labels.to(device)
        logits = model(src, tgt_in).logits
        loss = F.cross_entropy(logits.transpose(1, 2), labels, ignore_index=tokenizer.pad_id, reduction="sum")
        total_loss += loss.item()
        total_tokens += (labels != tokenizer.pad_id).sum().item()
    hypotheses = Seq2SeqPipeline(model, tokenizer, name=task).generate([s for s, _ in pairs])
    references = [t for _, t in pairs]
    metrics = {"valid_loss": total_loss / max(total_tokens, 1)}
    if task == "reverse":
        metrics["exact_match"] = sum(h == r for h, r in zip(hypotheses, references)) / len(pairs)
    else:
        metrics["bleu"] = sacrebleu.corpus_bleu(hypotheses, [references]).score
        metrics["chrf"] = sacrebleu.corpus_chrf(hypotheses, [references]).score
    return metrics


def selection_metric(task: str, metrics: dict[str, float]) -> float:
    """The score that picks the best checkpoint: exact match for reversal, BLEU for translation."""
    return metrics["exact_match"] if task == "reverse" else metrics["bleu"]


def evaluate_state(state: TrainState) -> dict[str, float]:
    """The current weights' validation metrics, with the training loss of the last updates beside them."""
    metrics = evaluate(state.model, state.tokenizer, state.args.task, state.valid, state.preset.max_len, state.device)
    return {"train_loss": state.train_loss(), **metrics}


def validate(state: TrainState) -> None:
    """Score the current weights; keep them for averaging, save them to --out if they are the best, save the run."""
    progress = state.progress
    metrics = evaluate_state(state)
    metrics.update(step=progress.step, epoch=progress.epoch, minutes=round(progress.seconds / 60, 2))
    progress.history.append(metrics)
    report(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items()}))
    state.recent_weights.append({k: v.detach().clone() for k, v in state.model.state_dict().items()})
    del state.recent_weights[: -max(state.preset.average_last, 1)]
    score = selection_metric(state.args.task, metrics)
    if score > progress.best:
        progress.best, progress.best_metrics = score, metrics
        save_best(state)
        report(f"new best ({score:.2f}), saved to {state.args.out}")
    save_state(state)


def average_and_keep_if_better(state: TrainState) -> None:
    """Checkpoint averaging: the mean of the last validated weights often beats each of them."""
    model, recent = state.model, state.recent_weights
    current = {k: v.clone() for k, v in model.state_dict().items()}
    averaged = {k: torch.stack([w[k].float() for w in recent]).mean(0).to(v.dtype) for k, v in current.items()}
    model.load_state_dict(averaged)
    metrics = evaluate_state(state)
    score = selection_metric(state.args.task, metrics)
    report(f"average of the last {len(recent)} validations: {json.dumps(metrics)}")
    state.progress.history.append({**metrics, "averaged": len(recent)})
    if score > state.progress.best:
        state.progress.best = score
        state.progress.best_metrics = {**metrics, "step": state.progress.step}
        save_best(state)
        report(f"averaged weights are the new best ({score:.2f}), saved to {state.args.out}")
    else:
        model.load_state_dict(current)
