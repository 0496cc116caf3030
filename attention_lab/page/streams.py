"""The app's gr.Blocks: an answer's stream sends each part after the first as whole values wherever gradio would send
edits inside a value.

gradio sends a stream's later parts as edits of the part before (gradio.utils.diff), and its client in the page
applies an edit inside a value to the very object it handed the page with the part before. When a stream's parts
reach the page before the client has the event's id (the queue's stream is already open for another event, and the
answer to joining the queue comes later), the client hands the page every part at once, and a later part's edits
have emptied an earlier part's updates before the page applies them. In the step loop: after a Run, the Output was
right (a string is replaced, never edited) while Back stayed off and the notice hidden (an update is a dict, edited
in place). Sent whole, a part replaces a value and never edits one: the page applies each part as it was made.
"""

from __future__ import annotations

import gradio as gr


def whole(edits: list, value):
    """A later part's `edits` of one output, or, when one edits inside the value, the whole `value` in their place."""
    return edits if all(not path for _, path, _ in edits) else [["replace", [], value]]


class Blocks(gr.Blocks):
    def handle_streaming_diffs(self, block_fn, data, session_hash, run, final, simple_format=False) -> list:
        streams = self.pending_diff_streams.get(session_hash) if session_hash is not None else None
        later = streams is not None and run is not None and run in streams and not final and not simple_format
        sent = super().handle_streaming_diffs(block_fn, data, session_hash, run, final, simple_format)
        if not later:
            return sent
        return [whole(edits, value) for edits, value in zip(sent, self.pending_diff_streams[session_hash][run])]
