"""One road: the app's step loop decodes in the page (decoding/loop.mjs, on a model's page copy), and the server takes
what the page decoded as the user's run (attention_lab.decoding.from_page) before it answers anything.

- The page copy: made once per model in the cache, named by what it is made from, never half-written.
- The server's side: a page's decoding rebuilt by forced decoding (its tokens, its what-if, its key), cached; a
  page that shows nothing clears the run; a decoding it cannot read or rebuild is refused in one line.
- Both roads give the same decodings: the same clicks on 44 decodings (Run, Step, Back, Reset, a new Source, what-ifs
  at several steps, beam searches of sizes 1, 4 and 16, Ablate, a Beam tree node decoded on from, on both bundled
  models) done by the page's loop in Node and by the server's step loop, and the page's decoding rebuilt on the
  server: every run is the same (its tokens, what-ifs, ablations, beams, what Back would restore, outputs and
  messages), a beam search in the page has the library's tokens and
  score and the Beams tab's table, and every tab's message for a decoding is equal.
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from attention_lab.app import make_lab
from attention_lab.beam_tree.feature import TreeState, decode_on, hypothesis_message, key_of, pick
from attention_lab.beams.feature import table as beams_table
from attention_lab.checks import InputError
from attention_lab.controls import Controls
from attention_lab.decoding.from_page import Road, read, road_config
from attention_lab.decoding.messages import Key, message
from attention_lab.heads.actions import HeadTests
from attention_lab.messages import jsonable
from attention_lab.models.registry import Registry, load_models
from attention_lab.page_copy import copies as page_copy
from attention_lab.page_copy.analyses import graph_file
from attention_lab.run.state import BRANCH, UserState, loop
from attention_lab.tabs import LOOP
from tests.node import NODE, needs_node, node
from tests.test_live import same_message
from transformer import DecodingSession, Head, Interventions, beam_search

RUNNER = Path(__file__).resolve().parent / "js" / "loop_decode.mjs"
GERMAN = ("Wie geht es dir heute?", "Das Haus ist alt.", "Ich habe Hunger, aber kein Geld.")
LETTERS = ("abcdef12", "hello", "x7y8z9")
PLAYS = (  # what a person clicks, as loop_decode.mjs reads it
    [["run"]],
    [["step"], ["step"], ["step"]],
    [["run"], ["back"], ["back"]],
    [["run"], ["what-if", 0, 2]],
    [["step"], ["step"], ["what-if", 1, 1], ["back"]],
    [["run"], ["reset"], ["step"]],
    [["run"], ["what-if", 0, 1], ["what-if", 0, 3]],
    [["beam", 4], ["run"]],
    [["beam", 1], ["run"], ["back"]],
    [["beam", 16], ["run"], ["step"], ["greedy"], ["what-if", 0, 2]],
    [["run"], ["ablate", ["cross:1:*"]], ["back"], ["step"]],
    [["step"], ["ablate", ["encoder:1:2", "cross:*:1"]], ["what-if", 0, 2], ["run"]],
    [["run"], ["ablate", ["cross:*:*"]], ["ablate", []]],
    [["run"], ["tree", 4, 7, "greedy"], ["back"], ["back"]],  # decoded on from a node; Back undoes it, then a step
    [["step"], ["step"], ["tree", 4, 11, "beam"], ["step"], ["back"]],  # a refused Step leaves the undo
    [["run"], ["what-if", 0, 2], ["tree", 1, 3, "greedy"], ["back"], ["step"]],  # the what-if's before comes back
    [["run"], ["ablate", ["cross:1:*"]], ["tree", 4, 9, "beam"], ["back"]],  # under the ablation
    [["run"], ["what-if", 0, 2], ["tree", 1, 3, "greedy"]],  # the server rebuilds what Back would restore...
    [["beam", 4], ["run"], ["tree", 4, 5, "greedy"]],  # ...and a beam search's, with its beams
)


def scenarios() -> list[tuple[str, str, list]]:
    """44 decodings: every play on de-en's sentences in turn and on the reversal model's strings, and six more."""
    found = [("de-en", GERMAN[i % 3], play) for i, play in enumerate(PLAYS)]
    found += [("reverse", LETTERS[i % 3], play) for i, play in enumerate(PLAYS)]
    found += [("de-en", GERMAN[0], [["run"], ["source", GERMAN[1]], ["step"], ["step"]])]
    found += [("reverse", LETTERS[1], [["step"], ["source", LETTERS[2]], ["run"], ["what-if", 0, 2]])]
    found += [("de-en", GERMAN[2], [["step"], ["step"], ["step"], ["back"], ["what-if", 2, 2], ["back"], ["back"]])]
    found += [("reverse", LETTERS[0], [["run"], ["what-if", 1, 4], ["back"], ["step"]])]
    found += [("de-en", GERMAN[1], [["reset"], ["run"], ["step"]])]
    found += [("reverse", LETTERS[2], [["run"], ["run"]])]
    return found


@pytest.fixture(scope="module")
def registry():
    return load_models([])


@pytest.fixture(scope="module")
def copies(bundled_copies):
    return bundled_copies


@pytest.fixture
def traced(monkeypatch):
    """For the tests of how a copy is made and kept (once, whole, in the background, one per model), not of its
    graphs: an export that gives the graphs' files at once (a real one takes seconds; the copies' tests of the
    graphs themselves, tests/test_live.py and the page's, read real ones). Counts its calls."""
    from attention_lab.page_copy.graphs import Exported

    calls = []

    def exported(model):
        calls.append(model)
        return Exported(b"encoder", b"decoder", b"weights", {"attribution": b"attribution", "flow": b"flow"})

    monkeypatch.setattr(page_copy, "exported", exported)
    return calls


