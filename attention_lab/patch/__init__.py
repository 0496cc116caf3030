"""The Patch tab: activation patching between the clean source and a corrupted one (transformer.patching)."""
