"""transformers encoder–decoders (Marian/opus-mt, BART, mBART, M2M100/NLLB, T5) as the library's contract describes a
model, so that the lab decodes, draws and tests them as it does ours.

    load        fetch and check a checkpoint (safetensors only, no remote code): load_transformers, which
                load_pretrained calls for a transformers checkpoint
    model       HFSeq2Seq: transformers' own forward behind transformer.contract.Seq2SeqModel
    points      where each of the library's hook points (transformer.hooks) stands in the family's modules
    calls       the hooks inside that forward that carry those points: attention, embeddings, layers, sublayers
    config      the model's facts and generate()'s rules in the contract's terms
    tokenizer   TransformersTokenizer: the family's tokenizer behind Seq2SeqTokenizer

transformers and sentencepiece are an optional extra: only `load` may be imported without them, and it says what to
install when such a model is asked for.
"""
