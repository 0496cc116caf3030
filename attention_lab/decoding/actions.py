"""What Run, Step, Back, Reset and a what-if do to a user's run, and how another feature changes the decoding (a
session of the same source put in its place, the one before kept beside it). Each action returns the step the page
should show (None: the latest); the page works out what to redraw (attention_lab.page.render). Input that cannot be
used raises InputError, before anything changes."""

from __future__ import annotations

from transformer import DecodingSession

from ..checks import InputError, as_int
from ..controls import Controls
from ..models.registry import Registry
from ..run.search import decoded_on
from ..run.state import Before, Run, Undo, UserState, asks_for, changed, first_difference, loop, new_run
from .from_page import Road

FINISHED = "Finished: use Back, a what-if token, or Reset."
BEAM_MODE = (
    "Beam mode: Step is off, since it decodes greedily. Run decodes with beam search (the Beams tab lists them)."
)


def decode_to_end(run: Run, strategy: str, beam_size: object) -> None:
    """Decode the run to the end: greedily from where it is, or by beam search from the start (its best hypothesis
    replayed through the session, the live beams of each step kept for the Beams tab). The strategy and beam size
    are checked first: a bad choice leaves the run as it is."""
    path = run.session.tokens if strategy == "greedy" else []
    session, search = decoded_on(run.session, path, strategy, beam_size)
    run.session = session
    loop(run).beams = search.history if search is not None else []


def replace_decoding(run: Run, session: DecodingSession, before: Before | None, undoable: bool = False) -> None:
    """Make `session` (of the run's source) the run's decoding, with `before` compared beside it (None: nothing);
    if `undoable`, the decoding it replaces is what the next Back restores."""
    kept = loop(run)
    undo = Undo(0, run.session, kept.before, kept.beams)
    run.session, kept.before, kept.beams = session, before, []
    changed(run)
    undo.version = run.version
    kept.undo = undo if undoable else None


def branched(run: Run, session: DecodingSession, change: str) -> Before:
    """The run's decoding as the one before `session`, compared from the first step where they part."""
    return Before(list(run.session.steps), first_difference(run.session.steps, session.steps), change)


class DecodingActions:
    """The decoding actions over the shared models."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.road = Road(registry)  # the decoding the page shows, taken as the user's run before every action

    def max_len(self, c: Controls) -> int | None:
        """The max length asked for; none: the model's, as new_run takes it."""
        entry = self.registry.entries.get(c.model)
        return int(c.max_len) if c.max_len else entry.pipeline.model.config.max_new_tokens if entry else None

    def start(self, c: Controls) -> Run:
        """A new run of the controls' model, source and options."""
        return new_run(self.registry.entry(c.model), c.source, c.top_k, self.max_len(c))

    def current(self, user: UserState, c: Controls) -> Run:
        """The user's run, restarted when the model, the text or the options changed."""
        if not asks_for(user.run, c, self.max_len(c)):
            user.run = self.start(c)
        return user.run

    def run(self, user: UserState, c: Controls) -> None:
        """Decode to the end (a stepped decoding goes on; a finished one is decoded afresh)."""
        run = self.current(user, c)
        if run.session.finished:
            run.session.reset()
        decode_to_end(run, c.strategy, c.beam_size)
        loop(run).before = None
        changed(run)

    def step(self, user: UserState, c: Controls) -> None:
        """One greedy step: the one decoded ahead, when it was decoded from this version of the run."""
        if c.strategy == "beam":
            raise InputError(BEAM_MODE)
        run = self.current(user, c)
        if run.session.finished:
            raise InputError("Decoding has finished: use Back, a what-if token, or Reset.")
        kept = loop(run)
        if kept.ahead is not None and kept.ahead[0] == run.version:
            run.session = kept.ahead[1]
        else:
            run.session.step()
        kept.beams = []
        changed(run, "step")

    def step_ahead(self, user: UserState) -> None:
        """Decode the user's next greedy step while they look at this one, outside their lock (a click meanwhile
        is not kept waiting); kept for Step if the run has not changed since."""
        with user.lock:
            run = user.run
            if run is None or run.session.finished:
                return
            ahead = loop(run).ahead
            if ahead is not None and ahead[0] == run.version:
                return
            version, forked = run.version, run.session.fork()
        forked.step()
        with user.lock:
            if user.run is run and run.version == version:
                loop(run).ahead = (version, forked)

    def back(self, user: UserState, c: Controls) -> None:
        """One step back; right after a decoding was replaced whole (`replace_decoding`), back to the one it replaced."""
        run = user.run
        kept = loop(run) if run is not None else None
        if kept is not None and kept.undo is not None and kept.undo.version == run.version:
            undo, kept.undo = kept.undo, None
            run.session, kept.before, kept.beams = undo.session, undo.before, undo.beams
            changed(run)
            return
        if run is None or not run.session.steps:
            raise InputError("Nothing to go back to: this is step 0.")
        run.session.back()
        kept.beams = []  # the beam table described the finished decoding, not this one
        changed(run, "back")

    def reset(self, user: UserState, c: Controls) -> None:
        user.run = None

    def switch(self, user: UserState, c: Controls) -> None:
        """Another model chosen: the run of the model before is dropped (a run of the chosen one is kept, as when
        a Run of it was answered first)."""
        if user.run is not None and user.run.entry.name != c.model:
            user.run = None

    def force(self, user: UserState, c: Controls, candidate: object) -> int:
        """What if: take the chosen candidate (a token id) at the shown step instead, and decode on greedily from
        there."""
        run = user.run
        if run is None or not run.session.steps or candidate in (None, ""):
            raise InputError("Decode a step first, then pick another candidate token.")
        step = max(1, min(int(c.shown or 1), len(run.session.steps)))
        session = run.session
        token = as_int(candidate)
        token = -1 if token is None else token
        if not session.can_write(token, step):  # pad, bos, or what the model's rules forbid at this step
            raise InputError("Pick one of the candidate tokens listed for this step.")
        loop(run).before = Before(list(session.steps), step, "what-if")
        session.rewind(step - 1)  # checked first, so a bad choice loses nothing
        session.step(force=token)
        session.run()
        loop(run).beams = []
        changed(run)
        return step
