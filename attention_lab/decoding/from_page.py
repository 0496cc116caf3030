"""The server's side of the step loop that decodes in the page (decoding/in_page.mjs). Every request the page sends
carries the decoding it shows (the control `page`): the model, the source, the options, every token written, the
step shown, the decoding before a what-if, and right after a branch from the Beam tree the decoding it replaced,
which Back restores on the server as in the page. Before the server answers, it makes that decoding the user's run,
rebuilt by forced decoding, so every tab, action and export works on what the page shows. The rebuilt sessions are
cached on exactly those keys.

The run keeps the page's key (its serial and version), so the page is sent no decoding it already holds, and the
step loop's own outputs (the Output, the notice, the buttons), which the page wrote for itself, are taken as drawn
(attention_lab.page.render.Views.drawn_by_page): an answer made for an older decoding never overwrites them. An event
sent with a decoding older than one taken (gradio may run a session's events out of order) is answered without the
step loop's outputs (`older`), unless its action changed the run: the page wrote them since, for a newer decoding.
The page itself writes its own again after an answer to an event it sent before it wrote them (answers.mjs).
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from transformer import DecodingSession, Head, Interventions

from ..assets import url
from ..checks import InputError
from ..controls import Controls
from ..models.registry import Registry
from ..page_copy.copies import VENDOR, copyable, home
from ..run.search import checked_beam, checked_strategy, searched
from ..run.state import BRANCH, Before, Run, Undo, UserState, interventions_key, loop, new_run
from .messages import Key

logger = logging.getLogger("attention_lab")
CACHED = 32  # rebuilt sessions kept, app-wide
RUNTIME = {
    "ort": "ort.wasm.bundle.min.mjs",
    "wasm": "ort-wasm-simd-threaded.wasm.gz",
    "tokenizers": "tokenizers.min.mjs",
}


def copies(registry: Registry) -> dict[str, Path]:
    """Where each model's page copy is, or will be once made (page_copy.copies): the models that have one."""
    return {name: home(entry) for name, entry in registry.entries.items() if copyable(entry.pipeline)}


def road_files(registry: Registry) -> list[Path]:
    """What the page loads to decode itself, served by the app as it is: the copies' folders and the runtime."""
    return [*copies(registry).values(), VENDOR]


def road_config(registry: Registry, options: dict | None = None) -> dict:
    """What the page's road (decoding/in_page.mjs) is told as the page opens: each model's copy folder by address
    (None: it decodes on the server), the runtime's files, and the decoding options' first values."""
    found = copies(registry)
    return {
        "options": options or {},
        "copies": {name: url(found[name]) + "/" if name in found else None for name in registry.entries},
        "runtime": {part: url(VENDOR / file) for part, file in RUNTIME.items()},
    }


# What the page sends in place of a decoding when it shows one the server made, or none (page/wiring.py SENDS_PAGE): a
# request that carries it, or a decoding, came from the page; a script through the API sends neither. The page sends
# it as JSON, {"servers": true, "tab": the open tab}; this text alone is read the same way.
SERVERS = "the server's"


def sent_by_page(c: Controls) -> bool:
    """Whether the page sent this event (it always says what it shows), not a script through the API."""
    return bool(c.page)


@dataclass(frozen=True)
class Written:
    """A decoding the page wrote: its tokens, the decoding before a what-if, ablation or branch (its tokens and where
    it changed), which of those made it (an ablation's decoding before is decoded without it), and the size of the
    beam search that wrote it (None: none did; its beams are kept for the Beams tab)."""

    tokens: tuple[int, ...] = ()
    before: tuple[tuple[int, ...], int] | None = None
    change: str = "what-if"
    beam_size: int | None = None


