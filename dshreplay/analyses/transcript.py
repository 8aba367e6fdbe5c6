"""The human transcript: what was said, in log order, not what the model sees.

FORMAT.md section 6: the transcript is the append-origin surface events in
log order; replacements are model-only, so each shows as a marker where the
model's view diverges from the conversation (with the text that replaced it:
a compaction summary, a pruned or rewritten result). Markers also say how
each turn ended and which model calls failed, so a reader of the
conversation sees where it broke off. When the fold fails (dsh refuses the
log), the transcript ends there with a marker that says so: nothing past it
is shown, in the transcript command and in a bundle's transcript.md alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from dshreplay._jsvalues import as_text, utc_time
from dshreplay.analyses._render import message_text, role_of, without_reasoning
from dshreplay.analyses.trackers.calls import CallTracker, failed, finish_text
from dshreplay.analyses.trackers.provenance import ShadowTracker
from dshreplay.analyses.trackers.toolcalls import ToolLedger
from dshreplay.analyses.trackers.turns import INTERRUPTED, TurnSpans
from dshreplay.core.driver import STOP, Observer, Record, Run, run_pass
from dshreplay.core.surface import SURFACE_TYPES, derive_message
from dshreplay.errors import DeriveError, FoldError, LineError
from dshreplay.io.reader import Event, LogSource, seed_length

__all__ = ["Entry", "transcript"]


@dataclass(frozen=True)
class Entry:
    """A message of the conversation, or a marker: a replacement where the
    model's view diverges ("replacement", with the replacing message), the end
    of a turn ("turn-end"), a model call that failed ("failed-call"), where the
    events dsh wrote to close an interrupted turn begin ("closers": what follows
    up to the turn's end is dsh's, not the model's or a tool's), or where a
    session's inherited or pre-crash history ends ("seed-end")."""

    seq: int
    entry: str  # "message", "replacement", "turn-end", "failed-call", "closers", "seed-end", "torn-tail" or
    # "fold-failure"
    type: str | None = None
    role: str | None = None
    time: str | None = None
    message: object = None  # a replacement's own message (a summary's text), when it has one
    kind: str | None = None  # for replacements: summary | prune | tool-result-rewrite | other
    shadowed: tuple[int, ...] = ()
    turn: object = None  # turn-end: the turn; failed-call: its turn
    call: int | None = None  # failed-call: the call's number (from 1)
    ending: str | None = None  # turn-end: turn_ending(); failed-call: finish_text(); fold-failure: why
    end: int | None = None  # closers: the seq of the turn/end they end with
    tools: tuple[tuple[Any, Any], ...] = ()  # a tool result's (callId, tool) per result block, by the tool tracker

    def text(self, reasoning: bool = True) -> str:
        """The message's text (a replacement's: the replacing message's), tool results
        labelled with their tool and call id. (A transcript built without reasoning
        holds messages without their reasoning blocks already.)"""
        return message_text(self.message, reasoning, dict(self.tools) if self.tools else None)

    def _calls(self) -> dict[str, Any]:
        return {"calls": [{"callId": c, "tool": t} for c, t in self.tools]} if self.tools else {}

    def marker_text(self) -> str:
        if self.entry == "fold-failure":
            return f"[the fold fails at seq {self.seq}: {self.kind} {self.ending}; nothing past this point]"
        if self.entry == "torn-tail":
            return f"[line {self.end}: {self.ending}; the transcript ends at seq {self.seq}]"
        if self.entry == "closers":
            return (f"[dsh closed interrupted turn {as_text(self.turn)} on loading the log after a crash: seqs "
                    f"{self.seq}-{self.end} are its synthetic closers, not results of the tools]")
        if self.entry == "seed-end":
            if self.kind == "inherited":
                return (f"[the history inherited from the parent session ends at seq {self.seq}; "
                        "this session's own follows]")
            return f"[the session was resumed at seq {self.seq}; what follows was logged after the restart]"
        if self.entry == "turn-end":
            if self.ending == INTERRUPTED:
                return f"[turn {as_text(self.turn)} interrupted: the log ends inside it, after seq {self.seq}]"
            return f"[turn {as_text(self.turn)} ended: {self.ending} at seq {self.seq}]"
        if self.entry == "failed-call":
            return f"[call {self.call} failed: {self.ending} at seq {self.seq}]"
        what = _REPLACED_BY.get(self.kind, "replacement")
        shadowed = self.shadowed
        span = f"seq {shadowed[0]}" if len(shadowed) == 1 else f"seqs {shadowed[0]}-{shadowed[-1]}"
        return f"[{span} replaced for the model by {what} at seq {self.seq}]"

    def to_json(self, reasoning: bool = True) -> dict[str, Any]:
        if self.entry == "replacement":
            return {"seq": self.seq, "entry": self.entry, "kind": self.kind, "shadowedSeqs": list(self.shadowed),
                    "text": self.marker_text(), "time": self.time,
                    "replacementText": None if self.message is None else self.text(reasoning), **self._calls()}
        if self.entry == "turn-end":
            return {"seq": self.seq, "entry": self.entry, "turn": self.turn, "ending": self.ending,
                    "time": self.time, "text": self.marker_text()}
        if self.entry == "failed-call":
            return {"seq": self.seq, "entry": self.entry, "call": self.call, "turn": self.turn,
                    "finish": self.ending, "time": self.time, "text": self.marker_text()}
        if self.entry == "fold-failure":
            return {"seq": self.seq, "entry": self.entry, "code": self.kind, "message": self.ending,
                    "text": self.marker_text()}
        if self.entry == "closers":
            return {"seq": self.seq, "entry": self.entry, "turn": self.turn, "endSeq": self.end,
                    "text": self.marker_text()}
        if self.entry == "torn-tail":
            return {"seq": self.seq, "entry": self.entry, "line": self.end, "text": self.marker_text()}
        if self.entry == "seed-end":
            return {"seq": self.seq, "entry": self.entry, "kind": self.kind, "time": self.time,
                    "text": self.marker_text()}
        return {"seq": self.seq, "entry": self.entry, "type": self.type, "role": self.role, "time": self.time,
                **self._calls(), "text": self.text(reasoning), "message": self.message}