def test_a_page_copy_is_made_once_and_whole(registry, tmp_path, traced):
    entry = registry.entries["reverse"]
    folder = page_copy.make(entry, tmp_path / "copy")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    beside = [graph_file(name) for name in config["analyses"]] + config.get("files", [])  # the explanations' graphs...
    assert config["analyses"] and sorted(p.name for p in folder.iterdir()) == sorted([*page_copy.FILES, *beside])
    made = {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}
    assert page_copy.make(entry, folder) == folder
    assert {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} == made and len(traced) == 1  # not made twice
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".page-")]  # nothing half-written left
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["name"] == "reverse" and config["eos_id"] == entry.pipeline.model.config.eos_id


def test_the_app_makes_each_copy_in_the_background_and_keeps_one_per_model(registry, tmp_path, monkeypatch, traced):
    monkeypatch.setattr(page_copy, "CACHE", tmp_path)
    older, another = tmp_path / "reverse-0123456789abcdef", tmp_path / "reverse-big-0123456789abcdef"
    older.mkdir()
    another.mkdir()
    copies = page_copy.PageCopies(Registry({"reverse": registry.entries["reverse"]}))
    with ThreadPoolExecutor(1) as executor:
        copies.start(executor)
        assert copies.made["reverse"].result(timeout=120) == copies.folders["reverse"]
    assert page_copy.is_made(copies.folders["reverse"]) and copies.folders["reverse"].parent == tmp_path
    assert not older.exists() and another.exists()  # an older copy of the model goes; another model's stays


def test_a_copy_is_named_by_what_it_is_made_from(registry):
    de_en, reverse = (page_copy.home(registry.entries[n]) for n in ("de-en", "reverse"))
    assert de_en.parent == reverse.parent == page_copy.CACHE
    assert (
        de_en.name.startswith("de-en-") and reverse.name.startswith("reverse-") and de_en.name[6:] != reverse.name[8:]
    )
    config = road_config(registry)
    assert config["copies"]["de-en"].endswith(str(de_en) + "/") and config["runtime"]["wasm"].endswith(".wasm.gz")


