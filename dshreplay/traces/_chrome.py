"""`timeline --format chrome`: a session's spans as Chrome Trace Event JSON (the JSON object
format: {"traceEvents": [...], "metadata": {...}}) that Perfetto and chrome://tracing open.

Tracks (one process, a thread each): "turns" holds turns, steps and model calls as complete
events (`X`, nested: a step in its turn, a call in its step); "compactions" the compactions
(`X`), their summary calls and replacements (instants); tool calls, approvals and hooks are
async spans (`b`/`e` pairs, category tool/approval/hook: parallel tool calls overlap, which
complete events may not); failures and retries are instants (`i`) on the turns track, with
their code; counter tracks (`C`) show the model's view (messages, bytes) after each change,
and each model call's tokens. Every other event of the log is an instant on the "log" track,
named by its type.

Times are microseconds from the session's start. A log without times is drawn on the seq
axis, one microsecond per seq (`metadata.axis` is "seq", else "time"). On either axis a
child is drawn inside its parent, and times never go back: a clock that stepped back in the
log is drawn as standing still (`ts` is the largest time so far).
"""

from __future__ import annotations

from typing import Any

from dshreplay._jsvalues import as_text
from dshreplay.analyses.spans import (
    APPROVAL,
    AUXILIARY,
    CALL,
    COMPACTION,
    HOOK,
    SESSION,
    STEP,
    TOOL,
    TURN,
    SessionTimeline,
    TimedSpan,
)

__all__ = ["chrome_trace", "timeline_rows", "TRACKS"]

PID = 1
TRACKS = {"turns": 1, "compactions": 2, "tools": 3, "log": 4}
NESTED = (TURN, STEP, CALL)  # complete events on the turns track
ASYNC = (TOOL, APPROVAL, HOOK)


class _Axis:
    """Microseconds from the start for a span's seqs (see the module: monotonic, seq for an untimed log)."""

    def __init__(self, timeline: SessionTimeline) -> None:
        self.timed = timeline.timed
        self.origin = timeline.origin or 0.0
        points: dict[int, float] = {}
        for span in timeline.spans:
            points[span.start_seq] = self._raw(span.start_seq, span.start_time)
            points[span.end_seq] = self._raw(span.end_seq, span.end_time)
        for moment in timeline.moments:
            points[moment.seq] = self._raw(moment.seq, moment.time)
        for point in timeline.view:
            points[point.seq] = self._raw(point.seq, point.time)
        self.at: dict[int, float] = {}
        highest = 0.0
        for seq in sorted(points):
            highest = max(highest, points[seq])
            self.at[seq] = highest

    def _raw(self, seq: int, time: float | None) -> float:
        if not self.timed:
            return float(seq)
        return max(0.0, ((time if time is not None else self.origin) - self.origin) * 1000.0)

    def __call__(self, seq: int) -> float:
        return self.at[seq]


