"""Turn and step tracking: which turn and step each event is in.

One tracker for every command and rule that needs it (`events`, `stats`,
`export`, the transcript, the relation rules): while a record is observed
after it, `record.turn` and `record.step` are those in force for that event
(a `turn/end` still belongs to its turn).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

from dshreplay._jsvalues import as_text, is_time
from dshreplay.core.driver import Observer, Record, Run

__all__ = ["TurnTracker", "TurnSpans", "Span"]

INTERRUPTED = "interrupted"  # a turn the log ends inside (a crash, or a session still running)
CLOSED_BY_DSH = "interrupted (closed by dsh)"  # a turn dsh closed on load after a crash: its logged turn/end
NOT_ENDED = "not ended"  # a turn the next turn/start left without its turn/end
UNKNOWN = "unknown"  # a turn open where the fold fails: how it ended is past the answer

# The codes of the tool/result errors dsh writes to close an interrupted turn (FORMAT.md section 8):
TOOL_NOT_STARTED = "TOOL_NOT_STARTED"  # only asked for
TOOL_OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN"  # a tool/call was recorded: it may have had side effects
CLOSER_CODES = frozenset({TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN})


class Placed(Protocol):
    """What every observer may read of `record.item`, whichever it is (an Event, a PackedRun
    of chunks, a Misplaced record): where it lies, and its type and time as logged."""

    @property
    def seq(self) -> int: ...

    @property
    def count(self) -> int: ...

    @property
    def line(self) -> int: ...

    @property
    def type(self) -> Any: ...

    @property
    def time(self) -> Any: ...


class Stored(Placed, Protocol):
    """A `record.item` read as the one record it stores (what a handler of one event type reads)."""

    @property
    def record(self) -> dict[str, Any]: ...


def _data(item: Stored) -> dict[str, Any]:
    data = item.record.get("data")
    return data if type(data) is dict else {}


@dataclass(slots=True)
class Span:
    """A turn or a step: from its start event to its end (or the last event, when open)."""

    start: int
    end: int | None
    turn: object
    step: object = None
    start_time: object = 0
    end_time: object = 0
    reason: object = None  # a turn's turn/end reason, as logged ({"kind": ...})
    cut: int | None = None  # a turn with no turn/end: the seq of the turn/start that opened the next one
    closers: int | None = None  # a turn dsh closed on load: the seq where its closers begin (see TurnSpans)

    @property
    def is_open(self) -> bool:
        return self.end is None

    @property
    def duration_ms(self) -> int | float | None:
        """From its start's time to its end's, in milliseconds: None while it has no end event, or
        either has no time."""
        start, end = self.start_time, self.end_time
        if self.end is None or not is_time(start) or not is_time(end):
            return None
        duration: int | float = end - start  # type: ignore[operator]  # (is_time: a number)
        return duration

    @property
    def ending(self) -> str:
        """How a turn ended (see `turn_ending`); "interrupted" when the log ends inside it, "not ended"
        when the next turn starts without its turn/end."""
        if self.end is None:
            return INTERRUPTED if self.cut is None else NOT_ENDED
        return turn_ending(self.reason)

    def ending_read(self, failed_at: int | None) -> str:
        """`ending` as an answer that stops where the fold fails (at seq `failed_at`; None: it reads
        to the end) tells it: "unknown" for a turn still open there, whatever the lines past it say
        (its turn/end, or the next turn/start, at or after `failed_at`, or none)."""
        if failed_at is None or (self.end is not None and self.end < failed_at) \
                or (self.cut is not None and self.cut < failed_at):
            return self.ending
        return UNKNOWN

    @property
    def last(self) -> int | None:
        """Its last seq: its turn/end's, or the one before the next turn's start (None: the log ends inside it)."""
        return self.end if self.end is not None else None if self.cut is None else self.cut - 1


def turn_ending(reason: Any) -> str:
    """A turn/end reason in words: completed, error CODE, aborted by WHO, "interrupted (closed by dsh)"
    (the reason only dsh's closers write, on loading a log that ends inside a turn), or its own kind."""
    reason = reason if type(reason) is dict else {}
    kind = reason.get("kind")
    if kind == "interrupted":
        return CLOSED_BY_DSH
    if kind == "error":
        error = reason.get("error")
        code = error.get("code") if type(error) is dict else None
        return f"error {as_text(code)}" if code is not None else "error"
    if kind == "aborted":
        by = reason.get("reason")
        who = by.get("kind") if type(by) is dict else None
        return f"aborted by {as_text(who)}" if who is not None else "aborted"
    return as_text(kind) if kind is not None else "unknown"


def number(value: Any) -> int | float | None:
    """A turn or step as the relation rules compare it: the number, or None (not a number)."""
    t = type(value)
    found: int | float | None = value if t is int or t is float else None
    return found


class TurnTracker(Observer):
    """The turn and step in force for each record (`record.turn`, `record.step`;
    a turn/end or step/end still belongs to what it ends), and what the turn
    and step rules compare with. (`TurnSpans` also keeps every turn and step.)

    While a record is observed after this tracker:
    turn, step            in force, as logged
    open_turn, open_step  the same as numbers (None: none open, or not a number)
    prior_turn, prior_step  (on a turn/start or step/start) the numbers open before it
    turns_ended           turn/end events so far
    steps_ended           step/end events since the last turn/start
    """

    handlers = {"turn/start": "turn_start", "turn/end": "turn_end", "step/start": "step_start",
                "step/end": "step_end"}

    turn: Any  # as logged
    step: Any
    open_turn: int | float | None
    open_step: int | float | None
    prior_turn: int | float | None
    prior_step: int | float | None
    _closer: Callable[[Record], None]

    def begin(self, run: Run) -> None:
        self.turn = self.step = None
        self.open_turn = self.open_step = None
        self.prior_turn = self.prior_step = None
        self.turns_ended = self.steps_ended = 0
        self._closing = 0  # 1: the step ended, 2: the turn ended (closed before the next record)
        self._closer = self._close

    def _close(self, record: Record | None = None) -> None:
        """What the last turn/end or step/end ended is no longer in force for `record`."""
        if self._closing == 2:
            self.turn = self.open_turn = None
        self.step = self.open_step = None
        self._closing = 0
        if record is not None:
            record.turn, record.step = self.turn, self.step

    def step_start(self, record: Record) -> None:
        item: Stored = record.item
        data = _data(item)
        self.prior_step = self.open_step
        step = self.step = record.step = data.get("step")
        self.open_step = step if type(step) is int or type(step) is float else None

    def step_end(self, record: Record) -> None:
        self.steps_ended += 1
        if not self._closing:
            self._closing = 1
            record.then(self._closer)

    def turn_start(self, record: Record) -> None:
        item: Stored = record.item
        data = _data(item)
        self.prior_turn, self.prior_step = self.open_turn, self.open_step
        turn = self.turn = record.turn = data.get("turn")
        self.open_turn = turn if type(turn) is int or type(turn) is float else None
        self.step = self.open_step = record.step = None
        self.steps_ended = 0

    def turn_end(self, record: Record) -> None:
        self.turns_ended += 1
        if not self._closing:
            record.then(self._closer)
        self._closing = 2

    def in_force_after(self) -> tuple[Any, Any]:
        """(turn, step) in force right after the last event observed (None: none open)."""
        closing = self._closing  # (a turn/end or step/end just observed: closed before the next record)
        return (None if closing == 2 else self.turn), (None if closing else self.step)

    def finish(self, run: Run) -> None:
        if self._closing:  # what is open at the end of the log
            self._close()


class TurnSpans(TurnTracker):
    """The turn tracker that also keeps the span of every turn and step
    (`turns`, `steps`, in log order): what a pass that reports them requires;
    a pass that only checks rules keeps none."""

    handlers = {**TurnTracker.handlers, "tool/result": "tool_result"}

    def begin(self, run: Run) -> None:
        super().begin(run)
        self.turns: list[Span] = []
        self.steps: list[Span] = []
        self._closing_run: tuple[int, int] | None = None  # (first, last) seq of adjacent closer-like events

    def _closer_like(self, seq: int) -> None:
        """A synthetic tool/result or a step/end at `seq`: it extends the run of them it is adjacent to."""
        run = self._closing_run
        self._closing_run = (run[0] if run is not None and run[1] == seq - 1 else seq, seq)

    def tool_result(self, record: Record) -> None:
        item: Stored = record.item
        error = _data(item).get("error")
        if type(error) is dict and error.get("code") in CLOSER_CODES:
            self._closer_like(item.seq)

    def step_start(self, record: Record) -> None:
        super().step_start(record)
        item: Stored = record.item
        self.steps.append(Span(item.seq, None, self.turn, self.step, item.time))

    def step_end(self, record: Record) -> None:
        steps = self.steps
        if steps and steps[-1].end is None:
            steps[-1].end, steps[-1].end_time = record.item.seq, record.item.time
        self._closer_like(record.item.seq)
        super().step_end(record)

    def turn_start(self, record: Record) -> None:
        turns = self.turns
        item: Stored = record.item
        if turns and turns[-1].end is None and turns[-1].cut is None:  # (the last turn had no turn/end)
            turns[-1].cut = item.seq
        super().turn_start(record)
        turns.append(Span(item.seq, None, self.turn, None, item.time))

    def turn_end(self, record: Record) -> None:
        turns = self.turns
        if turns and turns[-1].end is None:
            item: Stored = record.item
            turns[-1].end, turns[-1].end_time = item.seq, item.time
            turns[-1].reason = _data(item).get("reason")
            if turns[-1].ending == CLOSED_BY_DSH:  # dsh's closers: the synthetic results and step/end just before
                run = self._closing_run
                turns[-1].closers = run[0] if run is not None and run[1] == item.seq - 1 else item.seq
        super().turn_end(record)
