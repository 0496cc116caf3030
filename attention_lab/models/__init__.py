"""The models the app serves: loaded once and shared (registry), their examples, and the gold alignments their cards
may name."""
