"""The models the app serves: loaded once and shared (registry), their training snapshots (snapshots), their
examples, and the gold alignments their cards may name."""
