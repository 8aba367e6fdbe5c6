"""Packed chunk rows: a run of `assistant/chunk` events stored as one line.

`expand_row` checks a row's exact shape as dsh does and gives it as a `PackedRun`;
its members (`PackedMember`) build their records only when asked.
"""

from __future__ import annotations

from itertools import accumulate

import orjson

from dshreplay._jsvalues import (
    MAX_SAFE_INTEGER,
    MISSING,
    JSONObject,
    JSONValue,
    is_event_seq,
    is_number,
    is_safe_int,
    shown,
)
from dshreplay.errors import LineError
from dshreplay.io._items import Event, Fault_

ROW_TAGS = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
MALFORMED_ROW = "DSH-E002"  # the finding code of a packed row that is not as dsh writes it


def _all_safe_ints(values: list[JSONValue]) -> bool:
    """Every value a safe integer (plain ints checked at once by their extremes)."""
    if not values:
        return True
    if set(map(type, values)) == _INT:
        ints: list[int] = values  # (every one an int, as the test says)
        return -MAX_SAFE_INTEGER <= min(ints) and max(ints) <= MAX_SAFE_INTEGER
    return all(map(is_safe_int, values))


_INT = frozenset({int})


def _malformed(tag: str, why: str, path: str, line: int, seq: int) -> LineError:
    return LineError(f"malformed {tag} row: {why}", code=MALFORMED_ROW, path=path, line=line, seq=seq)


def expand_row(rec: JSONObject, tag: str, seq: int, line: int, path: str) -> PackedRun:
    """Validate one packed row exactly as dsh does; return it as a run of events.

    `seq` is the position of the first member. A runtime row's `seq0` is kept
    as each member's written seq (`seq0 + k`), so the fold's contiguity rule
    sees a mismatch the same way it would for plain events.
    """
    keys = rec.keys()
    if keys == _RUNTIME_ROW:
        seq0, time0 = rec["seq0"], rec["time0"]
        if not (type(seq0) is int and 0 <= seq0 <= MAX_SAFE_INTEGER) and not is_event_seq(seq0):
            raise _malformed(tag, "seq0 must be a non-negative safe integer", path, line, seq)
        if not (type(time0) is int and -MAX_SAFE_INTEGER <= time0 <= MAX_SAFE_INTEGER) and not is_safe_int(time0):
            raise _malformed(tag, "time0 must be a safe integer", path, line, seq)
    elif "seq0" in rec or "time0" in rec:
        raise _malformed(tag, "envelope must be exactly {type, seq0, time0, data}", path, line, seq)
    elif keys != _PROJECTED_ROW:
        raise _malformed(tag, "envelope must be exactly {type, data} (projected) or "
                              "{type, seq0, time0, data} (runtime)", path, line, seq)
    else:
        seq0, time0 = None, 0
    data = rec["data"]
    if type(data) is not dict:
        raise _malformed(tag, "data must be an object", path, line, seq)
    if tag == "tool-call-chunks":
        with_name = data.keys() == _NAMED_TOOL_ROW
        if not with_name and data.keys() != _TOOL_ROW:
            raise _malformed(tag, "data must be exactly {turn, step, index, id, name?, dt, args}",
                             path, line, seq)
        if type(data["id"]) is not str or (with_name and type(data["name"]) is not str):
            raise _malformed(tag, "id (and name when present) must be strings", path, line, seq)
        payload = data["args"]
        key = "args"
    else:
        if data.keys() != _TEXT_ROW:
            raise _malformed(tag, "data must be exactly {turn, step, index, dt, texts}", path, line, seq)
        payload = data["texts"]
        key = "texts"
    turn, step, index = data["turn"], data["step"], data["index"]
    if not (type(turn) is int and type(step) is int and type(index) is int) \
            and not (is_number(turn) and is_number(step) and is_number(index)):
        raise _malformed(tag, "turn/step/index must be numbers", path, line, seq)
    if type(payload) is not list or not payload or not _all_strings(payload):
        raise _malformed(tag, f"{key} must be a non-empty array of strings", path, line, seq)
    dt = data["dt"]
    if type(dt) is not list:
        raise _malformed(tag, "dt must be an array of safe integers", path, line, seq)
    # the common case in one sum: plain ints whose magnitudes, with time0's, stay safe (then every
    # gap and every member's time is a safe integer); else each is checked
    plain = type(time0) is int and (not dt or set(map(type, dt)) == _INT) \
        and abs(time0) + sum(map(abs, dt)) <= MAX_SAFE_INTEGER
    if not plain and not _all_safe_ints(dt):
        raise _malformed(tag, "dt must be an array of safe integers", path, line, seq)
    n = len(payload)
    if len(dt) != n - 1:
        raise _malformed(tag, f"dt has {len(dt)} gaps for {n} members (want one fewer)", path, line, seq)
    if seq0 is not None and not (type(seq0) is int and seq0 + n - 1 <= MAX_SAFE_INTEGER) \
            and not is_safe_int(seq0 + n - 1):
        raise _malformed(tag, "member seqs must stay safe integers", path, line, seq)
    if not plain and not _all_safe_ints(list(accumulate(dt, initial=time0))):
        raise _malformed(tag, "member times must stay safe integers", path, line, seq)
    return PackedRun(seq, tag, data, seq0, rec, line, time0, n)


def line_events(raw: bytes) -> int:
    """How many events one physical line holds, as `records()` counts them: none for
    a blank line or a last line cut short (no newline, not JSON), a packed row's
    members, one for any other line (a bad one too: it is assumed to hold one)."""
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return 0 if not raw.strip() or not raw.endswith(b"\n") else 1
    tag = rec.get("type") if type(rec) is dict else None
    if type(tag) is str and tag in ROW_TAGS:
        try:
            return expand_row(rec, tag, 0, 0, "").count
        except LineError:
            return 1
    return 1


