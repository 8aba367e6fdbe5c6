"""Turn log text into safe, short strings for people.

Log text is attacker-controlled: every character that could act on a terminal or
hide (controls, escapes, format characters) is shown as an escape before anything
reaches a terminal, a table, a CSV cell or a page (`jsvalues.visible`, the one rule).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from dshreplay.jsvalues import as_text, shown, visible

if TYPE_CHECKING:
    from dshreplay.analyses.toolcalls import ToolCall
    from dshreplay.analyses.turns import Stored


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """A count and its noun in the number the count asks for: `1 message`, `0 messages`."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


def clean(text: str) -> str:
    """Running text for people: its line breaks and tabs kept, every other character that
    is not printable escaped (`jsvalues.visible`)."""
    return visible(text, lines=True)


def one_line(text: str, width: int) -> str:
    """Text folded to one line (each run of whitespace, line breaks included, one space),
    cleaned and cut to `width` characters.

    Only a prefix is folded and cleaned, so a preview costs the column, not the
    text (a message can be 100 MB): 1.5 × `width` characters first, four times
    more while what they fold to does not fill the column, 64 × `width` at most.
    Folding only drops and joins whitespace and cleaning escapes character by character,
    so what a prefix gives begins what the whole text gives: the preview is the one the
    whole text gives. Only a text that opens with more than 64 × `width` characters of
    whitespace is previewed from that much of it (then cut with "…").
    """
    if width <= 0:
        return ""
    size, limit = width + width // 2 + 16, 64 * width + 4096  # (any first size gives the same preview)
    while True:
        head = text if len(text) <= size else text[:size]
        flat = visible(" ".join(head.split()))  # (str.split's whitespace is the \\s of a str pattern)
        if head is text or len(flat) > width or size >= limit:
            break
        size = min(4 * size, limit)
    return flat if head is text and len(flat) <= width else flat[:width - 1] + "…"


TOOL_RESULT_WIRE_ROLE = "user"  # the role a tool result's message carries in the request dsh sends


def role_of(event_type: Any, message: Any) -> str:
    """The role a person is shown for a model message: its own, but `tool` for a tool result,
    which dsh sends with the wire role `user` (TOOL_RESULT_WIRE_ROLE). A tool result is the message
    of a `tool/result` event, or, where the event is not at hand (a request's messages), a message
    whose source is a tool (`"source": {"kind": "tool"}`, as dsh writes it). One rule for every
    table and text: fold, request, diff --text, transcript, the index, the bundle."""
    if type(message) is dict and type(message.get("role")) is str:
        role = clean(message["role"])
        source = message.get("source")
        tool = event_type == "tool/result" or type(source) is dict and source.get("kind") == "tool"
        return "tool" if tool and role == TOOL_RESULT_WIRE_ROLE else role
    return {"user/message": "user", "assistant/message": "assistant", "tool/result": "tool"}.get(
        event_type, "?")


def message_text(message: Any, reasoning: bool = True, tools: Mapping[str, object] | None = None) -> str:
    """The readable text of a model message: text blocks, tool calls, tool results
    (and reasoning blocks, unless `reasoning` is False). A tool call is labelled
    with its tool and call id (`[call bash call_1]`), a tool result with its call
    id and, when `tools` (call id -> tool name) knows it, its tool
    (`[result bash call_1]`), so parallel calls and results pair by id."""
    if type(message) is not dict:
        return "" if message is None else shown(message, None)
    return content_text(message.get("content"), reasoning, tools)


def content_text(content: Any, reasoning: bool = True, tools: Mapping[str, object] | None = None) -> str:
    """The readable text of content blocks (a message's content, a compaction summary):
    text blocks, tool calls, tool results, reasoning (unless `reasoning` is False); a
    string as it is. `tools`: as for message_text."""
    if type(content) is str:
        return content
    if type(content) is not list:
        return ""
    parts: list[str] = []
    for block in content:
        if not reasoning and _is_reasoning(block):
            continue
        parts.append(_block_text(block, 0, tools))
    return "\n".join(p for p in parts if p)