def chrome_trace(timeline: SessionTimeline) -> dict[str, Any]:
    """The Chrome Trace Event JSON object of one session's spans."""
    axis = _Axis(timeline)
    events: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "pid": PID, "tid": 0,
         "args": {"name": f"dsh session {as_text(timeline.session_id)}"}}]
    events += [{"name": "thread_name", "ph": "M", "pid": PID, "tid": tid, "args": {"name": name}}
               for name, tid in TRACKS.items()]
    bounds: dict[str, tuple[float, float]] = {}
    nested = []
    for span in timeline.spans:
        if span.kind == SESSION:
            bounds[span.key] = (axis(span.start_seq), axis(span.end_seq))
        elif span.kind in NESTED or span.kind == COMPACTION:
            nested.append(span)
    for span in nested:  # (in the spans' order: a parent before its children)
        start, end = axis(span.start_seq), axis(span.end_seq)
        low, high = bounds.get(span.parent or "", (start, end)) if span.kind != COMPACTION else (start, end)
        start = min(max(start, low), high)
        end = max(start, min(end, high))
        bounds[span.key] = (start, end)
        track = TRACKS["compactions"] if span.kind == COMPACTION else TRACKS["turns"]
        events.append({"name": span.name, "cat": span.kind, "ph": "X", "pid": PID, "tid": track, "ts": start,
                       "dur": end - start, "args": _args(span)})
    for span in timeline.spans:
        if span.kind in ASYNC:
            start, end = axis(span.start_seq), axis(span.end_seq)
            common = {"name": span.name, "cat": span.kind, "pid": PID, "tid": TRACKS["tools"], "id": span.key}
            events.append({**common, "ph": "b", "ts": start, "args": _args(span)})
            events.append({**common, "ph": "e", "ts": end})
        elif span.kind == AUXILIARY:
            events.append({"name": span.name, "cat": span.kind, "ph": "i", "s": "t", "pid": PID,
                           "tid": TRACKS["compactions"], "ts": axis(span.start_seq), "args": _args(span)})
    for moment in timeline.moments:
        track = TRACKS["compactions"] if moment.kind == "replacement" else TRACKS["log"] if moment.kind == "event" \
            else TRACKS["turns"]
        events.append({"name": moment.name, "cat": moment.kind, "ph": "i", "s": "t", "pid": PID, "tid": track,
                       "ts": axis(moment.seq), "args": {"seq": moment.seq, **moment.attributes}})
    for point in timeline.view:
        ts = axis(point.seq)
        events.append({"name": "view messages", "ph": "C", "pid": PID, "ts": ts, "args": {"messages": point.messages}})
        events.append({"name": "view bytes", "ph": "C", "pid": PID, "ts": ts, "args": {"bytes": point.bytes}})
    for span in timeline.of_kind(CALL) + timeline.of_kind(AUXILIARY):
        tokens = _tokens(span.attributes.get("usage"))
        if tokens:
            events.append({"name": "tokens", "ph": "C", "pid": PID, "ts": axis(span.end_seq), "args": tokens})
    events[len(TRACKS) + 1:] = sorted(events[len(TRACKS) + 1:], key=_order)
    return {"traceEvents": events, "displayTimeUnit": "ms", "metadata": _metadata(timeline)}


def _order(event: dict[str, Any]) -> tuple[float, float]:
    """Time order; at one time, a complete event before the shorter ones it holds (the sort is
    stable: a parent before a child of the same length, an async span's begin before its end)."""
    return event["ts"], -event.get("dur", 0)


def _tokens(usage: Any) -> dict[str, Any]:
    from dshreplay.analyses.stats import TOKEN_FIELDS
    if type(usage) is not dict:
        return {}
    return {name: usage[key] for name, key in TOKEN_FIELDS if type(usage.get(key)) in (int, float)}


def _args(span: TimedSpan) -> dict[str, Any]:
    return {"startSeq": span.start_seq, "endSeq": span.end_seq,
            **{k: v for k, v in span.attributes.items() if v is not None}}


def _metadata(timeline: SessionTimeline) -> dict[str, Any]:
    stats = timeline.stats
    return {"sessionId": timeline.session_id, "path": timeline.path, "axis": "time" if timeline.timed else "seq",
            "unit": "microseconds from the session's start" if timeline.timed else "one microsecond per seq",
            "origin": timeline.origin, "parentSession": timeline.parent_session, "seedLength": timeline.seed_length,
            "answeredUpTo": stats.answered_up_to,
            "error": None if stats.error is None else stats.error.to_json()}


def timeline_rows(timeline: SessionTimeline) -> dict[str, Any]:
    """`timeline --format json`: the same spans as plain rows."""
    return {"metadata": _metadata(timeline), "spans": [s.to_json() for s in timeline.spans],
            "moments": [m.to_json() for m in timeline.moments],
            "view": [{"seq": p.seq, "time": p.time, "messages": p.messages, "bytes": p.bytes} for p in timeline.view]}
