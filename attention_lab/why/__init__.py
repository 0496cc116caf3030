"""Why this token: what each written token's probability depends on (attribution to the source and the prefix, by
three methods, with Captum), how far each head's attention agrees with it, a deletion test of which to trust, and
the decoder's lens (transformer.lens) step by step. The Why tab and the /attribute and /lens endpoints."""
