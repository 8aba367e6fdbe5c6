"""Turn log text into safe, short strings for people.

Log text is attacker-controlled: control characters and terminal escape
sequences are removed before anything reaches a terminal.
"""

from __future__ import annotations

import re

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


def message_text(message, reasoning: bool = True) -> str:
    """The readable text of a model message: text blocks, tool calls, tool results
    (and reasoning blocks, unless `reasoning` is False)."""
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
        parts.append(_block_text(block))
    return "\n".join(p for p in parts if p)


MAX_NESTED_RESULTS = 20  # tool results inside tool results shown; deeper ones as [...]


def _block_text(block, depth: int = 0) -> str:
    if type(block) is not dict:
        return block if type(block) is str else ""
    kind = block.get("type")
    if kind == "text" and type(block.get("text")) is str:
        return block["text"]
    if kind == "reasoning" and type(block.get("text")) is str:
        return f"[reasoning] {block['text']}"
    if kind == "tool-call":
        args = block.get("arguments")
        return f"[call {block.get('name')}] {args if type(args) is str else _json(args)}"
    if kind == "tool-result":
        inner = block.get("content")
        if type(inner) is list:
            text = "\n".join(_block_text(b, depth + 1) for b in inner) if depth < MAX_NESTED_RESULTS else "[...]"
        elif type(inner) is str:
            text = inner
        else:
            text = _json(inner)
        flag = " error" if block.get("isError") is True else ""
        return f"[result{flag}] {text}"
    if kind == "image":
        return "[image]"
    return f"[{kind}]" if type(kind) is str else ""


def json_size(value) -> int:
    return len(_json(value))


def _json(value) -> str:
    try:
        return json_bytes(value).decode()
    except TypeError:
        return repr(value)


_last_second = (None, "")  # the whole second utc_time last wrote, and its text up to the "."


def utc_time(ms) -> str | None:
    """Epoch milliseconds as an ISO 8601 UTC time (None for 0 or a non-number)."""
    global _last_second
    second, text = _last_second  # (one tuple: threads never see half of an update)
    if type(ms) is int and ms and ms // 1000 == second:  # events of one second: only the ms differ
        return f"{text}.{ms % 1000:03d}Z"
    text = _utc_time(ms)
    if text is not None and type(ms) is int:
        _last_second = (ms // 1000, text[:-5])
    return text


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
