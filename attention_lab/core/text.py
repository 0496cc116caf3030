"""What the page says about reading the attention views: words and pieces, and the readings."""

from __future__ import annotations

WORDS_NOTE = (
    "Tokens are merged into words: the attention *to* a word is the sum over its pieces, and the attention *from* "
    "a word is the mean over its pieces, so every row still sums to 1. Untick it to see the subword pieces "
    "(“##” marks a piece that continues a word)."
)
READINGS_NOTE = (
    "**Attention weights** are the softmax weights α each head computed. "
    "**Value-weighted** scales each weight by the size of what that token's value adds through the head, "
    "‖α·v·W_o‖, then shows each row's shares (Kobayashi et al. 2020, "
    "[Attention is Not Only a Weight](https://aclanthology.org/2020.emnlp-main.574/)). "
    "**Rollout** multiplies self-attention through the layers, the residual counted as attention to itself, heads "
    "averaged; cross-attention is carried through the whole encoder rollout, so its columns are input tokens "
    "(Abnar & Zuidema 2020, [Quantifying Attention Flow in Transformers](https://aclanthology.org/2020.acl-main.385/))."
)
