"""`stats`: the figures people ask about one session (and several together)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from dshreplay.analyses.calls import CallTracker, failed, failure_code, retried_calls
from dshreplay.analyses.index import Indexer
from dshreplay.analyses.tools import ToolTracker
from dshreplay.analyses.turns import TurnTracker
from dshreplay.core.driver import STOP, Observer, run_pass
from dshreplay.core.surface import SURFACE_TYPES, has_message
from dshreplay.errors import DeriveError, DshReplayError
from dshreplay.io.reader import LogSource
from dshreplay.jsvalues import dig as _get

TOKEN_FIELDS = (("input", "inputTokens"), ("output", "outputTokens"), ("cacheRead", "cacheReadTokens"),
                ("reasoning", "reasoningTokens"))
DENIED = {"rejected", "cancelled", "unavailable"}




def _num(value) -> bool:
    return type(value) in (int, float)


@dataclass
class SessionStats:
    path: str
    session_id: object = None
    events: int = 0
    turns: int = 0
    steps: int = 0
    calls: int = 0
    auxiliary_calls: int = 0
    retries: int = 0  # calls issued again in their step after a failed call (calls.retried_calls)
    tools: dict = field(default_factory=dict)  # name -> {"calls": n, "errors": n}
    approvals: dict = field(default_factory=lambda: {"asked": 0, "decided": 0, "denied": 0, "undecided": 0})
    compactions: dict = field(default_factory=lambda: {"summaries": 0, "prunes": 0, "failed": 0, "open": 0})
    tokens: dict = field(default_factory=lambda: {name: 0 for name, _ in TOKEN_FIELDS})
    surface_now: int = 0
    appended: int = 0
    forgotten: int = 0  # appended messages no longer on the surface
    times: dict = field(default_factory=dict)
    failed_calls: dict = field(default_factory=dict)  # error code -> main-loop calls that failed with it
    tokens_by_model: dict = field(default_factory=dict)
    turn_endings: list = field(default_factory=list)  # how each turn ended (see turns.Span.ending)
    error: str | None = None  # set when the log could not be read
    fold_error: object = None  # the event the fold rejected: the figures are those of the events before it
    torn_tail: object = None  # reader.TornTail: a half-written last line, left out of the figures

    def to_json(self) -> dict:
        return {"path": self.path, "error": self.error, "sessionId": self.session_id, "events": self.events,
                "turns": self.turns,
                "steps": self.steps, "calls": self.calls, "auxiliaryCalls": self.auxiliary_calls,
                "retries": self.retries, "tools": self.tools, "approvals": self.approvals,
                "compactions": self.compactions, "tokens": self.tokens,
                "surface": {"now": self.surface_now, "appended": self.appended, "forgotten": self.forgotten},
                "times": self.times, "failedCalls": self.failed_calls, "tokensByModel": self.tokens_by_model,
                "turnEndings": self.turn_endings,
                "tornTail": None if self.torn_tail is None else self.torn_tail.to_json(),
                "foldError": None if self.fold_error is None else {
                    "seq": self.fold_error.seq, "line": self.fold_error.line, "message": self.fold_error.message},
                "answeredUpTo": None if self.fold_error is None or self.fold_error.seq is None
                else self.fold_error.seq - 1}


def failed_calls(calls) -> dict:
    """Main-loop calls that failed, by error code (a finish of kind error, or one carrying a failure)."""
    by_code: dict = {}
    for call in calls:
        if failed(call.finish):
            code = str(failure_code(call.finish))
            by_code[code] = by_code.get(code, 0) + 1
    return dict(sorted(by_code.items()))


def tokens_by_model(calls) -> dict:
    """Token counts summed per provider/model, from each call's usage."""
    out: dict = {}
    for call in calls:
        if type(call.usage) is dict:
            totals = out.setdefault(f"{call.provider}/{call.model}", {})
            for key, value in call.usage.items():
                if type(value) in (int, float) and type(key) is str:
                    totals[key] = totals.get(key, 0) + value
    return {model: dict(sorted(t.items())) for model, t in sorted(out.items())}


def _summary(values: list) -> dict | None:
    if not values:
        return None
    return {"count": len(values), "totalMs": sum(values), "medianMs": statistics.median(values),
            "maxMs": max(values)}


class StatsObserver(Observer):
    """The figures a pass gathers event by event (the rest come from the trackers)."""

    requires = (CallTracker,)

    def begin(self, run) -> None:
        self.appended: list[int] = []  # seqs of appended surface events
        self.first_chunk_ms: list = []
        self._previous_time = None

    def observe(self, record) -> None:
        event = record.item
        kind, time = event.type, event.time
        timed = _num(time) and time > 0
        if kind == "assistant/chunk":  # the time to the first chunk of each main-loop call
            call = record.call
            if call is not None and call.first_chunk_seq == event.seq and timed and self._previous_time is not None:
                self.first_chunk_ms.append(time - self._previous_time)
            return  # (chunks do not move the request clock)
        if timed:
            self._previous_time = time
        if kind in SURFACE_TYPES and event.record.get("surfaceOp") == "append":
            self.appended.append(event.seq)