def page(key, model="reverse", source="abc", tokens=(), shown=0, before=None, top_k=8, sent=None) -> str:
    decoding = {"key": key, "model": model, "source": source, "top_k": top_k, "max_len": None, "tokens": list(tokens)}
    return json.dumps({**decoding, "shown": shown, "before": before, **({"sent": sent} if sent else {})})


def test_the_server_takes_the_page_decoding_as_the_run(registry):
    road, user = Road(registry), UserState()
    session = registry.entries["reverse"].pipeline
    tokens = [int(t) for t in session.tokenizer.encode("abd")[:-1]]  # the model writes "cba" for "abc"
    sent = page({"serial": 7, "version": 3}, tokens=tokens, shown=2, before={"tokens": tokens[:1], "at": 2})
    road.take(user, Controls("reverse", "abc", page=sent))
    run = user.run
    assert run.session.tokens == tokens and (run.serial, run.version) == (7, 3) and user.shown == 2
    assert [s.forced for s in run.session.steps][:1] == [True]  # forced where the model would write another
    assert [s.token for s in loop(run).before.steps] == tokens[:1] and loop(run).before.at == 2
    assert user.drawn == {"steps": (Key(7, 3), 2)}  # the page holds it: it is not sent again
    road.take(user, Controls("reverse", "abc", page=sent))
    assert user.run is run  # held already: nothing rebuilt
    assert next(user._serials) == 8  # the session's own next run is numbered after the page's


def test_the_page_s_ablation_is_rebuilt_with_the_decoding_before_it_decoded_without_it(registry):
    """After an Ablate made in the page (heads/ablate.mjs), its decoding is rebuilt with the heads removed, and the
    decoding before it (change "ablation") without them: each step's weights are the plain model's."""
    road, user = Road(registry), UserState()
    pipeline = registry.entries["reverse"].pipeline
    plain = DecodingSession(pipeline.model, pipeline.tokenizer.encode("abc"), max_new_tokens=8).run()
    heads = [["cross", 0, 0], ["cross", 0, 1]]
    held = Interventions(ablate=frozenset(Head(*h) for h in heads))
    ablated = DecodingSession(pipeline.model, pipeline.tokenizer.encode("abc"), max_new_tokens=8, interventions=held)
    tokens = ablated.run()
    sent = json.loads(page({"serial": 3, "version": 1}, tokens=tokens, before={"tokens": plain, "at": 1}))
    sent.update(max_len=8, ablate=heads, before={"tokens": plain, "at": 1, "change": "ablation"})
    road.take(user, Controls("reverse", "abc", max_len=8, page=json.dumps(sent)))
    run, before = user.run, loop(user.run).before
    assert run.session.tokens == tokens and run.session.interventions == held
    assert before.change == "ablation" and [s.token for s in before.steps] == plain
    again = DecodingSession(pipeline.model, pipeline.tokenizer.encode("abc"), max_new_tokens=8)
    again.run()
    same = lambda a, b: all(torch.equal(x, y) for x, y in zip(a.cross_attention, b.cross_attention, strict=True))
    assert all(same(a, b) for a, b in zip(before.steps, again.steps, strict=True))
    sent["before"]["change"] = "edit"
    with pytest.raises(InputError, match="cannot read"):
        Road(registry).take(UserState(), Controls("reverse", "abc", page=json.dumps(sent)))


