"""The DecoderLens (transformer.decoderlens): the decoder run on each encoder layer's output in place of the last one's.
The last layer writes the model's own greedy output; every layer writes what a greedy decoding by hand writes from that
layer's state through the encoder's closing norm; interventions are held; on our models (post-LN and pre-LN) and on
tiny transformers Marian, BART and T5 (pre-LN, with a closing norm) through the adapter."""

from __future__ import annotations

import pytest
import torch

from tests import hf_models
from tests.conftest import tiny_pipelines
from transformer import DecodingSession, Head, Interventions, Transformer, bundled, greedy_decode, load_pretrained
from transformer.decoderlens import decoderlens, reading_memories
from transformer.next_token import next_token_logits

TEXTS = ["Ich habe Hunger.", "Das ist ein Haus.", "<b>fett</b> & mehr"]
REVERSAL = ["stack42", "abcdef12", "x7y8z9"]  # the bundled reversal model's: lowercase letters and digits
LIMIT = 8
# ours: a tiny untrained post-LN model; reverse: the bundled, trained, pre-LN one (an untrained pre-LN model writes
# the same whatever it reads: each layer adds little to the stream)
MODELS = ["ours", "reverse", *(pytest.param(f, marks=pytest.mark.slow) for f in sorted(hf_models.FAMILIES))]


@pytest.fixture(scope="module", params=MODELS)
def pipeline(request, tmp_path_factory):
    """(a pipeline, the texts it is tested on)."""
    if request.param == "ours":
        return tiny_pipelines()["de-en"], TEXTS
    if request.param == "reverse":
        return load_pretrained(str(bundled("reverse"))), REVERSAL
    return hf_models.loaded(request.param, tmp_path_factory), TEXTS


def test_the_last_layer_writes_the_models_own_greedy_output(pipeline):
    pipeline, texts = pipeline
    model = pipeline.model
    for text in texts:
        ids = pipeline.tokenizer.encode(text)
        layers = decoderlens(model, ids, LIMIT)
        assert [out.layer for out in layers] == list(range(model.config.n_encoder_layers + 1))
        session = DecodingSession(model, ids, max_new_tokens=LIMIT)
        assert layers[-1].tokens == session.run(), text  # the end token too, when written
        assert layers[-1].tokens[: len(own := greedy_decode(model, torch.tensor([ids]), LIMIT)[0])] == own


def encoder_states(model, src: torch.Tensor) -> list[torch.Tensor]:
    """The embeddings entering the first encoder layer and each layer's output (L + 1 of (1, S, D)), computed without
    the library's hook points: our layers called one by one, or transformers' own output_hidden_states."""
    if isinstance(model, Transformer):
        mask = (src != model.config.pad_id)[:, None, None, :]
        x = model.add_positions(model.embed_source(src))
        states = [x]
        for layer in model.encoder.layers:
            x = layer(x, mask)[0]
            states.append(x)
        return states
    out = model.hf.get_encoder()(input_ids=src, output_hidden_states=True)
    # transformers' last hidden state comes after the closing norm (T5): the last layer's own is not among them
    return [*out.hidden_states[:-1], None]


def closing_norm(model):
    """What the encoder does to its last layer's output: our closing LayerNorm, T5's final_layer_norm, none for
    BART and Marian."""
    if isinstance(model, Transformer):
        return model.encoder.norm
    encoder = model.hf.get_encoder()
    found = getattr(encoder, "layer_norm", None) or getattr(encoder, "final_layer_norm", None)
    return found or (lambda x: x)


@torch.no_grad()
def greedy_by_hand(model, memory: torch.Tensor, src: torch.Tensor, limit: int) -> list[int]:
    """Greedy decoding that reads `memory`, the decoder run over the whole prefix at each step (no cache, no hooks)."""
    cfg, tokens = model.config, []
    src_mask = (src != cfg.pad_id)[:, None, None, :]
    for step in range(limit):
        tgt = torch.tensor([[cfg.bos_id, *tokens]])
        hidden = model.decode(tgt, memory, src_mask).hidden[:, -1]
        tokens.append(int(next_token_logits(model, hidden, step, limit).argmax(-1)))
        if tokens[-1] == cfg.eos_id:
            break
    return tokens


def test_each_layer_writes_what_the_decoder_writes_from_that_layers_output_through_the_closing_norm(pipeline):
    pipeline, texts = pipeline
    model, seen = pipeline.model, set()
    for text in texts:
        ids = pipeline.tokenizer.encode(text)
        src = torch.tensor([ids])
        layers = decoderlens(model, ids, LIMIT)
        for out, state in zip(layers, encoder_states(model, src)):
            if state is None:  # the last layer's: the model's own output, tested above
                continue
            assert out.tokens == greedy_by_hand(model, closing_norm(model)(state), src, LIMIT), (text, out.layer)
        seen |= {tuple(out.tokens) for out in layers}
    assert len(seen) > len(texts)  # the layers do write different things: the test could tell them apart


def test_interventions_are_held_in_every_layers_decoding(pipeline):
    """With every cross head ablated the decoder cannot read the encoder: every layer writes the same, the model's
    output under that ablation; ablating one encoder layer's heads changes that layer's and later ones' only."""
    pipeline, texts = pipeline
    model, cfg = pipeline.model, pipeline.model.config
    ids = pipeline.tokenizer.encode(texts[0])
    blind = Interventions(
        ablate=frozenset(Head("cross", l, h) for l in range(cfg.n_decoder_layers) for h in range(cfg.n_heads))
    )
    layers = decoderlens(model, ids, LIMIT, blind)
    own = DecodingSession(model, ids, max_new_tokens=LIMIT, interventions=blind).run()
    assert all(out.tokens == own for out in layers)
    last = cfg.n_encoder_layers - 1
    quiet = Interventions(ablate=frozenset(Head("encoder", last, h) for h in range(cfg.n_heads)))
    plain, ablated = decoderlens(model, ids, LIMIT), decoderlens(model, ids, LIMIT, quiet)
    assert [out.tokens for out in ablated[:-1]] == [out.tokens for out in plain[:-1]]  # before the last layer
    assert ablated[-1].tokens == DecodingSession(model, ids, max_new_tokens=LIMIT, interventions=quiet).run()


def test_bad_input_is_refused():
    model = tiny_pipelines()["reverse"].model
    with pytest.raises(ValueError, match="the source is empty"):
        decoderlens(model, [])
    with pytest.raises(ValueError, match="max_new_tokens must be at least 1"):
        decoderlens(model, [5, 6, 2], 0)
    with pytest.raises(ValueError, match="per-row interventions"):
        decoderlens(model, [5, 6, 2], 4, Interventions(rows=(frozenset({Head("cross", 0, 0)}),)))


def test_the_memories_read_are_each_layers_output_through_the_closing_norm_the_last_the_models_own(pipeline):
    """reading_memories (what a page's DecoderLens decodes from): row l is layer l's output through the closing norm
    (encoder_states, by hand), and the last row is the model's own memory."""
    pipeline, texts = pipeline
    model = pipeline.model
    src = torch.tensor([pipeline.tokenizer.encode(texts[0])])
    with torch.no_grad():
        memories = reading_memories(model, src)
        own = model.encode(src).memory[0]
    states = encoder_states(model, src)
    assert memories.shape == (len(states), src.size(1), own.size(-1))
    torch.testing.assert_close(memories[-1], own)
    for row, state in zip(memories[:-1], states[:-1]):
        torch.testing.assert_close(row, closing_norm(model)(state)[0])
