"""Spans: a session as nested intervals and moments, for the renderings that draw or ship it
(`timeline`: Chrome Trace Event JSON and plain rows; `otel`: OpenTelemetry traces).

One pass builds it from the session model that every command shares, nothing derived twice:
turns and steps (`turns.TurnSpans`), model calls (`calls.CallTracker`, through the index),
tool calls with their approvals and hooks (`tools.ToolLedger`), compaction brackets and the
replacements they made (`compaction`, `provenance`), failures (`stats.failure_of`, through
the session summary), every other event of the log as a moment named by its type, and the
figures of `stats` themselves (`SessionTimeline.stats`), so a rendering can show counts that
equal `stats`' and a test can compare them. `TimelinePass` holds the observers that pass
needs, so a pass that serves another surface too (view.html's: `viewer.model.build_view`)
builds the same spans without a pass of its own.

Each span runs from a start seq to an end seq (inclusive); its times are those the log gives
those seqs (epoch ms). A log without times (every time 0, as the projected layout writes)
has `timed` False: a rendering then puts its spans on the seq axis. A span's `parent` is the
`key` of the span it lies in: a step in its turn, a model call and a tool call in their step
(else their turn, else the session), a compaction in its turn, the compaction summary's call
in its compaction. Like `stats`, the pass stops where the fold fails: the spans are then those
of the events before it (`stats.error`, `stats.answered_up_to`).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from dshreplay._jsvalues import as_key, as_text, is_time, json_bytes
from dshreplay.analyses.stats import SessionStats, SessionSummary
from dshreplay.analyses.trackers.calls import AUXILIARY as AUXILIARY_TYPES
from dshreplay.analyses.trackers.calls import Call, failed, retries
from dshreplay.analyses.trackers.compaction import BracketRecord
from dshreplay.analyses.trackers.hooks import HookRun, HookTracker
from dshreplay.analyses.trackers.logindex import Indexer
from dshreplay.analyses.trackers.toolcalls import Approval, ToolCall, ToolLedger
from dshreplay.analyses.trackers.turns import Span, TurnSpans
from dshreplay.core.driver import STOP, Observer, Record, Run, run_pass
from dshreplay.core.surface import SURFACE_TYPES, derive_message
from dshreplay.errors import DeriveError
from dshreplay.io.reader import LogSource, seed_length

__all__ = ["SessionTimeline", "TimedSpan", "Instant", "ViewPoint", "TimelinePass", "session_timeline",
           "SESSION", "TURN", "STEP", "CALL", "AUXILIARY", "TOOL", "COMPACTION", "APPROVAL", "HOOK",
           "FAILURE", "RETRY", "REPLACEMENT", "NOT_STARTED", "EVENT"]

# span kinds
SESSION, TURN, STEP, CALL, AUXILIARY, TOOL, COMPACTION, APPROVAL, HOOK = (
    "session", "turn", "step", "call", "auxiliary-call", "tool", "compaction", "approval", "hook")
# moment kinds
FAILURE, RETRY, REPLACEMENT, NOT_STARTED, EVENT = "failure", "retry", "replacement", "tool-not-started", "event"

# the event types a span or moment already stands for; every other event is a moment of kind EVENT
# (named by its type: its data is the log's content, never shown)
DRAWN = frozenset({*SURFACE_TYPES, *AUXILIARY_TYPES, "assistant/chunk", "turn/start", "turn/end", "step/start",
                   "step/end", "tool/call", "approval/asked", "approval/decided", "hook/invoked", "hook/result",
                   "compaction/start", "compaction/end", "compaction/prune", "llm/retry"})


@dataclass
class TimedSpan:
    """One interval of the session: a turn, a step, a model call, a tool call, a compaction,
    an approval or a hook run. `key` names it uniquely within the session ("turn@0")."""

    kind: str
    key: str
    name: str
    start_seq: int
    end_seq: int
    start_time: float | None  # epoch ms (None: the log has no time for it)
    end_time: float | None
    parent: str | None
    attributes: dict[str, Any] = field(default_factory=dict)
    subject: Any = field(default=None, repr=False, compare=False)  # the model object it stands for (Call, ToolCall...)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "name": self.name, "parent": self.parent,
                "startSeq": self.start_seq, "endSeq": self.end_seq,
                "startTime": self.start_time, "endTime": self.end_time, "attributes": self.attributes}


@dataclass
class Instant:
    """One instant: a failure, a retry, a replacement of the model's view, a tool call asked
    for and never started, or any other event of the log (kind "event", named by its type:
    a session title, a plan mode, a todo list...; its data is never shown); `span` is the key
    of the span it belongs to."""

    kind: str
    name: str
    seq: int
    time: float | None
    span: str | None
    attributes: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "seq": self.seq, "time": self.time, "span": self.span,
                "attributes": self.attributes}


@dataclass(frozen=True)
class ViewPoint:
    """The model's view right after a seq that changed it: its messages and their JSON bytes."""

    seq: int
    time: float | None
    messages: int
    bytes: int


