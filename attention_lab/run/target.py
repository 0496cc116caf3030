"""A text as a model's target side writes it: the tokens to force on its decoder (the Trust tab's translation to
score, the Two models tab's second model writing the first one's words)."""

from __future__ import annotations

from attention_lab.adapters.hf.tokenizer import TransformersTokenizer
from transformer import Seq2SeqPipeline

from ..checks import InputError, describe_char, known_characters

TRANSLATION = "The translation"  # what a text is called by default
# The refusals, as format strings (trust/in_page.mjs writes them too, for a translation pasted in the Trust tab)
UNKNOWN = "This model only knows {alphabet}; remove {char} from {what}."
TOO_LONG = (
    "{what} is {n} tokens with its end token; {who} takes at most {most} (the model writes at most {own}, and each "
    "token costs a pass). Send a shorter one."
)


def target_ids(
    pipeline: Seq2SeqPipeline, text: str, most: int | None = None, what: str = TRANSLATION, who: str = "this"
) -> list[int]:
    """`text` as the model's target side tokenizes it, its end token last: a transformers tokenizer's own target
    encoding (Marian's target vocabulary, BART's <s> first, NLLB's language code), our tokenizers' one encoding
    (source and target share it). InputError for characters a character-level model does not know, or for more
    tokens than `most` (the model's own limit, if lower) or a decoding can hold; `what` names the text, `who` what
    takes it."""
    tokenizer, eos = pipeline.tokenizer, pipeline.model.config.eos_id
    alphabet = known_characters(tokenizer)
    unknown = tokenizer.unknown_characters(text) if alphabet else []
    if unknown:
        raise InputError(UNKNOWN.format(alphabet=alphabet, char=describe_char(unknown[0]), what=what.lower()))
    if isinstance(tokenizer, TransformersTokenizer):
        ids = [int(i) for i in tokenizer.hf(text_target=text)["input_ids"]]
    else:
        ids = tokenizer.encode(text, add_eos=False)
    ids = ids if ids and ids[-1] == eos else [*ids, eos]
    own = pipeline.model.config.max_new_tokens
    if len(ids) > min(own, most or own):
        raise InputError(TOO_LONG.format(what=what, n=len(ids), who=who, most=min(own, most or own), own=own))
    return ids
