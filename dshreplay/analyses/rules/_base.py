"""What every family of relation rules shares: its findings list and the comparisons it makes."""

from __future__ import annotations

from typing import Any, ClassVar, TypedDict

from dshreplay._jsvalues import MISSING, dig, is_number, shown
from dshreplay.analyses.findings import DEFAULT_CAP, FindingList, finding
from dshreplay.analyses.trackers.turns import Placed
from dshreplay.core.driver import Observer, Run

num = is_number


def same(a: object, b: object) -> bool:
    """JavaScript `===` on the numbers and nulls these rules compare."""
    if a is None or b is None:
        return a is None and b is None
    return num(a) and num(b) and a == b


def show(value: Any) -> str:
    """A turn or step number as a message names it ("none" when absent or null)."""
    if value is None or value is MISSING:
        return "none"
    return str(int(value)) if is_number(value) and float(value).is_integer() else shown(value)


def opt(value: object) -> str:
    """A log value as a message quotes it ("none" when absent)."""
    return "none" if value is MISSING else shown(value)


def get(value: Any, *keys: str | int) -> Any:
    if len(keys) == 1 and type(value) is dict:  # the common case, without dig's loop
        return value.get(keys[0], MISSING)
    return dig(value, *keys, default=MISSING)


class Where(TypedDict, total=False):
    """Where a finding that only the end of the log tells lies: its last event (nothing: no event)."""

    seq: int
    line: int


class RuleFindings(Observer):
    """The findings of a pass's relation rules: one list every family adds to
    (at most `cap` per code; see FindingList)."""

    def __init__(self, cap: int | None = DEFAULT_CAP) -> None:
        self.cap = cap

    def begin(self, run: Run) -> None:
        self.findings = FindingList(self.cap)


class Family(Observer):
    """One family of relation rules: an observer whose `handlers` check the
    events of their type (with the pass's trackers, which it requires) into
    the pass's RuleFindings; `end` adds what only the end of the log tells
    (Relations calls it, in the order of the families' findings)."""

    requires: ClassVar[tuple[type[Observer], ...]] = (RuleFindings,)

    findings: FindingList

    def begin(self, run: Run) -> None:
        self.findings = run.get(RuleFindings).findings

    def add(self, code: str, message: str, event: Placed, pointer: str | None = None) -> None:
        self.findings.append(finding(code, message, seq=event.seq, line=event.line, pointer=pointer))


def data_of(event: Any) -> Any:  # (an Event; a PackedRun or a member of one: its row's)
    """An event's `data` as logged (a packed row's members: the row's)."""
    return event.record.get("data") if event.row is None else event.row_data


def not_open_turn(event: Placed, turn: Any, open_turn: object) -> str:
    """Why an event naming `turn` does not lie in the open turn (when it does not)."""
    if open_turn is None:
        return f"{event.type} for turn {show(turn)} outside any open turn"
    return f"{event.type} names turn {show(turn)} but the open turn is {show(open_turn)}"
