"""The Beams tab: the live beams and their scores at each step of the last beam search (feature)."""