def test_right_after_a_branch_in_the_page_the_servers_back_restores_the_decoding_it_replaced(registry):
    """The page decoded on from a Beam tree node (decoding/loop.mjs decodeOn) and sends, with its decoding, the one it
    replaced: the server's Back right after restores that one, with its own decoding before, as the page's Back
    does (decoding/actions.py back); without it, Back steps back one token."""
    from attention_lab.decoding.actions import DecodingActions

    pipeline = registry.entries["reverse"].pipeline
    greedy = DecodingSession(pipeline.model, pipeline.tokenizer.encode("abc"), max_new_tokens=8).run()
    other = next(t for t in range(4, 30) if t != greedy[1])
    branched = DecodingSession(pipeline.model, pipeline.tokenizer.encode("abc"), max_new_tokens=8)
    branched.step(force=greedy[0])
    branched.step(force=other)
    branched = branched.run()
    before = {"tokens": greedy, "at": 2, "change": BRANCH}
    replaced = {"tokens": greedy[:2], "before": {"tokens": greedy[:1], "at": 1, "change": "what-if"}, "beam_size": None}
    sent = json.loads(page({"serial": 5, "version": 2}, tokens=branched, before=before))
    actions = DecodingActions(registry)
    for undo, expected in ((replaced, greedy[:2]), (None, branched[:-1])):
        user = UserState()
        Road(registry).take(
            user, Controls("reverse", "abc", max_len=8, page=json.dumps({**sent, "max_len": 8, "undo": undo}))
        )
        assert user.run.session.tokens == branched and loop(user.run).before.change == BRANCH
        actions.back(user, Controls("reverse", "abc"))
        assert user.run.session.tokens == expected
    assert [s.token for s in loop(user.run).before.steps] == greedy  # a step back keeps the decoding before
    user = UserState()
    Road(registry).take(
        user, Controls("reverse", "abc", max_len=8, page=json.dumps({**sent, "max_len": 8, "undo": replaced}))
    )
    actions.back(user, Controls("reverse", "abc"))
    assert [s.token for s in loop(user.run).before.steps] == greedy[:1] and loop(user.run).before.at == 1


def test_a_decoding_the_page_sent_before_one_taken_is_not_taken(registry):
    """gradio may run a session's events out of order: a tab opened with the page's decoding, then a Step the
    server took, whose event ran first. The tab's older decoding must not become the run again."""
    road, user = Road(registry), UserState()
    tokens = [int(t) for t in registry.entries["reverse"].pipeline.tokenizer.encode("cba")[:-1]]
    road.take(user, Controls("reverse", "abc", page=page({"serial": 1, "version": 3}, tokens=tokens, sent=2)))
    newer = user.run
    assert newer.session.tokens == tokens
    road.take(user, Controls("reverse", "abc", page=page({"serial": 1, "version": 2}, tokens=tokens[:2], sent=1)))
    assert user.run is newer and user.run.session.tokens == tokens  # the older one came too late
    road.take(user, Controls("reverse", "abc", page=page({"serial": 1, "version": 4}, tokens=tokens[:1], sent=3)))
    assert user.run.session.tokens == tokens[:1]  # a newer one is taken (Back, in the page)
    road.take(user, Controls("reverse", "abc", page=json.dumps({"key": None, "sent": 4})))
    assert user.run is None  # Reset, in the page
    road.take(user, Controls("reverse", "abc", page=page({"serial": 1, "version": 4}, tokens=tokens[:1], sent=3)))
    assert user.run is None


def test_an_answer_made_for_an_older_page_decoding_leaves_the_step_loops_outputs_as_the_page_wrote_them(registry):
    """A redraw for a new Source, sent before the page decoded that Source to the end itself and answered after the
    page's newer decoding was taken: made for the older Source, it would turn Step on over the finished decoding the
    page shows. An action that changes the run is answered whole."""
    lab, user = make_lab(registry), UserState()
    pipeline = registry.entries["reverse"].pipeline
    finished = DecodingSession(pipeline.model, pipeline.tokenizer.encode("abc"))
    finished.run()
    redraw = lambda user, c: user.shown  # a new Source or option: redrawn
    decoded = page({"serial": 2, "version": 1}, source="abc", tokens=finished.tokens, shown=3, sent=2)
    lab.do(redraw, user, Controls("reverse", "abc", max_len=None, page=decoded))
    assert user.run.session.finished and user.drawn["step"] is False  # as the page wrote it: Step off
    older = page({"serial": 1, "version": 1}, source="ab", tokens=finished.tokens[:1], shown=1, sent=1)
    typed = Controls("reverse", "abcd", max_len=None, page=older)  # sent before the page's decoding, answered now
    answer = lab.do(redraw, user, typed)
    assert user.run.session.tokens == finished.tokens and not {o.name for o in LOOP.outputs} & set(answer)
    assert user.drawn["step"] is False
    since = Controls("reverse", "abcd", max_len=None, page=decoded)  # sent with the newest: its answer stands
    assert lab.do(redraw, user, since)["step"] is True
    assert lab.do(lab.decoding.reset, user, typed)["output"] == ""  # an action that changes the run: answered whole


