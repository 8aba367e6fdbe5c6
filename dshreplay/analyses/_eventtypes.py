"""The event types dsh writes, known in one place: one entry per type.

An entry gives a type's name and what one event of it records (one line), from the
table `core.eventnames` (low enough for the fold, which refuses a type it does not name),
whether it joins the model's surface (`surface`: the fold's own rule,
`core.surface.SURFACE_TYPES`, FORMAT.md §5), the schema file its payload is checked
against (`schema`), and how one event of it is said on one line (`render`, here; none:
its payload as JSON). The schema loader (`schemas.SchemaSet.event_types`), the one-line
text of every table and preview (`event_text`), the tests and the generated list
`docs/reference/event-types.md` read this registry; a test checks it against
`schemas/events/` both ways.

To add a type: its name and text in `core.eventnames`, its renderer here if it has one, and
its schema file `schemas/events/<name with / as __>.schema.json` (whose description begins
with the entry's text).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from dshreplay._jsvalues import as_text, shown
from dshreplay.analyses._render import content_text, label, labelled_id, message_text
from dshreplay.core._eventnames import EVENT_TYPE_TEXTS
from dshreplay.core.surface import SURFACE_TYPES

if TYPE_CHECKING:
    from dshreplay.analyses.trackers.toolcalls import ToolCall
    from dshreplay.analyses.trackers.turns import Stored

__all__ = ["EventType", "EVENT_TYPES", "BY_NAME", "event_schema_name", "event_text", "event_types_doc"]

Data = dict[str, Any]  # an event's payload (`data`), an object ({} when it is none)
Renderer = Callable[[Data, "ToolCall | None"], str]


def event_schema_name(event_type: str) -> str:
    """The schema file (under `schemas/`) of a type's payload: its name with each `/` written as `__`."""
    return "events/" + event_type.replace("/", "__") + ".schema.json"


@dataclass(frozen=True)
class EventType:
    """One event type dsh writes."""

    name: str
    text: str  # what one event of this type records, in one line (its schema's description begins with it)
    render: Renderer | None = None  # what one event says on one line; None: its payload as JSON

    @property
    def surface(self) -> bool:
        """Whether events of this type join the model's surface (the other types are log-only)."""
        return self.name in SURFACE_TYPES

    @property
    def schema(self) -> str:
        return event_schema_name(self.name)


# -- what one event says (event_text), per type --------------------------------

def _user_message(data: Data, call: ToolCall | None) -> str:
    """Its text: text blocks, tool calls and results labelled by call id (reasoning left out)."""
    return message_text(data, reasoning=False, tools=_tool_of(call))


def _model_message(data: Data, call: ToolCall | None) -> str:
    """The text of the message it carries, as a user message's (a result named by its tool and call id)."""
    return message_text(data.get("message"), reasoning=False, tools=_tool_of(call))


def _tool_of(call: ToolCall | None) -> dict[str, object] | None:
    return {call.call_id: call.tool} if call is not None and type(call.call_id) is str else None


def _chunk(data: Data, call: ToolCall | None) -> str:
    """A delta's text (a tool call's name and argument delta); `finish` with its reason and the
    provider's failure; `usage in N out M`."""
    chunk: Any = data.get("chunk") if type(data.get("chunk")) is dict else {}
    ctype = chunk.get("type")
    if ctype in ("text-delta", "reasoning-delta"):
        return as_text(chunk.get("text", ""))
    if ctype == "tool-call-delta":
        name = f"{as_text(chunk.get('name'))} " if chunk.get("name") is not None else ""
        return f"{name}{as_text(chunk.get('argumentsDelta', ''))}"
    if ctype == "finish":
        from dshreplay.analyses.trackers.calls import finish_text  # (here: `fold` renders without the trackers)
        reason = chunk.get("reason")
        return f"finish {finish_text(reason)}{_failure(reason.get('failure') if type(reason) is dict else None)}"
    if ctype == "usage":
        usage: Any = chunk.get("usage") if type(chunk.get("usage")) is dict else {}
        return f"usage in {as_text(usage.get('inputTokens'))} out {as_text(usage.get('outputTokens'))}"
    return as_text(ctype or "")


def _tool_call(data: Data, call: ToolCall | None) -> str:
    """The tool's name and its arguments."""
    return f"{as_text(data.get('name'))} {as_text(data.get('arguments'))}"


