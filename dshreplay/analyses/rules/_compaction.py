"""Compaction brackets and metering (dsh's compaction invariant, FORMAT.md sections 7 and 8).

`CompactionRules` compares the log with the CompactionTracker's brackets: one
compaction at a time, in its turn, with its summary and checkpoint inside
it. `MeteringRules`: each compaction/summary or compaction/prune directly
precedes the replacement it prices, and every replacement has one.
"""

from __future__ import annotations

from typing import Any, Callable

from dshreplay._jsvalues import MISSING, js_same, shown
from dshreplay.analyses.findings import Finding, finding
from dshreplay.analyses.rules._base import Family, RuleFindings, get, not_open_turn, opt, same, show
from dshreplay.analyses.trackers.compaction import Bracket, CompactionTracker
from dshreplay.analyses.trackers.provenance import METERS, meter_of
from dshreplay.analyses.trackers.turns import Placed, Stored, TurnTracker
from dshreplay.core.driver import Record, Run


class MeteringRules(Family):
    """FORMAT.md section 7: a metering event (compaction/summary, compaction/prune) is immediately
    followed by the replacement it prices (DSH-E313 when not); a replacement needs none (plugins
    replace unmetered: the notice DSH-N314). Each finding stands on the event it is about: a
    replacement that comes late, after other events, on that replacement (one finding, not also
    N314); a metering event no replacement follows at all, on the metering event."""

    handlers = {"compaction/summary": "meter", "compaction/prune": "meter", "user/message": "replaced",
                "assistant/message": "replaced", "tool/result": "replaced", "compaction/end": "compaction_end"}

    _check: Callable[[Record], None]

    def begin(self, run: Run) -> None:
        super().begin(run)
        self._check = self.check
        self.pending: Placed | None = None  # a metering event whose replacement did not come directly after it

    def meter(self, record: Record) -> None:
        if self.pending is not None:
            self._unpriced(f"before the next metering event at seq {record.item.seq}")
        record.then(self._check)  # (the record after it should be the replacement it prices)

    def compaction_end(self, record: Record) -> None:
        pending = self.pending
        if pending is not None and pending.type == "compaction/summary" \
                and get(record.item.record, "data", "error") is not MISSING:
            self.pending = None  # (the compaction failed: its replacement was never made)

    def replaced(self, record: Record) -> None:
        if record.replacement is not None and meter_of(record) is None:
            self.check(record)

    def _unpriced(self, why: str) -> None:
        meter = self.pending
        assert meter is not None
        self.pending = None
        self.add("DSH-E313", f"{meter.type} at seq {meter.seq} is followed by no replacement {why}", meter)

    def check(self, record: Record) -> None:
        """A record that makes a replacement or follows a metering event."""
        event, replacement, meter = record.item, record.replacement, meter_of(record)
        if meter is None:
            if replacement is None:
                return
            late = self.pending
            if late is not None:
                self.pending = None
                self.add("DSH-E313", f"replacement of {replacement.start}..{replacement.end} is not directly "
                                     f"after the {late.type} at seq {late.seq} that prices it "
                                     f"({event.seq - late.seq - 1} events lie between)", event)
            else:
                self.add("DSH-N314", f"replacement of {replacement.start}..{replacement.end} has no "
                                     "compaction/summary or compaction/prune directly before it", event)
            return
        rec = event.record if event.row is None else {}
        if replacement is None:
            if type(rec.get("surfaceOp")) is dict:
                return  # the replacement was there but the fold rejected it: that finding says it
            failed = meter.type == "compaction/summary" and event.type == "compaction/end" \
                and get(rec, "data", "error") is not MISSING
            if not failed:
                self.pending = meter  # (judged when a replacement, the next meter or the log's end comes)
            return
        declared = get(meter.record, "data", "shadowedSeqs")
        actual = list(replacement.shadowed_seqs)
        if type(declared) is list and declared != actual:
            self.add("DSH-W312", f"{meter.type} at seq {meter.seq} says it prices {shown(declared)} but the "
                                 f"replacement shadowed {shown(actual)}", meter, "/data/shadowedSeqs")

    def at_end(self, last: Placed | None) -> None:
        """`last`: the last event of the log."""
        if self.pending is not None:
            self._unpriced("before the log ends")
        elif last is not None and last.type in METERS:
            self.findings.append(finding("DSH-E313", f"{last.type} at seq {last.seq} ends the log without the "
                                                     "replacement it prices", seq=last.seq, line=last.line))


