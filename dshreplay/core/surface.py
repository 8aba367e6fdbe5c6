"""The surface fold: which events the model sees, in which order.

This module is the one implementation of FORMAT.md section 6 in dshreplay.
`SurfaceFold` applies events one at a time (validate first, then commit, so
a rejected event leaves the state untouched); `fold`, `fold_at` and
`states_at` drive it over a stream. `derive_message` is the per-node message
projection. Everything here is pure: no I/O, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, NamedTuple

from dshreplay._jsvalues import (
    MAX_SAFE_INTEGER,
    MISSING,
    JSONValue,
    is_event_seq,
    is_number,
    js_equal,
    js_length,
    shown,
)
from dshreplay.core._eventnames import KNOWN_TYPES
from dshreplay.errors import DeriveError, FoldError
from dshreplay.io._packed import ROW_TAGS
from dshreplay.io.reader import Fault, Item, QuietRule, fault_of

__all__ = ["SurfaceFold", "SurfaceState", "Replacement", "derive_message", "SURFACE_TYPES"]

SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})

# Fold error codes: the finding codes `validate` reports (see findings.py).
UNKNOWN_TYPE = "DSH-E006"
NOT_CONTIGUOUS = "DSH-E101"
SURFACE_FIELD_ON_LOG_ONLY = "DSH-E102"
MISSING_SURFACE_OP = "DSH-E103"
INVALID_SURFACE_OP = "DSH-E104"
INVALID_REPLACE = "DSH-E105"
BAD_SOURCE_SEQS = "DSH-E106"
START_NOT_FOUND = "DSH-E107"
END_NOT_FOUND = "DSH-E108"
START_AFTER_END = "DSH-E109"
MISSING_SHADOWED_SOURCES = "DSH-E110"
TOOL_REWRITE = "DSH-E111"
NO_MESSAGE = "DSH-E112"

@dataclass(frozen=True)
class Replacement:
    """One replacement applied by the fold."""

    seq: int
    start: int
    end: int
    shadowed_seqs: tuple[int, ...]

    def to_json(self) -> dict[str, JSONValue]:
        return {"seq": self.seq, "start": self.start, "end": self.end,
                "shadowedSeqs": list(self.shadowed_seqs)}


@dataclass(frozen=True)
class SurfaceState:
    """The model's view right after event `seq` (None: before any event).

    `events` maps each current node seq to its event, so messages can be
    derived without re-reading the log.
    """

    seq: int | None
    nodes: tuple[int, ...]
    replacements: tuple[Replacement, ...]
    events: dict[int, Item] = field(repr=False, compare=False)

    def messages(self) -> list[JSONValue]:
        """The model messages, one per node that yields one (raises DeriveError)."""
        out = []
        for s in self.nodes:
            has, message = derive_message(self.events[s])
            if has:
                out.append(message)
        return out

    def node_messages(self) -> list[tuple[int, object | None]]:
        """(seq, message or None) per node, in order (raises DeriveError)."""
        out = []
        for s in self.nodes:
            has, message = derive_message(self.events[s])
            out.append((s, message if has else None))
        return out

    def to_json(self) -> dict[str, JSONValue]:
        return {"seq": self.seq, "nodes": list(self.nodes),
                "replacements": [r.to_json() for r in self.replacements],
                "messages": self.messages()}


def numbered(node_messages: Iterable[tuple[int, JSONValue]]) -> Iterator[tuple[int, int | None, JSONValue]]:
    """(seq, message number, message) per node of `node_messages` (as `node_messages()`
    gives them): the number is the message's place among the model messages, counted
    from 1 as every command shows and asks for it; None for a node that yields none."""
    number = 0
    for seq, message in node_messages:
        if message is None:
            yield seq, None, None
        else:
            number += 1
            yield seq, number, message


def derive_message(event: Item) -> tuple[bool, JSONValue]:
    """Project one surface node to its model message, as dsh does.

    Returns (True, message) or (False, None) for an assistant message whose
    content is empty. Raises DeriveError where dsh's projection would crash
    (a node without the fields it reads).
    """
    data = event.record.get("data", MISSING)
    kind = event.type
    if kind == "user/message":
        if data is MISSING:
            raise _derive_error(event, "user/message has no data", "/data")
        return data is not None, data  # null projects to no message, as in dsh
    message = data.get("message", MISSING) if type(data) is dict else MISSING
    if message is MISSING or message is None:
        raise _derive_error(event, f"{kind} has no data.message to project", "/data/message")
    if kind == "assistant/message":
        content = message.get("content", MISSING) if type(message) is dict else MISSING
        if content is MISSING or content is None:
            raise _derive_error(event, "assistant/message has no data.message.content",
                                "/data/message/content")
        if js_length(content) == 0:
            return False, None
        return True, message
    if kind == "tool/result":
        return True, message
    return False, None


def has_message(event: Item) -> bool:
    """Whether a surface node yields a model message (raises DeriveError as `derive_message`)."""
    return derive_message(event)[0]


def _derive_error(event: Item, message: str, pointer: str) -> DeriveError:
    return DeriveError(message, line=event.line, seq=event.seq, pointer=pointer)


def _fail(event: Item, code: str, message: str, pointer: str | None = None) -> FoldError:
    return FoldError(message, code=code, line=event.line, seq=event.seq, pointer=pointer)


LOG_ONLY, APPEND, REPLACE = 0, 1, 2


class SurfaceOp(NamedTuple):
    """What the fold makes of one record on its own (FORMAT.md section 6,
    steps 2 to 4): the checks that need no state. `error` is (code, message,
    pointer) of a defect found here; the fold raises it in dsh's order,
    after the checks that come first (contiguity; for a replace, its range)."""

    kind: int  # LOG_ONLY (count events off the surface), APPEND or REPLACE
    start: int | None = None
    end: int | None = None
    sources: list[int] | tuple[()] = ()  # sourceEventSeqs, checked (shape, and each cites an earlier event)
    error: tuple[str, str, str] | None = None


_LOG_ONLY = SurfaceOp(LOG_ONLY)
SURFACE_FIELDS = ("surfaceOp", "sourceEventSeqs")  # the record fields a log-only type must not carry
IGNORABLE = "ignorable"  # the field that lets a reader skip an event of a type it does not know (FORMAT.md §3)
# The records the fold only counts (`LogReader.records(quiet=...)` passes over them for a
# pass that reads none): of a known type that is not a surface type, with no surface field
# (`surface_op`'s first tests), and packed rows (which the reader checks exactly, and which have
# none). Any other is given: an event of an unknown type is looked at, to be refused or skipped.
counted_only = QuietRule(KNOWN_TYPES - SURFACE_TYPES | ROW_TAGS, SURFACE_FIELDS)


def surface_op(event: Item) -> SurfaceOp:
    """The per-record part of the fold: pure, the same wherever the record is parsed."""
    if event.row is not None:
        return _LOG_ONLY  # packed chunk rows: the reader checked their exact shape (quiet runs: see counted_only)
    rec = event.record
    if event.type not in SURFACE_TYPES:
        if event.type not in KNOWN_TYPES and rec.get(IGNORABLE) is not True:
            return SurfaceOp(LOG_ONLY, error=(UNKNOWN_TYPE, f"unknown event type {_show(event.type)} without "
                                              "ignorable: true: dsh refuses to load the log", "/type"))
        if not rec.keys().isdisjoint(SURFACE_FIELDS):
            field_name = next(name for name in SURFACE_FIELDS if name in rec)
            return SurfaceOp(LOG_ONLY, error=(
                SURFACE_FIELD_ON_LOG_ONLY,
                f"{_show_type(event)} is not a surface type and cannot carry {field_name}", f"/{field_name}"))
        return _LOG_ONLY
    op = rec.get("surfaceOp", MISSING)
    if op is MISSING:
        return SurfaceOp(APPEND, error=(MISSING_SURFACE_OP,
                                        f"{event.type} is a surface type and requires a surfaceOp", "/surfaceOp"))
    if op == "append":
        sources, error = _sources(event)
        return SurfaceOp(APPEND, sources=sources, error=error)
    if type(op) is not dict:
        return SurfaceOp(REPLACE, error=(INVALID_SURFACE_OP, f"{event.type} carries an invalid surfaceOp "
                                         f"{_show(op)}: want \"append\" or {{op: \"replace\", start, end}}",
                                         "/surfaceOp"))
    if not (len(op) == 3 and op.get("op") == "replace" and is_event_seq(op.get("start"))
            and is_event_seq(op.get("end"))):
        return SurfaceOp(REPLACE, error=(INVALID_REPLACE, f"{event.type} carries an invalid replace surfaceOp "
                                         f"{_show(op)}: want exactly {{op: \"replace\", start, end}} with "
                                         "non-negative safe integer seqs", "/surfaceOp"))
    sources, error = _sources(event)
    start, end = int(op["start"]), int(op["end"])
    if error is not None:  # raised after the range is checked, as dsh does
        return SurfaceOp(REPLACE, start, end, error=error)
    return SurfaceOp(REPLACE, start, end, sources)


def _sources(event: Item) -> tuple[list[int] | tuple[()], tuple[str, str, str] | None]:
    """The record's sourceEventSeqs checked (for shape, then that each cites an event
    before this one): (seqs, None) or ((), error)."""
    raw = event.record.get("sourceEventSeqs", MISSING)
    if raw is MISSING:
        return (), None
    if type(raw) is not list:
        return (), (BAD_SOURCE_SEQS, "sourceEventSeqs must be an array when present", "/sourceEventSeqs")
    if not raw:
        if event.type != "assistant/message":
            return (), (BAD_SOURCE_SEQS, "sourceEventSeqs must not be empty except on assistant/message",
                        "/sourceEventSeqs")
        return raw, None
    first, n = raw[0], len(raw)
    if type(first) is int and 2 <= first <= MAX_SAFE_INTEGER + 1 - n:
        run = list(range(first, first + n))
        if raw == run:  # the common case, consecutive seqs: valid and distinct (equal numbers; none is 0 or 1,
            # the only values a boolean equals), the last the largest
            return (run, None) if run[-1] < event.seq else ((), _cites_later(event, run))
    plain = set(map(type, raw)) == _INT  # plain ints
    if not (plain and min(raw) >= 0 and max(raw) <= MAX_SAFE_INTEGER):
        for i, source in enumerate(raw):
            if not is_event_seq(source):
                return (), (BAD_SOURCE_SEQS, f"sourceEventSeqs[{i}] is {_show(source)}: "
                                             "want a non-negative safe integer", f"/sourceEventSeqs/{i}")
    if len(set(raw)) != len(raw):
        return (), (BAD_SOURCE_SEQS, "sourceEventSeqs must not contain duplicates", "/sourceEventSeqs")
    sources = raw if plain else [int(s) for s in raw]
    return (sources, None) if max(sources) < event.seq else ((), _cites_later(event, sources))


_INT = frozenset({int})


def _cites_later(event: Item, sources: list[int]) -> tuple[str, str, str]:
    """The error of sources that cite an event at or after this one: the first such."""
    i, source = next((i, s) for i, s in enumerate(sources) if s >= event.seq)
    return (BAD_SOURCE_SEQS, f"sourceEventSeqs must cite earlier events: {_show(source)} >= current seq "
            f"{event.seq}", f"/sourceEventSeqs/{i}")


class SurfaceFold:
    """Incremental fold state. Feed events in log order with `apply`.

    `apply` raises FoldError and leaves the state unchanged when dsh would
    reject the event; callers that want to keep going (validate) may then
    call `resume` to move past it.
    """

    __slots__ = ("replacements", "events", "next_seq", "lost", "_prev", "_next", "_rank", "_first", "_last",
                 "_ranks")

    def __init__(self) -> None:
        self.replacements: list[Replacement] = []
        self.events: dict[int, Item] = {}  # current node seq -> event
        self.next_seq = 0
        self.lost: list[tuple[int, int, bool]] = []  # runs of seqs that never joined the surface (see `_lose`)
        # the surface as a linked list, so that a replacement costs what it shadows, not the surface's length
        self._prev: dict[int, int | None] = {}
        self._next: dict[int, int | None] = {}
        self._rank: dict[int, int] = {}  # node -> its place in the order (a replacement takes its start's)
        self._first: int | None = None
        self._last: int | None = None
        self._ranks = 0

    @property
    def nodes(self) -> list[int]:
        """The surface, in order (a new list: O(surface))."""
        out, seq, following = [], self._first, self._next
        while seq is not None:
            out.append(seq)
            seq = following[seq]
        return out

    def __len__(self) -> int:
        return len(self.events)

    @property
    def last_node(self) -> int | None:
        """The last node of the surface (None: it is empty)."""
        return self._last

    def nodes_after(self, seq: int | None) -> list[int]:
        """The nodes after node `seq` (every node for None), in order, in what it returns: a
        pass that follows the surface asks what was appended since it last looked, which is
        all that changed while no replacement was made (`len(replacements)` unchanged), and
        then `seq` is still on it."""
        out, node, before = [], self._last, self._prev
        while node is not None and node != seq:
            out.append(node)
            node = before[node]
        out.reverse()
        return out

    def apply(self, event: Item, op: SurfaceOp | None = None) -> Replacement | None:
        """Fold one event (or a packed run): its own check (`surface_op`, unless
        given), then the state's."""
        if op is None:
            op = surface_op(event)
        expected = self.next_seq
        declared = event.record.get("seq", MISSING) if event.row is None else event.declared_seq
        if event.seq != expected or (declared is not MISSING and (
                declared != expected or (type(declared) is not int and not is_number(declared)))):
            expected = self._out_of_place(event, declared, expected)
        if op is _LOG_ONLY:  # most events: off the surface, nothing to check beyond the seq
            self.next_seq = expected + event.count
            return None
        return self._take(event, op, expected)

    def _out_of_place(self, event: Item, declared: JSONValue, expected: int) -> int:
        """An event whose seq is not the next one: after lines that could not be read, the
        seq to go on from; else DSH-E101 (dsh's words, and how the reader placed the record)."""
        fault = fault_of(event)
        kind = fault[0] if fault is not None else None
        if kind == Fault.RESUMED and event.seq > expected:  # (each unreadable line was reported)
            self._lose(expected, event.seq - 1, unseen=True)
            self.next_seq = expected = event.seq
            if declared is MISSING or (declared == expected and is_number(declared)):
                return expected
        if declared is not MISSING and not (declared == expected and is_number(declared)):
            message = f"seq {_show(declared)} is not contiguous; expected {expected}"
            pointer = event.seq_pointer
        elif event.row is not None:  # (the reader numbers rows itself: as dsh words it)
            message, pointer = f"seq {_show(declared)} is not contiguous; expected {expected}", event.seq_pointer
        else:
            message, pointer = f"event at position {event.seq} is not contiguous; expected {expected}", None
        error = FoldError(message, code=NOT_CONTIGUOUS, line=event.line, seq=expected, pointer=pointer)
        if kind == Fault.GAP:
            missing = f"seq {expected} is" if event.seq == expected + 1 else f"seqs {expected}..{event.seq - 1} are"
            error.message = f"{message}: {missing} missing"
            error.skipped, error.after = False, f"checking goes on from seq {event.seq}"
        elif kind == Fault.WRONG_SEQ:
            after = fault[2] if fault is not None else None
            following = f" (the line after it has seq {after})" if after is not None else ""
            error.message = f"{message}: the line's seq is wrong{following}"
            error.skipped, error.after = False, f"taken as seq {expected}"
        elif kind == Fault.EARLY:
            error.message = f"{message}: the line comes before seq {expected}, ahead of its place"
            error.after = f"taken at its place, after seq {event.seq - 1}"
        elif kind == Fault.REPEAT:
            error.message = f"{message}: its seq is behind the log's place (a repeated or moved line)"
            error.after = "line skipped"
        raise error

    def resume(self, event: Item, error: FoldError) -> Replacement | None:
        """Go on past `error`, the fold's rejection of `event` (validate, export): an event
        whose seq the reader placed (error.skipped False) is folded at that place (it may
        raise its own FoldError); any other is skipped for surface purposes."""
        if not error.skipped:
            fault = fault_of(event)
            if fault is not None and fault[0] == Fault.GAP:
                self._lose(self.next_seq, event.seq - 1, unseen=True)
                self.next_seq = event.seq
                return self.apply(event)
            op = surface_op(event)  # Fault.WRONG_SEQ: the event holds its place, whatever its seq says
            if op is _LOG_ONLY:
                self.next_seq = event.seq + event.count
                return None
            return self._take(event, op, event.seq)
        if event.count:
            if event.type in SURFACE_TYPES:
                self._lose(event.seq, event.seq, unseen=False)
            self.next_seq = max(self.next_seq, event.seq + event.count)
        return None

    def _lose(self, first: int, last: int, *, unseen: bool) -> None:
        """Seqs first..last never join the surface: `unseen` ones were never read (lines
        that could not be read, missing seqs), the others were rejected."""
        if first <= last:
            self.lost.append((first, last, unseen))

    def cause(self, seq: int, unseen: bool = False) -> int | None:
        """The first seq of the lost run that holds `seq` (an event that never joined the
        surface; with `unseen`, only one that was never read)."""
        return next((first for first, last, never_read in self.lost
                     if first <= seq <= last and (never_read or not unseen)), None)

    def _take(self, event: Item, op: SurfaceOp, expected: int) -> Replacement | None:
        """The state's part of folding a surface event whose seq is in order."""
        kind = op.kind
        if op.error is not None and (kind != REPLACE or op.start is None):
            raise _fail(event, *op.error)  # (a replace's sources are judged after its range)
        if kind == LOG_ONLY:
            self.next_seq = expected + event.count
            return None
        if kind == APPEND:
            seq = event.seq
            self._link(seq, self._last, None, self._ranks)
            self._ranks += 1
            self.events[seq] = event
            self.next_seq = expected + 1
            return None
        start, end = op.start, op.end
        assert start is not None and end is not None  # (a replace's range was read whole, or it raised above)
        rank = self._rank
        if start not in rank:
            raise self._lost_node(event, START_NOT_FOUND, f"replace start seq {start} is not in the surface",
                                  "/surfaceOp/start", start)
        if end not in rank:
            raise self._lost_node(event, END_NOT_FOUND, f"replace end seq {end} is not in the surface",
                                  "/surfaceOp/end", end)
        if rank[start] > rank[end]:
            raise _fail(event, START_AFTER_END, f"replace start seq {start} comes after end seq {end} "
                                                "on the surface", "/surfaceOp")
        if op.error is not None:
            raise _fail(event, *op.error)
        shadowed = self._span(start, end)
        cited = frozenset(op.sources)
        missing = [s for s in shadowed if s not in cited]
        if missing:
            raise _fail(event, MISSING_SHADOWED_SOURCES,
                        "sourceEventSeqs must include every shadowed surface node; missing "
                        + ", ".join(map(str, missing)), "/sourceEventSeqs")
        if event.type == "tool/result":
            self._check_tool_rewrite(event, shadowed)
        before, after, place = self._prev[start], self._next[end], rank[start]
        for s in shadowed:
            del self.events[s], self._prev[s], self._next[s], rank[s]
        self._link(event.seq, before, after, place)
        self.events[event.seq] = event
        replacement = Replacement(event.seq, start, end, shadowed)
        self.replacements.append(replacement)
        self.next_seq = expected + 1
        return replacement

    def _span(self, start: int, end: int) -> tuple[int, ...]:
        """The nodes from `start` to `end`, in order (start comes first)."""
        out, seq, following = [start], start, self._next
        while seq != end:
            after = following[seq]
            assert after is not None  # (`end` comes after `start`: the list reaches it)
            seq = after
            out.append(seq)
        return tuple(out)

    def _link(self, seq: int, before: int | None, after: int | None, place: int) -> None:
        """Put `seq` between `before` and `after` (None: an end of the surface)."""
        self._prev[seq], self._next[seq], self._rank[seq] = before, after, place
        if before is None:
            self._first = seq
        else:
            self._next[before] = seq
        if after is None:
            self._last = seq
        else:
            self._prev[after] = seq

    def _lost_node(self, event: Item, code: str, message: str, pointer: str, seq: int) -> FoldError:
        """A replace bound that is not in the surface; it follows from an earlier defect
        when that seq never joined the surface."""
        error = _fail(event, code, message, pointer)
        error.caused_by = self.cause(seq)
        return error

    def _check_tool_rewrite(self, event: Item, shadowed: tuple[int, ...]) -> None:
        if len(shadowed) != 1:
            raise _fail(event, TOOL_REWRITE, f"a tool/result replacement must rewrite exactly one node, "
                                             f"not {len(shadowed)}", "/surfaceOp")
        original = self.events[shadowed[0]]
        if original.type != "tool/result":
            raise _fail(event, TOOL_REWRITE, f"a tool/result replacement must target a tool/result, "
                                             f"not {_show_type(original)} (seq {original.seq})", "/surfaceOp")
        try:
            same = js_equal(_without_result_content(original.record.get("data")),
                            _without_result_content(event.record.get("data")))
        except _Unreadable as exc:
            raise _fail(event, TOOL_REWRITE, f"a tool/result replacement cannot be compared: {exc}",
                        "/data/message/content") from None
        if not same:
            raise _fail(event, TOOL_REWRITE,
                        f"a tool/result replacement may change only the first result's content "
                        f"(it differs from seq {original.seq} elsewhere)", "/data")

    def state(self, seq: int | None = None) -> SurfaceState:
        """An immutable snapshot of the current state (labelled `seq`, default the last seq)."""
        if seq is None and self.next_seq:
            seq = self.next_seq - 1
        nodes = tuple(self.nodes)
        return SurfaceState(seq, nodes, tuple(self.replacements), {s: self.events[s] for s in nodes})


