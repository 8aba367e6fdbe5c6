"""The session summary: the figures people ask about one session (and several together).

One summary, made once per pass by `SessionSummary` from the pass's trackers:
`stats` prints it, the export writes it as session.json and the report shows it.

When the fold fails and the pass stops there (`stats`), the figures are those of
the events before the failure: `answered_up_to` says how far they reach and
`error` why (a turn still open there ended "unknown", a compaction still open
there is not counted as open). A pass that reads on past it (the export) gives
every event's figures and names the first rejection in `fold_error`.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, TypeGuard

from dshreplay._jsvalues import as_text, is_number, is_time, utc_time
from dshreplay._jsvalues import dig as _get
from dshreplay.analyses.trackers.calls import Call, CallTracker, failed, failure_code, retried_calls
from dshreplay.analyses.trackers.logindex import Indexer, LogIndex
from dshreplay.analyses.trackers.toolcalls import ToolLedger
from dshreplay.analyses.trackers.turns import TurnSpans
from dshreplay.core.driver import STOP, Observer, Record, Run, run_pass
from dshreplay.core.surface import SURFACE_TYPES, has_message
from dshreplay.errors import DeriveError, DshReplayError, FoldError, LineError
from dshreplay.io.reader import Event, LogSource, TornTail
from dshreplay.options import Options

__all__ = ["SessionStats", "session_stats", "totals"]

TOKEN_FIELDS = (("input", "inputTokens"), ("output", "outputTokens"), ("cacheRead", "cacheReadTokens"),
                ("reasoning", "reasoningTokens"))
Timing = dict[str, float]  # count, totalMs, medianMs, maxMs of a list of durations
DENIED = ("rejected", "cancelled", "unavailable")  # (a tuple: an outcome may be any value, a list too)


@dataclass
class SessionStats:
    """The summary of one session (or a total of several: `totals`)."""

    path: str
    session_id: object = None
    start: str | None = None  # UTC: the first turn's start (else the header's createdAt)
    end: str | None = None  # UTC: the last turn's end (or start)
    duration_ms: object = None
    models: list[dict[str, str]] = field(default_factory=list)  # [{"provider", "model"}] of every model call
    events: int = 0
    turns: int = 0
    steps: int = 0
    calls: int = 0
    auxiliary_calls: int = 0
    retries: int = 0  # calls issued again in their step after a failed call (calls.retried_calls)
    tools: dict[str, dict[str, int]] = field(default_factory=dict)  # name -> {"calls": n, "errors": n}
    approvals: dict[str, int] = field(default_factory=lambda: {"asked": 0, "decided": 0, "denied": 0, "undecided": 0})
    compactions: dict[str, int] = field(default_factory=lambda: {"summaries": 0, "prunes": 0, "failed": 0, "open": 0})
    tokens: dict[str, float] = field(default_factory=lambda: {name: 0 for name, _ in TOKEN_FIELDS})
    surface_now: int = 0
    appended: int = 0
    forgotten: int = 0  # appended messages no longer on the surface
    times: dict[str, Timing | None] = field(default_factory=dict)
    failed_calls: dict[str, int] = field(default_factory=dict)  # error code -> main-loop calls that failed with it
    cancelled_calls: int = 0  # main-loop calls an abort cut short (calls.CANCELLED)
    tokens_by_model: dict[str, dict[str, float]] = field(default_factory=dict)
    turn_endings: list[str] = field(default_factory=list)  # how each turn ended (see turns.Span.ending)
    turn_spans: list[dict[str, Any]] = field(default_factory=list)  # [{"turn", "startSeq", "endSeq", "ending"}]
    spills: dict[str, int] = field(default_factory=lambda: {"results": 0, "omittedBytes": 0, "inherited": 0})
    title: str | None = None  # the last session/title's title
    failures: list[dict[str, Any]] = field(default_factory=list)  # what went wrong, from log-only events (`failure_of`)
    # why the figures are missing (the log cannot be read: answered_up_to None) or stop short
    # (where the fold fails: the figures are those of seqs 0..answered_up_to)
    error: DshReplayError | None = None
    answered_up_to: int | None = None
    fold_error: FoldError | LineError | None = None  # the first event the fold rejected (or line it could not read)
    torn_tail: TornTail | None = None  # reader.TornTail: a half-written last line, left out of the figures

    @property
    def unreadable(self) -> bool:
        return self.error is not None and self.answered_up_to is None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "error": None if self.error is None else self.error.to_json(),
               "answeredUpTo": self.answered_up_to, "sessionId": self.session_id, "start": self.start,
               "end": self.end, "durationMs": self.duration_ms, "models": self.models, "events": self.events,
                "turns": self.turns,
                "steps": self.steps, "calls": self.calls, "auxiliaryCalls": self.auxiliary_calls,
                "retries": self.retries, "tools": self.tools, "approvals": self.approvals,
                "compactions": self.compactions, "tokens": self.tokens,
                "surface": {"now": self.surface_now, "appended": self.appended, "forgotten": self.forgotten},
                "times": self.times, "failedCalls": self.failed_calls, "cancelledCalls": self.cancelled_calls,
                "tokensByModel": self.tokens_by_model,
                "turnEndings": self.turn_endings, "turnSpans": self.turn_spans, "spills": self.spills,
                "title": self.title, "failures": self.failures,
                "tornTail": None if self.torn_tail is None else self.torn_tail.to_json()}
        return out

    def fold_error_json(self) -> dict[str, Any] | None:
        """Where the fold fails, for figures read past it (the bundle's session.json:
        `foldError`); `stats` stops there instead, and its `error` and `answeredUpTo` say so."""
        failure = self.fold_error
        return None if failure is None else {
            "seq": failure.seq, "line": failure.line, "code": failure.code, "message": failure.message}


FAILURE_TYPES = frozenset({"assistant/chunk", "turn/end", "llm/retry", "hook/result", "command/done",
                           "compaction/end"})


def failure_of(event: Event) -> dict[str, Any] | None:
    """What went wrong at a log-only event, as the session summary lists it (None: nothing):
    a provider's error that ended a model call (its finish chunk) or a turn, a retry and the
    failure it follows, a hook that exited non-zero or wrote to stderr, a slash command or a
    compaction that failed. {seq, type, turn, step, code, status, message}: for a hook, code
    is its decision and status its exit code."""
    data = event.record.get("data")
    if type(data) is not dict:
        return None
    kind, failure = event.type, None
    if kind == "assistant/chunk":
        chunk = data.get("chunk")
        reason = chunk.get("reason") if type(chunk) is dict and chunk.get("type") == "finish" else None
        failure = reason.get("failure") if type(reason) is dict else None
    elif kind == "turn/end":
        reason = data.get("reason")
        failure = reason.get("error") if type(reason) is dict and reason.get("kind") == "error" else None
    elif kind == "llm/retry":
        failure = data.get("failure")
    elif kind == "hook/result":
        if data.get("exitCode") in (None, 0) and data.get("stderrSummary") in (None, ""):
            return None
        failure = {"code": data.get("decision"), "status": data.get("exitCode"), "message": data.get("stderrSummary")}
    elif kind == "command/done" and data.get("kind") == "error":
        failure = {"code": "error", "message": data.get("text")}
    elif kind == "compaction/end" and "error" in data:
        failure = {"code": "error", "message": data["error"]}
    if type(failure) is not dict:
        return None
    return {"seq": event.seq, "type": kind, "turn": data.get("turn"), "step": data.get("step"),
            "code": failure.get("code"), "status": failure.get("status"), "message": failure.get("message")}


def failed_calls(calls: Iterable[Call]) -> dict[str, int]:
    """Main-loop calls that failed, by error code (a finish of kind error, or one carrying a failure)."""
    by_code: dict[str, int] = {}
    for call in calls:
        if failed(call.finish):
            code = as_text(failure_code(call.finish))
            by_code[code] = by_code.get(code, 0) + 1
    return dict(sorted(by_code.items()))


def tokens_by_model(calls: Iterable[Call]) -> dict[str, dict[str, float]]:
    """Token counts summed per provider/model, from each call's usage."""
    out: dict[str, dict[str, float]] = {}
    for call in calls:
        if type(call.usage) is dict:
            totals = out.setdefault(f"{as_text(call.provider)}/{as_text(call.model)}", {})
            for key, value in call.usage.items():
                if is_number(value) and type(key) is str:
                    totals[key] = totals.get(key, 0) + value
    return {model: dict(sorted(t.items())) for model, t in sorted(out.items())}