def test_a_page_that_shows_nothing_clears_the_run_and_a_script_sends_nothing(registry):
    road, user = Road(registry), UserState()
    road.take(user, Controls("reverse", "abc", page=page({"serial": 1, "version": 1}, tokens=[5])))
    assert user.run is not None
    road.take(user, Controls("reverse", "abc", page=""))  # a script's call: the server's own run stays
    assert user.run is not None
    road.take(user, Controls("reverse", "abc", page=json.dumps({"key": None})))
    assert user.run is None


@pytest.mark.parametrize(
    "sent",
    ["{not json", json.dumps({"key": {"serial": 1}}), page({"serial": 1, "version": 1}, tokens=[10**6])],
)
def test_a_page_decoding_the_server_cannot_use_is_refused_in_one_line(registry, sent):
    with pytest.raises(InputError) as refused:
        Road(registry).take(UserState(), Controls("reverse", "abc", page=sent))
    assert "\n" not in str(refused.value) and "Reset" in str(refused.value)


def test_rebuilt_decodings_are_cached_on_exactly_their_keys(registry):
    road = Road(registry)
    sent = read(page({"serial": 1, "version": 1}, tokens=[5, 6]))
    first, again = road.rebuilt(sent), road.rebuilt(sent)
    assert first.session is not again.session and first.session.tokens == again.session.tokens == [5, 6]
    assert len(road._cache) == 1
    road.rebuilt(read(page({"serial": 1, "version": 1}, tokens=[5, 6], top_k=3)))
    assert len(road._cache) == 2


def server_road(registry, lab, model: str, source: str, play: list) -> UserState:
    """The same clicks on the server's own step loop; what it refused is kept as `user.said`."""
    user, c = UserState(), Controls(model, source, top_k=8, max_len=None)
    user.said, user.hypotheses = [], []
    for action, *args in play:
        try:
            if action == "source":
                c.source = args[0]
            elif action in ("beam", "greedy"):
                c.strategy, c.beam_size = action, args[0] if args else 4
            elif action == "ablate":
                HeadTests(lab.decoding).ablate(user, c, args[0])
            elif action == "tree":  # a node clicked, its hypothesis drawn, then "Decode on from here"
                beam, number, strategy = args
                run, c.options = user.run, {"tree_beam": beam}
                key, state = key_of(run, beam), run.states.get(TreeState)
                node = number % len(state.tree(run, key, beam)[0].nodes)
                pick(user, c, node)
                user.hypotheses.append(jsonable(hypothesis_message(run, state, key, beam, node)()))
                decode_on(strategy)(user, c)
            elif action == "what-if":
                rank, shown = args
                step = user.run.session.steps[shown - 1]
                others = [int(t) for t in step.top_ids if int(t) != step.token]
                c.shown = shown
                lab.decoding.force(user, c, others[rank])
            else:
                getattr(lab.decoding, action)(user, c)
        except InputError as err:
            user.said.append([str(err), True])
    user.source, user.strategy = c.source, c.strategy
    return user


@pytest.fixture(scope="module")
def played(registry, copies, tmp_path_factory):
    """Every scenario played by the page's loop in Node, per model."""
    if NODE is None:
        pytest.skip("Node.js is not installed (tests/run.sh installs it)")
    found = {}
    for model in ("de-en", "reverse"):
        chosen = [(source, play) for name, source, play in scenarios() if name == model]
        request = tmp_path_factory.mktemp("loop") / "request.json"
        request.write_text(json.dumps({"scenarios": [{"source": s, "actions": p} for s, p in chosen]}))
        answer = subprocess.run(node(str(RUNNER), str(copies[model]), str(request)), capture_output=True,
                                text=True, timeout=300, check=True)  # fmt: skip
        found[model] = iter(json.loads(answer.stdout)["scenarios"])
    return [(model, source, play, next(found[model])) for model, source, play in scenarios()]


