"""Turn log text into safe, short strings for people.

Log text is attacker-controlled: control characters and terminal escape
sequences are removed before anything reaches a terminal.
"""

from __future__ import annotations

import re
from functools import lru_cache

from dshreplay.analyses.calls import finish_text
from dshreplay.analyses.turns import turn_ending
from dshreplay.jsvalues import json_bytes

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_SPACE = re.compile(r"\s+")


def clean(text: str) -> str:
    """Strip ANSI escapes and control characters (newlines and tabs stay)."""
    if text.isprintable():  # the common case: nothing to strip
        return text
    return _CONTROL.sub("", _ANSI.sub("", text))


def one_line(text: str, width: int) -> str:
    """Clean text folded to one line and cut to `width` characters."""
    flat = _SPACE.sub(" ", clean(text)).strip()
    if width <= 0:
        return ""
    return flat if len(flat) <= width else flat[:max(width - 1, 0)] + "…"


def role_of(event_type: str, message) -> str:
    if type(message) is dict and type(message.get("role")) is str:
        role = clean(message["role"])
        if event_type == "tool/result" and role == "user":
            return "tool"
        return role
    return {"user/message": "user", "assistant/message": "assistant", "tool/result": "tool"}.get(
        event_type, "?")


def message_text(message, reasoning: bool = True, tools=None) -> str:
    """The readable text of a model message: text blocks, tool calls, tool results
    (and reasoning blocks, unless `reasoning` is False). A tool call is labelled
    with its tool and call id (`[call bash call_1]`), a tool result with its call
    id and, when `tools` (call id -> tool name) knows it, its tool
    (`[result bash call_1]`), so parallel calls and results pair by id."""
    if type(message) is not dict:
        return "" if message is None else _json(message)
    content = message.get("content")
    if type(content) is str:
        return content
    if type(content) is not list:
        return ""
    parts = []
    for block in content:
        if not reasoning and type(block) is dict and block.get("type") == "reasoning":
            continue
        parts.append(_block_text(block, 0, tools))
    return "\n".join(p for p in parts if p)


MAX_NESTED_RESULTS = 20  # tool results inside tool results shown; deeper ones as [...]


def _block_text(block, depth: int = 0, tools=None) -> str:
    if type(block) is not dict:
        return block if type(block) is str else ""
    kind = block.get("type")
    if kind == "text" and type(block.get("text")) is str:
        return block["text"]
    if kind == "reasoning" and type(block.get("text")) is str:
        return f"[reasoning] {block['text']}"
    if kind == "tool-call":
        args = block.get("arguments")
        return f"[call {_label(block.get('name'))}{_id(block.get('id'))}] {args if type(args) is str else _json(args)}"
    if kind == "tool-result":
        inner = block.get("content")
        if type(inner) is list:
            text = "\n".join(_block_text(b, depth + 1) for b in inner) if depth < MAX_NESTED_RESULTS else "[...]"
        elif type(inner) is str:
            text = inner
        else:
            text = _json(inner)
        call_id = block.get("toolCallId")
        tool = tools.get(call_id) if tools and type(call_id) is str else None
        tool = f" {_label(tool)}" if tool is not None else ""
        flag = " error" if block.get("isError") is True else ""
        return f"[result{tool}{_id(call_id)}{flag}] {text}"
    if kind == "image":
        return "[image]"
    return f"[{kind}]" if type(kind) is str else ""


def _label(value) -> str:
    """A tool name or call id inside a [call ...] or [result ...] label, on one line."""
    return _SPACE.sub(" ", value if type(value) is str else _json(value)).strip()


def _id(value) -> str:
    return f" {_label(value)}" if value is not None else ""


def event_text(event, call=None) -> str:
    """What one event says, on one line: a message's text, a tool call's name and arguments, an
    approval's question or decision, a hook's decision, a compaction's range, a chunk's delta,
    finish or usage, a turn's ending; the payload as JSON for any other event. `call`: the tool
    call (tools.ToolCall) the event belongs to, named in a result, a decision or a hook's outcome."""
    record = event.record
    data = record.get("data")
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
            return str(chunk.get("text", ""))
        if ctype == "tool-call-delta":
            name = f"{chunk.get('name')} " if chunk.get("name") is not None else ""
            return f"{name}{chunk.get('argumentsDelta', '')}"
        if ctype == "finish":
            return f"finish {finish_text(chunk.get('reason'))}"
        if ctype == "usage":
            usage = chunk.get("usage") if type(chunk.get("usage")) is dict else {}
            return f"usage in {usage.get('inputTokens')} out {usage.get('outputTokens')}"
        return str(ctype or "")
    if kind == "tool/call":
        args = data.get("arguments")
        return f"{data.get('name')} {args if type(args) is str else _json(args)}"
    if kind == "approval/asked":
        return f"{data.get('toolName')} {data.get('callId')}: {data.get('reason')}"
    if kind == "approval/decided":
        who = f"{_label(call.tool)}{_id(call.call_id)}: " if call is not None else ""
        return f"{who}decided {data.get('outcome')}"
    if kind == "hook/result":
        what = f" ({_label(call.tool)}{_id(call.call_id)})" if call is not None else ""
        return f"{data.get('point')}: {data.get('decision')}{what}"
    if kind in ("compaction/summary", "compaction/prune"):
        span = data.get("shadowedRange") if type(data.get("shadowedRange")) is dict else {}
        return f"shadows {span.get('start')}..{span.get('end')}: {data.get('summary', '')}".rstrip(": ")
    if kind in ("compaction/start", "compaction/end"):
        error = f" error {_json(data['error'])}" if "error" in data else ""
        return f"{data.get('compactionId')}{error}"
    if kind == "turn/end":
        return f"turn {data.get('turn')} {turn_ending(data.get('reason'))}"
    if kind in ("turn/start", "step/start", "step/end"):
        step = f" step {data.get('step')}" if "step" in data else ""
        return f"turn {data.get('turn')}{step}"
    return _json(data) if data else ""


def json_size(value) -> int:
    return len(_json(value))


def _json(value) -> str:
    try:
        return json_bytes(value).decode()
    except TypeError:
        return repr(value)


def utc_time(ms) -> str | None:
    """Epoch milliseconds as an ISO 8601 UTC time (None for 0 or a non-number)."""
    if type(ms) is int and ms > 0:  # the whole second is worked out once: events of one second share it
        second = _second_text(ms // 1000)
        if second is not None:
            return f"{second}.{ms % 1000:03d}Z"
    return _utc_time(ms)


@lru_cache(maxsize=4)
def _second_text(second: int) -> str | None:
    text = _utc_time(second * 1000)
    return None if text is None else text[:-5]


def _utc_time(ms) -> str | None:
    import datetime
    if type(ms) not in (int, float) or not ms:
        return None
    try:
        if type(ms) is int:  # exactly, whatever its size (ms / 1000 can round the last digit)
            moment = datetime.datetime.fromtimestamp(ms // 1000, tz=datetime.timezone.utc) \
                + datetime.timedelta(milliseconds=ms % 1000)
        else:
            moment = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