class _Unreadable(Exception):
    pass


def _without_result_content(data: JSONValue) -> dict[str, JSONValue]:
    """The tool/result payload with its first result block's `content` blanked.

    Mirrors dsh's comparison: only the first block survives, with `content`
    set to null; everything else in the payload must be equal.
    """
    if type(data) is not dict:
        raise _Unreadable("data is not an object")
    message = data.get("message")
    if type(message) is not dict:
        raise _Unreadable("data.message is not an object")
    content = message.get("content", MISSING)
    if type(content) is list:
        first = content[0] if content else MISSING
    elif type(content) is str:
        first = content[0] if content else MISSING
    elif type(content) is dict:
        first = content.get("0", MISSING)
    elif content is MISSING or content is None:
        raise _Unreadable("data.message.content is missing")
    else:
        first = MISSING
    block = dict(first) if type(first) is dict else ({} if first is MISSING or first is None else
                                                      _spread(first))
    block["content"] = None
    out = dict(data)
    out["message"] = {**message, "content": [block]}
    return out


def _spread(value: JSONValue) -> dict[str, JSONValue]:
    """`{...value}` in JavaScript for a non-object value."""
    if type(value) is str:
        return {str(i): ch for i, ch in enumerate(value)}
    if type(value) is list:
        return {str(i): v for i, v in enumerate(value)}
    return {}


def _show(value: JSONValue) -> str:
    return shown(value, 60)


def _show_type(event: Item) -> str:
    return _show(event.type) if type(event.type) is str else f"an event of type {_show(event.type)}"


# -- drivers --------------------------------------------------------------

def fold(events: Iterable[Item]) -> SurfaceState:
    """The state after the last of `events` (or reader records); raises FoldError.

    The definition, for a short list in memory; commands read a log through
    `core.driver.run_pass`, which applies the same `SurfaceFold`.
    """
    f = SurfaceFold()
    for event in events:
        f.apply(event)
    return f.state()
