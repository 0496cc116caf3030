"""The app: the page, the JSON API and the queue's lanes, all built from the tab table (attention_lab.tabs), each
feature's part from what it declares.

The models are loaded once and shared by every session, with the app-wide stores features declare; each user's
decoding lives in gr.State. `build_demo` makes the gr.Blocks and `launch_options` what it is launched with (the
CLI, the tests and the benchmarks all use both).
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import gradio as gr

from .assets import PAGE_CSS, static_files
from .decoding.from_page import open_tab_of, road_files
from .feature import Feature, Shared
from .models.registry import Registry
from .page import frame
from .page.lab import Lab
from .page.streams import Blocks
from .page.wiring import CONCURRENCY, LANES, Wiring, handed
from .page_copy.copies import PageCopies
from .serving.api import Endpoints, documentation, served
from .tabs import GROUPS, LOOP, TABS, features, options, outputs, publishers

logger = logging.getLogger("attention_lab")
# Gradio keeps every session's component values until the session is evicted, oldest first, beyond this many
# sessions; its default of 10,000 let memory grow by about 0.25 MB per session here.
SESSION_CAPACITY = 128
COPIES = ThreadPoolExecutor(1, thread_name_prefix="page-copy")  # the models' page copies are made one at a time


def stylesheets(tabs: tuple[Feature, ...] = TABS) -> list[Path]:
    """The page's stylesheets (its shared rules, its frame), then each feature's, in the table's order."""
    return [PAGE_CSS, frame.STYLESHEET, *(f.stylesheet for f in features(tabs) if f.stylesheet is not None)]


def launch_options(tabs: tuple[Feature, ...] = TABS) -> dict:
    """What demo.launch() takes besides the address: the session cap, a compact theme (the step loop and the views
    share one screen) and the stylesheets. (The page modules and plotly.js are served as they are: set in
    build_demo.)"""
    theme = gr.themes.Default(spacing_size=gr.themes.sizes.spacing_sm, radius_size=gr.themes.sizes.radius_sm)
    return {
        "state_session_capacity": SESSION_CAPACITY,
        "css_paths": stylesheets(tabs),
        "css": frame.grouped(tabs, GROUPS),
        "theme": theme,
    }


def wire_tabs(wiring: Wiring) -> None:
    """A tab is drawn as it opens: the page draws one it can from the decoding it holds with no request, and asks the
    server for the others (decoding/in_page.mjs `opened`: the road's "open" event, the page's text naming the open
    tab). Every event the page sends names the open tab, so the server draws it with the next one."""

    def event(user, *values):
        c = wiring.controls_of(values)
        yield from wiring.streamed(user, wiring.lab.open_tab, c, user, c, open_tab_of(c.page))

    wiring.listen(wiring.components["road"].open, event, wiring.inputs, wiring.targets(), from_page=True)


def shared_by(registry: Registry, tabs: tuple[Feature, ...] = TABS) -> Shared:
    """What every session shares: the models, and each app-wide store a feature declares, made once."""
    return Shared(registry, {f.store: f.store(registry) for f in features(tabs) if f.store is not None})


def make_lab(registry: Registry, tabs: tuple = TABS, ahead: bool = False) -> Lab:
    """The Lab of the tab table over `registry`; with `ahead`, the next step is decoded ahead in the background, and
    an answer's slow outputs are begun as soon as it is answered (one at a time, app-wide, as the heavy lane)."""
    if not ahead:
        return Lab(registry, LOOP, tabs, shared_by(registry, tabs))
    step, early = ThreadPoolExecutor(1, thread_name_prefix="ahead"), ThreadPoolExecutor(1, thread_name_prefix="early")
    return Lab(registry, LOOP, tabs, shared_by(registry, tabs), ahead=step, early=early)


def endpoints(lab: Lab, tabs: tuple = TABS) -> Endpoints:
    """Every endpoint of the table as plain Python over the Lab's models (what the API answers, with no server)."""
    return Endpoints(lab.shared, features(tabs))


def build_demo(registry: Registry, tabs: tuple = TABS) -> gr.Blocks:
    """The app over `registry`, its tabs those of the tab table (`tabs`: another table, for a test)."""
    gr.set_static_paths([*static_files(), *road_files(registry)])
    PageCopies(registry).start(COPIES)  # made once, in the background: the page decodes itself once they are
    lab = make_lab(registry, tabs, ahead=True)
    with Blocks(title="Attention Lab", fill_width=True) as demo:
        components, state, laid = frame.build(registry, lab.default, LOOP, tabs)
        wiring = Wiring(lab, components, state, list(options(tabs)), list(outputs(tabs)))
        for feature in features(tabs):
            if feature.wire is not None:
                feature.wire(handed(feature, laid, publishers(tabs)), wiring)
        wire_tabs(wiring)
        frame.follow_links(components)
        wiring.on(demo.load, lab.decoding.run)  # the page opens on its first example, decoded
        for feature in features(tabs):
            for endpoint in feature.endpoints:
                gr.api(
                    served(endpoint, lab.shared),
                    api_name=endpoint.name,
                    api_description=documentation(endpoint),
                    **LANES[endpoint.lane],
                )
    demo.queue(default_concurrency_limit=CONCURRENCY, max_size=64)
    return demo
