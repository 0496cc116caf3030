"""The step loop: Run, Step, Back, Reset, a what-if and beam search on one user's run, in the page's left column.

actions       DecodingActions: Run, Step, Back, Reset and what-if on a user's run; decoding to end, a decoding replaced
events        its wiring: what each click, key and choice does, and no answer overwrites what a person typed
from_page     the decoding the page holds, sent with every request, taken as the user's run (rebuilt and cached)
messages      what the page is told of the decoding: all of it once, then a step more or fewer
view          the step loop's outputs after every event
api           /translate
layout        its column; feature, its face (attention_lab.feature)
loop.mjs      the step loop in the page, on a model decoding there (page_copy/model.mjs)
in_page.mjs   which side decodes: the page once its copy is ready, the server before and as the fallback (the road line)
steps.mjs     Show step and the output a token a step; looked_at.mjs what the model looked at; candidates.mjs what if?
beams.mjs     the page's beam search; messages.mjs, the server's messages made in the page

What every feature reads of a run (its state, the search, a target forced) is attention_lab.run; the API's request is
attention_lab.request; the page's decoder is attention_lab.page_copy; the exports are attention_lab.export.
"""
