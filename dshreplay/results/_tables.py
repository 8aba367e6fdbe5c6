"""The facts of a tool call, an approval, a turn and a model call, each defined once by name,
and the tables that show them: the SQL index's (`sql.rows`) and the bundle's CSV files
(`tools.csv`, `approvals.csv`), each a list of fact names.

A fact has one name everywhere: `approval_asked_at` is the SQL column and `approvalAskedAt` the
CSV header (`camel`). Its kind says how each table writes it: log text is redacted in the index
(the bundle's pass already reads the redacted log), a time is a TIMESTAMP in the index and ISO
8601 UTC text in a CSV. Adding a column to `tools.csv` and the index is one fact here (its
value in `tool_call_facts`, its kind and doc in `TOOL_CALL`) and its name in each table's list;
the index's tables then change shape, so `sql.rows.INDEX_FORMAT` goes up (a test pins the two
together).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dshreplay._jsvalues import elapsed_ms, utc_time
from dshreplay.analyses.trackers.calls import failed

if TYPE_CHECKING:
    from dshreplay.analyses.trackers.calls import Call
    from dshreplay.analyses.trackers.logindex import LogIndex
    from dshreplay.analyses.trackers.toolcalls import Approval, ToolCall
    from dshreplay.analyses.trackers.turns import Span

__all__ = ["Fact", "SQL_TYPES", "TOOL_CALL", "APPROVAL", "TURN", "MODEL_CALL", "TOOLS_CSV", "APPROVALS_CSV",
           "SQL_COLUMNS", "camel", "csv_header", "csv_row", "tool_call_facts", "approval_facts", "turn_facts",
           "model_call_facts", "spilled_bytes"]


@dataclass(frozen=True)
class Fact:
    """A fact of a thing: its name (snake_case; `camel(name)` in a CSV header), its kind and what it is."""

    name: str
    kind: str  # a key of SQL_TYPES: how a table writes it
    doc: str


# Each kind's DuckDB type. "text": log text (a string, or other JSON as its text), redacted in the index;
# "json": a log value as JSON text, redacted in the index; "word": dshreplay's own words; "int": a log
# value that should be an integer (NULL in the index when it is not a safe one); "seq": a seq or count
# of ours; "time": an event time (epoch ms), "ms": a duration in milliseconds; "bool".
SQL_TYPES = {"text": "VARCHAR", "json": "VARCHAR", "word": "VARCHAR", "int": "BIGINT", "seq": "BIGINT",
             "time": "TIMESTAMP", "ms": "DOUBLE", "bool": "BOOLEAN"}

INHERITED = "In a fork's seed (seq < the session's seed_length): the parent's, repeated here, not this session's " \
            "own (leave it out of counts and costs)."


def _facts(*spec: tuple[str, str, str]) -> dict[str, Fact]:
    return {name: Fact(name, kind, doc) for name, kind, doc in spec}


TOOL_CALL = _facts(
    ("call_id", "text", "The call id (seq and line: its first mention: the model's ask, else its tool/call)."),
    ("tool", "text", "The tool's name."),
    ("turn", "int", "The turn it belongs to."),
    ("step", "int", "The step it belongs to."),
    ("arguments", "text", "Its arguments as logged (JSON text, redacted): "
                          "`json_extract_string(arguments, '$.command')`."),
    ("outcome", "word", "`completed`, `error`, `not started`, `outcome unknown` (it may have had side "
                        "effects) or `unread` (past where the fold fails)."),
    ("result_preview", "text", "The start of its result's text, on one line (the bundle's tools.csv)."),
    ("is_error", "bool", "Its result says isError or carries an error."),
    ("error_code", "text", "Its result's error code."),
    ("asked_seq", "seq", "The assistant/message that asked for it."),
    ("call_seq", "seq", "Its tool/call (NULL: never started)."),
    ("result_seq", "seq", "Its tool/result."),
    ("started_at", "time", "tool/call's time (UTC)."),
    ("finished_at", "time", "tool/result's time (UTC)."),
    ("duration_ms", "ms", "finished_at - started_at in milliseconds (NULL: its result is logged "
                          "before its tool/call, or either is missing)."),
    ("approval_id", "text", "The approval asked for it (NULL: none was asked)."),
    ("approval_asked_seq", "seq", "Its approval/asked."),
    ("approval_asked_at", "time", "approval/asked's time (UTC)."),
    ("approval_outcome", "text", "The decision: `allowed-once`, `rejected`, `cancelled`, `unavailable`; "
                                 "NULL: none asked, or never decided."),
    ("approval_decided_seq", "seq", "Its approval/decided."),
    ("approval_decided_at", "time", "approval/decided's time (UTC)."),
    ("approval_waited_ms", "ms", "approval_decided_at - approval_asked_at in milliseconds."),
    ("hooks", "word", "The hook runs for it, `point:decision` each, space-separated."),
    ("hook_count", "seq", "How many hook runs belong (or may belong) to it."),
    ("spilled_bytes", "seq", "Bytes of its result dsh kept out of the model's view (NULL: none)."),
    ("first_seq", "seq", "Its first mention: the least of asked_seq, call_seq, result_seq, approval_asked_seq."),
    ("inherited", "bool", INHERITED),
)

APPROVAL = _facts(
    ("id", "text", "The approval id (seq and line: its approval/asked, else its approval/decided)."),
    ("call_id", "text", "The tool call it was asked for."),
    ("tool", "text", "The tool it was asked for."),
    ("reason", "text", "Why it was asked, as logged (redacted)."),
    ("outcome", "text", "The decision (NULL: never decided)."),
    ("flag", "word", "`` (asked and decided), `no decision`, or `decision without ask`."),
    ("asked_seq", "seq", "Its approval/asked."),
    ("asked_at", "time", "approval/asked's time (UTC)."),
    ("decided_seq", "seq", "Its approval/decided."),
    ("decided_at", "time", "approval/decided's time (UTC)."),
    ("arguments", "text", "The arguments of the call it was asked for (JSON text, redacted)."),
    ("first_seq", "seq", "Its approval/asked, else its approval/decided."),
    ("inherited", "bool", INHERITED),
)

TURN = _facts(
    ("turn", "int", "The turn number (seq and line: its turn/start)."),
    ("start_seq", "seq", "Its turn/start."),
    ("end_seq", "seq", "Its turn/end's seq (NULL: the log ends inside it)."),
    ("end_line", "seq", "Its turn/end's line."),
    ("started_at", "time", "turn/start's time (UTC)."),
    ("ended_at", "time", "turn/end's time (UTC)."),
    ("duration_ms", "ms", "ended_at - started_at in milliseconds."),
    ("ending", "text", "How it ended: `completed`, `error CODE`, `aborted by WHO`, `interrupted (closed "
                       "by dsh)` (dsh closed it on loading the log after a crash), `interrupted` (the log "
                       "ends inside it), `not ended` (the next turn starts without its turn/end), "
                       "`unknown` (the fold fails inside it)."),
    ("steps", "seq", "Steps started in it."),
)

MODEL_CALL = _facts(
    ("call", "seq", "The main-loop call number from 1 (as `request LOG --call N`); NULL for an auxiliary "
                    "call. seq and line: its first chunk (an auxiliary call's own event)."),
    ("kind", "word", "`main`, or the auxiliary kind: `compaction-summary`, `session-title`, `web-search`."),
    ("turn", "int", "The turn it belongs to."),
    ("step", "int", "The step it belongs to."),
    ("provider", "text", "The provider of the request header in force (an auxiliary call's own)."),
    ("model", "text", "The model of the request header in force (an auxiliary call's own)."),
    ("outcome", "text", "How it ended: the finish kind (`stop`, `tool-calls`, `error`, ...), `cancelled`, "
                        "or NULL while the log holds no end of its stream."),
    ("error_code", "text", "The error code its finish carries (`CONTEXT_WINDOW_EXCEEDED`, ...)."),
    ("failed", "bool", "Its finish says it failed."),
    ("retry", "bool", "It was issued again in its step after a call that failed."),
    ("finish", "json", "The finish reason as logged (JSON text)."),
    ("usage", "json", "Its usage as logged (JSON text)."),
    ("input_tokens", "int", "usage.inputTokens."),
    ("output_tokens", "int", "usage.outputTokens."),
    ("cache_read_tokens", "int", "usage.cacheReadTokens."),
    ("cache_write_tokens", "int", "usage.cacheWriteTokens."),
    ("reasoning_tokens", "int", "usage.reasoningTokens."),
    ("first_chunk_seq", "seq", "Its first chunk's seq."),
    ("last_chunk_seq", "seq", "Its last chunk's seq."),
    ("header_seq", "seq", "The request/header in force when it was sent."),
    ("message_count", "seq", "The model messages of its request."),
    ("chunks", "seq", "Its chunk events."),
    ("first_chunk_at", "time", "Its first chunk's time (UTC)."),
    ("last_chunk_at", "time", "Its last chunk's time (UTC)."),
    ("latency_ms", "ms", "Time to first chunk: from the event right before its first chunk (when timed, "
                         "and not a chunk) to that chunk."),
    ("duration_ms", "ms", "From its first chunk to its last."),
    ("inherited", "bool", INHERITED),
)

# The SQL index's tables of these facts (after the key columns log, session_id, seq, line), in order.
SQL_COLUMNS: dict[str, tuple[Fact, ...]] = {
    "turns": tuple(TURN[n] for n in ("turn", "end_seq", "end_line", "started_at", "ended_at", "duration_ms",
                                     "ending", "steps")),
    "model_calls": tuple(MODEL_CALL[n] for n in (
        "call", "kind", "turn", "step", "provider", "model", "outcome", "error_code", "failed", "retry", "finish",
        "usage", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
        "last_chunk_seq", "header_seq", "message_count", "chunks", "first_chunk_at", "last_chunk_at", "latency_ms",
        "duration_ms", "inherited")),
    "tool_calls": tuple(TOOL_CALL[n] for n in (
        "call_id", "tool", "turn", "step", "arguments", "outcome", "is_error", "error_code", "asked_seq", "call_seq",
        "result_seq", "started_at", "finished_at", "duration_ms", "approval_id", "approval_asked_seq",
        "approval_asked_at", "approval_outcome", "approval_decided_seq", "approval_decided_at", "hooks",
        "hook_count", "spilled_bytes", "inherited")),
    "approvals": tuple(APPROVAL[n] for n in ("id", "call_id", "tool", "reason", "outcome", "flag", "asked_seq",
                                             "asked_at", "decided_seq", "decided_at", "arguments", "inherited")),
}

# The bundle's CSV files of these facts, in column order.
TOOLS_CSV = tuple(TOOL_CALL[n] for n in (
    "call_id", "turn", "step", "tool", "outcome", "arguments", "result_preview", "is_error", "approval_asked_at",
    "approval_outcome", "approval_decided_at", "hooks", "started_at", "finished_at", "duration_ms", "asked_seq",
    "call_seq", "result_seq", "spilled_bytes"))
APPROVALS_CSV = tuple(APPROVAL[n] for n in ("asked_seq", "decided_seq", "id", "tool", "call_id", "outcome", "reason",
                                            "flag", "asked_at", "decided_at", "arguments"))


def camel(name: str) -> str:
    """A fact's name in a CSV header or JSON key: `approval_asked_at` -> `approvalAskedAt`."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def csv_header(columns: tuple[Fact, ...]) -> list[str]:
    return [camel(f.name) for f in columns]