def without_reasoning(message: Any) -> Any:
    """A model message without its reasoning blocks (itself when it has none): what a
    transcript shows unless reasoning is asked for, in every format."""
    content = message.get("content") if type(message) is dict else None
    if type(content) is not list or not any(_is_reasoning(b) for b in content):
        return message
    return {**message, "content": [b for b in content if not _is_reasoning(b)]}


def _is_reasoning(block: Any) -> bool:
    return type(block) is dict and block.get("type") == "reasoning"


MAX_NESTED_RESULTS = 20  # tool results inside tool results shown; deeper ones as [...]


def _block_text(block: Any, depth: int = 0, tools: Mapping[str, object] | None = None) -> str:
    if type(block) is not dict:
        return block if type(block) is str else ""
    kind = block.get("type")
    if kind == "text" and type(block.get("text")) is str:
        text: str = block["text"]
        return text
    if kind == "reasoning" and type(block.get("text")) is str:
        return f"[reasoning] {block['text']}"
    if kind == "tool-call":
        args = block.get("arguments")
        return f"[call {_label(block.get('name'))}{_id(block.get('id'))}] {as_text(args)}"
    if kind == "tool-result":
        inner = block.get("content")
        if type(inner) is list:
            text = "\n".join(_block_text(b, depth + 1) for b in inner) if depth < MAX_NESTED_RESULTS else "[...]"
        elif type(inner) is str:
            text = inner
        else:
            text = as_text(inner)
        call_id = block.get("toolCallId")
        tool = tools.get(call_id) if tools and type(call_id) is str else None
        tool = f" {_label(tool)}" if tool is not None else ""
        flag = " error" if block.get("isError") is True else ""
        return f"[result{tool}{_id(call_id)}{flag}] {text}"
    if kind == "image":
        return "[image]"
    return f"[{kind}]" if type(kind) is str else ""


def _label(value: object) -> str:
    """A tool name or call id inside a [call ...] or [result ...] label, on one line: each run of
    whitespace one space, none at the ends (str.split's whitespace is the \\s of a str pattern)."""
    return " ".join(as_text(value).split())


def _id(value: object) -> str:
    return f" {_label(value)}" if value is not None else ""


