"""The Attention Lab app's logic and views, apart from its page (app.py lays out and wires the page).

    registry   models by name: the bundled checkpoints and Hub repos, loaded once and shared
    checks     a user's input, checked: clear messages instead of stack traces
    session    one user's decoding: the run, beam replay, and the lock that keeps a session's events in order
    actions    what each control does (Run, Step, Back, Reset, what-if, show, export) and the API endpoints
    views      plotly figures of what a decoding session recorded (pure functions)
    record     the JSON record of a session, for export and the API
    serving    how many cores the app may use

Data flows one way: app.py -> lab -> transformer. Nothing here imports app.py or training/.
"""