@dataclass(frozen=True)
class PageDecoding:
    """What the page says it shows (decoding/loop.mjs's `decoded`); `key` None: it shows nothing decoded."""

    key: Key | None
    model: str = ""
    source: str = ""
    top_k: int = 8
    max_len: int | None = None
    written: Written = Written()  # its tokens, the decoding before and the beam search that wrote it
    shown: int = 0
    ablate: frozenset[Head] = frozenset()  # the heads ablated throughout
    strategy: str = "greedy"  # what the page wrote the step loop's outputs for
    sent: int = 0  # its number in the order the page sent its decodings (0: not numbered)
    here: frozenset[str] = frozenset()  # the tabs the page draws from its own computation (assets/here.mjs)
    undo: Written | None = None  # right after a branch from the Beam tree: the decoding it replaced (Back's)


def read(text: object) -> PageDecoding | None:
    """The page's decoding from the control's text; None when the page sent none (it decodes nothing itself)."""
    if not isinstance(text, str) or not text.strip() or text == SERVERS:
        return None
    try:
        sent = json.loads(text)
        if sent.get("servers"):
            return None
        order = int(sent.get("sent") or 0)
        if sent.get("key") is None:
            return PageDecoding(None, sent=order)
        return PageDecoding(
            Key(int(sent["key"]["serial"]), int(sent["key"]["version"])),
            str(sent["model"]),
            str(sent["source"]),
            int(sent["top_k"]),
            int(sent["max_len"]) if sent.get("max_len") else None,
            written_of(sent),
            int(sent.get("shown") or 0),
            frozenset(Head(str(kind), int(layer), int(head)) for kind, layer, head in sent.get("ablate") or ()),
            checked_strategy(sent.get("strategy") or "greedy"),
            order,
            frozenset(str(tab) for tab in sent.get("here") or ()),
            written_of(sent["undo"]) if sent.get("undo") else None,
        )
    except (ValueError, TypeError, KeyError, AttributeError) as err:
        raise InputError("The page sent a decoding the server cannot read; press Reset.") from err


def written_of(sent: dict) -> Written:
    """A decoding as the page sends it ({tokens, before: {tokens, at, change} or null, beam_size}), checked."""
    before = sent.get("before")
    return Written(
        tuple(int(t) for t in sent["tokens"]),
        (tuple(int(t) for t in before["tokens"]), int(before["at"])) if before else None,
        checked_change(before.get("change") or "what-if") if before else "what-if",
        checked_beam(sent["beam_size"]) if sent.get("beam_size") else None,
    )


def checked_change(change: object) -> str:
    """What the page says made its decoding before: a what-if, an ablation or a branch from the Beam tree (a
    ValueError otherwise)."""
    if change not in ("what-if", "ablation", BRANCH):
        raise ValueError(f"unknown change {change!r}")
    return str(change)


def open_tab_of(text: object) -> str | None:
    """The tab the page had open when it sent this event, as its text names it (the page opens a tab it draws itself
    with no request: the server learns of it with the next event); None when it names none."""
    if not isinstance(text, str) or not text.startswith("{"):
        return None
    try:
        tab = json.loads(text).get("tab")
    except (ValueError, AttributeError):
        return None
    return tab if isinstance(tab, str) else None


