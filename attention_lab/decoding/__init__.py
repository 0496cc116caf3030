"""The step loop: Run, Step, Back, Reset, a what-if and beam search on one user's run, in the page's left column.

state      Run (a decoding and the model it uses, and what each feature keeps of it), UserState
actions    DecodingActions: Run, Step, Back, Reset and what-if on a user's run; decoding to the end, a decoding replaced
search     greedy or beam search from a session, a hypothesis forced, decoding on from a prefix; one beam limit
request    one request to an endpoint of the JSON API: the shared models and the endpoint's limits
messages   what the page is told of the decoding: all of it once, then a step more or fewer
view       the step loop's outputs after every event
lesson     a decoding's views in one offline HTML file (lesson.mjs, lesson.css): the export and the notebook
api        /translate
layout     its column; events, its wiring; feature, its face (attention_lab.feature)
steps.mjs  Show step and the output a token a step; now.mjs what the model looked at; candidates.mjs what if?
"""