def assert_same_table(page: dict, server: dict, where: str) -> None:
    """The Beams tab's table made in the page is the server's: the same headers, beams and texts, each score (rounded
    to 3 places by both, from sums of float32 log-probabilities within 1e-4) at most one place apart."""
    score = lambda table: [row[-1] for row in table.get("rows", [])]
    rest = lambda table: {**table, "rows": [row[:-1] for row in table.get("rows", [])]}
    assert rest(page) == rest(server), where
    assert all(abs(a - b) <= 1e-3 + 1e-9 for a, b in zip(score(page), score(server), strict=True)), where


@needs_node
@pytest.mark.slow
def test_the_page_and_the_server_decode_the_same_and_the_server_rebuilds_it(registry, played):
    lab = make_lab(registry)
    assert len(played) == 44
    for model, source, play, page_side in played:
        server_user = server_road(registry, lab, model, source, play)
        by_server = server_user.run
        assert page_side["said"] == server_user.said, (model, source, play)  # the same one-line messages
        assert len(page_side["hypotheses"]) == len(server_user.hypotheses)
        for ours, theirs in zip(page_side["hypotheses"], server_user.hypotheses, strict=True):  # a clicked node's
            same_message(ours.pop("data"), theirs.pop("data"))
            assert ours.pop("total") == pytest.approx(theirs.pop("total"), abs=1e-4), (model, source, play)
            assert ours == theirs, (model, source, play)
        user = UserState()
        lab.decoding.road.take(user, Controls(model, source, page=json.dumps(page_side["decoded"])))
        rebuilt = user.run
        where = f"{model} {source!r} {play}"
        if by_server is None:
            assert rebuilt is None and page_side["key"] is None, where
            continue
        assert page_side["tokens"] == by_server.session.tokens == rebuilt.session.tokens, where
        assert (
            page_side["forced"]
            == [s.forced for s in by_server.session.steps]
            == [s.forced for s in rebuilt.session.steps]
        ), where
        assert page_side["key"] == {"serial": by_server.serial, "version": by_server.version}, where
        before, again = loop(by_server).before, loop(rebuilt).before
        assert (before is None) == (again is None), where
        if before is not None:
            assert [s.token for s in before.steps] == [s.token for s in again.steps] and before.at == again.at, where
        controls = Controls(model, server_user.source, server_user.strategy, top_k=8, max_len=None)
        shown = lab.views.screen(server_user, controls, None, lab.decoding.max_len(controls))
        outputs = {name: key for name, (key, _) in LOOP.view(shown).items()}  # the server's step loop's outputs
        wrote = page_side["outputs"]
        assert [wrote["output"], wrote["status"], wrote["canStep"], wrote["canBack"]] == [
            outputs["output"], outputs["status"], outputs["step"], outputs["back"]], where  # fmt: skip
        assert (wrote["original"]["value"], wrote["original"]["label"] or "") == outputs["original"], where
        undo, again = loop(by_server).undo, loop(rebuilt).undo  # what Back would restore: the same on both
        if undo is None or undo.version != by_server.version:
            assert again is None, where
        else:
            assert again.session.tokens == undo.session.tokens and again.version == by_server.version, where
            assert again.beams == undo.beams, where
            assert (again.before is None) == (undo.before is None), where
            if undo.before is not None:
                tokens = lambda before: [s.token for s in before.steps]
                assert tokens(again.before) == tokens(undo.before), where
                assert (again.before.at, again.before.change) == (undo.before.at, undo.before.change), where
        assert loop(rebuilt).beams == loop(by_server).beams, where  # the Beams tab's
        assert_same_table(page_side["beams"], jsonable(beams_table(by_server)), where)  # ...and its table, in the page
        if page_side["search"]:  # a beam search in the page: the library's tokens and score
            pipeline = registry.entry(model).pipeline
            size = next(a[1] for a in play if a[0] == "beam")
            found = beam_search(pipeline.model, torch.tensor([pipeline.tokenizer.encode(source)]), size)[0]
            assert page_side["search"]["tokens"] == found.tokens, where
            assert page_side["search"]["score"] == pytest.approx(found.score, abs=1e-4), where


