"""`events`: find events by type, range, turn, surface status and text; and show
physical lines as stored (`raw_lines`), readable or not."""

from __future__ import annotations

from dataclasses import dataclass

from dshreplay.analyses.render import event_text
from dshreplay.analyses.tools import ToolLedger
from dshreplay.analyses.turns import TurnTracker
from dshreplay.core.driver import STOP, Observer, run_pass
from dshreplay.core.surface import SURFACE_TYPES
from dshreplay.errors import UsageError
from dshreplay.jsvalues import is_time, json_bytes, utc_time

CURRENT, SHADOWED, LOG_ONLY = "current", "shadowed", "log-only"


@dataclass(frozen=True)
class EventFilter:
    types: frozenset[str] = frozenset()  # exact types, or prefixes ending in "/"
    start: int | None = None
    end: int | None = None
    turn: int | None = None
    surface: str | None = None  # current | shadowed | log-only
    grep: str | tuple | None = None  # text anywhere in the record (any case); several: every one of them
    since: int | None = None  # epoch ms: only events at or after (events without a time are left out)
    until: int | None = None  # epoch ms: only events at or before

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
    call_id: object = None  # the tool call a tool, approval or hook event belongs to (by id)
    tool: object = None  # that call's tool

    def to_json(self) -> dict:
        return {"seq": self.seq, "line": self.line, "time": self.time, "type": self.type, "turn": self.turn,
                "step": self.step, "surface": self.surface, "op": self.op, "callId": self.call_id,
                "tool": self.tool, "text": self.text, "record": self.record}


class EventQuery(Observer):
    """The rows of the events that pass `flt`, one per event (packed rows
    expanded); `nodes` is the surface that classifies them (current or
    shadowed); events after `last` are left out. A tool call's events (its
    call, result, approval, hooks) name the call and its tool."""

    requires = (TurnTracker, ToolLedger)

    def __init__(self, flt: EventFilter, nodes: frozenset[int], last: int | None = None, sink=None) -> None:
        self.flt = flt
        self.nodes = nodes
        self.last = last
        self.rows: list[EventRow] = []
        self.sink = sink if sink is not None else self.rows.append  # sink(row): stream rows, keep none
        grep = (flt.grep,) if type(flt.grep) is str else tuple(flt.grep or ())
        self._needles = tuple(g.casefold() for g in grep if g)

    def begin(self, run) -> None:
        self.tools = run.get(ToolLedger)

    def observe(self, record) -> None:
        item, flt = record.item, self.flt
        if (flt.start is not None and item.seq + item.count <= flt.start) \
                or (flt.end is not None and item.seq > flt.end):
            return
        if flt.turn is not None and record.turn != flt.turn:
            return
        for event in item.members() if item.row is not None else (item,):
            self._one(event, record.turn)

    def _one(self, event, turn) -> None:
        flt, seq = self.flt, event.seq
        if (self.last is not None and seq > self.last) or (flt.start is not None and seq < flt.start) \
                or (flt.end is not None and seq > flt.end):
            return
        kind = event.type
        if not flt.wants_type(kind):
            return
        surface = (CURRENT if seq in self.nodes else SHADOWED) if kind in SURFACE_TYPES else LOG_ONLY
        if flt.surface is not None and surface != flt.surface:
            return
        time = event.time
        if (flt.since is not None or flt.until is not None) and not (
                is_time(time) and (flt.since is None or time >= flt.since)
                and (flt.until is None or time <= flt.until)):
            return
        record = event.record
        if self._needles:
            text = json_bytes(record).decode().casefold()
            if not all(needle in text for needle in self._needles):
                return
        call = self.tools.call_at(seq) if event.row is None else None
        text = event_text(event, call)
        data = record.get("data")
        step = data.get("step") if type(data) is dict else None
        self.sink(EventRow(seq, event.line, utc_time(time), kind, turn, step, surface, record.get("surfaceOp"),
                           text, record, *((call.call_id, call.tool) if call is not None else ())))


def query_events(source, nodes: frozenset[int], flt: EventFilter, last: int | None = None,
                 observers=(), sink=None) -> list[EventRow]:
    """The rows of the events of `source` (a LogSource) that pass `flt`, in one
    pass (it ends where the fold fails); handed to `sink` one by one when given
    (then none is kept)."""
    query = EventQuery(flt, nodes, last, sink)
    stop = last if flt.end is None else (flt.end if last is None else min(last, flt.end))
    run_pass(source, [query, *observers], on_fold_error=STOP, until=stop)
    return query.rows


@dataclass(frozen=True)
class RawLine:
    """One physical line of a log as stored (the header is line 1): its bytes, newline
    left out, whether or not they parse."""

    line: int
    offset: int  # byte offset in the (decompressed) text
    raw: bytes

    @property
    def text(self) -> str:
        """The line as text: bytes that are not UTF-8 shown as \\xNN."""
        return self.raw.decode("utf-8", "backslashreplace")

    def escaped(self) -> str:
        """The line for a terminal: every character that is not printable (controls, escapes,
        bidirectional marks, a \\r) as a \\xNN, \\uNNNN or \\UNNNNNNNN escape."""
        text = self.text
        if text.isprintable():
            return text
        return "".join(c if c.isprintable() else _escape(c) for c in text)

    def to_json(self) -> dict:
        return {"line": self.line, "offset": self.offset, "bytes": len(self.raw), "text": self.text}


def _escape(c: str) -> str:
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else (f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}")


def raw_lines(source, first: int, last: int) -> list[RawLine]:
    """Physical lines `first`..`last` (from 1) of `source` (a LogSource), as stored, in one
    read that stops after `last`; UsageError for a range that is empty or starts past the end."""
    if first < 1 or last < first:
        raise UsageError(f"lines {first}-{last}: give A-B with 1 <= A <= B (line 1 is the header)")
    out, count = [], 0
    with source.reader() as reader:
        for lineno, offset, raw in reader.physical_lines():
            count = lineno
            if lineno > last:
                break
            if lineno >= first:
                out.append(RawLine(lineno, offset, raw[:-1] if raw.endswith(b"\n") else raw))
    if not out:
        raise UsageError(f"line {first} is beyond the log: it has {count} lines", path=source.path)
    return out
