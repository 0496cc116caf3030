"""From a decoding to the app's figures: which weights each view shows, in which units, under which labels.

A `Look` is how the user asked to see the weights (words or pieces, specials hidden or not, colour scale, focused
head, reading). A `Drawing` turns one decoding (its source, its steps) into any of the views at any step, so the app
builds only the figures it is about to send.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch

from transformer import DecodingSession, Seq2SeqTokenizer
from transformer.config import ModelConfig
from transformer.decoding import Step
from transformer.readings import rollout, value_weighted

from ..controls import FOCUS_MEAN, Controls
from . import figures
from .kinds import NAMES
from .units import Units, in_units, token_label

READINGS = {
    "weights": "Attention weights",
    "value": "Value-weighted ‖α·v·W_o‖",
    "rollout": "Rollout",
}


def focus_choices(config: ModelConfig) -> list[str]:
    """The Focus head choices for a model: the mean, then every (layer, head) of its deepest stack."""
    n_layers = max(config.n_encoder_layers, config.n_decoder_layers)
    return [FOCUS_MEAN, *(f"Layer {lay + 1} · Head {h + 1}" for lay in range(n_layers) for h in range(config.n_heads))]


@dataclass(frozen=True)
class Look:
    """How the user wants to see the weights."""

    words: bool = True  # subword pieces merged into words
    hide_specials: bool = False  # the model's special tokens dropped and every row renormalised
    scale: str = "linear"  # a key of figures.SCALES
    focus: tuple[int, int] | None = None  # (layer, head), 0-based; None: the mean of all heads
    reading: str = "weights"  # a key of READINGS

    @classmethod
    def of(cls, c: Controls) -> Look:
        """The view options the controls ask for; a focus such as "Layer 2 · Head 3" is (1, 2)."""
        found = re.fullmatch(r"Layer (\d+) · Head (\d+)", str(c.focus))
        focus = (int(found[1]) - 1, int(found[2]) - 1) if found and min(int(found[1]), int(found[2])) > 0 else None
        reading = c.reading if c.reading in READINGS else "weights"
        return cls(bool(c.words), bool(c.hide_specials), str(c.scale), focus, reading)

    @property
    def colour(self) -> figures.Scale:
        quantity = {"value": "value-weighted share", "rollout": "rollout share"}.get(self.reading, "weight")
        return figures.Scale(self.scale if self.scale in figures.SCALES else "linear", self.hide_specials, quantity)


@dataclass(frozen=True)
class Norms:
    """||v_j W_o^h|| per layer, head and key, from the session (what value-weighting multiplies by)."""

    encoder: np.ndarray  # (L, H, S)
    decoder_self: np.ndarray | None  # (L, H, P); None before the first step
    cross: np.ndarray | None  # (L, H, S); None before the first step

    @classmethod
    def of(cls, session: DecodingSession) -> Norms:
        self_norms, cross_norms = session.decoder_value_norms()
        stack = lambda ws: np.stack([w.numpy() for w in ws]) if ws else None
        return cls(stack(session.encoder_value_norms), stack(self_norms), stack(cross_norms))


def cross_pieces(steps: Sequence[Step], upto: int) -> np.ndarray:
    """Cross-attention (L, H, upto, S) of the first `upto` steps, one row per step."""
    return np.stack([np.stack([w.numpy() for w in s.cross_attention]) for s in steps[:upto]], axis=2)


def self_pieces(steps: Sequence[Step], upto: int) -> np.ndarray:
    """Decoder self-attention (L, H, upto, upto): row i covers positions 0..i, and is 0 beyond (the causal mask)."""
    first = steps[0].self_attention
    weights = np.zeros((len(first), first[0].shape[0], upto, upto), dtype=np.float32)
    for i, step in enumerate(steps[:upto]):
        for layer, row in enumerate(step.self_attention):
            weights[layer, :, i, : i + 1] = row.numpy()
    return weights


class Drawing:
    """The views of one decoding (the source, and the steps taken so far) as the user's Look asks for them.

    special_ids are the model's: those tokens are words of their own, and hidden with "Hide special tokens".
    """

    def __init__(
        self,
        tokenizer: Seq2SeqTokenizer,
        src_ids: list[int],
        encoder_attention,
        steps: Sequence[Step],
        look: Look,
        norms: Norms | None = None,
        special_ids: frozenset[int] = frozenset(),
    ):
        self.tokenizer, self.src_ids, self.steps, self.look = tokenizer, src_ids, list(steps), look
        self.norms = norms  # needed by the value-weighted reading; without them it draws the weights
        self.special_ids = special_ids
        self.output_ids = [s.token for s in self.steps]
        self.encoder_attention = encoder_attention

    @classmethod
    def of(cls, session: DecodingSession, tokenizer: Seq2SeqTokenizer, look: Look) -> Drawing:
        """The drawing of a session as it stands, with the value norms when the reading needs them."""
        norms = Norms.of(session) if look.reading == "value" else None
        special = session.model.special_ids
        return cls(tokenizer, session.src_ids, session.encoder_attention, session.steps, look, norms, special)

    # Units and weights -----------------------------------------------------------------------------------------------

    def read(self, kind: str, pieces: np.ndarray) -> np.ndarray:
        """Piece-level weights (L, H, Q, K) in the Look's reading: as they are, value-weighted (rows as shares), or
        rolled out ((L, 1, Q, K) for the self-attention kinds: one rollout per layer, heads averaged)."""
        reading = self.look.reading
        norms = getattr(self.norms, kind) if self.norms is not None else None
        if reading == "value" and norms is not None:
            norms = norms[:, :, : pieces.shape[-1]]
            weighted = value_weighted(torch.from_numpy(pieces), torch.from_numpy(norms)).numpy()
            total = weighted.sum(axis=-1, keepdims=True)
            return np.divide(weighted, total, out=np.zeros_like(weighted), where=total > 0)
        if reading == "rollout":
            if kind == "cross":  # through the encoder: from encoder states to the input tokens they mix
                through = rollout(list(self.encoder_attention))[-1].numpy()  # (S, S)
                return pieces @ through
            return np.stack([r.numpy() for r in rollout([torch.from_numpy(w) for w in pieces])])[:, None]
        return pieces

    def units(self, ids: Sequence[int]) -> Units:
        """Tokens as the Look draws them: words or pieces, the special ones by the model's ids."""
        special = [i in self.special_ids for i in ids]
        return Units.of(self.tokenizer.tokens(ids), special, self.look.words, self.tokenizer.is_character_level)

    def weights(self, kind: str, shown: int) -> tuple[np.ndarray, Units, Units, int | None]:
        """(L, H, Q, K) in the Look's units, the row and column units, and the row of step `shown` (1-based)."""
        if kind == "encoder":
            pieces = np.stack([w.numpy() for w in self.encoder_attention])
            rows = cols = self.units(self.src_ids)
            row_piece = None
        else:
            rows = self.units(self.output_ids[:shown])
            if kind == "cross":
                pieces, cols = cross_pieces(self.steps, shown), self.units(self.src_ids)
            else:
                inputs = [self.tokenizer.bos_id, *self.output_ids[: shown - 1]]
                pieces, cols = self_pieces(self.steps, shown), self.units(inputs)
            row_piece = shown - 1
        weights = in_units(self.read(kind, pieces), rows, cols, self.look.hide_specials)
        current = next((u for u, g in enumerate(rows.groups) if row_piece in g), None)
        if self.look.hide_specials:
            rows, kept = rows.without_specials()
            cols, _ = cols.without_specials()
            current = kept.index(current) if current in kept else None
        return weights, rows, cols, current

    def head(self, weights: np.ndarray, rolled: bool = False) -> tuple[np.ndarray, str]:
        """The focused head's (Q, K), or the mean of all heads, and its name. `rolled`: weights (L, 1, Q, K) are a
        rollout, one per layer: the focused head's layer is shown, or the last."""
        focus = self.look.focus
        if rolled:
            layer = min(focus[0], weights.shape[0] - 1) if focus is not None else weights.shape[0] - 1
            return weights[layer, 0], f"rollout through layer {layer + 1}"
        if focus is not None and focus[0] < weights.shape[0] and focus[1] < weights.shape[1]:
            return weights[focus], f"layer {focus[0] + 1}, head {focus[1] + 1}"
        return weights.mean(axis=(0, 1)), "mean of all heads"

    # Views -----------------------------------------------------------------------------------------------------------

    def view(self, kind: str, shown: int):
        """One kind of attention at step `shown`: every head as small multiples, and the focused head large."""
        if kind != "encoder" and not shown:
            return figures.empty_figure("Nothing written yet: Step or Run to decode.")
        weights, rows, cols, current = self.weights(kind, shown)
        if not len(rows) or not len(cols):
            return figures.empty_figure("Only special tokens here; untick “Hide special tokens” to see them.")
        rolled = self.look.reading == "rollout" and kind != "cross"
        chosen, name = self.head(weights, rolled)
        head = figures.Focus(chosen, rows.labels, cols.labels, name, NAMES[kind].axes)
        overview = "Every head: layers down, heads across"
        if rolled:
            overview = "Rollout through each layer (heads averaged): layers down"
        reading = f" ({READINGS[self.look.reading]})" if self.look.reading != "weights" else ""
        title = f"{overview}{reading}<br>Below: {name}"
        return figures.kind_figure(weights, head, self.look.colour, title, current, self.look.focus)

    def now(self, shown: int) -> str:
        """This step's cross-attention over the source words (the focused head, or the mean of all heads)."""
        if not shown:
            return '<div class="now-view">Step 0: nothing written yet. <b>Step</b> writes the first token.</div>'
        step = self.steps[shown - 1]
        cols = self.units(self.src_ids)
        one = Units(["·"], [[0]], [False])
        row = self.read("cross", cross_pieces(self.steps[shown - 1 :], 1))  # (L, H, 1, S): one query
        chosen, name = self.head(in_units(row, one, cols, self.look.hide_specials))
        chosen = chosen[0]
        if self.look.hide_specials:
            cols, _ = cols.without_specials()
        token = figures.escape_token(self.token_label(step.token))
        forced = " (forced by a what-if)" if step.forced else ""
        heading = f"Step {shown} wrote <b>{token}</b>{forced}, looking at the source like this ({name}):"
        note = "Darker words got more attention; hover a word for its weight."
        if self.look.hide_specials:
            note += " Special tokens hidden, weights renormalised."
        return figures.now_html(cols.labels, chosen, self.look.colour.unit(chosen), heading, note, cols.groups)

    def top_k(self, shown: int) -> dict | None:
        if not shown:
            return None
        step = self.steps[shown - 1]
        return figures.top_k([label for label, _ in self.candidates(shown)], step.top_probs)

    def token_label(self, token_id: int) -> str:
        return token_label(self.tokenizer, token_id, self.special_ids)

    def candidates(self, shown: int) -> list[tuple[str, int]]:
        """The what-if choices at step `shown`: (label as the top-k view shows it, token id), the likeliest first.

        The label carries the probability ("today  (0.04%)"): gr.Label would round it to a whole percent.
        """
        if not shown:
            return []
        step = self.steps[shown - 1]
        # a token the model may not write here (BART's forced first <s>: every other) has probability exactly 0
        possible = [(t, p) for t, p in zip(step.top_ids, step.top_probs) if p > 0.0]
        labels = [f"{self.token_label(t)}  ({figures.percent(p)})" for t, p in possible]
        return list(zip(figures.unique(labels), [t for t, _ in possible]))

    def compare(self, original: Sequence[Step], at: int):
        """The original decoding's cross-attention beside this one's (focused head), the forced step `at` outlined.

        Both sides are attention weights, whatever the reading: the decoding before kept no value norms, and its
        encoder (an ablation may have changed it) is not this one's."""
        plain = replace(self.look, reading="weights")
        other = Drawing(self.tokenizer, self.src_ids, None, original, plain, special_ids=self.special_ids)
        this = Drawing(self.tokenizer, self.src_ids, None, self.steps, plain, special_ids=self.special_ids)
        left, left_rows, cols, _ = other.weights("cross", len(original))
        right, right_rows, _, _ = this.weights("cross", len(self.steps))
        at_row = next((u for u, g in enumerate(self.units(self.output_ids).groups) if at - 1 in g), 0)
        return figures.side_by_side(
            other.head(left)[0], this.head(right)[0], (left_rows.labels, right_rows.labels), cols.labels, at_row
        )
