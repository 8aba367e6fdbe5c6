"""`events`: find events by type, range, turn, surface status and text; and show
physical lines as stored (`raw_lines`), readable or not."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from dshreplay._jsvalues import epoch_ms, is_time, json_bytes, parse_time, shown, utc_time, visible
from dshreplay.analyses._eventtypes import EVENT_TYPES, event_text
from dshreplay.analyses._render import counted
from dshreplay.analyses.trackers.compaction import CompactionTracker, compaction_of
from dshreplay.analyses.trackers.toolcalls import ToolLedger
from dshreplay.analyses.trackers.turns import TurnTracker
from dshreplay.core.driver import STOP, Observer, run_pass
from dshreplay.core.surface import SURFACE_TYPES
from dshreplay.errors import FilterError, UsageError
from dshreplay.io.reader import PackedRun, line_problem

if TYPE_CHECKING:
    from dshreplay.core.driver import Record, Run
    from dshreplay.io.reader import Event, LogSource

__all__ = ["EventFilter", "EventRow", "RawLine", "EventQuery", "query_events", "raw_lines", "event_families",
           "Moment", "CURRENT", "SHADOWED", "LOG_ONLY"]

CURRENT, SHADOWED, LOG_ONLY = "current", "shadowed", "log-only"
SURFACES = (CURRENT, SHADOWED, LOG_ONLY)

Moment = int | str | datetime.datetime  # what `since`/`until` take: epoch ms, ISO 8601 text or a datetime


@lru_cache(maxsize=1)
def event_families() -> tuple[str, ...]:
    """The type families of dsh's events ("agent/", "approval/", ...): the first part of every
    known type (`eventtypes.EVENT_TYPES`)."""
    return tuple(sorted({t.name.split("/")[0] + "/" for t in EVENT_TYPES}))


def _moment(name: str, value: Moment | None) -> int | None:
    """`since`/`until` as epoch milliseconds: an int is one already, an ISO 8601 text (with Z or an
    offset; none: UTC) or a datetime (naive: UTC) is converted. FilterError for anything else."""
    if value is None or type(value) is int:
        return value
    try:
        if isinstance(value, datetime.datetime):
            moment = value if value.tzinfo is not None else value.replace(tzinfo=datetime.timezone.utc)
            return epoch_ms(moment)
        if isinstance(value, str):
            return epoch_ms(parse_time(value))
    except (ValueError, OverflowError) as exc:
        raise FilterError(f"{name}: {shown(value, 40)} {exc} (such as 2026-07-06T15:36:05Z)") from None
    raise FilterError(f"{name}: {shown(value, 40)} is no time: give ISO 8601 text (such as "
                      "2026-07-06T15:36:05Z), epoch milliseconds or a datetime")


def _types(value: str | Iterable[str] | None) -> frozenset[str]:
    """The type filter as a set, every entry checked: a type names its family ("user/message",
    or the family alone, "user/"), and that family is one of dsh's; else nothing could match."""
    types = frozenset() if value is None else frozenset({value} if isinstance(value, str) else value)
    for kind in sorted(types, key=str):
        if type(kind) is not str:
            raise FilterError(f"type {shown(kind, 40)}: give event types as text, such as user/message")
        if "/" not in kind:
            raise FilterError(f"no event type {shown(kind, 40)}: every type names its family, as user/message "
                              f"does; did you mean {shown(kind + '/', 40)}?")
        family, families = kind.split("/", 1)[0] + "/", event_families()
        if family not in families:
            raise FilterError(f"no event type family {shown(family, 40)}; families: {', '.join(families)}")
    return types