def event_text(event: Stored, call: ToolCall | None = None) -> str:
    """What one event says, on one line: a message's text, a tool call's name and arguments, an
    approval's question or decision, a hook's invocation and decision (exit code and stderr summary), a
    compaction's range, a chunk's delta, finish (with the provider's error) or usage, a turn's
    ending (with its error), a retry and the failure it follows, a title, a slash command and
    what it said, the todo list; the payload as JSON for any other event. `call`: the tool
    call (tools.ToolCall) the event belongs to, named in a result, a decision or a hook's run."""
    record = event.record
    data: Any = record.get("data")
    data = data if type(data) is dict else {}
    kind = event.type
    if kind in ("user/message", "assistant/message", "tool/result"):
        message = data if kind == "user/message" else data.get("message")
        tools = {call.call_id: call.tool} if call is not None and type(call.call_id) is str else None
        return message_text(message, reasoning=False, tools=tools)
    if kind == "assistant/chunk":
        chunk = data.get("chunk") if type(data.get("chunk")) is dict else {}
        ctype = chunk.get("type")
        if ctype in ("text-delta", "reasoning-delta"):
            return as_text(chunk.get("text", ""))
        if ctype == "tool-call-delta":
            name = f"{as_text(chunk.get('name'))} " if chunk.get("name") is not None else ""
            return f"{name}{as_text(chunk.get('argumentsDelta', ''))}"
        if ctype == "finish":
            from dshreplay.analyses.calls import finish_text  # (here: `fold` renders without the trackers)
            reason = chunk.get("reason")
            return f"finish {finish_text(reason)}{_failure(reason.get('failure') if type(reason) is dict else None)}"
        if ctype == "usage":
            usage: Any = chunk.get("usage") if type(chunk.get("usage")) is dict else {}
            return f"usage in {as_text(usage.get('inputTokens'))} out {as_text(usage.get('outputTokens'))}"
        return as_text(ctype or "")
    if kind == "tool/call":
        args = data.get("arguments")
        return f"{as_text(data.get('name'))} {as_text(args)}"
    if kind == "approval/asked":
        return f"{as_text(data.get('toolName'))} {as_text(data.get('callId'))}: {as_text(data.get('reason'))}"
    if kind == "approval/decided":
        who = f"{_label(call.tool)}{_id(call.call_id)}: " if call is not None else ""
        return f"{who}decided {as_text(data.get('outcome'))}"
    if kind == "hook/invoked":
        what = f" ({_label(call.tool)}{_id(call.call_id)})" if call is not None else ""
        matcher = f" for {as_text(data['matcher'])}" if data.get("matcher") not in (None, "") else ""
        return f"{as_text(data.get('point'))}: {as_text(data.get('handlerId'))} invoked{matcher}{what}"
    if kind == "hook/result":
        what = f" ({_label(call.tool)}{_id(call.call_id)})" if call is not None else ""
        code = f" exit {as_text(data['exitCode'])}" if data.get("exitCode") not in (None, 0) else ""
        said = f": {as_text(data['stderrSummary'])}" if data.get("stderrSummary") not in (None, "") else ""
        return f"{as_text(data.get('point'))}: {as_text(data.get('decision'))}{what}{code}{said}"
    if kind == "llm/retry":
        limit = f"/{as_text(data['maxRetries'])}" if "maxRetries" in data else ""
        failure = data.get("failure")
        after = f" after{_failure(failure, code=True)}" if type(failure) is dict else ""
        return (f"retry {as_text(data.get('retry'))}{limit} ({as_text(data.get('mode'))}) in "
                f"{as_text(data.get('delayMs'))} ms{after}")
    if kind == "session/title":
        source = data.get("source") if type(data.get("source")) is dict else {}
        return f"title by {as_text(source.get('kind'))}: {as_text(data.get('title'))}"
    if kind == "command/run":
        args = f" {as_text(data['args'])}" if data.get("args") not in (None, "") else ""
        return f"/{as_text(data.get('name'))}{args}"
    if kind == "command/done":
        text = f": {as_text(data['text'])}" if data.get("text") not in (None, "") else ""
        return f"{as_text(data.get('kind'))}{text}"
    if kind == "todo/write" and type(data.get("todos")) is list:
        return "; ".join(f"[{as_text(t.get('status'))}] {as_text(t.get('content'))}" if type(t) is dict
                         else as_text(t) for t in data["todos"]) or "(empty)"
    if kind in ("compaction/summary", "compaction/prune"):
        span = data.get("shadowedRange") if type(data.get("shadowedRange")) is dict else {}
        summary = content_text(data.get("summary"))  # (content blocks, as a message's)
        return f"shadows {as_text(span.get('start'))}..{as_text(span.get('end'))}: {summary}".rstrip(": ")
    if kind in ("compaction/start", "compaction/end"):
        error: object = f" error {shown(data['error'], None)}" if "error" in data else ""
        return f"{as_text(data.get('compactionId'))}{error}"
    if kind == "turn/end":
        from dshreplay.analyses.turns import turn_ending
        reason = data.get("reason")
        error = reason.get("error") if type(reason) is dict and reason.get("kind") == "error" else None
        return f"turn {as_text(data.get('turn'))} {turn_ending(reason)}{_failure(error)}"
    if kind in ("turn/start", "step/start", "step/end"):
        step = f" step {as_text(data.get('step'))}" if "step" in data else ""
        return f"turn {as_text(data.get('turn'))}{step}"
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


def json_size(value: Any) -> int:
    return len(shown(value, None))
