"""`stats`: the figures people ask about one session (and several together).

When the fold fails, the figures are those of the events before the failure:
`answered_up_to` says how far they reach and `error` why (a turn still open
there ended "unknown", a compaction still open there is not counted as open)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from dshreplay.analyses.calls import failed, failure_code, retried_calls
from dshreplay.analyses.health import UNKNOWN
from dshreplay.analyses.index import Indexer
from dshreplay.analyses.turns import TurnTracker
from dshreplay.core.driver import STOP, Observer, run_pass
from dshreplay.core.surface import SURFACE_TYPES, has_message
from dshreplay.errors import DeriveError, DshReplayError
from dshreplay.io.reader import LogSource
from dshreplay.jsvalues import as_key, as_text, is_number, is_time
from dshreplay.jsvalues import dig as _get

TOKEN_FIELDS = (("input", "inputTokens"), ("output", "outputTokens"), ("cacheRead", "cacheReadTokens"),
                ("reasoning", "reasoningTokens"))
DENIED = ("rejected", "cancelled", "unavailable")  # (a tuple: an outcome may be any value, a list too)


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
    cancelled_calls: int = 0  # main-loop calls an abort cut short (calls.CANCELLED)
    tokens_by_model: dict = field(default_factory=dict)
    turn_endings: list = field(default_factory=list)  # how each turn ended (see turns.Span.ending)
    # why the figures are missing (the log cannot be read: answered_up_to None) or stop short
    # (where the fold fails: the figures are those of seqs 0..answered_up_to)
    error: DshReplayError | None = None
    answered_up_to: int | None = None
    torn_tail: object = None  # reader.TornTail: a half-written last line, left out of the figures

    @property
    def unreadable(self) -> bool:
        return self.error is not None and self.answered_up_to is None

    def to_json(self) -> dict:
        return {"path": self.path, "error": None if self.error is None else self.error.to_json(),
                "answeredUpTo": self.answered_up_to, "sessionId": self.session_id, "events": self.events,
                "turns": self.turns,
                "steps": self.steps, "calls": self.calls, "auxiliaryCalls": self.auxiliary_calls,
                "retries": self.retries, "tools": self.tools, "approvals": self.approvals,
                "compactions": self.compactions, "tokens": self.tokens,
                "surface": {"now": self.surface_now, "appended": self.appended, "forgotten": self.forgotten},
                "times": self.times, "failedCalls": self.failed_calls, "cancelledCalls": self.cancelled_calls,
                "tokensByModel": self.tokens_by_model,
                "turnEndings": self.turn_endings,
                "tornTail": None if self.torn_tail is None else self.torn_tail.to_json()}


def failed_calls(calls) -> dict:
    """Main-loop calls that failed, by error code (a finish of kind error, or one carrying a failure)."""
    by_code: dict = {}
    for call in calls:
        if failed(call.finish):
            code = as_text(failure_code(call.finish))
            by_code[code] = by_code.get(code, 0) + 1
    return dict(sorted(by_code.items()))


def tokens_by_model(calls) -> dict:
    """Token counts summed per provider/model, from each call's usage."""
    out: dict = {}
    for call in calls:
        if type(call.usage) is dict:
            totals = out.setdefault(f"{as_text(call.provider)}/{as_text(call.model)}", {})
            for key, value in call.usage.items():
                if is_number(value) and type(key) is str:
                    totals[key] = totals.get(key, 0) + value
    return {model: dict(sorted(t.items())) for model, t in sorted(out.items())}


def _summary(values: list) -> dict | None:
    if not values:
        return None
    return {"count": len(values), "totalMs": sum(values), "medianMs": statistics.median(values),
            "maxMs": max(values)}