def _approval_asked(data: Data, call: ToolCall | None) -> str:
    """The tool, the call id and the question's reason."""
    return f"{as_text(data.get('toolName'))} {as_text(data.get('callId'))}: {as_text(data.get('reason'))}"


def _approval_decided(data: Data, call: ToolCall | None) -> str:
    """The call it decides (tool and call id) and `decided` with its outcome."""
    who = f"{label(call.tool)}{labelled_id(call.call_id)}: " if call is not None else ""
    return f"{who}decided {as_text(data.get('outcome'))}"


def _hook_invoked(data: Data, call: ToolCall | None) -> str:
    """The hook point, the handler, `invoked`, its matcher and the call it ran for."""
    what = f" ({label(call.tool)}{labelled_id(call.call_id)})" if call is not None else ""
    matcher = f" for {as_text(data['matcher'])}" if data.get("matcher") not in (None, "") else ""
    return f"{as_text(data.get('point'))}: {as_text(data.get('handlerId'))} invoked{matcher}{what}"


def _hook_result(data: Data, call: ToolCall | None) -> str:
    """The hook point, its decision, the call it ran for, a non-zero exit code and its stderr summary."""
    what = f" ({label(call.tool)}{labelled_id(call.call_id)})" if call is not None else ""
    code = f" exit {as_text(data['exitCode'])}" if data.get("exitCode") not in (None, 0) else ""
    said = f": {as_text(data['stderrSummary'])}" if data.get("stderrSummary") not in (None, "") else ""
    return f"{as_text(data.get('point'))}: {as_text(data.get('decision'))}{what}{code}{said}"


def _retry(data: Data, call: ToolCall | None) -> str:
    """`retry N/MAX (mode) in D ms` and the failure it follows (code, HTTP status, message)."""
    limit = f"/{as_text(data['maxRetries'])}" if "maxRetries" in data else ""
    failure = data.get("failure")
    after = f" after{_failure(failure, code=True)}" if type(failure) is dict else ""
    return (f"retry {as_text(data.get('retry'))}{limit} ({as_text(data.get('mode'))}) in "
            f"{as_text(data.get('delayMs'))} ms{after}")


def _title(data: Data, call: ToolCall | None) -> str:
    """Who set the title, and the title."""
    source: Any = data.get("source") if type(data.get("source")) is dict else {}
    return f"title by {as_text(source.get('kind'))}: {as_text(data.get('title'))}"


def _command_run(data: Data, call: ToolCall | None) -> str:
    """The slash command and its arguments."""
    args = f" {as_text(data['args'])}" if data.get("args") not in (None, "") else ""
    return f"/{as_text(data.get('name'))}{args}"


def _command_done(data: Data, call: ToolCall | None) -> str:
    """How the command ended, and what it said."""
    text = f": {as_text(data['text'])}" if data.get("text") not in (None, "") else ""
    return f"{as_text(data.get('kind'))}{text}"


def _todos(data: Data, call: ToolCall | None) -> str:
    """Each todo as `[status] content`, separated by `; ` (`(empty)` for none)."""
    if type(data.get("todos")) is not list:
        return _payload(data)
    return "; ".join(f"[{as_text(t.get('status'))}] {as_text(t.get('content'))}" if type(t) is dict
                     else as_text(t) for t in data["todos"]) or "(empty)"


def _replacement(data: Data, call: ToolCall | None) -> str:
    """The range it shadows (`shadows S..E`) and its summary's text."""
    span: Any = data.get("shadowedRange") if type(data.get("shadowedRange")) is dict else {}
    summary = content_text(data.get("summary"))  # (content blocks, as a message's)
    return f"shadows {as_text(span.get('start'))}..{as_text(span.get('end'))}: {summary}".rstrip(": ")


def _bracket(data: Data, call: ToolCall | None) -> str:
    """The compaction id, and the error a failed attempt ended with."""
    error: object = f" error {shown(data['error'], None)}" if "error" in data else ""
    return f"{as_text(data.get('compactionId'))}{error}"


def _turn_end(data: Data, call: ToolCall | None) -> str:
    """The turn, how it ended and the provider's failure that ended it."""
    from dshreplay.analyses.trackers.turns import turn_ending
    reason = data.get("reason")
    error = reason.get("error") if type(reason) is dict and reason.get("kind") == "error" else None
    return f"turn {as_text(data.get('turn'))} {turn_ending(reason)}{_failure(error)}"