@dataclass
class SessionTimeline:
    """The spans of one session (see the module)."""

    path: str
    session_id: Any
    header: dict[str, Any]
    timed: bool  # the log has times: spans are placed by them (else by seq)
    origin: float | None  # epoch ms of the session's start (None: untimed)
    stats: SessionStats
    spans: list[TimedSpan] = field(default_factory=list)
    moments: list[Instant] = field(default_factory=list)
    view: list[ViewPoint] = field(default_factory=list)

    @property
    def parent_session(self) -> Any:
        return self.header.get("parentSession")

    @property
    def seed_length(self) -> int | None:
        return seed_length(self.header)

    def of_kind(self, kind: str) -> list[TimedSpan]:
        return [s for s in self.spans if s.kind == kind]


class _Gather(Observer):
    """Per seq: its time (forward-filled); the model's view after each surface change; every
    hook run (as the hook tracker pairs them) and llm/retry."""

    requires = (TurnSpans, ToolLedger, HookTracker)

    def begin(self, run: Run) -> None:
        self.times: list[float | None] = []
        self.last_time: float | None = None
        self.view: list[ViewPoint] = []
        self.node_bytes: dict[int, tuple[int, int]] = {}  # surface node -> (messages, bytes) it yields
        self.messages = self.bytes = 0
        self.retries: list[tuple[int, Any]] = []  # (seq, data) of each llm/retry
        self.hooks: dict[int, HookRun] = {}  # id -> every hook run, in order of first event
        self.hook_tracker = run.get(HookTracker)
        self.others: list[tuple[int, Any]] = []  # (seq, type) of every event no span or moment stands for

    def observe(self, record: Record) -> None:
        item: Any = record.item
        if item.row is not None:
            first, last = item.time, item.last_time
            self._time(first)
            for _ in range(item.count - 2):
                self.times.append(self.last_time)
            if item.count > 1:
                self._time(last)
            return
        self._time(item.time)
        kind = item.type
        if kind == "llm/retry":
            self.retries.append((item.seq, item.record.get("data")))
        elif kind == "hook/invoked" or kind == "hook/result":
            hook = self.hook_tracker.current
            if hook is not None:
                self.hooks.setdefault(id(hook), hook)
        elif type(kind) is not str or kind not in DRAWN:
            self.others.append((item.seq, kind))
        if kind in SURFACE_TYPES and record.error is None:
            self._surface(record)

    def _time(self, value: Any) -> None:
        if is_time(value) and value:
            self.last_time = value
        self.times.append(self.last_time)

    def _surface(self, record: Record) -> None:
        item: Any = record.item
        replacement = record.replacement
        if replacement is not None:
            for seq in replacement.shadowed_seqs:
                messages, size = self.node_bytes.pop(seq, (0, 0))
                self.messages -= messages
                self.bytes -= size
        elif item.record.get("surfaceOp") != "append":
            return
        try:
            has, message = derive_message(item)
        except DeriveError:
            has, message = False, None
        entry = (1, len(json_bytes(message))) if has else (0, 0)
        self.node_bytes[item.seq] = entry
        self.messages += entry[0]
        self.bytes += entry[1]
        self.view.append(ViewPoint(item.seq, self.last_time, self.messages, self.bytes))


