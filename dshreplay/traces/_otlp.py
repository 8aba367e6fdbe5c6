"""`otel`: a session's spans (`analyses.spans`) as OpenTelemetry spans under the GenAI semantic
conventions (names: `conventions`), written as OTLP/JSON (`request_json`: one
`ExportTraceServiceRequest` per trace) or handed to the SDK's exporter (`push`).

Deterministic: trace and span ids are derived from the session id and the spans' seqs
(SHA-256, truncated), times are the log's (a log without times: one millisecond per seq from
its creation time, or from the epoch, said in `dshreplay.time_axis`), so the same log gives
the same bytes. A trace per session (the session span its root, turns `invoke_agent` spans
under it), or per turn (`per_turn`: each turn its own trace, linked to the session's root;
what lies outside every turn stays in the session's trace). A fork or subagent's root links to
its parent session's root, whose ids the parent's id alone determines.

Mapping: a turn is `invoke_agent dsh`; a step an internal span; a model call `chat {model}`
(client) with its usage, finish, time to first chunk, `error.type` and an ERROR status when it
failed, and the retries that followed it as events; an auxiliary call (a compaction summary,
a session title, a web search) `chat {model}` with `dshreplay.call.kind`; a started tool call
`execute_tool {tool}` with its outcome, its approval and hooks as child spans; a compaction an
internal span with its summary call as a child and each replacement as an event (range,
shadowed seqs); failures, tool calls asked for but never started, and every other event of
the log (named by its type, without its data) are events of the span they belong to. Message
text, arguments and results only with `content` (see `content`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from dshreplay import __version__
from dshreplay._jsvalues import as_text, is_time, json_bytes
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
from dshreplay.analyses.trackers.calls import finish_kind
from dshreplay.traces._conventions import ATTR, OPERATION, PROVIDER, SCOPE, SPAN_KIND, STATUS_ERROR, USAGE

__all__ = ["OtelSpan", "OtelTrace", "otel_traces", "request_json", "trace_id_of", "span_id_of"]

Attributes = dict[str, Any]  # name -> str | bool | int | float | list of one of them
# the facts of a span or instant that are text the log quotes (a hook's stderr, a provider's error message,
# an approval's reason, a retry's failure): shown only with content, through its redaction
FREE_TEXT = frozenset({"message", "reason", "failure"})


@dataclass
class OtelSpan:
    trace_id: bytes  # 16 bytes
    span_id: bytes  # 8 bytes
    parent_id: bytes | None
    name: str
    kind: int  # SPAN_KIND's number
    start_ns: int
    end_ns: int
    attributes: Attributes
    events: list[tuple[str, int, Attributes]] = field(default_factory=list)  # (name, time ns, attributes)
    links: list[tuple[bytes, bytes, Attributes]] = field(default_factory=list)  # (trace id, span id, attributes)
    error: str | None = None  # the status message of a span that failed (None: status unset)


@dataclass
class OtelTrace:
    """The spans of one trace, with the resource (the session) they come from."""

    resource: Attributes
    spans: list[OtelSpan]


def _digest(*parts: object) -> bytes:
    text = "\0".join(p if type(p) is str else json_bytes(p).decode() for p in parts)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def trace_id_of(session_id: object, turn_seq: int | None = None) -> bytes:
    """The trace id of a session (or of its turn starting at `turn_seq`, with a trace per turn)."""
    return _digest("dshreplay trace", session_id, "" if turn_seq is None else str(turn_seq))[:16]


def span_id_of(session_id: object, key: str) -> bytes:
    return _digest("dshreplay span", session_id, key)[:8]


def _value(value: Any) -> Any:
    """A log value as an attribute value: a string, bool, int or float as it is; anything else as JSON text."""
    t = type(value)
    if t is str or t is bool or t is int or (t is float and value == value):
        return value
    return json_bytes(value).decode()


def _put(attributes: Attributes, name: str, value: Any) -> None:
    if value is not None:
        attributes[ATTR.get(name, name)] = _value(value)


class _Clock:
    """Span times in ns: the log's, or one millisecond per seq for a log without times."""

    def __init__(self, timeline: SessionTimeline) -> None:
        self.timed = timeline.timed
        created = timeline.header.get("createdAt")
        self.base: Any = created if is_time(created) and not self.timed else 0
        self.origin: Any = timeline.origin or 0

    def __call__(self, seq: int, time: float | None) -> int:
        ms: Any = (time if time is not None else self.origin) if self.timed else self.base + seq + 1
        return ms * 1_000_000 if type(ms) is int else int(round(ms * 1_000_000))


