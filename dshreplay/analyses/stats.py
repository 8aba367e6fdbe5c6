"""`stats`: the figures people ask about one session (and several together)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from dshreplay.jsvalues import dig as _get
from dshreplay.session import Session
from dshreplay.core.surface import SURFACE_TYPES

TOKEN_FIELDS = (("input", "inputTokens"), ("output", "outputTokens"), ("cacheRead", "cacheReadTokens"),
                ("reasoning", "reasoningTokens"))
DENIED = {"rejected", "cancelled", "unavailable"}


def _key(value):
    """A log value usable as a dict key."""
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


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
    retries: int = 0
    tools: dict = field(default_factory=dict)  # name -> {"calls": n, "errors": n}
    approvals: dict = field(default_factory=lambda: {"asked": 0, "decided": 0, "denied": 0, "undecided": 0})
    compactions: dict = field(default_factory=lambda: {"summaries": 0, "prunes": 0, "failed": 0, "open": 0})
    tokens: dict = field(default_factory=lambda: {name: 0 for name, _ in TOKEN_FIELDS})
    surface_now: int = 0
    appended: int = 0
    forgotten: int = 0  # appended messages no longer on the surface
    times: dict = field(default_factory=dict)
    error: str | None = None  # set when the log could not be read

    def to_json(self) -> dict:
        return {"path": self.path, "error": self.error, "sessionId": self.session_id, "events": self.events, "turns": self.turns,
                "steps": self.steps, "calls": self.calls, "auxiliaryCalls": self.auxiliary_calls,
                "retries": self.retries, "tools": self.tools, "approvals": self.approvals,
                "compactions": self.compactions, "tokens": self.tokens,
                "surface": {"now": self.surface_now, "appended": self.appended, "forgotten": self.forgotten},
                "times": self.times}


def _summary(values: list) -> dict | None:
    if not values:
        return None
    return {"count": len(values), "totalMs": sum(values), "medianMs": statistics.median(values),
            "maxMs": max(values)}


def session_stats(session: Session) -> SessionStats:
    index = session.index()
    out = SessionStats(session.path, session.header.get("id"), index.event_count, index.turns, index.steps,
                       len(index.calls), len(index.auxiliary_calls))
    for call in index.calls + index.auxiliary_calls:
        for name, key in TOKEN_FIELDS:
            value = _get(call.usage, key)
            if _num(value):
                out.tokens[name] += value
    for bracket in index.brackets:
        if bracket.status == "failed":
            out.compactions["failed"] += 1
        elif bracket.status == "open":
            out.compactions["open"] += 1
    out.surface_now = sum(1 for _, message in index.final.node_messages() if message is not None) \
        if index.final is not None else 0
    final_nodes = set(index.final.nodes) if index.final is not None else set()
    call_names: dict = {}
    tool_started: dict = {}
    tool_ms: list = []
    turn_started: dict = {}
    turn_ms: list = []
    first_chunk_ms: list = []
    previous_time = None
    call_starts = {c.first_chunk_seq for c in index.calls}
    asked: dict = {}
    for event in session.events:
        kind, time = event.type, event.time
        timed = _num(time) and time > 0
        if event.seq in call_starts and timed and previous_time is not None:
            first_chunk_ms.append(time - previous_time)
        if timed and kind != "assistant/chunk":  # chunks do not move the request clock
            previous_time = time
        if kind not in ("tool/call", "tool/result", "turn/start", "turn/end", "approval/asked",
                        "approval/decided", "llm/retry", "compaction/summary", "compaction/prune") \
                and kind not in SURFACE_TYPES:
            continue
        data = event.record.get("data")
        if kind == "tool/call":
            name = _get(data, "name")
            name = name if type(name) is str else "?"
            call_names[_key(_get(data, "callId"))] = name
            entry = out.tools.setdefault(name, {"calls": 0, "errors": 0})
            entry["calls"] += 1
            if timed:
                tool_started[_key(_get(data, "callId"))] = time
        elif kind == "tool/result" and event.record.get("surfaceOp") == "append":
            call_id = _key(_get(data, "message", "source", "callId"))
            failed = _first_is_error(data) or _get(data, "error") is not None
            if failed and call_id in call_names:
                out.tools[call_names[call_id]]["errors"] += 1
            if timed and call_id in tool_started:
                tool_ms.append(time - tool_started.pop(call_id))
        elif kind == "turn/start" and timed:
            turn_started[_key(_get(data, "turn"))] = time
        elif kind == "turn/end" and timed and _key(_get(data, "turn")) in turn_started:
            turn_ms.append(time - turn_started.pop(_key(_get(data, "turn"))))
        elif kind == "approval/asked":
            out.approvals["asked"] += 1
            asked[_key(_get(data, "id"))] = True
        elif kind == "approval/decided":
            out.approvals["decided"] += 1
            asked.pop(_key(_get(data, "id")), None)
            if _get(data, "outcome") in DENIED:
                out.approvals["denied"] += 1
        elif kind == "llm/retry":
            out.retries += 1
        elif kind == "compaction/summary":
            out.compactions["summaries"] += 1
        elif kind == "compaction/prune":
            out.compactions["prunes"] += 1
        if kind in SURFACE_TYPES and event.record.get("surfaceOp") == "append":
            out.appended += 1
            out.forgotten += event.seq not in final_nodes
    out.approvals["undecided"] = len(asked)
    out.tools = dict(sorted(out.tools.items()))
    out.times = {"turns": _summary(turn_ms), "timeToFirstChunk": _summary(first_chunk_ms),
                 "tools": _summary(tool_ms)}
    return out


def stats_for(source) -> SessionStats:
    """`session_stats` of one log, or a row carrying why it cannot be read."""
    from dshreplay.errors import DshReplayError
    try:
        return session_stats(Session(source))
    except DshReplayError as exc:
        return SessionStats(str(source), error=str(exc))


def _first_is_error(data) -> bool:
    return _get(data, "message", "content", 0, "isError") is True


def totals(stats: list[SessionStats]) -> SessionStats:
    """One row adding up several sessions."""
    total = SessionStats("(total)", None)
    for s in stats:
        if s.error is not None:
            continue
        for name in ("events", "turns", "steps", "calls", "auxiliary_calls", "retries", "surface_now",
                     "appended", "forgotten"):
            setattr(total, name, getattr(total, name) + getattr(s, name))
        for group in ("approvals", "compactions", "tokens"):
            for key, value in getattr(s, group).items():
                getattr(total, group)[key] = getattr(total, group).get(key, 0) + value
        for name, entry in s.tools.items():
            t = total.tools.setdefault(name, {"calls": 0, "errors": 0})
            t["calls"] += entry["calls"]
            t["errors"] += entry["errors"]
    total.tools = dict(sorted(total.tools.items()))
    return total