class TimelinePass:
    """The observers the spans need, for a pass that may hold others too (the viewer's:
    `viewer.model.build_view` draws these spans from its own one pass), and the spans of
    that pass once it is over (`timeline`)."""

    def __init__(self) -> None:
        self.summary, self.gather = SessionSummary(), _Gather()

    @property
    def observers(self) -> list[Observer]:
        return [self.summary, self.gather]

    def timeline(self, run: Run) -> SessionTimeline:
        """The spans of the finished `run` (a pass with `observers`, stopped where the fold fails)."""
        summary, gather = self.summary, self.gather
        assert summary.stats is not None, "the pass is over"
        index = run.get(Indexer).index
        turns, tools = run.get(TurnSpans), run.get(ToolLedger)
        times = gather.times
        timed = any(t is not None for t in times)
        header = index.header
        created = header.get("createdAt")
        origin = next((t for t in times if t is not None), None)
        if origin is not None and is_time(created) and created and created < origin:
            origin = created
        last = len(times) - 1
        out = SessionTimeline(index.path, header.get("id"), header, timed, origin if timed else None, summary.stats)
        builder = _Builder(out, times, last)
        builder.build(turns.turns, turns.steps, index.calls, index.auxiliary_calls, tools.calls, tools.approvals,
                      index.brackets, list(gather.hooks.values()))
        builder.moments(summary.stats.failures, gather.retries, index.shadows, tools.calls, gather.others)
        out.view = gather.view
        return out


def session_timeline(source: LogSource) -> SessionTimeline:
    """The spans of one log, in one pass that stops where the fold fails."""
    spans = TimelinePass()
    return spans.timeline(run_pass(source, spans.observers, on_fold_error=STOP))


