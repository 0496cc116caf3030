"""The browser benchmark's rows for the tabs beside the attention (benchmarks/browser_speed.py): Why, the contrast a
candidate's "why not this?" asks for, Patch, Trust, Flow, Two models and the Beam tree. Each is measured on the page the benchmark holds, its clicks
alternated with the floor's, with the server requests its looks send."""

from __future__ import annotations

from browser_page import CLICK_NTH, MOVE_SLIDER, QUIET_MS, SETTLED, click_ms, press_ms, set_source, settle

PATCH_WORDS = "#patch-view .patch-words .word"
CLICK_WHY_NOT = """n => {
  // the n-th "why not this?" of the shown step's candidates; window.__lab.contrast: when the contrast was drawn
  const why = document.querySelectorAll('.lab-candidates .why-not[data-alternative]')[n];
  window.__lab.contrast = 0;
  const drawn = new MutationObserver(() => {
    if (document.querySelector('#why-contrast .why-contrast-view')) {
      window.__lab.contrast = performance.now();
      drawn.disconnect();
    }
  });
  drawn.observe(document.body, {subtree: true, childList: true});
  window.__lab.last = 0;
  window.__lab.t0 = performance.now();
  why.click();
}"""
TRANSLATIONS = (  # pasted into "Translation to score": TEN_WORDS's translations, one of them a hallucination
    "The file was changed and saved yesterday by another user.",
    "Yesterday another user modified the file and saved it.",
    "The cat sat on the mat and sang a song about the sea.",
)


