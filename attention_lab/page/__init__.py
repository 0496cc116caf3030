"""The page around the features: its frame, how events reach the Lab, and what is redrawn.

frame       the header, the step loop's column and the tabs, laid out from the tab table
wiring      Wiring: every decoding event sends the state and the controls and answers with what changed, then, on
            the same stream, the slow outputs made within half a second; the queue's lanes
lab         Lab: an action under the user's lock, the changes, the slow outputs begun early, the fill; the next step
            decoded ahead
render      what changed: only the outputs whose value differs from what the page shows
header.mjs  the header: the keys' hint and list, presenter mode; fill.mjs asks for the slow outputs
            still awaited (the fill)
"""
