"""The event-type registry: the one list of types, checked against schemas/ and FORMAT.md, and what one
event of each type says on one line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from dshreplay.analyses._eventtypes import BY_NAME, EVENT_TYPES, event_schema_name, event_text
from dshreplay.analyses._schemas import SchemaSet, schema_dir
from dshreplay.analyses.trackers.toolcalls import ToolCall
from dshreplay.core.surface import SURFACE_TYPES


@dataclass
class Event:
    type: Any
    record: dict[str, Any]
    seq: int = 0


def said(kind: str, data: Any, call: ToolCall | None = None) -> str:
    return event_text(Event(kind, {"type": kind, "data": data}), call)


def test_each_type_is_listed_once_in_order():
    names = [t.name for t in EVENT_TYPES]
    assert names == sorted(names) and len(set(names)) == len(names)
    assert BY_NAME == {t.name: t for t in EVENT_TYPES}


def test_the_registry_is_the_fold_s_table_of_names_and_each_renderer_names_one_of_them():
    from dshreplay.analyses._eventtypes import _RENDER
    from dshreplay.core._eventnames import EVENT_TYPE_TEXTS, KNOWN_TYPES
    assert [(t.name, t.text) for t in EVENT_TYPES] == list(EVENT_TYPE_TEXTS.items())
    assert set(_RENDER) <= KNOWN_TYPES and len(KNOWN_TYPES) == 48


def test_the_surface_types_are_the_three_format_md_names():
    assert [t.name for t in EVENT_TYPES if t.surface] == ["assistant/message", "tool/result", "user/message"]
    assert {t.name for t in EVENT_TYPES if t.surface} == SURFACE_TYPES


def test_every_type_has_its_schema_file_and_every_event_schema_file_a_type():
    files = {p.relative_to(schema_dir()).as_posix() for p in (schema_dir() / "events").glob("*.schema.json")}
    assert files == {t.schema for t in EVENT_TYPES}
    assert event_schema_name("tool-workflow/agent-end") == "events/tool-workflow__agent-end.schema.json"
    assert SchemaSet().event_types == frozenset(BY_NAME)


@pytest.mark.parametrize("kind", EVENT_TYPES, ids=lambda t: t.name)
def test_a_schema_says_its_type_surface_and_text_as_the_registry_does(kind):
    doc = orjson.loads((schema_dir() / kind.schema).read_bytes())
    assert doc["title"] == f"{kind.name} payload ({'surface' if kind.surface else 'log-only'})"
    assert doc["description"].startswith(kind.text)
    assert "\n" not in kind.text and kind.text.endswith(".")


def test_the_format_spec_lists_the_registry_s_types():
    from conftest import ROOT
    spec = ROOT.parent / "shared" / "spec" / "FORMAT.md"
    if not spec.is_file():
        pytest.skip("the format spec is not here")
    vocabulary = spec.read_text().split("## 5. Event vocabulary", 1)[1].split("Only `user/message`", 1)[0]
    head, listed = vocabulary.split(":", 1)
    assert head.strip() == f"{len(EVENT_TYPES)} known types (dsh 0.1.1)"
    assert [n.strip(" \n.") for n in listed.split(",")] == [t.name for t in EVENT_TYPES]


CALL = ToolCall("call_1", tool="bash")

SAID = [
    ("user/message", {"role": "user", "content": [{"type": "text", "text": "hi"},
                                                  {"type": "reasoning", "text": "hidden"}]}, None, "hi"),
    ("assistant/message", {"message": {"role": "assistant", "content": [
        {"type": "tool-call", "id": "call_1", "name": "bash", "arguments": "{\"cmd\":\"ls\"}"}]}}, None,
     "[call bash call_1] {\"cmd\":\"ls\"}"),
    ("tool/result", {"message": {"role": "user", "content": [
        {"type": "tool-result", "toolCallId": "call_1", "content": "a.txt", "isError": True}]}}, CALL,
     "[result bash call_1 error] a.txt"),
    ("assistant/chunk", {"chunk": {"type": "text-delta", "text": "Hel"}}, None, "Hel"),
    ("assistant/chunk", {"chunk": {"type": "tool-call-delta", "name": "bash", "argumentsDelta": "{\"c"}}, None,
     "bash {\"c"),
    ("assistant/chunk", {"chunk": {"type": "finish", "reason": {
        "kind": "error", "failure": {"code": "RATE_LIMITED", "status": 429, "message": "slow down"}}}}, None,
     "finish error RATE_LIMITED (HTTP 429): slow down"),
    ("assistant/chunk", {"chunk": {"type": "usage", "usage": {"inputTokens": 10, "outputTokens": 2}}}, None,
     "usage in 10 out 2"),
    ("assistant/chunk", {"chunk": "not an object"}, None, ""),
    ("tool/call", {"name": "bash", "arguments": "{}"}, None, "bash {}"),
    ("approval/asked", {"toolName": "bash", "callId": "call_1", "reason": "writes"}, None, "bash call_1: writes"),
    ("approval/decided", {"outcome": "allow"}, CALL, "bash call_1: decided allow"),
    ("approval/decided", {"outcome": "deny"}, None, "decided deny"),
    ("hook/invoked", {"point": "PreToolUse", "handlerId": "h1", "matcher": "bash"}, CALL,
     "PreToolUse: h1 invoked for bash (bash call_1)"),
    ("hook/result", {"point": "PreToolUse", "decision": "block", "exitCode": 2, "stderrSummary": "no"}, None,
     "PreToolUse: block exit 2: no"),
    ("hook/result", {"point": "Stop", "decision": "allow", "exitCode": 0, "stderrSummary": ""}, None,
     "Stop: allow"),
    ("llm/retry", {"retry": 1, "maxRetries": 3, "mode": "normal", "delayMs": 500,
                   "failure": {"code": "OVERLOADED", "message": "busy"}}, None,
     "retry 1/3 (normal) in 500 ms after OVERLOADED: busy"),
    ("session/title", {"title": "Fix it", "source": {"kind": "llm"}}, None, "title by llm: Fix it"),
    ("command/run", {"name": "compact", "args": "now"}, None, "/compact now"),
    ("command/done", {"kind": "ok", "text": ""}, None, "ok"),
    ("todo/write", {"todos": [{"status": "done", "content": "a"}, "b"]}, None, "[done] a; b"),
    ("todo/write", {"todos": []}, None, "(empty)"),
    ("todo/write", {"todos": "x"}, None, '{"todos":"x"}'),
    ("compaction/summary", {"shadowedRange": {"start": 1, "end": 4}, "summary": [{"type": "text", "text": "s"}]},
     None, "shadows 1..4: s"),
    ("compaction/prune", {"shadowedRange": {"start": 2, "end": 3}}, None, "shadows 2..3"),
    ("compaction/end", {"compactionId": "c1", "error": "failed"}, None, 'c1 error "failed"'),
    ("compaction/start", {"compactionId": "c1"}, None, "c1"),
    ("turn/end", {"turn": 2, "reason": {"kind": "error", "error": {"code": "X", "message": "m"}}}, None,
     "turn 2 error X: m"),
    ("turn/start", {"turn": 1}, None, "turn 1"),
    ("step/end", {"turn": 1, "step": 3}, None, "turn 1 step 3"),
    ("plan/mode", {"enabled": True}, None, '{"enabled":true}'),
    ("session/end-seed", {}, None, ""),
    ("no/such-type", {"a": 1}, None, '{"a":1}'),
]


@pytest.mark.parametrize(("kind", "data", "call", "text"), SAID, ids=[f"{s[0]}-{i}" for i, s in enumerate(SAID)])
def test_what_one_event_says(kind, data, call, text):
    assert said(kind, data, call) == text


def test_an_event_whose_payload_is_no_object_is_read_as_an_empty_one():
    assert said("tool/call", ["x"]) == "null null"
    assert event_text(Event(None, {"data": {"a": 1}})) == '{"a":1}'


def test_every_type_without_its_own_line_says_its_payload():
    for kind in EVENT_TYPES:
        if kind.render is None:
            assert said(kind.name, {"k": [1, "é"]}) == '{"k":[1,"é"]}', kind.name
