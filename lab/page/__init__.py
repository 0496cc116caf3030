"""The page's behaviour, apart from its layout (page.py) and wiring (app.py): the tabs, the outputs, what each action
changes, and what the page must redraw.

    outputs    the outputs every decoding updates, named once, and what kind of value each takes
    tabs       one entry per tab: id, title, note, outputs, and its view
    screen     what a tab's view reads: the user's run at the shown step
    render     what changed: only the outputs whose value differs from what the page shows
    lab        Lab: an action under the user's lock, then the page's changes; the exports
"""