def session_stats(source) -> SessionStats:
    """The figures of one log (a LogSource), in one pass."""
    indexer, figures = Indexer(), StatsObserver()
    run = run_pass(source, [indexer, figures], on_fold_error=STOP)
    index, turns, tools = indexer.index, run.get(TurnTracker), run.get(ToolTracker)
    out = SessionStats(index.path, index.header.get("id"), index.event_count, index.turns, index.steps,
                       len(index.calls), len(index.auxiliary_calls), retried_calls(index.calls))
    for call in index.calls + index.auxiliary_calls:
        for name, key in TOKEN_FIELDS:
            value = _get(call.usage, key)
            if _num(value):
                out.tokens[name] += value
    out.compactions["summaries"] = index.counts["compaction/summary"]
    out.compactions["prunes"] = index.counts["compaction/prune"]
    for bracket in index.brackets:
        if bracket.status == "failed":
            out.compactions["failed"] += 1
        elif bracket.status == "open":
            out.compactions["open"] += 1
    final = index.final
    out.surface_now = sum(map(_yields_message, final.events.values())) if final is not None else 0
    final_nodes = set(final.nodes) if final is not None else set()
    out.appended = len(figures.appended)
    out.forgotten = sum(1 for seq in figures.appended if seq not in final_nodes)
    approvals = tools.approvals
    asked = [a for a in approvals if a.asked_seq is not None]
    out.approvals = {"asked": len(asked), "decided": sum(1 for a in approvals if a.decided_seq is not None),
                     "denied": sum(1 for a in approvals if a.outcome in DENIED),
                     "undecided": sum(1 for a in asked if a.decided_seq is None)}
    tool_ms = []
    for call in tools.calls:
        if call.call_seq is None:
            continue
        name = call.tool if type(call.tool) is str else "?"
        entry = out.tools.setdefault(name, {"calls": 0, "errors": 0})
        entry["calls"] += 1
        if call.result_seq is not None and call.is_error:
            entry["errors"] += 1
        if call.result_seq is not None and _timed(call.started_at) and _timed(call.finished_at):
            tool_ms.append(call.finished_at - call.started_at)
    out.tools = dict(sorted(out.tools.items()))
    turn_ms = [s.end_time - s.start_time for s in turns.turns
               if s.end is not None and _timed(s.start_time) and _timed(s.end_time)]
    out.times = {"turns": _summary(turn_ms), "timeToFirstChunk": _summary(figures.first_chunk_ms),
                 "tools": _summary(tool_ms)}
    out.failed_calls = failed_calls(index.calls)
    out.fold_error = index.fold_errors[0] if index.fold_errors else None
    out.torn_tail = index.torn_tail
    out.tokens_by_model = tokens_by_model(index.calls + index.auxiliary_calls)
    out.turn_endings = [s.ending for s in turns.turns]
    return out


def _timed(value) -> bool:
    return _num(value) and value > 0


def stats_for(item) -> SessionStats:
    """`session_stats` of one log, given as (path, options), or a row carrying
    why it cannot be read."""
    path, options = item
    try:
        return session_stats(LogSource(path, options))
    except DshReplayError as exc:
        return SessionStats(str(path), error=str(exc))


def _yields_message(event) -> bool:
    """Whether a surface node gives the model a message (a node dsh could not project gives none)."""
    try:
        return has_message(event)
    except DeriveError:
        return False


def totals(stats: list[SessionStats]) -> SessionStats:
    """One row adding up several sessions."""
    total = SessionStats("(total)", None)
    for s in stats:
        if s.error is not None:
            continue
        for name in ("events", "turns", "steps", "calls", "auxiliary_calls", "retries", "surface_now",
                     "appended", "forgotten"):
            setattr(total, name, getattr(total, name) + getattr(s, name))
        for group in ("approvals", "compactions", "tokens", "failed_calls"):
            for key, value in getattr(s, group).items():
                getattr(total, group)[key] = getattr(total, group).get(key, 0) + value
        for model, counts in s.tokens_by_model.items():
            into = total.tokens_by_model.setdefault(model, {})
            for key, value in counts.items():
                into[key] = into.get(key, 0) + value
        total.turn_endings += s.turn_endings
        for name, entry in s.tools.items():
            t = total.tools.setdefault(name, {"calls": 0, "errors": 0})
            t["calls"] += entry["calls"]
            t["errors"] += entry["errors"]
    total.tools = dict(sorted(total.tools.items()))
    total.failed_calls = dict(sorted(total.failed_calls.items()))
    total.tokens_by_model = dict(sorted(total.tokens_by_model.items()))
    return total
