"""The shipped JSON Schemas: well-formed, complete, and the placeholder rule."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from dshreplay.schemas import SchemaSet, count_placeholders, event_schema_name, schema_dir

KNOWN_TYPES = """agent-preset/selected agent/inbox/spliced approval/asked approval/decided approval/policy
assistant/chunk assistant/message command/done command/run compaction/end compaction/prune
compaction/start compaction/summary feedback/record goal/change hook/invoked hook/result llm/retry
llm/retry-started permission/preset plan/mode request/context request/header sandbox/mode
schedule/change session/end-seed session/title session/title-llm-request step/end step/start
subagent/descriptor team/member team/message/delivered team/message/queued team/task todo/write
tool-workflow/agent-end tool-workflow/agent-start tool-workflow/run-end tool-workflow/run-start
tool/call tool/code-dispatch tool/code-dispatch-start tool/result turn/end turn/start user/message
web/deepseek-search-llm-request""".split()


@pytest.fixture(scope="module")
def schemas() -> SchemaSet:
    return SchemaSet()


def test_every_schema_is_valid_draft_2020_12(schemas):
    assert len(schemas.documents) == 48 + 6
    for name, doc in schemas.documents.items():
        Draft202012Validator.check_schema(doc)
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema", name
        assert doc["$id"] == "https://dshreplay.invalid/schemas/" + name


def test_there_is_a_payload_schema_for_each_of_the_48_event_types(schemas):
    assert len(KNOWN_TYPES) == 48
    assert schemas.event_types == frozenset(KNOWN_TYPES)
    for kind in KNOWN_TYPES:
        assert event_schema_name(kind) in schemas.documents


def test_schemas_ship_inside_the_package():
    assert (schema_dir() / "record.schema.json").is_file()


def test_every_reference_resolves(schemas):
    # compiling each schema with the fast validator resolves every $ref
    for name in schemas.documents:
        schemas.fast(name)


def test_errors_carry_a_pointer_and_say_what_was_expected(schemas):
    [error] = schemas.errors("events/turn__start.schema.json", {"turn": "1"})
    assert error.pointer == "/turn"
    assert "'1' is not of type 'integer'" in error.message


def test_placeholders_satisfy_any_schema_only_in_snapshot_mode(schemas):
    header = {"header": {"config": {"provider": "p", "model": "m"}, "system": "{{system}}",
                         "tools": "{{tools}}"}, "reason": "initial"}
    name = "events/request__header.schema.json"
    assert schemas.errors(name, header, snapshot=True) == []
    [error] = schemas.errors(name, header)
    assert error.pointer == "/header/tools"


def test_a_placeholder_does_not_excuse_other_errors(schemas):
    data = {"turn": "{{turn}}", "step": "x"}
    errors = schemas.errors("events/step__start.schema.json", data, snapshot=True)
    assert [e.pointer for e in errors] == ["/step"]


def test_placeholders_are_counted_anywhere_in_a_value():
    assert count_placeholders({"a": ["{{x}}", {"b": "{{y.z}}"}], "c": "{{ not one }}", "d": "{x}"}) == 2
