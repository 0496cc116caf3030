"""The step loop: Run, Step, Back, Reset, a what-if and beam search on one user's run, in the page's left column.

state      Run (a decoding and the model it uses), UserState, decoding to the end (greedy or beam)
actions    Decoding: Run, Step, Back, Reset and what-if on a user's run
messages   what the page is told of the decoding: all of it once, then a step more or fewer
view       the step loop's outputs after every event
layout     its column; events, its wiring; feature, its face (attention_lab.feature)
steps.mjs  Show step and the output a token a step; now.mjs what the model looked at; candidates.mjs what if?
"""
