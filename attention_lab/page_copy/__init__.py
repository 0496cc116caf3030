"""A model's page copy: the page's own decoder, what a page needs to decode a model with ONNX Runtime Web and no
server.

graphs              the model as two ONNX graphs (the encoder, one decoder step with the KV cache), every head out
precision           float16 and int8 copies, and their drift from float32 on drift_sentences.txt
copies              a copy made once per model (the graphs, their weights, the tokenizer, the page's config), cached
extras              the files a tab's page code reads that a copy carries, registered by the tab's feature
graph_decoding      the graphs decoded greedily from Python's onnxruntime: what the tests check them with
model.mjs           the copy decoding in the page (ONNX Runtime Web, @huggingface/tokenizers: vendor/)
pieces.mjs          a token's pieces as the page labels them
"""