def otel_traces(timeline: SessionTimeline, content: Any = None, per_turn: bool = False) -> list[OtelTrace]:
    """The OTel spans of one session, grouped by trace. `content` (a `content.Content`, or None)
    gives the message text, arguments and results to attach."""
    session = timeline.session_id
    clock = _Clock(timeline)
    spans = {s.key: s for s in timeline.spans}
    turn_of: dict[str, str | None] = {}

    def turn_key(span: TimedSpan) -> str | None:
        if span.key not in turn_of:
            parent = spans.get(span.parent or "")
            turn_of[span.key] = span.key if span.kind == TURN else None if parent is None else turn_key(parent)
        return turn_of[span.key]

    def trace_of(span: TimedSpan) -> bytes:
        turn = turn_key(span) if per_turn else None
        return trace_id_of(session, None if turn is None else spans[turn].start_seq)

    root_id = span_id_of(session, "session")
    out: dict[bytes, list[OtelSpan]] = {}
    by_key: dict[str, OtelSpan] = {}
    for span in timeline.spans:
        start, end = clock(span.start_seq, span.start_time), clock(span.end_seq, span.end_time)
        parent = None if span.parent is None else span_id_of(session, span.parent)
        links: list[tuple[bytes, bytes, Attributes]] = []
        if per_turn and span.kind == TURN:
            parent = None
            links.append((trace_id_of(session), root_id, {"dshreplay.link": "session"}))
        if span.kind == SESSION and timeline.parent_session is not None:
            links.append((trace_id_of(timeline.parent_session), span_id_of(timeline.parent_session, "session"),
                          {"dshreplay.link": "parent session", ATTR["seed_length"]: timeline.seed_length or 0}))
        name, kind, attributes, error = _describe(span, timeline, content)
        if content is not None:
            content.attach(span, attributes)
        otel = OtelSpan(trace_of(span), span_id_of(session, span.key), parent, name, kind, start, max(start, end),
                        attributes, links=links, error=error)
        by_key[span.key] = otel
        out.setdefault(otel.trace_id, []).append(otel)
    for moment in timeline.moments:
        target = by_key.get(moment.span or "") or by_key.get("session")
        if target is None:
            continue
        details: Attributes = {}
        for key, value in _shown(moment.attributes, content).items():
            _put(details, f"dshreplay.{key}", value)
        _put(details, "dshreplay.seq", moment.seq)
        name = moment.name if moment.kind == "event" else f"dshreplay.{moment.kind}"  # (another event: its type)
        target.events.append((name, clock(moment.seq, moment.time), details))
    resource = _resource(timeline)
    return [OtelTrace(resource, trace) for trace in out.values()]


def _resource(timeline: SessionTimeline) -> Attributes:
    header, stats = timeline.header, timeline.stats
    out: Attributes = {ATTR["service"]: "dsh"}
    _put(out, "session", as_text(timeline.session_id))
    _put(out, "conversation", as_text(timeline.session_id))
    _put(out, "agent_name", "dsh")
    _put(out, "parent_session", timeline.parent_session)
    _put(out, "seed_length", timeline.seed_length)
    _put(out, "origin", header.get("origin"))
    _put(out, "depth", header.get("delegationDepth"))
    _put(out, "axis", "time" if timeline.timed else "seq")
    _put(out, "answered_up_to", stats.answered_up_to)
    error = stats.error  # (its code and seq: its message may quote the log)
    _put(out, "fold_error", None if error is None else f"{getattr(error, 'code', None) or error.kind} at seq "
         f"{error.seq}")
    for name, value in (("turns", stats.turns), ("steps", stats.steps), ("calls", stats.calls),
                        ("auxiliary_calls", stats.auxiliary_calls), ("retries", stats.retries),
                        ("tool_calls", sum(t["calls"] for t in stats.tools.values()))):
        out[f"dshreplay.stats.{name}"] = value
    for token, count in stats.tokens.items():
        out[f"dshreplay.stats.tokens.{token}"] = count
    return out


def _shown(facts: dict[str, Any], content: Any) -> dict[str, Any]:
    """`facts` without their free text (FREE_TEXT), or with it redacted when content is asked for."""
    if content is None:
        return {k: v for k, v in facts.items() if k not in FREE_TEXT}
    return {k: content.redact(v) if k in FREE_TEXT else v for k, v in facts.items()}


