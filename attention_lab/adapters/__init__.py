"""Other model families, wrapped to meet the library's model contract (transformer.contract).

    attention_lab.adapters.hf   transformers encoder–decoders: Marian/opus-mt, BART, mBART, M2M100/NLLB, T5

Importing this package registers its loaders with the library's one `load_pretrained`, which then reads a checkpoint
of any family the project knows, from a folder or a Hub repo: it picks the loader from the checkpoint's config.json
(another library names its "model_type" there; ours names none).

    import attention_lab.adapters  # noqa: F401 - transformers encoder–decoders load through load_pretrained from here on
    from transformer import load_pretrained
    load_pretrained("Helsinki-NLP/opus-mt-de-en")

Data flows one way: the app -> attention_lab.adapters -> transformer. Nothing here imports the rest of the app,
and training/ may import this package (to evaluate any model).
"""

from __future__ import annotations

from transformer.hub import register_loader

from .hf import load as hf_load

register_loader(hf_load.load_transformers)  # any model_type: the loader refuses what is not an encoder–decoder