class StatsObserver(Observer):
    """The figures a pass gathers event by event (the rest come from the index)."""

    def __init__(self, calls) -> None:
        self.calls = calls  # the pass's CallTracker, observed before this
        self._calls_seen = 0
        self.tools: dict = {}
        self.summaries = self.prunes = 0
        self.appended: list[int] = []  # seqs of appended surface events
        self.tool_ms: list = []
        self.first_chunk_ms: list = []
        self._call_names: dict = {}
        self._tool_started: dict = {}
        self._previous_time = None

    def observe(self, event, replacement) -> None:
        kind, time = event.type, event.time
        timed = is_time(time)
        if kind == "assistant/chunk":
            self._chunk(event, timed)
            return
        if timed:  # chunks do not move the request clock
            self._previous_time = time
        if kind not in _COUNTED and kind not in SURFACE_TYPES:
            return
        data = event.record.get("data")
        if kind == "tool/call":
            name = _get(data, "name")
            name = name if type(name) is str else "?"
            call_id = as_key(_get(data, "callId"))
            self._call_names[call_id] = name
            entry = self.tools.setdefault(name, {"calls": 0, "errors": 0})
            entry["calls"] += 1
            if timed:
                self._tool_started[call_id] = time
        elif kind == "tool/result" and event.record.get("surfaceOp") == "append":
            call_id = as_key(_get(data, "message", "source", "callId"))
            failed = _first_is_error(data) or _get(data, "error") is not None
            if failed and call_id in self._call_names:
                self.tools[self._call_names[call_id]]["errors"] += 1
            if timed and call_id in self._tool_started:
                self.tool_ms.append(time - self._tool_started.pop(call_id))
        elif kind == "compaction/summary":
            self.summaries += 1
        elif kind == "compaction/prune":
            self.prunes += 1
        if kind in SURFACE_TYPES and event.record.get("surfaceOp") == "append":
            self.appended.append(event.seq)

    def _chunk(self, event, timed: bool) -> None:
        """The time to the first chunk of each main-loop call."""
        opened = len(self.calls.calls)
        if opened > self._calls_seen:
            self._calls_seen = opened
            if timed and self._previous_time is not None:
                self.first_chunk_ms.append(event.time - self._previous_time)


_COUNTED = frozenset({"tool/call", "tool/result", "compaction/summary", "compaction/prune"})


def session_stats(source) -> SessionStats:
    """The figures of one log (a LogSource), in one pass."""
    indexer = Indexer()
    turns, figures = TurnTracker(), StatsObserver(indexer.calls)
    run_pass(source, [indexer, turns, figures], on_fold_error=STOP)
    index = indexer.index
    out = SessionStats(index.path, index.header.get("id"), index.event_count, index.turns, index.steps,
                       len(index.calls), len(index.auxiliary_calls), retried_calls(index.calls))
    for call in index.calls + index.auxiliary_calls:
        for name, key in TOKEN_FIELDS:
            value = _get(call.usage, key)
            if is_number(value):
                out.tokens[name] += value
    out.compactions["summaries"], out.compactions["prunes"] = figures.summaries, figures.prunes
    failure = index.fold_errors[0] if index.fold_errors else None
    for bracket in index.brackets:
        if bracket.status == "failed":
            out.compactions["failed"] += 1
        elif bracket.status == "open" and failure is None:  # (open where the fold fails: unknown)
            out.compactions["open"] += 1
    final = index.final
    out.surface_now = sum(map(_yields_message, final.events.values())) if final is not None else 0
    final_nodes = set(final.nodes) if final is not None else set()
    out.appended = len(figures.appended)
    out.forgotten = sum(1 for seq in figures.appended if seq not in final_nodes)
    asked = [a for a in turns.approvals if a.asked_seq is not None]
    out.approvals = {"asked": len(asked), "decided": sum(1 for a in turns.approvals if a.decided_seq is not None),
                     "denied": sum(1 for a in turns.approvals if a.outcome in DENIED),
                     "undecided": sum(1 for a in asked if a.decided_seq is None)}
    out.tools = dict(sorted(figures.tools.items()))
    turn_ms = [s.end_time - s.start_time for s in turns.turns
               if s.end is not None and is_time(s.start_time) and is_time(s.end_time)]
    out.times = {"turns": _summary(turn_ms), "timeToFirstChunk": _summary(figures.first_chunk_ms),
                 "tools": _summary(figures.tool_ms)}
    out.failed_calls = failed_calls(index.calls)
    out.cancelled_calls = sum(1 for call in index.calls if call.cancelled)
    if failure is not None:
        out.error, out.answered_up_to = failure, failure.seq - 1
    out.torn_tail = index.torn_tail
    out.tokens_by_model = tokens_by_model(index.calls + index.auxiliary_calls)
    out.turn_endings = [UNKNOWN if s.end is None and failure is not None else s.ending for s in turns.turns]
    return out


def stats_for(item) -> SessionStats:
    """`session_stats` of one log, given as (path, options), or a row carrying
    why it cannot be read."""
    path, options = item
    try:
        return session_stats(LogSource(path, options))
    except DshReplayError as exc:
        if exc.path is None:
            exc.path = str(path)
        return SessionStats(str(path), error=exc)


def _yields_message(event) -> bool:
    """Whether a surface node gives the model a message (a node dsh could not project gives none)."""
    try:
        return has_message(event)
    except DeriveError:
        return False


def _first_is_error(data) -> bool:
    return _get(data, "message", "content", 0, "isError") is True


def totals(stats: list[SessionStats]) -> SessionStats:
    """One row adding up several sessions."""
    total = SessionStats("(total)", None)
    for s in stats:
        if s.unreadable:
            continue
        for name in ("events", "turns", "steps", "calls", "auxiliary_calls", "retries", "surface_now",
                     "appended", "forgotten", "cancelled_calls"):
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
