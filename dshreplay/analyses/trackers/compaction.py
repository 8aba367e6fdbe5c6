"""Compaction brackets: which compaction is open, and everything the log says of each.

FORMAT.md section 7: a compaction runs between `compaction/start` and
`compaction/end` (one at a time), writes at most one `compaction/summary`,
and its checkpoint (a `user/message` replacement from the `compact` plugin)
replaces history inside it. `CompactionTracker` follows the brackets once
for every command and rule that needs them: `brackets` lists its records,
the compaction rules compare the log with its state, `record.compaction` is
the bracket open after each record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from dshreplay._jsvalues import MISSING, as_key, dig, js_same
from dshreplay.analyses.trackers.provenance import meter_of
from dshreplay.analyses.trackers.turns import Stored
from dshreplay.core.driver import Observer, Record, Run

__all__ = ["BracketRecord", "CompactionTracker", "compaction_of"]


def _get(value: Any, *keys: str | int) -> Any:
    if len(keys) == 1 and type(value) is dict:
        return value.get(keys[0], MISSING)
    return dig(value, *keys, default=MISSING)


@dataclass
class BracketRecord:
    """Everything the log says about one compactionId (one row of `brackets`)."""

    compaction_id: object
    start: int | None = None
    end: int | None = None
    start_time: object = None  # its compaction/start's time, as logged
    status: str = "open"  # closed | failed | open | abandoned | unbracketed (a replacement with no bracket)
    turn: object = None
    summary_seq: int | None = None
    replacement_seq: int | None = None
    error: object = None
    anomalies: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"compactionId": self.compaction_id, "start": self.start, "end": self.end,
                "status": self.status, "turn": self.turn, "summarySeq": self.summary_seq,
                "replacementSeq": self.replacement_seq, "error": self.error, "anomalies": self.anomalies}


def compaction_of(data: Any, open_bracket: Bracket | None) -> object:
    """The compactionId an event belongs to, as `events`, `to_records` and events.csv show it: the
    one its data names (`compactionId`, or a checkpoint's `source.compactionId`), else that of the
    bracket open around it (None: none)."""
    if type(data) is dict:
        cid = data.get("compactionId")
        if cid is None and type(data.get("source")) is dict:
            cid = data["source"].get("compactionId")
        if cid is not None:
            return cid
    if open_bracket is None or open_bracket.cid is MISSING:
        return None
    return open_bracket.cid


class Bracket:
    """The compaction open between its compaction/start and its end."""

    __slots__ = ("cid", "command", "start", "turn", "summaries")

    def __init__(self, cid: Any, command: Any, start: int, turn: Any) -> None:
        self.cid = cid  # its compactionId as logged (MISSING when absent)
        self.command = command  # its sourceCommandId as logged (MISSING when absent)
        self.start = start  # the compaction/start seq
        self.turn = turn  # the turn it belongs to (None: standalone)
        self.summaries: list[int] = []  # its compaction/summary seqs (dsh writes at most one)


class CompactionTracker(Observer):
    """The compaction brackets of a pass.

    While a record is observed after this tracker:
    open      the Bracket open after it (also `record.compaction`)
    closed    the Bracket this record closed (its compaction/end; a
              compaction/start opening another; a session/end-seed
              abandoning it), else None
    matched   a compaction/summary or compaction/end found its bracket open
    checkpoint  (compactionId, BracketRecord) of a compaction checkpoint
    brackets  compactionId -> BracketRecord, in order of first mention
    """

    types = frozenset({"compaction/start", "compaction/summary", "compaction/end", "session/end-seed",
                       "user/message"})

    checkpoint: tuple[Any, BracketRecord] | None
    _settler: Callable[[Record], None]

    def begin(self, run: Run) -> None:
        self.open: Bracket | None = None
        self.closed: Bracket | None = None
        self.matched = False
        self.checkpoint = None
        self.brackets: dict[object, BracketRecord] = {}  # (keyed by as_key of the compactionId)
        self._settler = self._settle

    def record_for(self, cid: Any) -> BracketRecord:
        key = as_key(cid)
        record = self.brackets.get(key)
        if record is None:
            record = self.brackets[key] = BracketRecord(None if cid is MISSING else cid)
        return record

    def observe(self, record: Record) -> None:
        event: Stored = record.item
        kind = event.type
        opened = self.open
        self.closed = None
        if kind == "user/message":
            self._checkpoint(event)
            return
        data = event.record.get("data")
        if kind == "compaction/start":
            self.closed = opened
            owner = _get(data, "turn")
            owner = None if owner is MISSING else owner
            cid = _get(data, "compactionId")
            self.open = Bracket(cid, _get(data, "sourceCommandId"), event.seq, owner)
            found = self.record_for(cid)
            if found.start is not None:
                found.anomalies.append(f"started twice (seq {found.start} and seq {event.seq})")
            else:
                found.start, found.turn, found.start_time = event.seq, owner, event.time
        elif kind == "session/end-seed":
            if opened is not None:
                self.record_for(opened.cid).status = "abandoned"
                self.closed, self.open = opened, None
        else:  # compaction/summary or compaction/end
            if kind == "compaction/summary":
                record.then(self._settler)
            self.matched = opened is not None
            what = "end" if kind == "compaction/end" else "summary"
            if opened is None:
                found = self.record_for(_get(data, "compactionId"))
                found.anomalies.append(f"{what} without start (seq {event.seq})")
                if what == "end":
                    found.end = event.seq
                    found.status = "failed" if _get(data, "error") is not MISSING else "closed"
            elif what == "summary":
                opened.summaries.append(event.seq)
                self.record_for(opened.cid).summary_seq = event.seq
            else:
                error = _get(data, "error")
                found = self.record_for(opened.cid)
                found.end = event.seq
                found.status = "closed" if error is MISSING else "failed"
                found.error = None if error is MISSING else error
                self.closed, self.open = opened, None
        if self.open is not opened:
            record.compaction = self.open

    def _settle(self, record: Record) -> None:
        """The record after a compaction/summary: the replacement it prices, when it made one."""
        meter = meter_of(record)
        if record.replacement is not None and meter is not None:
            cid = _get(meter.record, "data", "compactionId")
            if cid is not MISSING:
                self.record_for(cid).replacement_seq = record.item.seq

    def _checkpoint(self, event: Stored) -> None:
        """A compaction checkpoint: a replacement by the `compact` plugin, with its bracket's id."""
        self.checkpoint = None
        rec = event.record
        source = _get(rec.get("data"), "source")
        if type(rec.get("surfaceOp")) is not dict or _get(source, "kind") != "plugin" \
                or _get(source, "plugin") != "compact":
            return
        b = self.open
        cid = _get(source, "compactionId")
        found = self.record_for(cid)
        found.replacement_seq = event.seq
        if b is None and found.start is None:
            found.status = "unbracketed"  # (dsh's older logs write a checkpoint with no bracket at all)
        elif b is None or not js_same(cid, b.cid):
            found.anomalies.append(f"replacement at seq {event.seq} outside its bracket")
        self.checkpoint = (cid, found)
