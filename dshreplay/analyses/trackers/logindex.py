"""`LogIndex`: what one pass learns about a log, everything but message payloads.

`Indexer` is the observer that builds it from the pass's trackers (turns,
model calls, replacements, compaction brackets, tool calls, spills); the
forensic commands read the index.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Iterable

from dshreplay.analyses.trackers.calls import Call, CallTracker
from dshreplay.analyses.trackers.compaction import BracketRecord, CompactionTracker
from dshreplay.analyses.trackers.provenance import ShadowRecord, ShadowTracker, origins
from dshreplay.analyses.trackers.spills import Spill, Spills
from dshreplay.analyses.trackers.toolcalls import Closer, ToolCall, ToolLedger
from dshreplay.analyses.trackers.turns import Span, TurnSpans
from dshreplay.core.driver import STOP, Observer, Record, Run, run_pass
from dshreplay.core.surface import SURFACE_TYPES, SurfaceState
from dshreplay.errors import FoldError, LineError
from dshreplay.io.reader import LogSource, TornTail

__all__ = ["LogIndex", "build_index"]


@dataclass
class LogIndex:
    """What one pass over a log learns (everything but message payloads)."""

    path: str
    header: dict[str, Any]
    encoding: str
    event_count: int = 0
    lines: int = 0
    torn_tail: TornTail | None = None
    types: list[str | None] = field(default_factory=list)  # seq -> event type
    sources: dict[int, tuple[int, ...]] = field(default_factory=dict)  # seq -> its sourceEventSeqs (surface events)
    ops: dict[int, Any] = field(default_factory=dict)  # seq -> "append" or (start, end), for surface events
    shadows: list[ShadowRecord] = field(default_factory=list)
    brackets: list[BracketRecord] = field(default_factory=list)
    closers: list[Closer] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    auxiliary_calls: list[Call] = field(default_factory=list)
    fold_errors: list[FoldError | LineError] = field(default_factory=list)  # events the fold rejected, lines unread
    final: SurfaceState | None = None
    counts: Counter[str] = field(default_factory=Counter)
    turns: int = 0
    steps: int = 0
    turn_spans: list[Span] = field(default_factory=list)  # turns.Span per turn: its start, end and ending
    spills: list[Spill] = field(default_factory=list)  # tool results dsh moved out of the model's view
    spills_by_seq: dict[int, tuple[Spill, ...]] = field(default_factory=dict)  # tool/result seq -> its spills
    tool_calls: list[ToolCall] = field(default_factory=list)  # every tool call, with its outcome

    @property
    def last_seq(self) -> int | None:
        return self.event_count - 1 if self.event_count else None

    def type_of(self, seq: int) -> str | None:
        return self.types[seq] if 0 <= seq < len(self.types) else None

    def origins(self, seq: int) -> list[tuple[int, object]]:
        return origins(seq, self.sources, self.types)

    def spills_of(self, seq: int) -> tuple[Spill, ...]:
        """The spill notes in the tool result at `seq` (usually none)."""
        return self.spills_by_seq.get(seq, ())


class Indexer(Observer):
    """Types, counts, provenance links; the rest from the pass's trackers."""

    requires = (ShadowTracker, CallTracker, TurnSpans, CompactionTracker, ToolLedger, Spills)

    def begin(self, run: Run) -> None:
        self.index = LogIndex(run.path, run.header, run.encoding)

    def observe(self, record: Record) -> None:
        item = record.item
        index = self.index
        if item.row is not None:
            index.types.extend(repeat("assistant/chunk", item.count))
            index.counts["assistant/chunk"] += item.count
            return
        kind = item.type
        index.types.append(kind)
        index.counts[kind if kind is not None else "(type not a string)"] += 1
        if kind in SURFACE_TYPES:
            rec = item.record
            sources = rec.get("sourceEventSeqs")
            if type(sources) is list:
                index.sources[item.seq] = tuple(s for s in sources if type(s) is int)
            op = rec.get("surfaceOp")
            index.ops[item.seq] = (op.get("start"), op.get("end")) if type(op) is dict else op

    def finish(self, run: Run) -> None:
        index = self.index
        count = run.event_count if run.complete else None  # (set when complete)
        index.event_count = count if count is not None else (run.last_seq + 1 if run.last_seq is not None else 0)
        index.lines = run.lines
        index.torn_tail = run.torn_tail
        index.fold_errors = list(run.fold_errors)
        turns: TurnSpans
        calls: CallTracker
        tools: ToolLedger
        turns, calls, tools = run.get(TurnSpans), run.get(CallTracker), run.get(ToolLedger)
        shadows: ShadowTracker = run.get(ShadowTracker)
        compactions: CompactionTracker = run.get(CompactionTracker)
        index.shadows = shadows.shadows
        index.brackets = list(compactions.brackets.values())
        index.closers = tools.closers
        index.tool_calls = tools.calls
        index.calls = calls.calls
        index.auxiliary_calls = calls.auxiliary
        index.final = run.fold.state()
        index.turns, index.steps = len(turns.turns), len(turns.steps)
        index.turn_spans = turns.turns
        spills: Spills = run.get(Spills)
        index.spills = spills.spills
        for spill in index.spills:
            index.spills_by_seq[spill.seq] = index.spills_by_seq.get(spill.seq, ()) + (spill,)


def build_index(source: LogSource, observers: Iterable[Observer] = (), on_fold_error: str = STOP) -> LogIndex:
    """One pass over `source` (a LogSource) building its index; `observers` share
    the pass. By default it stops at the first event the fold rejects (listed
    in `fold_errors`): the index is then that of the events before it; with
    SKIP, rejected events are skipped for surface purposes and reading goes on."""
    indexer = Indexer()
    run_pass(source, [indexer, *observers], on_fold_error=on_fold_error)
    return indexer.index