class Road:
    """Makes the page's decoding the user's run (`take`), rebuilding sessions by forced decoding, cached."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._cache: OrderedDict[tuple, DecodingSession] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, user: UserState, c: Controls) -> PageDecoding | None:
        """Make what the page shows (`c.page`) the user's run, unless it is already (call under the user's lock);
        what the page sent, when it did. The page holds that decoding and shows its step: neither is sent again.

        gradio may run a session's events out of order (a tab opened, then Step: the Step's event first), so a
        decoding the page sent before one taken already is older than the run: it is not taken."""
        sent = read(c.page)
        if sent is None:
            user.here = frozenset()  # the page decodes nothing itself: the server draws every tab
            return None
        if sent.sent and sent.sent < user.page_sent:
            return None
        user.page_sent = max(user.page_sent, sent.sent)
        user.here = sent.here
        run = user.run
        if sent.key is None:
            user.run = None
            return sent if run is not None else None
        if run is not None and Key(run.serial, run.version) == sent.key:
            return None
        user.adopt(self.rebuilt(sent))
        user.shown = sent.shown
        user.drawn["steps"] = (sent.key, sent.shown)
        return sent

    def older(self, user: UserState, c: Controls) -> bool:
        """Whether the page sent `c` with a decoding older than one taken already (`take` leaves it): since, the page
        wrote the step loop's outputs for a newer one, which an answer made for this one must leave as they are."""
        sent = read(c.page)
        return sent is not None and 0 < sent.sent < user.page_sent

    def rebuilt(self, sent: PageDecoding) -> Run:
        """A run of the page's decoding: its source decoded with every token it wrote forced."""
        run = new_run(self.registry.entry(sent.model), sent.source, sent.top_k, sent.max_len)
        plain = run.session
        if sent.ablate:
            model = run.pipeline.model
            try:
                held = Interventions(ablate=sent.ablate)
                run.session = DecodingSession(model, plain.src_ids, plain.top_k, plain.max_new_tokens, held)
            except ValueError as err:
                raise InputError(f"The page ablated a head the model does not have ({err}); press Reset.") from err
        kept, start = loop(run), run.session
        run.session, kept.before, kept.beams = self.decoded(run.entry.name, plain, start, sent.written)
        if sent.undo is not None:  # Back right after restores it, as it does in the page (decoding/actions.py back)
            kept.undo = Undo(sent.key.version, *self.decoded(run.entry.name, plain, start, sent.undo))
        run.serial, run.version = sent.key.serial, sent.key.version
        return run

    def decoded(
        self, model: str, plain: DecodingSession, start: DecodingSession, written: Written
    ) -> tuple[DecodingSession, Before | None, list[list]]:
        """A decoding the page wrote, from `start` (its source, under its interventions; `plain`: with none): the
        session with its tokens forced, the decoding before it (an ablation's decoded without the heads) and the
        live beams of the search that wrote it (none if none did)."""
        session = self.forced(model, start, written.tokens)
        before = None
        if written.before is not None:
            tokens, at = written.before
            origin = plain if written.change == "ablation" else start  # an ablation's decoding before has none
            before = Before(list(self.forced(model, origin, tokens).steps), at, written.change)
        beams = self.beams(model, start, written.beam_size, written.tokens) if written.beam_size else []
        return session, before, beams

    def beams(self, model: str, start: DecodingSession, size: int, tokens: tuple[int, ...]) -> list[list]:
        """The live beams of each step of the beam search of `size` that wrote `tokens` (the Beams tab's), searched
        again here, cached; none when the server's search writes other tokens than the page's."""
        key = ("beams", model, tuple(start.src_ids), start.max_new_tokens, interventions_key(start), size)
        with self._lock:
            found = self._cache.get(key)
        if found is None:
            found = searched(start, size, history=True)
            with self._lock:
                self._cache[key] = found
        if [*found.tokens, start.model.config.eos_id][: len(tokens)] != list(tokens):
            logger.warning("the page's beam search wrote %s, the server's %s", list(tokens), found.tokens)
            return []
        return found.history

    def forced(self, model: str, start: DecodingSession, tokens: tuple[int, ...]) -> DecodingSession:
        """`start` (a session with no steps yet) with `tokens` written, from the cache or decoded now (a token the
        model never writes at its step is refused in one line)."""
        key = (model, tuple(start.src_ids), start.top_k, start.max_new_tokens, interventions_key(start), tokens)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key].fork()
        session = start.fork()
        for step, token in enumerate(tokens, 1):
            if session.finished or not session.can_write(token, step):
                raise InputError(
                    f"The page's decoding cannot be rebuilt: step {step} wrote token {token}; press Reset."
                )
            session.step(force=token)
        with self._lock:
            self._cache[key] = session.fork()
            while len(self._cache) > CACHED:
                self._cache.popitem(last=False)
        return session