def csv_row(columns: tuple[Fact, ...], facts: dict[str, Any]) -> list[Any]:
    """A CSV row of `facts` (values as the bundle's redacted log holds them): times as ISO 8601 UTC text."""
    return [utc_time(facts[f.name]) if f.kind == "time" else facts[f.name] for f in columns]


def spilled_bytes(index: LogIndex, seq: object) -> int | None:
    """The bytes dsh kept out of the model's view of the tool result at `seq` (None: none)."""
    spills = index.spills_of(seq) if type(seq) is int else ()
    return sum(s.omitted for s in spills) if spills else None


def tool_call_facts(call: ToolCall, spilled: int | None = None, preview: str | None = None,
                    inherited: bool = False) -> dict[str, Any]:
    """A tool call's facts by name (TOOL_CALL): `spilled` (its result's spilled bytes, `spilled_bytes`),
    `preview` (its result's text in short) and `inherited` come from the pass around it."""
    a = call.approval
    first = min(s for s in (call.asked_seq, call.call_seq, call.result_seq,
                            None if a is None else a.asked_seq, 1 << 62) if s is not None)
    return {"call_id": call.call_id, "tool": call.tool, "turn": call.turn, "step": call.step,
            "arguments": call.arguments, "outcome": call.outcome, "result_preview": preview,
            "is_error": call.is_error, "error_code": call.error_code, "asked_seq": call.asked_seq,
            "call_seq": call.call_seq, "result_seq": call.result_seq, "started_at": call.started_at,
            "finished_at": call.finished_at, "duration_ms": call.duration_ms,
            "approval_id": None if a is None else a.id, "approval_asked_seq": None if a is None else a.asked_seq,
            "approval_asked_at": None if a is None else a.asked_time,
            "approval_outcome": None if a is None else a.outcome,
            "approval_decided_seq": None if a is None else a.decided_seq,
            "approval_decided_at": None if a is None else a.decided_time,
            "approval_waited_ms": None if a is None else elapsed_ms(a.decided_time, a.asked_time),
            "hooks": " ".join(h.label() for h in call.hooks) if call.hooks else None, "hook_count": len(call.hooks),
            "spilled_bytes": spilled, "first_seq": first, "inherited": inherited}


