"""The Attention Lab app's logic and views, apart from its layout (page.py) and wiring (app.py). One folder per
feature a user sees; a folder imports only those above it in this list, and the two modules before them:

    checks, controls   a user's input checked (InputError), and what the page's controls say (Controls)
    models/            the models the app serves: the registry (one entry each), examples, gold alignments
    attention/         what the model looked at: words and pieces, the views of every kind, the exports
    decoding/          Run, Step, Back, Reset, what-if and beam search on one user's run
    heads/             head tests: summaries, ablation and editing, the Heads tab
    why/               why this token: attribution (Captum), the decoder's lens, the deletion test
    snapshots/         attention across training: the Training tab and /training
    serving/           the JSON API, the Hugging Face Space, the cores a request may use
    page/              the tabs table, the outputs, what an action changes on the page (Lab)
    assets/            the page's CSS and browser code

Commands: python -m lab.space (a Hugging Face Space). Data flows one way: app.py -> lab -> adapters -> transformer;
nothing here imports app.py, page.py or training/.
"""
