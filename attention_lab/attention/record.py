"""The JSON record of what a DecodingSession saw: the app's export, and the /attention API's answer."""

from __future__ import annotations

import numpy as np

from transformer import DecodingSession, Seq2SeqTokenizer


def attention_record(session: DecodingSession, tokenizer: Seq2SeqTokenizer, model_name: str, decimals: int = 5) -> dict:
    """Everything the session recorded, as JSON-ready data: tokens, per-step top-k, and every head's weights."""

    def rounded(tensor) -> list:
        return np.round(tensor.numpy().astype(np.float64), decimals).tolist()

    return {
        "model": model_name,
        "source_tokens": tokenizer.tokens(session.src_ids),
        "output_tokens": tokenizer.tokens(session.tokens),
        "output_text": tokenizer.decode(session.tokens),
        "shapes": {
            "encoder": "[layer][head][query][key]",
            "decoder_self": "[layer][head][key <= step]",
            "cross": "[layer][head][source]",
        },
        "encoder": [rounded(w) for w in session.encoder_attention],
        "steps": [
            {
                "step": i + 1,
                "token": tokenizer.id_to_token(s.token),
                "probability": round(s.prob, decimals),
                "forced": s.forced,
                "top_k": [
                    {"token": tokenizer.id_to_token(t), "probability": round(p, decimals)}
                    for t, p in zip(s.top_ids, s.top_probs)
                ],
                "decoder_self": [rounded(w) for w in s.self_attention],
                "cross": [rounded(w) for w in s.cross_attention],
            }
            for i, s in enumerate(session.steps)
        ],
    }


def top_k_record(tokenizer, ids: list[int], probs: list[float]) -> list[dict]:
    return [{"token": tokenizer.id_to_token(t), "probability": round(p, 6)} for t, p in zip(ids, probs)]
