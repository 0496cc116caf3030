"""Decoding step by step: Run, Step, Back, Reset, a what-if, beam search; one user's run and what each control does
to it.

    run        Run (a decoding and the model it uses), UserState, new_run, decoding to the end (greedy or beam)
    actions    Decoding: Run, Step, Back, Reset and what-if on a user's run; the Beams tab's rows
"""