def _position(data: Data, call: ToolCall | None) -> str:
    """The turn (and step) it opens or closes."""
    step = f" step {as_text(data.get('step'))}" if "step" in data else ""
    return f"turn {as_text(data.get('turn'))}{step}"


def _payload(data: Data) -> str:
    return shown(data, None) if data else ""


def _failure(failure: Any, *, code: bool = False) -> str:
    """A provider's failure (LlmFailure) after the words of what it ended: its code (when
    those words do not name it), HTTP status and message ("" for none)."""
    if type(failure) is not dict:
        return ""
    head = [as_text(failure["code"])] if code and "code" in failure else []
    if "status" in failure:
        head.append(f"(HTTP {as_text(failure['status'])})")
    message = as_text(failure.get("message", ""))
    return "".join(f" {h}" for h in head) + (f": {message}" if message else "")


# -- the registry: the names and texts of `core.eventnames`, each with how it is said ----------

_RENDER: dict[str, Renderer] = {  # type -> how one event of it is said (the others: their payload as JSON)
    "approval/asked": _approval_asked,
    "approval/decided": _approval_decided,
    "assistant/chunk": _chunk,
    "assistant/message": _model_message,
    "command/done": _command_done,
    "command/run": _command_run,
    "compaction/end": _bracket,
    "compaction/prune": _replacement,
    "compaction/start": _bracket,
    "compaction/summary": _replacement,
    "hook/invoked": _hook_invoked,
    "hook/result": _hook_result,
    "llm/retry": _retry,
    "session/title": _title,
    "step/end": _position,
    "step/start": _position,
    "todo/write": _todos,
    "tool/call": _tool_call,
    "tool/result": _model_message,
    "turn/end": _turn_end,
    "turn/start": _position,
    "user/message": _user_message,
}
EVENT_TYPES: tuple[EventType, ...] = tuple(EventType(name, text, _RENDER.get(name))
                                           for name, text in EVENT_TYPE_TEXTS.items())

BY_NAME: Mapping[str, EventType] = {t.name: t for t in EVENT_TYPES}


def event_text(event: Stored, call: ToolCall | None = None) -> str:
    """What one event says, on one line (its type's `render`): a message's text, a tool call's name and
    arguments, an approval's question or decision, a hook's invocation and decision (exit code and stderr
    summary), a compaction's range, a chunk's delta, finish (with the provider's error) or usage, a turn's
    ending (with its error), a retry and the failure it follows, a title, a slash command and what it said,
    the todo list; the payload as JSON for any other event (an unknown type's too). `call`: the tool call
    (toolcalls.ToolCall) the event belongs to, named in a result, a decision or a hook's run."""
    data: Any = event.record.get("data")
    data = data if type(data) is dict else {}
    kind = BY_NAME.get(event.type) if type(event.type) is str else None
    render = kind.render if kind is not None else None
    return render(data, call) if render is not None else _payload(data)


def event_types_doc() -> str:
    """The text of docs/reference/event-types.md: every event type, from this registry."""
    surface = sum(t.surface for t in EVENT_TYPES)
    lines = ["# Event types", "",
             "Generated from `dshreplay/analyses/_eventtypes.py` by `python scripts/make_docs.py`; do not edit.", "",
             f"The {len(EVENT_TYPES)} event types dsh 0.1.1 writes. {surface} join the model's surface (FORMAT.md "
             "§5); the others are log-only and carry neither `surfaceOp` nor `sourceEventSeqs`. An event of a type "
             "not listed here is unknown: a reader may skip it only when it says `\"ignorable\": true`. Each "
             "type's payload (`data`) is checked against its schema file under `schemas/`. *Shown as* is how "
             "one event reads on one line (the `events` table, the bundle's previews).", "",
             "| type | surface | schema | what one event records | shown as |", "|---|---|---|---|---|"]
    for t in EVENT_TYPES:
        shown_as = " ".join((t.render.__doc__ or "").split()) if t.render is not None else "Its payload as JSON."
        lines.append(f"| `{t.name}` | {'yes' if t.surface else 'no'} | `schemas/{t.schema}` | {t.text} | {shown_as} |")
    return "\n".join(lines) + "\n"
