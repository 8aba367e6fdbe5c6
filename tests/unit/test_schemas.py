"""The shipped JSON Schemas: well-formed, complete, and the placeholder rule."""

from __future__ import annotations

import re

import orjson
import pytest
from jsonschema import Draft202012Validator

from dshreplay.analyses._eventtypes import EVENT_TYPES
from dshreplay.analyses._schemas import ID_BASE, SchemaSet, _FastForm, count_placeholders, schema_dir


@pytest.fixture(scope="module")
def schemas() -> SchemaSet:
    return SchemaSet()


def test_every_schema_is_valid_draft_2020_12(schemas):
    assert {n for n in schemas.documents if not n.startswith("events/")} == {
        "defs.schema.json", "header.schema.json", "record.schema.json", "rows/reasoning-chunks.schema.json",
        "rows/text-chunks.schema.json", "rows/tool-call-chunks.schema.json"}
    for name, doc in schemas.documents.items():
        Draft202012Validator.check_schema(doc)
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema", name
        assert doc["$id"] == "https://dshreplay.invalid/schemas/" + name


def test_the_event_schemas_are_exactly_the_registry_s_types_both_ways(schemas):
    assert {n for n in schemas.documents if n.startswith("events/")} == {t.schema for t in EVENT_TYPES}
    assert schemas.event_types == {t.name for t in EVENT_TYPES}


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


def test_the_fast_forms_accept_exactly_what_the_schema_files_accept(schemas):
    from conftest import SAMPLES
    from schema_forms import disagreements
    lines = [line for path in sorted(SAMPLES.glob("*.jsonl")) for line in path.read_bytes().splitlines()[1:]]
    checked, differ = disagreements(schemas, lines)
    assert checked > 20_000  # every record of the sample logs, and its variants
    assert differ == []


def test_a_tagged_union_becomes_one_anyof_with_a_branch_for_other_tags():
    union = {"type": "object", "required": ["kind"], "properties": {"kind": {"type": "string"}},
             "allOf": [{"if": {"properties": {"kind": {"const": c}}, "required": ["kind"]},
                        "then": {"properties": {"n": {"type": t}}, "required": ["n"]}}
                       for c, t in (("a", "integer"), ("b", "string"))]}
    form = _form_of(union)
    assert "allOf" not in form and form["anyOf"] == [
        {"allOf": [{"properties": {"kind": {"const": "a"}}}, {"properties": {"n": {"type": "integer"}},
                                                              "required": ["n"]}]},
        {"allOf": [{"properties": {"kind": {"const": "b"}}}, {"properties": {"n": {"type": "string"}},
                                                              "required": ["n"]}]},
        {"properties": {"kind": {"not": {"enum": ["a", "b"]}}}}]
    closed = {**union, "properties": {"kind": {"enum": ["a", "b"]}}}
    assert len(_form_of(closed)["anyOf"]) == 2  # no other tag can pass the enum


@pytest.mark.parametrize("change", [
    {"type": None},  # on a non-object every `then` applies: not a union
    {"required": []},  # a missing tag satisfies every `if`
    {"allOf": [{"if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]}, "then": False}] * 2},
    {"allOf": [{"if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]}, "then": True,
                "else": False}]},
])
def test_clauses_that_are_not_a_plain_tagged_union_stay_as_written(change):
    schema = {"type": "object", "required": ["kind"],
              "allOf": [{"if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]}, "then": True}]}
    schema = {k: v for k, v in {**schema, **change}.items() if v is not None}
    assert _form_of(schema)["allOf"] == schema["allOf"]


def test_references_are_inlined_except_recursive_ones(schemas):
    form = schemas.fast_form("events/tool__result.schema.json")
    text = orjson.dumps(form).decode()
    assert '"description"' not in text.replace('"description":{"type"', "")  # annotations gone
    # the result's blocks may hold a tool result block again: only that reference stays
    assert set(re.findall(r'"\$ref":"([^"]+)"', text)) == {ID_BASE + "defs.schema.json#/$defs/ToolResultBlock"}


def _form_of(schema: dict) -> dict:
    return _FastForm({"x.json": schema}).schema(schema, "x.json", ())