class CompactionRules(Family):
    handlers = {"turn/start": "boundary", "turn/end": "boundary", "compaction/start": "start",
                "compaction/summary": "summary", "compaction/end": "compaction_end", "session/end-seed": "end_seed",
                "user/message": "checkpoint"}

    requires = (RuleFindings, TurnTracker, CompactionTracker)

    brackets: CompactionTracker
    turns: TurnTracker

    def begin(self, run: Run) -> None:
        super().begin(run)
        self.brackets = run.get(CompactionTracker)
        self.turns = run.get(TurnTracker)
        self.deferred: list[Finding] = []  # the open bracket's turn-boundary findings, dropped if it is abandoned

    def boundary(self, record: Record) -> None:
        event: Stored = record.item
        b = self.brackets.open
        if b is not None:
            owner = "standalone compaction" if b.turn is None else f"compaction for turn {show(b.turn)}"
            self.deferred.append(finding("DSH-E309", f"{event.type} inside an open {owner} (started at seq "
                                                     f"{b.start})", seq=event.seq, line=event.line))

    def _flush(self) -> None:
        self.findings.extend(self.deferred)
        self.deferred = []

    def _owner(self, event: Placed, owner: Any) -> None:
        open_turn = self.turns.open_turn
        if owner is None:
            if open_turn is not None:
                self.add("DSH-E302", f"{event.type} is standalone (turn null) but turn {show(open_turn)} is open",
                         event, "/data/turn")
        elif open_turn is None or not same(owner, open_turn):
            self.add("DSH-E302", not_open_turn(event, owner, open_turn), event, "/data/turn")

    def _matches(self, event: Placed, data: Any, b: Bracket | None) -> bool:
        if b is None:
            self.add("DSH-E304", f"{event.type} has no open compaction/start", event)
            return False
        cid, command = get(data, "compactionId"), get(data, "sourceCommandId")
        if not js_same(cid, b.cid):
            self.add("DSH-E303", f"{event.type} names compaction {opt(cid)} but the open one is {opt(b.cid)} "
                                 f"(seq {b.start})", event, "/data/compactionId")
        if not js_same(command, b.command):
            self.add("DSH-E303", f"{event.type} sourceCommandId {opt(command)} does not match the start's "
                                 f"{opt(b.command)}", event, "/data/sourceCommandId")
        return True

    def start(self, record: Record) -> None:
        event: Stored = record.item
        before = self.brackets.closed
        if before is not None:
            self.add("DSH-E301", f"compaction/start while compaction {opt(before.cid)} (seq {before.start}) is open",
                     event)
            self._flush()
        opened = self.brackets.open
        assert opened is not None, "the compaction tracker, observed first, opens a bracket on every compaction/start"
        self._owner(event, opened.turn)

    def summary(self, record: Record) -> None:
        event: Stored = record.item
        data = event.record.get("data")
        b = self.brackets.open if self.brackets.matched else None
        if not self._matches(event, data, b):
            return
        assert b is not None  # (_matches is False when none is open)
        self._owner(event, b.turn)
        if len(b.summaries) > 1:
            self.add("DSH-E305", f"second compaction/summary for {opt(b.cid)} (first at seq {b.summaries[-2]})", event)
        seqs, span = get(data, "shadowedSeqs"), get(data, "shadowedRange")
        if type(seqs) is list:
            if not seqs:
                self.add("DSH-E306", "compaction/summary shadowedSeqs is empty", event, "/data/shadowedSeqs")
            elif not (same(get(span, "start"), seqs[0]) and same(get(span, "end"), seqs[-1])):
                self.add("DSH-E306", f"shadowedRange {opt(get(span, 'start'))}..{opt(get(span, 'end'))} is not the "
                                     f"first and last shadowedSeqs ({opt(seqs[0])}..{opt(seqs[-1])})", event,
                         "/data/shadowedRange")

    def compaction_end(self, record: Record) -> None:
        event: Stored = record.item
        data = event.record.get("data")
        b = self.brackets.closed if self.brackets.matched else None
        if not self._matches(event, data, b):
            return
        assert b is not None  # (_matches is False when none is open)
        owner = get(data, "turn")
        if not same(None if owner is MISSING else owner, b.turn):
            self.add("DSH-E307", f"compaction/end names turn {show(owner)} but its start named {show(b.turn)}",
                     event, "/data/turn")
        self._owner(event, b.turn)
        if get(data, "error") is MISSING and not b.summaries:
            self.add("DSH-E308", f"compaction {opt(b.cid)} ended without error but wrote no summary", event)
        self._flush()

    def end_seed(self, record: Record) -> None:
        event: Stored = record.item
        b = self.brackets.closed
        if b is not None:
            self.add("DSH-N311", f"compaction {opt(b.cid)} (seq {b.start}) was left open before this "
                                 "session/end-seed: abandoned with its lifecycle", event)
            self.deferred = []  # its turn-boundary findings belong to the dead lifecycle

    def checkpoint(self, record: Record) -> None:
        event: Stored = record.item
        found = self.brackets.checkpoint
        if found is None:
            return
        cid, kept = found
        b = self.brackets.open
        name = shown(cid) if cid is not MISSING else "(no id)"
        if b is not None and not js_same(cid, b.cid):  # dsh's compaction invariant refuses these two
            self.add("DSH-E303", f"compaction checkpoint {name} replaces history inside compaction "
                                 f"{opt(b.cid)} (started at seq {b.start})", event, "/data/source/compactionId")
        elif b is None and kept.start is not None:
            self.add("DSH-E304", f"compaction checkpoint {name} replaces history outside its compaction "
                                 f"(started at seq {kept.start})", event, "/data/source/compactionId")
        elif b is None:
            self.add("DSH-W315", f"compaction checkpoint {name} replaces history but no compaction is open "
                                 "and none started with its id", event, "/data/source/compactionId")

    def at_end(self) -> None:
        b = self.brackets.open
        if b is not None:
            self.findings.append(finding("DSH-W310", f"compaction {opt(b.cid)} started at seq {b.start} never "
                                                     "ended (in progress or crashed)", seq=b.start))
            self._flush()