@dataclass(frozen=True)
class EventFilter:
    """Which events `Session.query` (and `dshreplay events`) lists; every field is optional and
    all that are given must hold. Checked when made: a filter that could match nothing, or
    cannot be read, is a FilterError naming the fix.

    types    exact types ("user/message") or families ("tool/"); a text is one type
    start, end  a seq range (in either order; so are since and until)
    turn     only events inside this turn (known after the pass: a turn past the last is an error)
    surface  current | shadowed | log-only
    grep     text anywhere in the record, any case; several: every one of them
    since, until  only events at or after / at or before this time: epoch ms, ISO 8601
             ("2026-06-02T07:09:00Z", an offset, or none: UTC) or a datetime (naive: UTC);
             events without a time are left out, and a log with none is an error
    """

    types: frozenset[str] = frozenset()
    start: int | None = None
    end: int | None = None
    turn: int | None = None
    surface: str | None = None
    grep: str | tuple[str, ...] | None = None
    since: int | None = field(default=None)
    until: int | None = field(default=None)

    def __post_init__(self) -> None:
        # a frozen dataclass normalises its own fields once, here: the per-event checks read plain values
        setattr_ = object.__setattr__
        setattr_(self, "types", _types(self.types))
        setattr_(self, "since", _moment("since", self.since))
        setattr_(self, "until", _moment("until", self.until))
        for low, high in (("start", "end"), ("since", "until")):  # ranges in either order, as `diff` takes its
            a, b = getattr(self, low), getattr(self, high)
            if a is not None and b is not None and a > b:
                setattr_(self, low, b)
                setattr_(self, high, a)
        if self.surface is not None and self.surface not in SURFACES:
            raise FilterError(f"surface {shown(self.surface, 40)}: give one of {', '.join(SURFACES)}")
        if self.turn is not None and (type(self.turn) is not int or self.turn < 1):
            raise FilterError(f"turn {shown(self.turn, 40)}: turns count from 1")

    @classmethod
    def of(cls, **filters: Any) -> EventFilter:
        """A filter from keyword arguments (`type=` is `types=`); an unknown keyword is a
        FilterError naming the known ones (not a TypeError)."""
        if "type" in filters:
            if "types" in filters:
                raise FilterError("give type or types, not both")
            filters["types"] = filters.pop("type")
        known = cls.__dataclass_fields__
        unknown = sorted(set(filters) - set(known))
        if unknown:
            raise FilterError(f"no event filter {unknown[0]!r}; filters: type, {', '.join(known)}")
        return cls(**filters)

    @property
    def timed(self) -> bool:
        return self.since is not None or self.until is not None

    def wants_type(self, kind: object) -> bool:
        if not self.types:
            return True
        if type(kind) is not str:
            return False
        return kind in self.types or any(t.endswith("/") and kind.startswith(t) for t in self.types)


@dataclass(frozen=True)
class EventRow:
    """One event as `events` lists it: where it is, what it is, its surface status and one line of text."""

    seq: int
    line: int
    time: str | None
    type: object
    turn: object
    step: object
    surface: str
    op: object
    text: str
    record: dict[str, Any]
    call_id: object = None  # the tool call a tool, approval or hook event belongs to (by id)
    tool: object = None  # that call's tool
    arguments: object = None  # that call's arguments (the tool/call's, else the model's block's)
    compaction_id: object = None  # the compaction it names (compaction/*), else the one open around it

    def to_json(self) -> dict[str, Any]:
        """The row as `events --json` prints it."""
        return {"seq": self.seq, "line": self.line, "time": self.time, "type": self.type, "turn": self.turn,
                "step": self.step, "surface": self.surface, "op": self.op, "callId": self.call_id,
                "tool": self.tool, "text": self.text, "record": self.record}

    def to_record(self) -> dict[str, Any]:
        """The row as one flat record (`Session.to_records`): the JSON's columns but the record, with
        the call's arguments (as the JSON text dsh logs: one column type for pandas and DuckDB) and
        the compaction id."""
        arguments = self.arguments
        if arguments is not None and type(arguments) is not str:  # (dsh logs them as text: kept as written)
            arguments = json_bytes(arguments).decode()
        return {"seq": self.seq, "line": self.line, "time": self.time, "type": self.type, "turn": self.turn,
                "step": self.step, "surface": self.surface, "op": self.op, "callId": self.call_id,
                "tool": self.tool, "arguments": arguments, "compactionId": self.compaction_id,
                "text": self.text}

    def __repr__(self) -> str:
        return f"<EventRow seq {self.seq} line {self.line} {shown(self.type, 40, quote=False)} {self.surface}>"


