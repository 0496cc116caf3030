"""Why this token: what each written token's probability depends on (attribution to the source and the prefix, by
each method of attention_lab.attribution), how far each head's attention agrees with it, why one token and not
another (contrast), a deletion test of which to trust, and the decoder's lens (transformer.lens) step by step. The
Why tab and the /attribute, /contrast and /lens endpoints (api.py)."""
