"""Turn log text into safe, short strings for people.

Log text is attacker-controlled: every character that could act on a terminal or
hide (controls, escapes, format characters) is shown as an escape before anything
reaches a terminal, a table, a CSV cell or a page (`_jsvalues.visible`, the one rule).
"""

from __future__ import annotations

from typing import Any, Mapping

from dshreplay._jsvalues import as_text, shown, visible


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """A count and its noun in the number the count asks for: `1 message`, `0 messages`."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


def clean(text: str) -> str:
    """Running text for people: its line breaks and tabs kept, every other character that
    is not printable escaped (`_jsvalues.visible`)."""
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
        return f"[call {label(block.get('name'))}{labelled_id(block.get('id'))}] {as_text(args)}"
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
        tool = f" {label(tool)}" if tool is not None else ""
        flag = " error" if block.get("isError") is True else ""
        return f"[result{tool}{labelled_id(call_id)}{flag}] {text}"
    if kind == "image":
        return "[image]"
    return f"[{kind}]" if type(kind) is str else ""


def label(value: object) -> str:
    """A tool name or call id inside a [call ...] or [result ...] label, on one line: each run of
    whitespace one space, none at the ends (str.split's whitespace is the \\s of a str pattern)."""
    return " ".join(as_text(value).split())


def labelled_id(value: object) -> str:
    return f" {label(value)}" if value is not None else ""


def json_size(value: Any) -> int:
    return len(shown(value, None))
