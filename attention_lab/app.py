"""The app: the page built from the tab table (attention_lab.tabs), its events wired, the JSON API beside it.

The models are loaded once and shared by every session; each user's decoding lives in gr.State. `build_demo` makes
the gr.Blocks and `launch_options` what it is launched with (the CLI, the tests and the benchmarks all use both).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import gradio as gr

from .assets import static_files, stylesheets
from .checks import InputError
from .feature import Shared
from .models.registry import Registry
from .page import frame
from .page.lab import Lab
from .page.wiring import CONCURRENCY, DECODE, HEAVY, Wiring
from .serving.api import Api, method_of
from .snapshots.decodings import Snapshots
from .tabs import LOOP, TABS, features, options, outputs

logger = logging.getLogger("attention_lab")
# Gradio keeps every session's component values until the session is evicted, oldest first, beyond this many
# sessions; its default of 10,000 let memory grow by about 0.25 MB per session here.
SESSION_CAPACITY = 128
QUICK = ("translate", "attention")
HEAVY_API = (
    "heads",
    "training",
    "ablate",
    "edit",
    "attribute",
    "contrast",
    "lens",
    "patch",
    "score",
    "beam_tree",
    "continue",
)


def launch_options() -> dict:
    """What demo.launch() takes besides the address: the session cap, a compact theme (the step loop and the views
    share one screen) and the page's stylesheets. (The page modules and plotly.js are served as they are: set in
    build_demo.)"""
    theme = gr.themes.Default(spacing_size=gr.themes.sizes.spacing_sm, radius_size=gr.themes.sizes.radius_sm)
    return {"state_session_capacity": SESSION_CAPACITY, "css_paths": stylesheets(), "theme": theme}


def shown_to_user(fn: Callable) -> Callable:
    """An InputError reaches an API client as a gr.Error with its message as it is, and one line in the log."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except InputError as err:
            logger.info("user error: %s", err)
            raise gr.Error(str(err), print_exception=False) from None

    return call


def wire_tabs(wiring: Wiring, opened: dict) -> None:
    """A tab is drawn as it opens (the server learns which is open: it draws only the open one after each event)."""
    for tab_id, tab in opened.items():

        def event(user, *values, tab_id=tab_id):
            c = wiring.controls_of(values)
            return wiring.answer(user, wiring.lab.open_tab, user, c, tab_id)

        wiring.then_fill(wiring.listen(tab.select, event, wiring.inputs, wiring.targets()))


def make_lab(registry: Registry, tabs: tuple = TABS, ahead: bool = False) -> Lab:
    """The Lab of the tab table over `registry`; with `ahead`, the next step is decoded ahead in the background."""
    executor = ThreadPoolExecutor(1, thread_name_prefix="ahead") if ahead else None
    return Lab(registry, LOOP, tabs, Shared(registry, Snapshots(registry)), ahead=executor)


def build_demo(registry: Registry, tabs: tuple = TABS) -> gr.Blocks:
    """The app over `registry`, its tabs those of the tab table (`tabs`: another table, for a test)."""
    gr.set_static_paths(static_files())
    lab = make_lab(registry, tabs, ahead=True)
    shared = lab.shared
    with gr.Blocks(title="Attention Lab", fill_width=True) as demo:
        components, state, opened = frame.build(registry, lab.default, LOOP, tabs)
        wiring = Wiring(lab, components, state, list(options(tabs)), list(outputs(tabs)))
        for feature in features(tabs):
            if feature.wire is not None:
                feature.wire(components, wiring)
        wire_tabs(wiring, opened)
        wiring.on(demo.load, lab.decoding.run)  # the page opens on its first example, decoded
        api = Api(registry, shared.snapshots)
        for name in QUICK:
            gr.api(shown_to_user(getattr(api, name)), api_name=name, **DECODE)
        for name in HEAVY_API:
            gr.api(shown_to_user(getattr(api, method_of(name))), api_name=name, **HEAVY)
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=64)
    return demo