def _summary(values: list[float]) -> Timing | None:
    if not values:
        return None
    return {"count": len(values), "totalMs": sum(values), "medianMs": statistics.median(values),
            "maxMs": max(values)}


class SessionSummary(Observer):
    """The session summary of a pass (`stats` once it is over): the figures
    gathered event by event here, the rest from the pass's trackers."""

    requires = (Indexer, CallTracker)

    def begin(self, run: Run) -> None:
        self.stats: SessionStats | None = None
        self.title: Any = None
        self.failures: list[dict[str, Any]] = []
        self.appended: list[int] = []  # seqs of appended surface events

    def observe(self, record: Record) -> None:
        event: Any = record.item  # (an Event wherever failure_of reads it: a packed run is told by its row)
        kind = event.type
        if kind == "assistant/chunk":
            if event.row is None and (failure := failure_of(event)) is not None:  # (a packed row holds no finish)
                self.failures.append(failure)
            return
        if kind in SURFACE_TYPES and event.record.get("surfaceOp") == "append":
            self.appended.append(event.seq)
        elif kind in FAILURE_TYPES and (failure := failure_of(event)) is not None:
            self.failures.append(failure)
        elif kind == "session/title":
            data = event.record.get("data")
            self.title = data.get("title") if type(data) is dict else None

    def finish(self, run: Run) -> None:
        self.stats = self._summary(run)

    def _summary(self, run: Run) -> SessionStats:
        index: LogIndex
        turns: TurnSpans
        tools: ToolLedger
        index, turns, tools = run.get(Indexer).index, run.get(TurnSpans), run.get(ToolLedger)
        held = run.events_held if run.complete else None  # (a gap's seqs are no events)
        out = SessionStats(index.path, index.header.get("id"), events=index.event_count if held is None else held,
                           turns=index.turns,
                           steps=index.steps, calls=len(index.calls), auxiliary_calls=len(index.auxiliary_calls),
                           retries=retried_calls(index.calls))
        every_call = index.calls + index.auxiliary_calls
        for call in every_call:
            for name, key in TOKEN_FIELDS:
                value = _get(call.usage, key)
                if is_number(value):
                    out.tokens[name] += value
        out.models = [{"provider": p, "model": m}
                      for p, m in sorted({(as_text(c.provider), as_text(c.model)) for c in every_call})]
        out.compactions["summaries"] = index.counts["compaction/summary"]
        out.compactions["prunes"] = index.counts["compaction/prune"]
        failure = index.fold_errors[0] if index.fold_errors else None
        stopped = failure if failure is not None and not run.complete else None  # (the figures stop there)
        for bracket in index.brackets:
            if bracket.status == "failed":
                out.compactions["failed"] += 1
            elif bracket.status == "open" and stopped is None:  # (open where the fold fails: unknown)
                out.compactions["open"] += 1
        final = index.final
        out.surface_now = sum(map(_yields_message, final.events.values())) if final is not None else 0
        final_nodes = set(final.nodes) if final is not None else set()
        out.appended = len(self.appended)
        out.forgotten = sum(1 for seq in self.appended if seq not in final_nodes)
        approvals = tools.approvals
        asked = [a for a in approvals if a.asked_seq is not None]
        out.approvals = {"asked": len(asked), "decided": sum(1 for a in approvals if a.decided_seq is not None),
                         "denied": sum(1 for a in approvals if a.outcome in DENIED),
                         "undecided": sum(1 for a in asked if a.decided_seq is None)}
        tool_ms: list[float] = []
        for tool_call in tools.calls:
            if tool_call.call_seq is None:
                continue
            name = tool_call.tool if type(tool_call.tool) is str else "?"
            entry = out.tools.setdefault(name, {"calls": 0, "errors": 0})
            entry["calls"] += 1
            if tool_call.result_seq is not None and tool_call.is_error:
                entry["errors"] += 1
            if tool_call.duration_ms is not None:
                tool_ms.append(tool_call.duration_ms)
        out.tools = dict(sorted(out.tools.items()))
        spans = turns.turns
        turn_ms = [s.duration_ms for s in spans if s.duration_ms is not None]
        out.times = {"turns": _summary(turn_ms), "timeToFirstChunk": _summary(
            [c.latency_ms for c in index.calls if c.latency_ms is not None]),
                     "tools": _summary(tool_ms)}
        created = index.header.get("createdAt")
        first = next((s.start_time for s in spans if _timed(s.start_time)), created if _timed(created) else None)
        last = max((t for s in spans for t in (s.end_time, s.start_time) if _timed(t)), default=None)
        out.start, out.end = utc_time(first), utc_time(last)
        out.duration_ms = last - first if first is not None and last is not None else None
        out.failed_calls = failed_calls(index.calls)
        out.cancelled_calls = sum(1 for call in index.calls if call.cancelled)
        out.fold_error = failure
        if stopped is not None:
            out.error, out.answered_up_to = stopped, run.answered_up_to
        out.torn_tail = index.torn_tail
        out.tokens_by_model = tokens_by_model(every_call)
        endings = [s.ending_read(None if stopped is None else stopped.seq) for s in spans]
        out.turn_endings = endings
        out.turn_spans = [{"turn": s.turn, "startSeq": s.start, "endSeq": s.end, "ending": ending}
                          for s, ending in zip(spans, endings)]
        out.spills = {"results": len(index.spills), "omittedBytes": sum(s.omitted for s in index.spills),
                      "inherited": sum(s.inherited for s in index.spills)}
        out.title, out.failures = self.title, self.failures
        return out