def _describe(span: TimedSpan, timeline: SessionTimeline, content: Any) -> tuple[str, int, Attributes, str | None]:
    """(name, span kind, attributes, error message) of one span."""
    a = span.attributes
    attributes: Attributes = {}
    _put(attributes, "kind", span.kind)
    _put(attributes, "start_seq", span.start_seq)
    _put(attributes, "end_seq", span.end_seq)
    operation = OPERATION.get(span.kind)
    _put(attributes, "operation", operation)
    kind, error = SPAN_KIND["internal"], None
    if span.kind == SESSION:
        _put(attributes, "session", as_text(timeline.session_id))
        _put(attributes, "conversation", as_text(timeline.session_id))
        return f"session {as_text(timeline.session_id)}", kind, attributes, None
    _put(attributes, "conversation", as_text(timeline.session_id))
    _put(attributes, "turn", a.get("turn"))
    _put(attributes, "step", a.get("step"))
    if span.kind == TURN:
        _put(attributes, "agent_name", "dsh")
        _put(attributes, "turn_ending", a["ending"])
        ending = a["ending"]
        if ending.startswith("error"):
            error = ending
            _put(attributes, "error_type", ending.partition(" ")[2] or "error")
        return "invoke_agent dsh", kind, attributes, error
    if span.kind == STEP:
        return span.name, kind, attributes, None
    if span.kind in (CALL, AUXILIARY):
        return _call(span, attributes)
    if span.kind == TOOL:
        _put(attributes, "tool_name", a["tool"])
        _put(attributes, "tool_call_id", a["callId"])
        _put(attributes, "tool_type", "function")
        _put(attributes, "tool_outcome", a["outcome"])
        if a["outcome"] in ("error", "outcome unknown", "not started"):
            code = a.get("errorCode")
            error = f"{a['outcome']}" + ("" if code is None else f" {as_text(code)}")
            _put(attributes, "error_type", as_text(code) if code is not None else a["outcome"])
        return f"execute_tool {as_text(a['tool'])}", kind, attributes, error
    if span.kind == COMPACTION:
        _put(attributes, "compaction_id", a["compactionId"])
        _put(attributes, "compaction_status", a["status"])
        if a["status"] == "failed":
            error = "compaction failed"
            _put(attributes, "error_type", "compaction failed")
        return "compaction", kind, attributes, error
    for key, value in _shown(a, content).items():  # approvals and hooks: their facts, as logged
        _put(attributes, f"dshreplay.{span.kind}.{key}", value)
    if span.kind == APPROVAL:
        return f"approval {as_text(a['tool'])}", kind, attributes, None
    assert span.kind == HOOK
    return f"hook {as_text(a['point'])}", kind, attributes, None


def _call(span: TimedSpan, attributes: Attributes) -> tuple[str, int, Attributes, str | None]:
    a = span.attributes
    error = None
    _put(attributes, "provider", PROVIDER)
    _put(attributes, "configured_provider", a.get("provider"))
    _put(attributes, "request_model", a.get("model"))
    if span.kind == CALL:
        _put(attributes, "call", a["call"])
        _put(attributes, "retry", a["retry"])
        _put(attributes, "message_count", a["messageCount"])
        outcome = a["outcome"]
        if outcome is not None:
            attributes[ATTR["finish_reasons"]] = [as_text(outcome)]
        latency = a.get("timeToFirstChunkMs")
        if latency is not None:
            attributes[ATTR["time_to_first_chunk"]] = latency / 1000.0
        if a["failed"]:
            code = a.get("errorCode")
            error = f"{as_text(finish_kind(outcome))}" + ("" if code is None else f" {as_text(code)}")
            _put(attributes, "error_type", as_text(code) if code is not None else "error")
    else:
        _put(attributes, "call_kind", a["kind"])
    usage = a.get("usage")
    if type(usage) is dict:
        for key, name in USAGE.items():
            value = usage.get(key)
            if type(value) in (int, float):
                attributes[name] = value
    return f"chat {as_text(a.get('model'))}", SPAN_KIND["client"], attributes, error


# -- OTLP/JSON --------------------------------------------------------------------------------

def _any_value(value: Any) -> dict[str, Any]:
    t = type(value)
    if t is bool:
        return {"boolValue": value}
    if t is int:
        return {"intValue": str(value)}
    if t is float:
        return {"doubleValue": value}
    if t is list:
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    return {"stringValue": value}


def _attributes(attributes: Attributes) -> list[dict[str, Any]]:
    return [{"key": k, "value": _any_value(v)} for k, v in attributes.items()]


def request_json(trace: OtelTrace) -> dict[str, Any]:
    """One trace as an OTLP/JSON `ExportTraceServiceRequest` (ids in hex, as OTLP/JSON writes them)."""
    spans = []
    for s in trace.spans:
        span: dict[str, Any] = {"traceId": s.trace_id.hex(), "spanId": s.span_id.hex()}
        if s.parent_id is not None:
            span["parentSpanId"] = s.parent_id.hex()
        span.update({"name": s.name, "kind": s.kind, "startTimeUnixNano": str(s.start_ns),
                     "endTimeUnixNano": str(s.end_ns), "attributes": _attributes(s.attributes)})
        if s.events:
            span["events"] = [{"timeUnixNano": str(t), "name": n, "attributes": _attributes(a)} for n, t, a in s.events]
        if s.links:
            span["links"] = [{"traceId": t.hex(), "spanId": i.hex(), "attributes": _attributes(a)}
                             for t, i, a in s.links]
        if s.error is not None:
            span["status"] = {"code": STATUS_ERROR, "message": s.error}
        spans.append(span)
    return {"resourceSpans": [{"resource": {"attributes": _attributes(trace.resource)},
                               "scopeSpans": [{"scope": {"name": SCOPE, "version": __version__}, "spans": spans}]}]}