def _all_strings(values: list[JSONValue]) -> bool:
    try:
        "".join(values)  # checks every item is a string, in C
    except TypeError:
        return False
    return True


_RUNTIME_ROW = frozenset({"type", "seq0", "time0", "data"})
_PROJECTED_ROW = frozenset({"type", "data"})
_TEXT_ROW = frozenset({"turn", "step", "index", "dt", "texts"})
_TOOL_ROW = frozenset({"turn", "step", "index", "id", "dt", "args"})
_NAMED_TOOL_ROW = frozenset({"turn", "step", "index", "id", "name", "dt", "args"})


class _RowView:
    """What a packed run and each of its members tell about their row."""

    __slots__ = ()
    seq_pointer = "/seq0"  # where a row's written seq is

    @property
    def _of(self) -> PackedRun:
        raise NotImplementedError

    @property
    def row_data(self) -> JSONObject:
        """The packed row's `data` (turn, step, index, dt, texts/args)."""
        return self._of.data

    @property
    def row_record(self) -> JSONObject:
        """The whole packed row as stored."""
        return self._of.stored


class PackedRun(_RowView):
    """The `count` assistant/chunk events one packed row stands for: the row's
    tag (`row`), `data`, written `seq0` (None in the projected layout) and
    record (`stored`), which its members share."""

    __slots__ = ("seq", "count", "line", "row", "time0", "data", "seq0", "stored", "offset", "fault")
    offset: int | None
    fault: Fault_
    type = "assistant/chunk"
    index_in_row = 0

    def __init__(self, seq: int, tag: str, data: JSONObject, seq0: int | float | None, stored: JSONObject,
                 line: int, time0: int | float, count: int) -> None:
        self.seq = seq
        self.count = count
        self.line = line
        self.row = tag
        self.time0 = time0
        self.data = data
        self.seq0 = seq0
        self.stored = stored

    @property
    def _of(self) -> PackedRun:
        return self

    @property
    def last_seq(self) -> int:
        return self.seq + self.count - 1

    @property
    def record(self) -> JSONObject:
        """The whole packed row as stored (as `row_record`)."""
        return self.stored

    @property
    def time(self) -> int | float:
        """The first member's time."""
        return self.time0

    @property
    def end_line(self) -> int:
        return self.line

    @property
    def declared_seq(self) -> JSONValue:
        """The row's written `seq0`, or MISSING in the projected layout."""
        seq0 = self.seq0
        return MISSING if seq0 is None else seq0

    @property
    def times(self) -> list[int | float]:
        """Each member's time: time0 plus the gaps before it; in the projected layout, which
        has no times, none (0, as for every other event of that layout), whatever its gaps."""
        if self.seq0 is None:
            return [0] * self.count
        return list(accumulate(self.data["dt"], initial=self.time0))

    @property
    def last_time(self) -> int | float:
        """The last member's time (0 in the projected layout)."""
        return self.time0 + sum(self.data["dt"]) if self.seq0 is not None else 0

    def members(self) -> list[PackedMember]:
        times, seq, line = self.times, self.seq, self.line
        return [PackedMember(seq + k, self, k, line, times[k]) for k in range(self.count)]

    def __repr__(self) -> str:
        return f"PackedRun(seq={self.seq}, count={self.count}, row={shown(self.row)}, line={self.line})"


class PackedMember(_RowView, Event):
    """An `assistant/chunk` event stored inside a packed row.

    Its record is built only when someone asks for it: the fold needs just
    the seq, so expanding large rows stays cheap.
    """

    __slots__ = ("_run", "_k", "_record", "_time")

    def __init__(self, seq: int, run: PackedRun, k: int, line: int, time: int | float) -> None:
        self.seq = seq
        self.type = "assistant/chunk"
        self.line = line
        self.row = run.row
        self._time = time
        self._run = run
        self._k = k
        self._record: JSONObject | None = None

    @property
    def _of(self) -> PackedRun:
        return self._run

    @property
    def time(self) -> int | float:
        return self._time

    @property
    def index_in_row(self) -> int:
        return self._k

    @property
    def declared_seq(self) -> JSONValue:
        seq0 = self._run.seq0
        return MISSING if seq0 is None else seq0 + self._k

    @property
    def record(self) -> JSONObject:  # type: ignore[override]  # (built from its row on demand: never assigned)
        if self._record is None:
            self._record = self._build()
        return self._record

    def _build(self) -> JSONObject:
        run, k = self._run, self._k
        data = run.data
        if run.row == "text-chunks":
            chunk = {"type": "text-delta", "index": data["index"], "text": data["texts"][k]}
        elif run.row == "reasoning-chunks":
            chunk = {"type": "reasoning-delta", "index": data["index"], "text": data["texts"][k]}
        elif "name" in data:
            chunk = {"type": "tool-call-delta", "index": data["index"], "id": data["id"],
                     "name": data["name"], "argumentsDelta": data["args"][k]}
        else:
            chunk = {"type": "tool-call-delta", "index": data["index"], "id": data["id"],
                     "argumentsDelta": data["args"][k]}
        body = {"turn": data["turn"], "step": data["step"], "chunk": chunk}
        if run.seq0 is None:
            return {"type": "assistant/chunk", "data": body}
        return {"type": "assistant/chunk", "seq": run.seq0 + k, "time": self.time, "data": body}