def show_moves(app, floor, times: dict[str, list[float]], tab: str, repeats: int) -> None:
    """Moves of Show step with `tab`'s tab open, alternated with the floor's Steps, into times[tab + "_show"], and
    the server requests they sent into times[tab + "_show_requests"]."""
    before = len(app.requests)
    for i in range(max(3, repeats // 2)):
        times["floor"].append(click_ms(floor, "Step"))
        times[f"{tab}_show"].append(click_ms(app, ["Show step", 1 + i % 3], MOVE_SLIDER))
    times[f"{tab}_show_requests"].append(len(app.requests) - before)


def measure_why(app, floor, times: dict[str, list[float]], repeats: int) -> None:
    """The Why tab open on the 15-word sentence: Steps (each attributes its new step and reads the lens, after the
    Step has answered) and moves of Show step (drawn in the page), with the server requests the moves sent."""
    times.update(why_step=[], why_step_answered=[], why_show=[], why_show_requests=[])
    click_ms(app, "Why")
    click_ms(app, "Reset")
    click_ms(app, "Step")
    for _ in range(max(3, repeats // 2)):
        times["floor"].append(click_ms(floor, "Step"))
        times["why_step"].append(click_ms(app, "Step", answered=times["why_step_answered"]))
    show_moves(app, floor, times, "why", repeats)
    click_ms(app, "Attention")


def measure_patch(app, floor, times: dict[str, list[float]], repeats: int) -> None:
    """The Patch tab open on the 15-word sentence, decoded to the end: a click on a source word (noise on it: the
    whole decoding patched after the answer) and moves of Show step (drawn in the page), with the server
    requests the moves sent."""
    times.update(patch_word=[], patch_word_answered=[], patch_show=[], patch_show_requests=[])
    click_ms(app, "Run")
    click_ms(app, "Patch")
    for word in (2, 4, 6):  # noise on one more word each time: each click patches the whole decoding
        times["floor"].append(click_ms(floor, "Step"))
        answered = times["patch_word_answered"]
        times["patch_word"].append(click_ms(app, [PATCH_WORDS, word], CLICK_NTH, answered=answered))
    show_moves(app, floor, times, "patch", repeats)
    click_ms(app, "Start again")
    click_ms(app, "Attention")


def measure_why_not(app, floor, times: dict[str, list[float]]) -> None:
    """From the Attention tab, a click on a candidate's "why not this?" (the 15-word sentence stepped, each step
    already attributed by the Why tab): it opens the Why tab and asks for the contrast. Its time is when the
    contrast was drawn, with the page's last change in brackets; and the server requests a click sent."""
    times.update(why_not=[], why_not_answered=[], why_not_requests=[])
    for shown, n in ((1, 0), (2, 1), (3, 0)):  # another step and candidate each time: nothing asked twice
        click_ms(app, ["Show step", shown], MOVE_SLIDER)
        times["floor"].append(click_ms(floor, "Step"))
        before = len(app.requests)
        app.evaluate(CLICK_WHY_NOT, n)
        app.wait_for_function(f"q => window.__lab.contrast > 0 && ({SETTLED})(q)", arg=QUIET_MS, polling=50,
                              timeout=120_000)  # fmt: skip
        drawn, last = app.evaluate("() => [window.__lab.contrast, window.__lab.last].map(t => t - window.__lab.t0)")
        times["why_not"].append(max(drawn, last))
        times["why_not_answered"].append(drawn)
        times["why_not_requests"].append(len(app.requests) - before)
        click_ms(app, "Back to the attribution")
        click_ms(app, "Attention")


def opened_after_runs(app, floor, times: dict[str, list[float]], tab: str, name: str) -> None:
    """The tab `tab` opened from the Attention tab after a fresh Run, three times, into times[name] (with its
    "_answered" and "_requests"), alternated with the floor's Steps."""
    for _ in range(3):
        click_ms(app, "Reset")
        click_ms(app, "Run")
        times["floor"].append(click_ms(floor, "Step"))
        before = len(app.requests)
        times[name].append(click_ms(app, tab, answered=times[f"{name}_answered"]))
        times[f"{name}_requests"].append(len(app.requests) - before)
        click_ms(app, "Attention")


def measure_trust(app, floor, times: dict[str, list[float]], text: str, repeats: int) -> None:
    """The Trust tab on `text` (the 10-word sentence): opened after a Run (the output forced and scored after the
    answer), a pasted translation scored (typed untimed, then Score), and moves of Show step with the tab open;
    the server requests of each."""
    times.update(trust_open=[], trust_open_answered=[], trust_score=[], trust_score_answered=[], trust_show=[])
    times.update(trust_open_requests=[], trust_score_requests=[], trust_show_requests=[])
    set_source(app, text)
    opened_after_runs(app, floor, times, "Trust", "trust_open")
    click_ms(app, "Trust")
    for translation in TRANSLATIONS:
        app.get_by_label("Translation to score").fill(translation)
        settle(app)
        times["floor"].append(click_ms(floor, "Step"))
        before = len(app.requests)
        times["trust_score"].append(click_ms(app, "Score", answered=times["trust_score_answered"]))
        times["trust_score_requests"].append(len(app.requests) - before)
    click_ms(app, "Score the model's translation")
    show_moves(app, floor, times, "trust", repeats)
    click_ms(app, "Attention")


NODE_CENTRE = """([name, i]) => {
  // the i-th point of the Beam tree's trace named `name` (kept, pruned, finished), on the screen
  const gd = document.querySelector('#beam-tree .js-plotly-plot'), full = gd._fullLayout;
  const trace = gd.data.find(t => t.name === name), box = gd.getBoundingClientRect();
  return [box.left + full.xaxis._offset + full.xaxis.l2p(trace.x[i]),
          box.top + full.yaxis._offset + full.yaxis.l2p(trace.y[i])];
}"""


MOVE_THRESHOLD = """value => {
  // the Flow tab's threshold, a control of the page: an input event, as a drag sends
  const range = document.querySelector('#flow-view .flow-controls input[type=range]');
  window.__lab.last = 0;
  window.__lab.t0 = performance.now();
  range.value = value;
  range.dispatchEvent(new Event('input', {bubbles: true}));
}"""


def measure_flow(app, floor, times: dict[str, list[float]], text: str, repeats: int) -> None:
    """The Flow tab on `text` (the 10-word sentence): opened after a Run (the whole decoding's graph read after the
    answer), moves of its threshold and of Show step with it open (both drawn in the page); the server requests of
    each."""
    times.update(flow_open=[], flow_open_answered=[], flow_open_requests=[], flow_threshold=[])
    times.update(flow_threshold_requests=[], flow_show=[], flow_show_requests=[])
    set_source(app, text)
    opened_after_runs(app, floor, times, "Flow", "flow_open")
    click_ms(app, "Flow")
    before = len(app.requests)
    for i in range(max(3, repeats // 2)):
        times["floor"].append(click_ms(floor, "Step"))
        times["flow_threshold"].append(click_ms(app, (0.02, 0.08, 0.15)[i % 3], MOVE_THRESHOLD))
    times["flow_threshold_requests"].append(len(app.requests) - before)
    show_moves(app, floor, times, "flow", repeats)
    click_ms(app, "Attention")


def measure_two_models(app, floor, times: dict[str, list[float]], text: str, repeats: int) -> None:
    """The Two models tab on `text` (the 10-word sentence), its second model chosen (de-en itself: of the bundled
    models, only de-en reads German; the drawing is the same for any pair of its size), then moves of Show step with
    it open (both sides redrawn in the page); the server requests the moves sent."""
    times.update(two_models_show=[], two_models_show_requests=[])
    set_source(app, text)
    click_ms(app, "Reset")
    click_ms(app, "Run")
    click_ms(app, "Two models")
    app.get_by_label("Side B", exact=True).click()
    app.get_by_role("option", name="de-en", exact=True).click()
    app.wait_for_function("() => document.querySelector('#two-models-view .two-models-summary')?.textContent")
    settle(app)
    show_moves(app, floor, times, "two_models", repeats)
    click_ms(app, "Attention")


def measure_beam_tree(app, floor, times: dict[str, list[float]], text: str, repeats: int) -> None:
    """The Beam tree tab on `text` (the 10-word sentence): opened after a Run (searched with beam 4 and drawn after
    the answer), and clicks on nodes, each another hypothesis (its prefix forced on the decoder and its attention
    drawn under the tree); the server requests of each."""
    times.update(tree_open=[], tree_open_answered=[], tree_node=[], tree_node_answered=[])
    times.update(tree_open_requests=[], tree_node_requests=[])
    set_source(app, text)
    opened_after_runs(app, floor, times, "Beam tree", "tree_open")
    click_ms(app, "Beam tree")
    for i in range(max(3, repeats // 2)):  # kept nodes of the first steps, in view when the tab opens
        times["floor"].append(click_ms(floor, "Step"))
        before = len(app.requests)
        at = app.evaluate(NODE_CENTRE, ["kept", 1 + 2 * i])
        times["tree_node"].append(press_ms(app, at, answered=times["tree_node_answered"]))
        times["tree_node_requests"].append(len(app.requests) - before)
    click_ms(app, "Attention")
