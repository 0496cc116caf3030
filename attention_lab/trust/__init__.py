"""Which output to trust: any translation forced on the decoder and scored token by token (log p, the source's share
of each prediction by ALTI+ or an attribution method), sentence scores and flags (attention_lab.trust.score,
.flags; the attention distances of .wasserstein against .reference's correct translations), the /score answer
(.record) and the Trust tab (.feature, trust.mjs)."""
