"""What Run, Step, Back, Reset and a what-if do to a user's run. Each action changes the run and returns the step
the page should show (None: the latest); the page works out what to redraw (attention_lab.page.render). Input that
cannot be used raises InputError, before anything changes."""

from __future__ import annotations

from transformer import DecodingSession

from ..checks import InputError, as_int
from ..controls import Controls
from ..models.registry import Registry
from .state import Before, Run, Undo, UserState, asks_for, decode_to_end, first_difference, new_run

FINISHED = "Finished: use Back, a what-if token, or Reset."
BEAM_MODE = (
    "Beam mode: Step is off, since it decodes greedily. Run decodes with beam search (the Beams tab lists them)."
)


class Decoding:
    """The decoding actions over the shared models."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

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
        run.beams = decode_to_end(run, c.strategy, c.beam_size)
        run.before = None
        run.changed()

    def step(self, user: UserState, c: Controls) -> None:
        """One greedy step: the one decoded ahead, when it was decoded from this version of the run."""
        if c.strategy == "beam":
            raise InputError(BEAM_MODE)
        run = self.current(user, c)
        if run.session.finished:
            raise InputError("Decoding has finished: use Back, a what-if token, or Reset.")
        if run.ahead is not None and run.ahead[0] == run.version:
            run.session = run.ahead[1]
        else:
            run.session.step()
        run.beams = []
        run.changed("step")

    def step_ahead(self, user: UserState) -> None:
        """Decode the user's next greedy step while they look at this one, outside their lock (a click meanwhile
        is not kept waiting); kept for Step if the run has not changed since."""
        with user.lock:
            run = user.run
            if run is None or run.session.finished or (run.ahead is not None and run.ahead[0] == run.version):
                return
            version, forked = run.version, run.session.fork()
        forked.step()
        with user.lock:
            if user.run is run and run.version == version:
                run.ahead = (version, forked)

    def back(self, user: UserState, c: Controls) -> None:
        """One step back; right after a decoding was replaced whole (`replace`), back to the one it replaced."""
        run = user.run
        if run is not None and run.undo is not None and run.undo.version == run.version:
            undo, run.undo = run.undo, None
            run.session, run.before, run.beams = undo.session, undo.before, undo.beams
            run.changed()
            return
        if run is None or not run.session.steps:
            raise InputError("Nothing to go back to: this is step 0.")
        user.run.session.back()
        user.run.beams = []  # the beam table described the finished decoding, not this one
        user.run.changed("back")

    def reset(self, user: UserState, c: Controls) -> None:
        user.run = None

    @staticmethod
    def replace(run: Run, session: DecodingSession, change: str) -> None:
        """Make `session` (of the run's source) the run's decoding; the one it replaces is compared beside it from
        the first step they differ at (as the `change`, e.g. "branch from the tree") and is what the next Back
        restores."""
        undo = Undo(0, run.session, run.before, run.beams)
        run.before = Before(list(run.session.steps), first_difference(run.session.steps, session.steps), change)
        run.session, run.beams = session, []
        run.changed()
        undo.version = run.version
        run.undo = undo

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
        run.before = Before(list(session.steps), step, "what-if")
        session.rewind(step - 1)  # checked first, so a bad choice loses nothing
        session.step(force=token)
        session.run()
        run.beams = []
        run.changed()
        return step
