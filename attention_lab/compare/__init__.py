"""The Compare tab: after a what-if, an ablation or an edit, the decoding before beside the new one (compare.mjs)."""
