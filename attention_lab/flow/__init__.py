"""How information flows to each prediction: the contribution graph of one step (transformer.flow, Ferrando & Voita
2024's information flow routes, for an encoder-decoder), pruned by a threshold. The Flow tab and /flow (api.py)."""
