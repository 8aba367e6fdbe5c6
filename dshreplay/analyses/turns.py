"""Turn, step and approval tracking: which turn and step each event is in.

One observer for every command that needs it (`events`, `stats`, `export`):
while an event is observed after it, `turn` and `step` are those in force
for that event (a `turn/end` still belongs to its turn).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dshreplay.core.driver import Observer, Run
from dshreplay.jsvalues import as_key, as_text


def _data(item):
    if item.row is not None:
        return item.row_data
    data = item.record.get("data")
    return data if type(data) is dict else {}




@dataclass
class Span:
    """A turn or a step: from its start event to its end (or the last event, when open)."""

    start: int
    end: int | None
    turn: object
    step: object = None
    start_time: object = 0
    end_time: object = 0
    reason: object = None  # a turn's turn/end reason, as logged ({"kind": ...})

    @property
    def is_open(self) -> bool:
        return self.end is None

    @property
    def ending(self) -> str:
        """How a turn ended (see `turn_ending`); "interrupted" when the log ends inside it."""
        return "interrupted" if self.end is None else turn_ending(self.reason)


def turn_ending(reason) -> str:
    """A turn/end reason in words: completed, error CODE, aborted by WHO, or its own kind."""
    reason = reason if type(reason) is dict else {}
    kind = reason.get("kind")
    if kind == "error":
        error = reason.get("error")
        code = error.get("code") if type(error) is dict else None
        return f"error {as_text(code)}" if code is not None else "error"
    if kind == "aborted":
        by = reason.get("reason")
        who = by.get("kind") if type(by) is dict else None
        return f"aborted by {as_text(who)}" if who is not None else "aborted"
    return as_text(kind) if kind is not None else "unknown"


@dataclass
class Approval:
    """One approval asked (and decided), or a decision without an ask."""

    asked_seq: int | None
    decided_seq: int | None
    id: object
    tool: object
    call_id: object
    outcome: object
    reason: object
    flag: str  # "", "no decision", "decision without ask"
    asked_time: object = None
    decided_time: object = None

    def row(self) -> list:
        return [self.asked_seq, self.decided_seq, self.id, self.tool, self.call_id, self.outcome, self.reason,
                self.flag]


@dataclass
class TurnTracker(Observer):
    turn: object = None  # the turn in force for the event being observed
    step: object = None
    turns: list[Span] = field(default_factory=list)
    steps: list[Span] = field(default_factory=list)
    approvals: list[Approval] = field(default_factory=list)
    _asked: dict = field(default_factory=dict)
    _close_turn: bool = False
    _close_step: bool = False

    def observe(self, item, replacement) -> None:
        if self._close_step:
            self.step, self._close_step = None, False
        if self._close_turn:
            self.turn, self._close_turn = None, False
        kind = item.type
        if kind == "turn/start":
            self.turn = _data(item).get("turn")
            self.step = None
            self.turns.append(Span(item.seq, None, self.turn, start_time=item.time))
        elif kind == "step/start":
            self.step = _data(item).get("step")
            self.steps.append(Span(item.seq, None, self.turn, self.step, start_time=item.time))
        elif kind == "step/end":
            if self.steps and self.steps[-1].is_open:
                self.steps[-1].end, self.steps[-1].end_time = item.seq, item.time
            self._close_step = True
        elif kind == "turn/end":
            if self.turns and self.turns[-1].is_open:
                self.turns[-1].end, self.turns[-1].end_time = item.seq, item.time
                self.turns[-1].reason = _data(item).get("reason")
            self._close_turn = self._close_step = True
        elif kind == "approval/asked":
            data = _data(item)
            entry = Approval(item.seq, None, data.get("id"), data.get("toolName"), data.get("callId"), None,
                             data.get("reason"), "no decision", item.time)
            self.approvals.append(entry)
            self._asked[as_key(data.get("id"))] = entry
        elif kind == "approval/decided":
            data = _data(item)
            entry = self._asked.pop(as_key(data.get("id")), None)
            if entry is None:
                self.approvals.append(Approval(None, item.seq, data.get("id"), None, None, data.get("outcome"),
                                               None, "decision without ask", None, item.time))
            else:
                entry.decided_seq, entry.outcome, entry.flag = item.seq, data.get("outcome"), ""
                entry.decided_time = item.time

    def in_force_after(self) -> tuple:
        """(turn, step) in force right after the last event observed (None: none open)."""
        return (None if self._close_turn else self.turn), (None if self._close_step else self.step)

    def finish(self, run: Run) -> None:
        self.last_seq = run.last_seq
