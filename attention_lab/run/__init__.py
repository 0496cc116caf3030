"""A user's run, as every feature reads it: the decoding they step through, with its model, source and options, and
what each feature keeps of it.

state      Run (a decoding and the model it uses, and what each feature keeps of it), UserState
search     greedy or beam search from a session, a hypothesis forced, decoding on from a prefix; one beam limit
target     a text as a model's target side writes it: the tokens to force on its decoder
"""
