"""What the reader gives: the items of a log (an event, a record placed off its written seq,
a run of records only counted), a crash-cut end, and why a line holds no record.

`io.reader` makes them (`LogReader.records()`); `io.packed` adds the packed-row items.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Union

import orjson

from dshreplay._jsvalues import MISSING, JSONObject, JSONValue, shown

if TYPE_CHECKING:
    from dshreplay.io._packed import PackedMember, PackedRun

UNREADABLE_LINE = "DSH-E001"  # the finding code of a line that cannot be read
UNREADABLE_REST = "DSH-E013"  # the finding code where the rest of a zstd log cannot be read


class Fault:
    """How a record's written seq disagrees with its place, as the reader placed it.

    The reader tells them apart by the next record's written seq: a correct line
    after a damaged one continues the numbering, so it says which reading holds.
    `Event.fault` is (kind, expected, following): `expected` is the seq the
    record's place called for (where dsh's fold stops), `following` the next
    record's written seq when it told the reader (a WRONG_SEQ), else None."""

    GAP = "gap"  # the seqs expected.. before it are missing: it keeps its written seq
    WRONG_SEQ = "wrong-seq"  # its written seq is wrong: it holds the expected seq's place
    EARLY = "early"  # it lies before its place: a Misplaced stands here, the record comes at its place
    REPEAT = "repeat"  # its place is behind (a repeated or moved line): a Misplaced, and nothing more
    RESUMED = "resumed"  # the first record after lines that could not be read: numbering goes on from it


class Event:
    """One session event after packed rows are expanded.

    `seq` is the event's position in the log (0-based, header excluded);
    `record` is the event object as stored (for a packed-row member, the
    event the row stands for); `line` is the 1-based physical line it came
    from; `row` names the packed-row tag for members, else None. `fault`,
    set only on a record whose written seq is not its place, is (Fault kind,
    the seq its place called for, the next record's seq): read it with `fault_of`.
    """

    __slots__ = ("seq", "type", "record", "line", "row", "offset", "fault")
    count = 1  # events this item stands for (a PackedRun stands for several)
    fault: Fault_  # (set only on a record the reader placed off its written seq)
    seq_pointer = "/seq"  # where the written seq is

    def __init__(self, seq: int, type_: JSONValue, record: JSONObject, line: int,
                 row: str | None = None, offset: int | None = None):
        self.seq = seq
        self.type = type_
        self.record = record
        self.line = line
        self.row = row
        self.offset = offset  # byte offset of its line in the (decompressed) text, when known

    @property
    def time(self) -> JSONValue:
        """Epoch ms; 0 where the projected layout leaves it out."""
        return self.record.get("time", 0)

    @property
    def end_line(self) -> int:
        """The physical line of the item's last event."""
        return self.line

    @property
    def data(self) -> JSONValue:
        return self.record.get("data")

    @property
    def declared_seq(self) -> JSONValue:
        """The seq written in the record, or MISSING in the projected layout."""
        return self.record.get("seq", MISSING)

    def __repr__(self) -> str:
        return f"Event(seq={self.seq}, type={shown(self.type)}, line={self.line})"


@dataclass(frozen=True)
class TornTail:
    """A crash-cut end of the log: not an event, reported, never repaired."""

    line: int  # physical line (plain) or first line of the lost frame (zstd)
    offset: int  # byte offset in the file where the lost bytes start
    size: int  # bytes lost
    encoding: str

    def to_json(self) -> dict[str, int]:
        return {"line": self.line, "offset": self.offset, "bytes": self.size}

    @classmethod
    def from_json(cls, value: JSONObject, encoding: str) -> TornTail:
        """A torn tail as `to_json` wrote it (a bundle's manifest keeps it so), with the log's encoding."""
        return cls(value["line"], value["offset"], value["bytes"], encoding)

    def describe(self) -> str:
        """The one way a torn tail is told (a warning, a finding, a fact of `inspect` and the report)."""
        what = "last line has no newline and does not parse" if self.encoding != "zstd" \
            else "last zstd frame is cut short"
        return f"torn tail: {what}; {self.size} bytes lost at byte offset {self.offset}"