class EventQuery(Observer):
    """The rows of the events that pass `flt`, one per event (packed rows
    expanded); `nodes` is the surface that classifies them (current or
    shadowed); events after `last` are left out. A tool call's events (its
    call, result, approval, hooks) name the call, its tool and arguments; an
    event inside a compaction bracket names its compaction id.

    While it reads, it notes what tells a filter that matched nothing from one
    that could not match (`check`): the highest turn, whether any event has a time."""

    requires = (TurnTracker, ToolLedger, CompactionTracker)

    def __init__(self, flt: EventFilter, nodes: frozenset[int], last: int | None = None,
                 sink: Callable[[EventRow], None] | None = None) -> None:
        self.flt = flt
        self.nodes = nodes
        self.last = last
        self.rows: list[EventRow] = []
        self.sink = sink if sink is not None else self.rows.append  # sink(row): stream rows, keep none
        grep = (flt.grep,) if isinstance(flt.grep, str) else tuple(flt.grep or ())
        self._needles = tuple(g.casefold() for g in grep if g)
        self.matched = 0
        self.last_turn = 0  # the highest turn number read (with a turn filter)
        self.seen_time = False  # an event in range has a usable time (with a time filter)

    def begin(self, run: Run) -> None:
        self.tools = run.get(ToolLedger)
        self.compactions = run.get(CompactionTracker)

    def observe(self, record: Record) -> None:
        # (Record.item is annotated None until core/driver.py is typed: it holds an Event or a PackedRun)
        item: Event | PackedRun = record.item  # type: ignore[assignment]
        flt = self.flt
        if (flt.start is not None and item.seq + item.count <= flt.start) \
                or (flt.end is not None and item.seq > flt.end):
            return
        if flt.turn is not None:
            turn: object = record.turn
            if type(turn) is int and turn > self.last_turn:
                self.last_turn = turn
            if turn != flt.turn:
                return
        if isinstance(item, PackedRun):  # (a packed row: its member events, one by one)
            for event in item.members():
                self._one(event, record.turn, record.step)
        else:
            self._one(item, record.turn, record.step)

    def _one(self, event: Event, turn: object, step: object) -> None:
        """One event's row; `turn` and `step`: those in force for it (the turn tracker's, as
        every command shows them: an approval or hook inside a step is in that step)."""
        flt, seq = self.flt, event.seq
        if (self.last is not None and seq > self.last) or (flt.start is not None and seq < flt.start) \
                or (flt.end is not None and seq > flt.end):
            return
        time = event.time
        if flt.since is not None or flt.until is not None:
            if not is_time(time):
                return
            self.seen_time = True
            if (flt.since is not None and time < flt.since) or (flt.until is not None and time > flt.until):
                return
        kind = event.type
        if not flt.wants_type(kind):
            return
        surface = (CURRENT if seq in self.nodes else SHADOWED) if kind in SURFACE_TYPES else LOG_ONLY
        if flt.surface is not None and surface != flt.surface:
            return
        record = event.record
        if self._needles:
            text = json_bytes(record).decode().casefold()
            if not all(needle in text for needle in self._needles):
                return
        call = self.tools.call_at(seq) if event.row is None else None
        text = event_text(event, call)
        data = record.get("data")
        cid = compaction_of(data, self.compactions.open)
        self.matched += 1
        call_id, tool, arguments = (call.call_id, call.tool, call.arguments) if call is not None else (None, None, None)
        self.sink(EventRow(seq, event.line, utc_time(time), kind, turn, step, surface, record.get("surfaceOp"),
                           text, record, call_id, tool, arguments, cid))

    def check(self, run: Run) -> None:
        """FilterError when nothing matched because nothing could: a turn past the last one
        read, a --from past the last seq of a log read to its end (as --at is), or a time
        filter on events that have no time."""
        if self.matched:
            return
        flt = self.flt
        if flt.start is not None and run.complete and (run.last_seq is None or flt.start > run.last_seq):
            end = "it has no events" if run.last_seq is None else f"its last seq is {run.last_seq}"
            raise FilterError(f"seq {flt.start} is beyond the log: {end}", path=run.path)
        if flt.turn is not None and flt.turn > self.last_turn:
            upto = "" if run.complete else f" up to seq {run.last_seq}"
            raise FilterError(f"turn {flt.turn}: the log has {counted(self.last_turn, 'turn')}{upto}", path=run.path)
        if (flt.since is not None or flt.until is not None) and not self.seen_time:
            name = "since" if flt.since is not None else "until"
            limited = flt.start is not None or flt.end is not None or self.last is not None
            where = "no event in the seqs asked for has a time" if limited else "on a log without times"
            raise FilterError(f"{name} {where} (a projected log has none): leave out since and until",
                              path=run.path)


def query_events(source: LogSource, nodes: frozenset[int], flt: EventFilter, last: int | None = None,
                 observers: Iterable[Observer] = (), sink: Callable[[EventRow], None] | None = None
                 ) -> list[EventRow]:
    """The rows of the events of `source` that pass `flt`, in one pass (it ends where the
    fold fails); handed to `sink` one by one when given (then none is kept). FilterError
    when the filter could match nothing in this log (`EventQuery.check`)."""
    query = EventQuery(flt, nodes, last, sink)
    stop = last if flt.end is None else (flt.end if last is None else min(last, flt.end))
    run = run_pass(source, [query, *observers], on_fold_error=STOP, until=stop)
    query.check(run)
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
        return visible(self.text)

    @property
    def problem(self) -> str | None:
        """Why the line holds no record (not JSON, not an object), as the reader says it; None for
        one that does, or a blank line."""
        return line_problem(self.raw)

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "offset": self.offset, "bytes": len(self.raw), "text": self.text,
                "problem": self.problem}


def raw_lines(source: LogSource, first: int, last: int) -> list[RawLine]:
    """Physical lines `first`..`last` (from 1, in either order, as every range is taken) of
    `source` (a LogSource), as stored, in one read that stops after the later; UsageError for a
    range that starts before line 1 or past the end."""
    first, last = min(first, last), max(first, last)
    if first < 1:
        raise UsageError(f"lines {first}-{last}: lines count from 1 (line 1 is the header)")
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
