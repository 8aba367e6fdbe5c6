"""`otel --content`: the message text, arguments and results a trace carries when asked,
always read through an export's redaction (`output.redact`: the default rules and the
user's), never a hash of what it masked.

A model call's `gen_ai.input.messages` are its request's messages, exactly as `request --call
N` gives them (the model's view right before its first chunk), from the redacted log;
`gen_ai.output.messages` the assistant message that call produced (the first one of its turn
and step after its first chunk); a tool call's arguments are its tool/call's, its result the
message of its tool/result.
"""

from __future__ import annotations

from typing import Any

from dshreplay._jsvalues import as_key, json_bytes
from dshreplay.analyses.spans import CALL, TOOL, SessionTimeline, TimedSpan
from dshreplay.core.driver import states_at
from dshreplay.errors import DeriveError
from dshreplay.io.reader import LogSource
from dshreplay.traces._conventions import ATTR

__all__ = ["Content", "content_of"]


class Content:
    """What `--content` adds to each span, by its key."""

    def __init__(self, redactor: Any) -> None:
        self.by_key: dict[str, dict[str, str]] = {}
        self.redactor = redactor  # (an output.redact.Redactor)

    def redact(self, value: Any) -> Any:
        """A fact of the log that is text (a hook's stderr, an error message) through the redaction."""
        return self.redactor.value(value)

    def attach(self, span: TimedSpan, attributes: dict[str, Any]) -> None:
        attributes.update(self.by_key.get(span.key, {}))


def _json(value: Any) -> str:
    return json_bytes(value).decode()


def content_of(timeline: SessionTimeline, redacted: LogSource, redactor: Any) -> Content:
    """The content of `timeline`'s spans, read from `redacted` (the log through `redactor`)."""
    content = Content(redactor)
    calls = timeline.of_kind(CALL)
    tools = timeline.of_kind(TOOL)
    before = sorted({s.start_seq - 1 for s in calls})
    views = states_at(redacted, before) if before else {}
    wanted = {s.attributes.get("resultSeq") for s in tools} | {s.start_seq for s in tools}
    records: dict[int, Any] = {}
    answers: dict[tuple[object, object], list[tuple[int, Any]]] = {}
    last = timeline.stats.answered_up_to
    with redacted.reader() as reader:
        for event in reader.events():
            if last is not None and event.seq > last:
                break
            data = event.record.get("data")
            data = data if type(data) is dict else {}
            if event.seq in wanted:
                records[event.seq] = data
            if event.type == "assistant/message":
                answers.setdefault((as_key(data.get("turn")), as_key(data.get("step"))), []).append(
                    (event.seq, data.get("message")))
    for span in calls:
        out: dict[str, str] = {}
        try:
            out[ATTR["input_messages"]] = _json(views[span.start_seq - 1].messages())
        except DeriveError as error:  # (a node dsh could not project: `request --call N` fails there too)
            out[ATTR["input_messages_error"]] = str(error)
        key = (as_key(span.attributes.get("turn")), as_key(span.attributes.get("step")))
        answer = next((m for seq, m in answers.get(key, ()) if seq > span.start_seq), None)
        if answer is not None:
            out[ATTR["output_messages"]] = _json([answer])
        content.by_key[span.key] = out
    for span in tools:
        out = {}
        call = records.get(span.start_seq, {})
        if "arguments" in call:
            arguments = call["arguments"]
            out[ATTR["tool_arguments"]] = arguments if type(arguments) is str else _json(arguments)
        result = records.get(span.attributes.get("resultSeq"))  # type: ignore[arg-type]
        if result is not None:
            out[ATTR["tool_result"]] = _json(result.get("message"))
        content.by_key[span.key] = out
    return content
