"""The surface fold: which events the model sees, in which order.

This module is the one implementation of FORMAT.md section 6 in dshreplay.
`SurfaceFold` applies events one at a time (validate first, then commit, so
a rejected event leaves the state untouched); `fold`, `fold_at` and
`states_at` drive it over a stream. `derive_message` is the per-node message
projection. Everything here is pure: no I/O, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

from dshreplay.errors import DeriveError, FoldError
from dshreplay.io.reader import Event
from dshreplay.jsvalues import MISSING, is_event_seq, js_equal, js_length, short_json

SURFACE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})

# Fold error codes: the finding codes `validate` reports (see findings.py).
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

    def to_json(self) -> dict:
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
    events: dict = field(repr=False, compare=False)

    def messages(self) -> list:
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

    def to_json(self) -> dict:
        return {"seq": self.seq, "nodes": list(self.nodes),
                "replacements": [r.to_json() for r in self.replacements],
                "messages": self.messages()}


def derive_message(event: Event) -> tuple[bool, object]:
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


def has_message(event: Event) -> bool:
    """Whether a surface node yields a model message (raises DeriveError as `derive_message`)."""
    return derive_message(event)[0]


def _derive_error(event: Event, message: str, pointer: str) -> DeriveError:
    return DeriveError(message, line=event.line, seq=event.seq, pointer=pointer)


def _fail(event: Event, code: str, message: str, pointer: str | None = None) -> FoldError:
    return FoldError(message, code=code, line=event.line, seq=event.seq, pointer=pointer)


class SurfaceFold:
    """Incremental fold state. Feed events in log order with `apply`.

    `apply` raises FoldError and leaves the state unchanged when dsh would
    reject the event; callers that want to keep going (validate) may then
    call `skip` to move past it.
    """

    __slots__ = ("nodes", "replacements", "events", "next_seq")

    def __init__(self) -> None:
        self.nodes: list[int] = []
        self.replacements: list[Replacement] = []
        self.events: dict[int, Event] = {}  # current node seq -> event
        self.next_seq = 0

    def apply(self, event: Event) -> Replacement | None:
        expected = self.next_seq
        if event.row is not None:
            # a packed run (or one member of it): assistant/chunk events whose
            # exact shape the reader checked (no surface fields): only the seq
            # of the first can be wrong
            declared = event.declared_seq
            if event.seq != expected or (declared is not MISSING and declared != expected):
                raise _fail(event, NOT_CONTIGUOUS, f"seq {_show(declared)} is not contiguous; "
                                                   f"expected {expected}", event.seq_pointer)
            self.next_seq = expected + event.count
            return None
        rec = event.record
        declared = rec.get("seq", MISSING)
        if declared is not MISSING and not (declared == expected and type(declared) in (int, float)):
            raise _fail(event, NOT_CONTIGUOUS,
                        f"seq {_show(declared)} is not contiguous; expected {expected}", "/seq")
        if event.seq != expected:
            raise _fail(event, NOT_CONTIGUOUS, f"event at position {event.seq} is not contiguous; "
                                               f"expected {expected}")
        if event.type not in SURFACE_TYPES:
            if "surfaceOp" in rec:
                raise _fail(event, SURFACE_FIELD_ON_LOG_ONLY,
                            f"{_show_type(event)} is not a surface type and cannot carry surfaceOp",
                            "/surfaceOp")
            if "sourceEventSeqs" in rec:
                raise _fail(event, SURFACE_FIELD_ON_LOG_ONLY,
                            f"{_show_type(event)} is not a surface type and cannot carry sourceEventSeqs",
                            "/sourceEventSeqs")
            self.next_seq = expected + 1
            return None
        op = rec.get("surfaceOp", MISSING)
        if op is MISSING:
            raise _fail(event, MISSING_SURFACE_OP,
                        f"{event.type} is a surface type and requires a surfaceOp", "/surfaceOp")
        if op == "append":
            self._check_sources(event, ())
            self.nodes.append(event.seq)
            self.events[event.seq] = event
            self.next_seq = expected + 1
            return None
        if type(op) is not dict:
            raise _fail(event, INVALID_SURFACE_OP,
                        f"{event.type} carries an invalid surfaceOp {_show(op)}: "
                        "want \"append\" or {op: \"replace\", start, end}", "/surfaceOp")
        if not (len(op) == 3 and op.get("op") == "replace" and is_event_seq(op.get("start"))
                and is_event_seq(op.get("end"))):
            raise _fail(event, INVALID_REPLACE,
                        f"{event.type} carries an invalid replace surfaceOp {_show(op)}: want exactly "
                        "{op: \"replace\", start, end} with non-negative safe integer seqs", "/surfaceOp")
        start, end = int(op["start"]), int(op["end"])
        nodes = self.nodes
        try:
            i_start = nodes.index(start)
        except ValueError:
            raise _fail(event, START_NOT_FOUND, f"replace start seq {start} is not in the surface",
                        "/surfaceOp/start") from None
        try:
            i_end = nodes.index(end)
        except ValueError:
            raise _fail(event, END_NOT_FOUND, f"replace end seq {end} is not in the surface",
                        "/surfaceOp/end") from None
        if i_start > i_end:
            raise _fail(event, START_AFTER_END, f"replace start seq {start} (index {i_start}) is after "
                                                f"end seq {end} (index {i_end})", "/surfaceOp")
        shadowed = tuple(nodes[i_start:i_end + 1])
        self._check_sources(event, shadowed)
        if event.type == "tool/result":
            self._check_tool_rewrite(event, shadowed)
        nodes[i_start:i_end + 1] = [event.seq]
        for s in shadowed:
            del self.events[s]
        self.events[event.seq] = event
        replacement = Replacement(event.seq, start, end, shadowed)
        self.replacements.append(replacement)
        self.next_seq = expected + 1
        return replacement

    def skip(self, event: Event) -> None:
        """Move past an event that `apply` rejected, without changing the surface."""
        self.next_seq = event.seq + event.count

    @staticmethod
    def _check_sources(event: Event, shadowed: tuple[int, ...]) -> None:
        raw = event.record.get("sourceEventSeqs", MISSING)
        sources: set = set()
        if raw is not MISSING:
            if type(raw) is not list:
                raise _fail(event, BAD_SOURCE_SEQS, "sourceEventSeqs must be an array when present",
                            "/sourceEventSeqs")
            if not raw and event.type != "assistant/message":
                raise _fail(event, BAD_SOURCE_SEQS,
                            "sourceEventSeqs must not be empty except on assistant/message",
                            "/sourceEventSeqs")
            later = None
            if raw and set(map(type, raw)) == {int} and min(raw) >= 0 and max(raw) < event.seq:
                sources = set(raw)  # the common case: plain ints, all earlier
            else:
                for i, source in enumerate(raw):
                    if not is_event_seq(source):
                        raise _fail(event, BAD_SOURCE_SEQS, f"sourceEventSeqs[{i}] is {_show(source)}: "
                                    "want a non-negative safe integer", f"/sourceEventSeqs/{i}")
                    sources.add(source)
                    if later is None and source >= event.seq:
                        later = (i, source)
            if len(sources) != len(raw):
                raise _fail(event, BAD_SOURCE_SEQS, "sourceEventSeqs must not contain duplicates",
                            "/sourceEventSeqs")
            if later is not None:
                raise _fail(event, BAD_SOURCE_SEQS, f"sourceEventSeqs must cite earlier events: "
                            f"{_show(later[1])} >= current seq {event.seq}", f"/sourceEventSeqs/{later[0]}")
        missing = [s for s in shadowed if s not in sources]
        if missing:
            raise _fail(event, MISSING_SHADOWED_SOURCES,
                        "sourceEventSeqs must include every shadowed surface node; missing "
                        + ", ".join(map(str, missing)), "/sourceEventSeqs")

    def _check_tool_rewrite(self, event: Event, shadowed: tuple[int, ...]) -> None:
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
        return SurfaceState(seq, tuple(self.nodes), tuple(self.replacements),
                            {s: self.events[s] for s in self.nodes})


class _Unreadable(Exception):
    pass


def _without_result_content(data):
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


def _spread(value) -> dict:
    """`{...value}` in JavaScript for a non-object value."""
    if type(value) is str:
        return {str(i): ch for i, ch in enumerate(value)}
    if type(value) is list:
        return {str(i): v for i, v in enumerate(value)}
    return {}


def _show(value) -> str:
    return short_json(value, 60)


def _show_type(event: Event) -> str:
    return _show(event.type) if type(event.type) is str else f"an event of type {_show(event.type)}"


# -- drivers --------------------------------------------------------------

def fold(events: Iterable[Event]) -> SurfaceState:
    """Fold a whole stream (events, or reader records); the state after its last event.

    Raises FoldError.
    """
    f = SurfaceFold()
    for event in events:
        f.apply(event)
    return f.state()


def states_at(events: Iterable[Event], seqs: Iterable[int]) -> Iterator[SurfaceState]:
    """Yield the state right after each wanted seq, in ascending seq order, in one pass.

    `events` may be single events or reader records (packed runs). Stops
    reading once the last wanted seq is reached. Raises FoldError when the
    fold breaks at or before a wanted seq; states before the break are
    yielded first.
    """
    wanted = sorted(set(seqs))
    if not wanted:
        return
    f = SurfaceFold()
    i = 0
    target = wanted[0]
    for event in events:
        f.apply(event)
        while target < f.next_seq:  # chunks inside a run leave the surface as it is
            yield f.state(target)
            i += 1
            if i == len(wanted):
                return
            target = wanted[i]


def fold_at(events: Iterable[Event], seq: int) -> SurfaceState | None:
    """The state right after event `seq`, or None if the stream ends before it."""
    for state in states_at(events, [seq]):
        return state
    return None
