"""Checks that the compiled validators' fast forms accept exactly what the schema files accept."""

from __future__ import annotations

import orjson

from dshreplay.analyses._eventtypes import event_schema_name
from dshreplay.analyses._schemas import ID_BASE, SchemaSet

ODD_VALUES = (None, True, -1, 0, 1.5, "", "text", "block-end", "usage", "tool-call", "model", [], {}, [1], {"x": 1})


def as_written(schemas: SchemaSet, kind: str):
    """A compiled validator of the schema files as written (references, if/then and all)."""
    import jsonschema_rs
    if kind.endswith("-chunks"):
        schema = {"$ref": ID_BASE + f"rows/{kind}.schema.json"}
    else:
        schema = {"allOf": [{"$ref": ID_BASE + "record.schema.json"},
                            {"properties": {"data": {"$ref": ID_BASE + event_schema_name(kind)}}}]}
    return jsonschema_rs.Draft202012Validator(schema, registry=schemas._rs_registry)


def fast(schemas: SchemaSet, kind: str):
    return schemas.fast(f"rows/{kind}.schema.json") if kind.endswith("-chunks") else schemas.record_validator(kind)


def variants(value, depth: int = 0):
    """The value, and values one edit away from it at every depth: a key
    removed or added, a member replaced by an odd value or by a variant of
    itself, a list shortened or its first item varied."""
    yield value
    if depth > 6:
        return
    if type(value) is dict:
        for i, key in enumerate(value):
            yield {k: v for k, v in value.items() if k != key}
            for odd in (ODD_VALUES[i % len(ODD_VALUES)], ODD_VALUES[(i + 7) % len(ODD_VALUES)]):
                yield {**value, key: odd}
            for sub in list(variants(value[key], depth + 1))[1:12]:
                yield {**value, key: sub}
        yield {**value, "unexpected": 1}
    elif type(value) is list and value:
        yield value[1:]
        for sub in list(variants(value[0], depth + 1))[1:12]:
            yield [sub, *value[1:]]
    elif type(value) is str:
        yield value + "x"
        yield 7
    elif type(value) is int and type(value) is not bool:
        yield -value - 1
        yield str(value)


def disagreements(schemas: SchemaSet, lines) -> tuple[int, list]:
    """(values checked, [(type, value) the two forms disagree on]) over the
    records of JSONL lines (the header and lines of unknown types skipped)."""
    pairs: dict = {}
    checked, differ = 0, []
    for line in lines:
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        kind = record.get("type") if type(record) is dict else None
        if kind not in schemas.event_types and kind not in ("reasoning-chunks", "text-chunks", "tool-call-chunks"):
            continue
        if kind not in pairs:
            pairs[kind] = (as_written(schemas, kind), fast(schemas, kind))
        written, quick = pairs[kind]
        for value in variants(record):
            checked += 1
            if written.is_valid(value) != quick.is_valid(value):
                differ.append((kind, value))
    return checked, differ
