"""Where each record of a log goes: the state of one `LogReader.records()` pass.

A runtime record whose written seq is not its place is held until the next
record's written seq says which reading holds (see `Fault`); records read
before their place wait for it (`early`); after lines that could not be read,
the next good record's written seq says how many events they held. Records a
pass asked only to be counted (`QuietRule`) are gathered into `Quiet` runs.
The reader's loop (`io.reader`) reads lines and gives what this decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator

from dshreplay._jsvalues import MAX_SAFE_INTEGER, MISSING, JSONObject, JSONValue
from dshreplay.errors import LineError, ReadError
from dshreplay.io._items import Event, Fault, Item, Misplaced, Quiet
from dshreplay.io._packed import ROW_TAGS, PackedRun, expand_row

if TYPE_CHECKING:
    from dshreplay.io.reader import LogReader

MAX_BLANK_RUN = 100_000  # dsh never writes blank lines; a long run of them is an attack, not a log
MAX_EARLY = 1000  # records held back to be given at their place (more: placed where they lie)


class Placement:
    """One pass's place in the log: `seq` is the next event's place; `held` is (item, raw,
    written seq) of a record not at its place, until the next one is read; `early` maps a
    seq to (item, raw) of records read before their place; `resync` is the seq of the first
    event lost to a skipped line; `mixed`: a record without a written seq was read, so seqs
    are positions (FORMAT.md section 3) and a written seq that disagrees is wrong where it
    lies and numbers nothing after it. `hushed` events (lines `hushed_line`..`hushed_end`)
    were counted into the Quiet run that ends before the line being read."""

    __slots__ = ("reader", "seq", "held", "early", "mixed", "resync", "blanks", "hushed", "hushed_line",
                 "hushed_offset", "hushed_end")

    def __init__(self, reader: LogReader, seq: int) -> None:
        self.reader = reader
        self.seq = seq
        self.held: tuple[Event | PackedRun, bytes, JSONValue] | None = None
        self.early: dict[int, tuple[Event | PackedRun, bytes]] = {}
        self.mixed = False
        self.resync: int | None = None
        self.blanks = 0
        self.hushed = self.hushed_line = self.hushed_offset = self.hushed_end = 0

    def place(self, following: JSONValue) -> Iterator[Item]:
        """Give the held record, now that the next record's written seq is known."""
        assert self.held is not None
        reader, early = self.reader, self.early
        item, raw, written_value = self.held
        self.held = None
        expected, count = self.seq, item.count
        after = _as_seq(following)
        written = _as_seq(written_value)
        if written is not None and written >= expected + 1_000_000:
            written = None  # (no log jumps so far: a damaged number)
        if written is None or after == expected + count or self.mixed:  # the numbering goes on from its place
            item.fault = (Fault.WRONG_SEQ, expected, after)
            reader.raw = raw
            yield item
            self.seq = expected + count
        elif written > expected and after == expected and len(early) < MAX_EARLY:
            item.seq = written
            early[written] = (item, raw)
            reader.raw = raw
            yield Misplaced(item, expected, Fault.EARLY)
        elif written > expected:  # (the next line goes on from it, or says nothing clear: its seq holds)
            yield from self.release(written)
            item.fault = (Fault.GAP, self.seq, None)
            item.seq = written
            reader.raw = raw
            yield item
            reader.missing += written - self.seq
            self.seq = written + count
        else:
            item.seq = written
            reader.raw = raw
            yield Misplaced(item, expected, Fault.REPEAT)
        if early:
            yield from self.release(None)

    def release(self, before: int | None) -> Iterator[Item]:
        """Give the early records whose place has come (and, with `before`, those
        that come before that seq: the seqs between are missing)."""
        early, reader = self.early, self.reader
        while early:
            first = min(early)
            if first > self.seq and (before is None or first >= before):
                return
            item, raw = early.pop(first)
            reader.raw = raw
            if first < self.seq:  # its place went by (a wrong seq took it)
                yield Misplaced(item, self.seq, Fault.REPEAT)
                continue
            if first > self.seq:
                item.fault = (Fault.GAP, self.seq, None)
                reader.missing += first - self.seq
            yield item
            self.seq = first + item.count

    def follow(self, rec: JSONObject) -> Iterator[Item]:
        """The held record placed by the record read after it."""
        following = _written(rec)
        self.mixed = self.mixed or following is MISSING
        return self.place(following)

    def resumed(self, rec: JSONObject) -> int | None:
        """After lines that could not be read (`resync`): the seq of the first event lost, and
        numbering goes on from the record's written seq when it is a plausible one."""
        resumed = self.resync
        if resumed is not None:
            written = _written(rec)
            if type(written) is int and resumed <= written < self.seq + 1_000_000:
                self.seq = written
            self.resync = None
        return resumed

    def counted(self, rec: JSONObject, kinds: frozenset[str], fields: tuple[str, ...], lineno: int,
                offset: int) -> bool:
        """Whether a record is only counted (`QuietRule`): of a type in `kinds`, at its place (a packed row
        checked exactly); then its events join the Quiet run."""
        kind = rec.get("type")
        if not (kind.__class__ is str and kind in kinds and rec.keys().isdisjoint(fields)):
            return False
        if kind not in ROW_TAGS:
            written = rec.get("seq", MISSING)
            if written is MISSING:
                self.mixed = True
            counted = written is MISSING or (written == self.seq and written.__class__ is not bool)
        else:  # a packed row, checked exactly: counted whole when at its place
            try:
                run = expand_row(rec, kind, self.seq, lineno, self.reader.path)
                self.mixed = self.mixed or run.seq0 is None
                counted = run.count if run.seq0 is None or run.seq0 == self.seq else 0
            except LineError:
                counted = 0  # (read again by the loop, where its error is raised or recovered)
        if not counted:
            return False
        if not self.hushed:
            self.hushed_line, self.hushed_offset = lineno, offset
        self.hushed += counted
        self.seq += counted
        self.hushed_end = lineno
        return True

    def quiet_run(self) -> Quiet:
        """The Quiet run that ends here (the pass gives it, and starts the next afresh)."""
        hushed, self.hushed = self.hushed, 0
        return Quiet(self.seq - hushed, hushed, self.hushed_line, self.hushed_offset, self.hushed_end)

    def blank(self, lineno: int) -> None:
        """A blank line: dsh writes none; a long run of them is refused."""
        self.blanks += 1
        if self.blanks > MAX_BLANK_RUN:
            raise ReadError(f"more than {MAX_BLANK_RUN} blank lines in a row: not a dsh log",
                            path=self.reader.path, line=lineno, seq=self.seq) from None

    def unreadable(self, error: LineError, recover: Callable[[LineError], None] | None) -> None:
        """A line that holds no record: raised, or handed to `recover` and assumed to hold one
        event; numbering resumes at the next good record (`resumed`)."""
        if recover is None:
            raise error from None
        recover(error)
        if self.resync is None:
            self.resync = self.seq
        self.seq += 1


def _written(rec: JSONObject) -> JSONValue:
    """A record's written seq (a packed row's `seq0`), or MISSING."""
    tag = rec.get("type")
    return rec.get("seq0" if type(tag) is str and tag in ROW_TAGS else "seq", MISSING)


def _as_seq(value: JSONValue) -> int | None:
    """A written seq as an int (JSON numbers: 5.0 is 5), or None when it is no event seq."""
    if type(value) is int and value >= 0:
        return value
    if type(value) is float and value >= 0 and value.is_integer() and value <= MAX_SAFE_INTEGER:
        return int(value)
    return None
