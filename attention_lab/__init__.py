"""Attention Lab, the app: see inside an encoder–decoder Transformer, a step at a time, and test what you see.

One folder per feature a user sees, each with its layout, its events, its actions, its state and its page modules
(ES modules, .mjs: the server sends data, the page draws); the tab table (tabs.py) lists them, a line each, and the
docs/layout.md says what each holds. decoding/ is the step loop (Run, Step, Back, Reset, what-if, beam search; Show
step and the output) that every tab draws from;

and what they stand on:

    checks, controls, feature   a user's input checked (InputError); the controls' values; a feature's face
    models/       the models the app serves: the registry, examples, gold alignments, devices
    assets/       the page's shared modules (its state, the decoding it holds, units and readings, plotly helpers,
                  the keys) and stylesheet; drawn components; the bundle an offline page inlines
    page/         the frame (header, columns, tabs), the wiring of events, what is redrawn (Lab)
    serving/      the JSON API, the Hugging Face Space, the cores a request may use
    app, cli      the gr.Blocks built from the tab table; the attention-lab command
    adapters/     other model families (transformers encoder–decoders) meeting the library's model contract; they
                  import the library alone, and nothing else here (training/ may import them)

Commands: attention-lab (the app), attention-lab survey | faithfulness | space, each also python -m
attention_lab.<command>. Data flows one way: app.py -> attention_lab -> attention_lab.adapters -> transformer; nothing here imports
app.py or training/.
"""


def __getattr__(name: str):
    """attention_lab.show and attention_lab.show_attentions, imported when first asked for (importing the package
    alone, as `import attention_lab.adapters` does, stays light)."""
    if name == "show":
        from .notebook.view import show

        return show
    if name == "show_attentions":
        from .notebook.weights import show_attentions

        return show_attentions
    raise AttributeError(f"module 'attention_lab' has no attribute {name!r}")
