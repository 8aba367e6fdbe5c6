"""`events`: find events by type, range, turn, surface status and text."""

from __future__ import annotations

from dataclasses import dataclass

from dshreplay.errors import DeriveError
from dshreplay.analyses.render import message_text, utc_time
from dshreplay.core.surface import SURFACE_TYPES, derive_message

CURRENT, SHADOWED, LOG_ONLY = "current", "shadowed", "log-only"


@dataclass(frozen=True)
class EventFilter:
    types: frozenset[str] = frozenset()  # exact types, or prefixes ending in "/"
    start: int | None = None
    end: int | None = None
    turn: int | None = None
    surface: str | None = None  # current | shadowed | log-only
    grep: str | None = None

    def wants_type(self, kind) -> bool:
        if not self.types:
            return True
        if type(kind) is not str:
            return False
        return kind in self.types or any(t.endswith("/") and kind.startswith(t) for t in self.types)


@dataclass(frozen=True)
class EventRow:
    seq: int
    line: int
    time: str | None
    type: object
    turn: object
    step: object
    surface: str
    op: object
    text: str
    record: dict

    def to_json(self) -> dict:
        return {"seq": self.seq, "line": self.line, "time": self.time, "type": self.type, "turn": self.turn,
                "step": self.step, "surface": self.surface, "op": self.op, "text": self.text,
                "record": self.record}


def query_events(events, nodes: frozenset[int], flt: EventFilter, last: int | None = None):
    """Yield the rows of `events` that pass `flt`; `nodes` is the surface that
    classifies them (current or shadowed); events after `last` are not read."""
    turn = None
    needle = flt.grep.casefold() if flt.grep else None
    for event in events:
        seq = event.seq
        if last is not None and seq > last:
            return
        kind = event.type
        if kind == "turn/start":
            data = event.record.get("data")
            turn = data.get("turn") if type(data) is dict else None
        in_turn = turn
        if kind == "turn/end":
            turn = None
        if flt.start is not None and seq < flt.start:
            continue
        if flt.end is not None and seq > flt.end:
            return
        if flt.turn is not None and in_turn != flt.turn:
            continue
        if not flt.wants_type(kind):
            continue
        surface = (CURRENT if seq in nodes else SHADOWED) if kind in SURFACE_TYPES else LOG_ONLY
        if flt.surface is not None and surface != flt.surface:
            continue
        record = event.record
        text = ""
        if kind in SURFACE_TYPES:
            try:
                has, message = derive_message(event)
            except DeriveError:
                has, message = False, None
            text = message_text(message) if has else ""
        if needle is not None and needle not in text.casefold():
            continue
        data = record.get("data")
        step = data.get("step") if type(data) is dict else None
        op = record.get("surfaceOp")
        yield EventRow(seq, event.line, utc_time(event.time), kind, in_turn, step, surface, op, text, record)
