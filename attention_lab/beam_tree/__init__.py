"""The beam search as a tree: every continuation it weighed, and decoding on from any of them."""