def approval_facts(a: Approval, inherited: bool = False) -> dict[str, Any]:
    """An approval's facts by name (APPROVAL)."""
    return {"id": a.id, "call_id": a.call_id, "tool": a.tool, "reason": a.reason, "outcome": a.outcome,
            "flag": a.flag, "asked_seq": a.asked_seq, "asked_at": a.asked_time, "decided_seq": a.decided_seq,
            "decided_at": a.decided_time, "arguments": a.arguments,
            "first_seq": a.asked_seq if a.asked_seq is not None else a.decided_seq, "inherited": inherited}


def turn_facts(span: Span, ending: object, steps: int, end_line: int | None = None) -> dict[str, Any]:
    """A turn's facts by name (TURN): `ending` (stats' words for how it ended), its `steps` and `end_line`
    come from the pass around it."""
    ended = span.end is not None
    return {"turn": span.turn, "start_seq": span.start, "end_seq": span.end, "end_line": end_line,
            "started_at": span.start_time, "ended_at": span.end_time if ended else None,
            "duration_ms": span.duration_ms, "ending": ending, "steps": steps}


def model_call_facts(call: Call, retry: bool = False, inherited: bool = False) -> dict[str, Any]:
    """A model call's facts by name (MODEL_CALL): `retry` and `inherited` come from the pass around it."""
    usage = call.usage if type(call.usage) is dict else {}
    main = call.kind == "main"
    return {"call": call.call, "kind": call.kind, "turn": call.turn, "step": call.step, "provider": call.provider,
            "model": call.model, "outcome": call.outcome, "error_code": call.error_code,
            "failed": main and failed(call.finish), "retry": retry, "finish": call.finish, "usage": call.usage,
            "input_tokens": usage.get("inputTokens"), "output_tokens": usage.get("outputTokens"),
            "cache_read_tokens": usage.get("cacheReadTokens"), "cache_write_tokens": usage.get("cacheWriteTokens"),
            "reasoning_tokens": usage.get("reasoningTokens"), "first_chunk_seq": call.first_chunk_seq,
            "last_chunk_seq": call.last_chunk_seq, "header_seq": call.header_seq,
            "message_count": call.message_count, "chunks": call.chunks if main else None,
            "first_chunk_at": call.first_chunk_time, "last_chunk_at": call.last_chunk_time,
            "latency_ms": call.latency_ms, "duration_ms": call.duration_ms, "inherited": inherited}