_REPLACED_BY: dict[str | None, str] = {"summary": "summary", "prune": "prune",
                                        "tool-result-rewrite": "rewritten tool result"}


class TranscriptBuilder(Observer):
    """Collects transcript entries. Where the fold fails it adds the fold-failure
    marker and takes nothing more (run it with on_fold_error=STOP). Messages keep
    their reasoning blocks only with `reasoning` (one choice for every format)."""

    requires = (ShadowTracker, CallTracker, TurnSpans, ToolLedger)

    def __init__(self, reasoning: bool = False) -> None:
        self.shown: Callable[[Any], Any] = (lambda message: message) if reasoning else without_reasoning

    def begin(self, run: Run) -> None:
        self.tools: ToolLedger = run.get(ToolLedger)
        self.shadows: ShadowTracker = run.get(ShadowTracker)
        self.turns: TurnSpans = run.get(TurnSpans)
        self.entries: list[Entry] = []
        self.failures: list[FoldError | LineError] = run.fold_errors
        self.ended = False  # the fold failed: the marker is written
        # what a session/end-seed ends: a fork child's inherited history, or a crashed session's before its resume
        self.seed = "inherited" if seed_length(run.header) is not None or run.header.get("parentSession") \
            is not None else "resumed"

    def observe(self, record: Record) -> None:
        if self.failures:
            self._end()
            return
        item: Any = record.item  # (an Event past the row test: packed rows hold chunks only)
        if item.row is not None:
            return  # packed rows hold stream chunks only: neither messages nor finishes
        kind = item.type
        if record.replacement is not None:
            shadow = self.shadows.by_seq[item.seq]
            has, message = _message(item)
            self.entries.append(Entry(item.seq, "replacement", kind=shadow.kind, shadowed=shadow.shadowed_seqs,
                                      time=utc_time(item.time), message=self.shown(message) if has else None,
                                      tools=self._tools(item, kind, message)))
        elif kind in SURFACE_TYPES and item.record.get("surfaceOp") == "append":
            has, message = _message(item)
            if has:
                self.entries.append(Entry(item.seq, "message", kind, role_of(kind, message),
                                          utc_time(item.time), self.shown(message),
                                          tools=self._tools(item, kind, message)))
        elif kind == "turn/end":  # (the turn it closes, as TurnSpans tells it: one that closes none ends nothing)
            span = self.turns.turns[-1] if self.turns.turns else None
            if span is not None and span.end == item.seq:
                self.entries.append(Entry(item.seq, "turn-end", time=utc_time(item.time), turn=span.turn,
                                          ending=span.ending))
        elif kind == "session/end-seed":
            self.entries.append(Entry(item.seq, "seed-end", time=utc_time(item.time), kind=self.seed))
        elif kind == "assistant/chunk":
            call = record.call
            if call is not None and call.finish_seq == item.seq and failed(call.finish):
                self.entries.append(Entry(item.seq, "failed-call", time=utc_time(item.time), turn=call.turn,
                                          call=call.call, ending=finish_text(call.finish)))

    def _tools(self, item: Event, kind: str | None, message: Any) -> tuple[tuple[Any, Any], ...]:
        return self.tools.names(item.seq, message) if kind == "tool/result" else ()

    def finish(self, run: Run) -> None:
        self._mark_closers()
        if run.fold_errors:
            self._end()
            return
        last = self.turns.turns[-1] if self.turns.turns else None
        if run.complete and last is not None and last.is_open and run.last_seq is not None:
            self.entries.append(Entry(run.last_seq, "turn-end", turn=last.turn, ending="interrupted"))
        tail = run.torn_tail
        if run.complete and tail is not None:  # (the transcript reaches the last whole line, and says so)
            seq = -1 if run.last_seq is None else run.last_seq
            self.entries.append(Entry(seq, "torn-tail", end=tail.line, ending=tail.describe()))

    def _mark_closers(self) -> None:
        """A "closers" marker before the first event dsh wrote to close each turn it closed on load."""
        marks = [Entry(t.closers, "closers", turn=t.turn, end=t.end) for t in self.turns.turns
                 if t.closers is not None and t.end is not None]
        if not marks:
            return
        entries, merged, k = self.entries, [], 0
        for mark in marks:  # (both in seq order; a marker goes before the entries of its seq)
            while k < len(entries) and entries[k].seq < mark.seq:
                merged.append(entries[k])
                k += 1
            merged.append(mark)
        self.entries = merged + entries[k:]

    def _end(self) -> None:
        if not self.ended:
            failure = self.failures[0]
            seq = -1 if failure.seq is None else failure.seq  # (-1: before any event; a pass's failures have a seq)
            self.entries.append(Entry(seq, "fold-failure", kind=failure.code, ending=failure.message))
            self.ended = True


def _message(item: Event) -> tuple[bool, object]:
    try:
        return derive_message(item)
    except DeriveError:
        return True, item.record.get("data")


def _data(item: Event) -> dict[str, Any]:
    data = item.record.get("data")
    return data if type(data) is dict else {}


def transcript(source: LogSource, observers: Iterable[Observer] = (),
               reasoning: bool = False) -> tuple[list[Entry], FoldError | LineError | None]:
    """Transcript entries of a log (a LogSource), in one pass, and where the fold
    fails (None: it does not): the entries then end with the fold-failure marker.
    Reasoning blocks are left out of the messages unless `reasoning`."""
    builder = TranscriptBuilder(reasoning)
    run = run_pass(source, [builder, *observers], on_fold_error=STOP)
    return builder.entries, run.failure
