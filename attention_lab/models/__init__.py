"""The models the app serves: loaded once and shared (registry), their training snapshots as models (snapshots),
their examples, the gold alignments their cards may name, and where they run (devices)."""