def fault_of(item: object) -> Fault_ | None:
    """(Fault kind, expected seq, following seq) of a record the reader placed off its written seq, or None."""
    return getattr(item, "fault", None)


class Misplaced:
    """A stored record that holds no event where it lies: it repeats a seq whose place
    is behind (REPEAT), or it comes before its place (EARLY: the record is given again
    there). `count` is 0: the fold rejects it (DSH-E101 at `fault[1]`), nothing else sees it."""

    __slots__ = ("item", "seq", "fault")
    count = 0

    def __init__(self, item: Event | PackedRun, expected: int, kind: str) -> None:
        self.item = item
        self.seq = item.seq  # its written seq (for an EARLY record, the seq it is given at later)
        self.fault: Fault_ = (kind, expected, None)

    type = property(lambda self: self.item.type)
    line = property(lambda self: self.item.line)
    end_line = property(lambda self: self.item.line)
    row = property(lambda self: self.item.row)
    offset = property(lambda self: self.item.offset)
    time = property(lambda self: self.item.time)
    declared_seq = property(lambda self: self.item.declared_seq)
    seq_pointer = property(lambda self: self.item.seq_pointer)

    @property
    def record(self) -> JSONObject:
        return self.item.record

    @property
    def data(self) -> JSONValue:
        return self.record.get("data")

    def members(self) -> list[PackedMember]:
        return []

    def __repr__(self) -> str:
        return f"Misplaced(seq={self.seq}, fault={self.fault!r}, line={self.line})"


class QuietRule(NamedTuple):
    """The records a pass only counts (`LogReader.records(quiet=...)`): those whose type
    is in `counted` (a packed row's tag there counts its row) and that carry none of
    `fields` at the top level; every other record is given, a type nobody named too. The
    pass that asks says which (the fold: `core.surface.counted_only`); the reader
    applies it to every parsed record, inline (this is the hottest line of a fold)."""

    counted: frozenset[str]
    fields: tuple[str, ...]


class Quiet:
    """`count` consecutive events at their places (from seq `seq`, on lines `line` ..
    `end_line`) that the pass asked not to be given one by one (`records(quiet=...)`):
    each line was parsed and checked (a packed row exactly, as always), then its events
    counted. Like a packed run, the fold takes them whole: it counts them off the surface
    (`row` says they hold no record of their own)."""

    __slots__ = ("seq", "count", "line", "offset", "end_line")
    type: JSONValue = None  # (several types, none that anybody reads)
    row = "quiet"
    time = 0
    declared_seq = MISSING  # (each was at its place: the reader checked its written seq)
    seq_pointer = "/seq"
    record: JSONObject = {}  # (no record is kept)

    def __init__(self, seq: int, count: int, line: int, offset: int, end_line: int) -> None:
        self.seq = seq
        self.count = count
        self.line = line
        self.offset = offset
        self.end_line = end_line  # the line of its last event

    def __repr__(self) -> str:
        return f"Quiet(seq={self.seq}, count={self.count}, line={self.line})"


def line_problem(raw: bytes) -> str | None:
    """Why one line (its bytes, newline or not) holds no record, as the reader says it where it
    meets it; None for a line that parses as a JSON object, or a blank one (no record, no damage)."""
    if not raw.strip():
        return None
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return _not_json(raw, exc)
    return None if type(rec) is dict else _not_object(rec)


def _not_json(raw: bytes, exc: Exception) -> str:
    return f"line is not valid JSON: {_json_reason(raw, exc)}"


def _not_object(rec: object) -> str:
    return f"record must be a JSON object, got {_json_kind(rec)}"


def _json_kind(value: object) -> str:
    return {list: "an array", str: "a string", int: "a number", float: "a number",
            bool: "a boolean", type(None): "null"}.get(type(value), type(value).__name__)


def _json_reason(raw: bytes, exc: Exception) -> str:
    if raw.startswith(b"\xef\xbb\xbf"):
        return "starts with a UTF-8 byte-order mark"
    text = str(exc)
    return text.split(": line")[0] if ": line" in text else text


Item = Union[Event, "PackedRun", Misplaced, Quiet]  # what `LogReader.records()` gives
Fault_ = tuple[str, int, Union[int, None]]  # (Fault kind, expected seq, following seq): an item's `fault`