def session_stats(source: LogSource) -> SessionStats:
    """The summary of one log (a LogSource), in one pass that stops where the fold
    fails (the figures are then those of the events before it)."""
    summary = SessionSummary()
    run_pass(source, [summary], on_fold_error=STOP)
    assert summary.stats is not None  # (its finish made it: the pass read to its end or stop)
    return summary.stats


def _timed(value: object) -> TypeGuard[float]:
    """A usable time (`is_time`): a number, so two of them subtract."""
    return is_time(value)


def stats_for(item: tuple[str | Path, Options]) -> SessionStats:
    """`session_stats` of one log, given as (path, options), or a row carrying
    why it cannot be read."""
    path, options = item
    try:
        return session_stats(LogSource(path, options))
    except DshReplayError as exc:
        if exc.path is None:
            exc.path = str(path)
        return SessionStats(str(path), error=exc)


def _yields_message(event: Any) -> bool:  # (a surface node: whatever the fold keeps, as has_message takes it)
    """Whether a surface node gives the model a message (a node dsh could not project gives none)."""
    try:
        return has_message(event)
    except DeriveError:
        return False


def totals(stats: list[SessionStats]) -> SessionStats:
    """One row adding up several sessions."""
    total = SessionStats("(total)", None)
    for s in stats:
        if s.unreadable:
            continue
        for name in ("events", "turns", "steps", "calls", "auxiliary_calls", "retries", "surface_now",
                     "appended", "forgotten", "cancelled_calls"):
            setattr(total, name, getattr(total, name) + getattr(s, name))
        for group in ("approvals", "compactions", "tokens", "failed_calls", "spills"):
            for key, value in getattr(s, group).items():
                getattr(total, group)[key] = getattr(total, group).get(key, 0) + value
        for model, counts in s.tokens_by_model.items():
            into = total.tokens_by_model.setdefault(model, {})
            for key, value in counts.items():
                into[key] = into.get(key, 0) + value
        total.turn_endings += s.turn_endings
        total.models += [m for m in s.models if m not in total.models]
        for name, entry in s.tools.items():
            t = total.tools.setdefault(name, {"calls": 0, "errors": 0})
            t["calls"] += entry["calls"]
            t["errors"] += entry["errors"]
    total.tools = dict(sorted(total.tools.items()))
    total.failed_calls = dict(sorted(total.failed_calls.items()))
    total.tokens_by_model = dict(sorted(total.tokens_by_model.items()))
    total.models.sort(key=lambda m: (m["provider"], m["model"]))
    return total