class _Builder:
    def __init__(self, out: SessionTimeline, times: list[float | None], last: int) -> None:
        self.out = out
        self.times = times
        self.last = max(last, 0)
        self.turns: list[TimedSpan] = []
        self.turn_starts: list[int] = []
        self.steps: dict[tuple[object, object], list[TimedSpan]] = {}
        self.compactions: list[TimedSpan] = []
        self.calls: dict[int, TimedSpan] = {}  # first chunk seq -> span
        self.tools: dict[int, TimedSpan] = {}  # id(ToolCall) -> span

    def time(self, seq: int) -> float | None:
        return self.times[seq] if 0 <= seq < len(self.times) else None

    def add(self, kind: str, key: str, name: str, start: int, end: int, parent: str | None,
            attributes: dict[str, Any], subject: Any = None) -> TimedSpan:
        end = max(start, min(end, self.last))
        span = TimedSpan(kind, key, name, start, end, self.time(start), self.time(end), parent, attributes, subject)
        self.out.spans.append(span)
        return span

    def turn_at(self, seq: int) -> TimedSpan | None:
        """The turn around `seq` (None: none)."""
        at = bisect.bisect_right(self.turn_starts, seq) - 1  # (turns follow one another, in seq order)
        return self.turns[at] if at >= 0 and seq <= self.turns[at].end_seq else None

    def enclosing(self, seq: int, turn: object = None, step: object = None) -> str:
        """The key of the innermost step or turn (else the session) around `seq`."""
        for candidate in self.steps.get((as_key(turn), as_key(step)), ()):
            if candidate.start_seq <= seq <= candidate.end_seq:
                return candidate.key
        t = self.turn_at(seq)
        if t is not None:
            for s in self.steps.get((as_key(t.attributes["turn"]), as_key(step)), ()):
                if s.start_seq <= seq <= s.end_seq:
                    return s.key
            return t.key
        return "session"

    def build(self, turns: list[Span], steps: list[Span], calls: list[Call], auxiliary: list[Call],
              tool_calls: list[ToolCall], approvals: list[Approval], brackets: list[BracketRecord],
              hooks: list[HookRun]) -> None:
        stats = self.out.stats
        self.add(SESSION, "session", "session", 0, self.last, None, {"sessionId": self.out.session_id})
        for span, ending in zip(turns, stats.turn_endings):
            end = span.last if span.last is not None else self.last
            self.turns.append(self.add(TURN, f"turn@{span.start}", f"turn {as_text(span.turn)}", span.start, end,
                                       "session", {"turn": span.turn, "ending": ending}))
            self.turn_starts.append(span.start)
        for span in steps:
            turn = self.turn_at(span.start)
            end = span.end if span.end is not None else (turn.end_seq if turn is not None else self.last)
            step = self.add(STEP, f"step@{span.start}", f"step {as_text(span.step)}", span.start, end,
                            turn.key if turn is not None else "session", {"turn": span.turn, "step": span.step})
            self.steps.setdefault((as_key(span.turn), as_key(span.step)), []).append(step)
        for bracket in brackets:
            self._compaction(bracket)
        retried = {id(c) for c in retries(calls)}
        for call in calls:
            start = call.first_chunk_seq or 0
            attributes = {"call": call.call, "turn": call.turn, "step": call.step, "provider": call.provider,
                          "model": call.model, "outcome": call.outcome, "errorCode": call.error_code,
                          "failed": failed(call.finish), "retry": id(call) in retried, "usage": call.usage,
                          "messageCount": call.message_count, "timeToFirstChunkMs": call.latency_ms}
            self.calls[start] = self.add(CALL, f"call@{start}", f"call {call.call}", start,
                                         call.last_chunk_seq if call.last_chunk_seq is not None else self.last,
                                         self.enclosing(start, call.turn, call.step), attributes, call)
        for call in auxiliary:
            seq = call.first_chunk_seq or 0
            parent = next((c.key for c in self.compactions if call.kind == "compaction-summary"
                           and c.start_seq <= seq <= c.end_seq), None) or self.enclosing(seq)
            self.add(AUXILIARY, f"aux@{seq}", call.kind, seq, seq, parent,
                     {"kind": call.kind, "provider": call.provider, "model": call.model, "usage": call.usage}, call)
        for tool in tool_calls:
            self._tool(tool)
        for approval in approvals:
            self._approval(approval)
        for hook in hooks:  # a tool point's hook in its tool call; any other in its step or turn
            owner = self.tools.get(id(hook.call)) if hook.call is not None else None
            first = hook.invoked_seq if hook.invoked_seq is not None else hook.result_seq
            if first is not None:
                self._hook(hook, owner.key if owner is not None else self.enclosing(first, hook.turn))

    def _compaction(self, bracket: BracketRecord) -> None:
        seqs = [s for s in (bracket.start, bracket.summary_seq, bracket.replacement_seq, bracket.end) if s is not None]
        if not seqs:
            return
        start, end = min(seqs), max(seqs)
        if bracket.end is None and bracket.status in ("open", "unknown"):
            end = self.last
        turn = self.turn_at(start)
        parent = turn.key if turn is not None else "session"
        self.compactions.append(self.add(
            COMPACTION, f"compaction@{start}", "compaction", start, end, parent,
            {"compactionId": bracket.compaction_id, "status": bracket.status, "turn": bracket.turn,
             "summarySeq": bracket.summary_seq, "replacementSeq": bracket.replacement_seq,
             "error": bracket.error}, bracket))

    def _tool(self, tool: ToolCall) -> None:
        if tool.call_seq is None:  # asked for, never started: a moment (`moments`), as stats counts it
            return
        start = tool.call_seq
        end = tool.result_seq if tool.result_seq is not None and tool.result_seq >= start else self.last
        span = self.add(TOOL, f"tool@{start}", f"tool {as_text(tool.tool)}", start, end,
                        self.enclosing(start, tool.turn, tool.step),
                        {"tool": tool.tool, "callId": tool.call_id, "turn": tool.turn, "step": tool.step,
                         "askedSeq": tool.asked_seq, "resultSeq": tool.result_seq, "outcome": tool.outcome,
                         "isError": tool.is_error, "errorCode": tool.error_code}, tool)
        self.tools[id(tool)] = span

    def _hook(self, hook: HookRun, parent: str) -> None:
        start = hook.invoked_seq if hook.invoked_seq is not None else hook.result_seq
        if start is None:
            return
        end = hook.result_seq if hook.result_seq is not None else start
        self.add(HOOK, f"hook@{start}", f"hook {hook.point}", start, end, parent,
                 {"point": hook.point, "handlerId": hook.handler, "decision": hook.decision,
                  "exitCode": hook.exit_code, "durationMs": hook.duration_ms, "callId": hook.call_id}, hook)

    def _approval(self, approval: Approval) -> None:
        start = approval.asked_seq if approval.asked_seq is not None else approval.decided_seq
        if start is None:
            return
        end = approval.decided_seq if approval.decided_seq is not None else start
        tool = self.tools.get(id(approval.call)) if approval.call is not None else None
        self.add(APPROVAL, f"approval@{start}", f"approval {as_text(approval.tool)}", start, max(start, end),
                 tool.key if tool is not None else self.enclosing(start),
                 {"approvalId": approval.id, "tool": approval.tool, "callId": approval.call_id,
                  "outcome": approval.outcome, "reason": approval.reason, "flag": approval.flag}, approval)

    def moments(self, failures: list[dict[str, Any]], retried: list[tuple[int, Any]], shadows: list[Any],
                tool_calls: list[ToolCall], others: list[tuple[int, Any]]) -> None:
        out = self.out.moments
        starts = sorted(self.calls)
        for failure in failures:
            seq = failure["seq"]
            out.append(Instant(FAILURE, f"{as_text(failure['type'])} {as_text(failure['code'])}", seq, self.time(seq),
                              (self._call_at(seq, starts) if failure["type"] in ("assistant/chunk", "llm/retry")
                               else None) or self.enclosing(seq, failure["turn"], failure["step"]),
                              dict(failure)))
        for seq, data in retried:
            data = data if type(data) is dict else {}
            span = self._call_at(seq, starts) or self.enclosing(seq)
            out.append(Instant(RETRY, "llm/retry", seq, self.time(seq), span,
                              {"attempt": data.get("attempt"), "failure": data.get("failure")}))
        for shadow in shadows:
            parent = next((c.key for c in self.compactions if c.start_seq <= shadow.seq <= c.end_seq), None)
            out.append(Instant(REPLACEMENT, "replacement", shadow.seq, self.time(shadow.seq),
                              parent or self.enclosing(shadow.seq), shadow.to_json()))
        for tool in tool_calls:
            if tool.call_seq is None and tool.asked_seq is not None:
                out.append(Instant(NOT_STARTED, f"tool {as_text(tool.tool)} not started", tool.asked_seq,
                                  self.time(tool.asked_seq), self.enclosing(tool.asked_seq, tool.turn, tool.step),
                                  {"tool": tool.tool, "callId": tool.call_id, "outcome": tool.outcome}))
        for seq, kind in others:
            out.append(Instant(EVENT, as_text(kind), seq, self.time(seq), self.enclosing(seq), {"type": kind}))
        out.sort(key=lambda m: m.seq)

    def _call_at(self, seq: int, starts: list[int]) -> str | None:
        """The key of the latest model call that started at or before `seq`, when it lies inside it
        or it ended right before (a retry or a failure follows the failed call's finish)."""
        at = bisect.bisect_right(starts, seq) - 1
        if at < 0:
            return None
        span = self.calls[starts[at]]
        return span.key if seq <= span.end_seq + 2 else None
