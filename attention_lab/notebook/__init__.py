"""Attention Lab in a notebook: show(...), a view rendered in the output cell and saved as a lesson file."""