@needs_node
@pytest.mark.slow
def test_a_decoding_with_heads_ablated_in_the_page_is_the_librarys_and_the_server_rebuilds_it(
    registry, copies, tmp_path
):
    ablated = [["encoder", 0, 1], ["decoder_self", 1, 0], ["cross", 2, 3], ["cross", 1, 2]]
    plays = [[["run"]], [["step"], ["step"], ["what-if", 0, 2]]]
    request = tmp_path / "request.json"
    scenarios = [{"source": GERMAN[2], "ablate": ablated, "actions": play} for play in plays]
    request.write_text(json.dumps({"scenarios": scenarios}))
    answer = subprocess.run(node(str(RUNNER), str(copies["de-en"]), str(request)), capture_output=True, text=True,
                            timeout=300, check=True)  # fmt: skip
    ran, again = json.loads(answer.stdout)["scenarios"]
    pipeline = registry.entry("de-en").pipeline
    heads = frozenset(Head(*head) for head in ablated)
    library = DecodingSession(pipeline.model, pipeline.tokenizer.encode(GERMAN[2]), interventions=Interventions(heads))
    assert ran["tokens"] == library.run() != DecodingSession(library.model, library.src_ids).run()
    for page_side in (ran, again):
        user = UserState()
        Road(registry).take(user, Controls("de-en", GERMAN[2], page=json.dumps(page_side["decoded"])))
        assert user.run.session.tokens == page_side["tokens"] and user.run.session.interventions.ablate == heads
        assert [s.forced for s in user.run.session.steps] == page_side["forced"]


def every_tab(lab, user: UserState, c: Controls) -> dict:
    """Every tab's message for the user's run at the step it shows, the slow ones filled: tab -> output -> value
    (the step loop's own outputs left out: the page that decoded holds them)."""
    found, loop_outputs = {}, {o.name for o in LOOP.outputs}
    found["the decoding"] = json.loads(json.dumps(jsonable(message(user.run, None, user.shown))))  # what views draw
    for tab in lab.views.tabs:
        user.tab = "none"
        opened = {**lab.open_tab(user, c, tab), **lab.fill(user)}
        found[tab] = json.loads(json.dumps(jsonable({k: v for k, v in opened.items() if k not in loop_outputs})))
    return found


@needs_node
@pytest.mark.slow
def test_every_tab_shows_the_same_for_the_page_decoding_as_for_the_servers(registry, played):
    lab = make_lab(registry)
    chosen = [p for p in played if p[0] == "reverse" and any(a[0] == "what-if" for a in p[2])][:2]
    chosen += [p for p in played if p[0] == "de-en" and p[2] == PLAYS[3]]
    for model, source, play, page_side in chosen:
        by_server = server_road(registry, lab, model, source, play)
        by_server.shown = page_side["shown"]
        c = Controls(model, by_server.run.text, top_k=8, max_len=None)
        server_tabs = every_tab(lab, by_server, c)
        user = UserState()
        c_page = Controls(model, by_server.run.text, top_k=8, max_len=None, page=json.dumps(page_side["decoded"]))
        lab.decoding.road.take(user, c_page)
        page_tabs = every_tab(lab, user, c)
        assert page_tabs.keys() == server_tabs.keys()
        for tab in server_tabs:
            assert page_tabs[tab] == server_tabs[tab], (model, source, play, tab)
