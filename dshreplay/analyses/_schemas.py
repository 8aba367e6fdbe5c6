"""The JSON Schemas shipped in `schemas/`, loaded by type name.

Validation is two-speed: a compiled validator (jsonschema-rs) answers "is it
valid?" for every record, and only the records that fail are explained by the
pure-Python `jsonschema`, whose errors carry precise paths and sub-errors.

The compiled validator checks each schema in an equivalent form that it
evaluates faster (`fast_form`): references inlined, annotations dropped, and
a chain of if/then clauses that dispatch on one property's constant value
(the way the files spell a tagged union, so that errors name the right
branch) turned into one anyOf that stops at the branch that fits.

Snapshot placeholders: dsh's committed test snapshots replace volatile values
with whole strings such as "{{cwd}}" (even where an array is expected). With
`snapshot=True`, an error whose failing value is such a placeholder is
excused, and so is a combinator error one of whose branches fails only on
placeholders. Without it, such an error says so (`SchemaError.placeholder`),
so that a report can suggest `--snapshot` once instead of leaving a user with
`'{{tools}}' is not of type 'array'`.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

import orjson

from dshreplay._jsvalues import json_pointer, pointer_parts, shown
from dshreplay.analyses._eventtypes import BY_NAME, event_schema_name

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator
    from referencing import Registry

__all__ = ["ID_BASE", "PLACEHOLDER", "SchemaError", "SchemaSet", "count_placeholders", "is_placeholder",
           "schema_dir"]

Schema = dict[str, Any]  # a JSON Schema document or subschema, as parsed (JSON values: Any)
Inlined = tuple[tuple[str, str], ...]  # the (file, fragment) references being inlined, outermost first

ID_BASE = "https://dshreplay.invalid/schemas/"
PLACEHOLDER = re.compile(r"\{\{[A-Za-z0-9_.-]+\}\}")


def schema_dir() -> Path:
    """The folder holding the schema files (package data, or the source tree)."""
    from importlib.util import find_spec  # (importlib.resources imports tempfile, shutil and zipfile: ~5 ms)
    spec = find_spec("dshreplay.schema_files")
    assert spec is not None and spec.submodule_search_locations is not None  # (package data, always installed)
    return Path(next(iter(spec.submodule_search_locations)))


@dataclass(frozen=True)
class SchemaError:
    pointer: str  # JSON pointer into the validated instance
    message: str
    placeholder: bool = False  # caused only by snapshot placeholders: validating with snapshot=True excuses it


def is_placeholder(value: object) -> bool:
    return type(value) is str and PLACEHOLDER.fullmatch(value) is not None


def count_placeholders(value: Any) -> int:
    """How many whole-string placeholders a JSON value holds (at any depth)."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        t = type(item)
        if t is str:
            count += item.startswith("{{") and PLACEHOLDER.fullmatch(item) is not None
        elif t is dict:
            stack.extend(item.values())
        elif t is list:
            stack.extend(item)
    return count


class SchemaSet:
    """Every schema file, with fast and explaining validators per schema."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or schema_dir()
        self.documents: dict[str, Schema] = {}
        for path in sorted(self.folder.rglob("*.schema.json")):
            doc = orjson.loads(path.read_bytes())
            self.documents[path.relative_to(self.folder).as_posix()] = doc
        self._fast: dict[str, Any] = {}  # (jsonschema_rs validators: the library has no types)
        self._slow: dict[str, Validator] = {}

    @cached_property
    def event_types(self) -> frozenset[str]:
        """The known event types (the registry, `eventtypes.EVENT_TYPES`): each has its schema file
        (`EventType.schema`, a test checks the two agree)."""
        return frozenset(BY_NAME)

    @cached_property
    def _rs_registry(self) -> Any:
        import jsonschema_rs
        return jsonschema_rs.Registry([(doc["$id"], doc) for doc in self.documents.values()])

    @cached_property
    def _py_registry(self) -> Registry[Any]:
        from referencing import Registry, Resource
        return Registry().with_resources(
            (doc["$id"], Resource.from_contents(doc)) for doc in self.documents.values())

    def fast(self, name: str) -> Any:
        """A compiled validator for one schema file (cached)."""
        validator = self._fast.get(name)
        if validator is None:
            import jsonschema_rs
            validator = jsonschema_rs.Draft202012Validator(self.fast_form(name), registry=self._rs_registry)
            self._fast[name] = validator
        return validator

    def fast_form(self, name: str) -> Schema:
        """Schema file `name` in the equivalent form the compiled validator checks."""
        form = _FastForm(self.documents).schema(self.documents[name], name, ())
        if not isinstance(form, dict):  # (every shipped file is an object; a file that is `true` would not be)
            raise TypeError(f"schema {name} is no object")
        return form

    def slow(self, name: str) -> Validator:
        validator = self._slow.get(name)
        if validator is None:
            from jsonschema import Draft202012Validator
            validator = Draft202012Validator(self.documents[name], registry=self._py_registry)
            self._slow[name] = validator
        return validator

    def record_validator(self, event_type: str) -> Any:
        """One compiled validator for a whole event record of a known type:
        the envelope and its `data` payload in a single call (the hot path)."""
        key = "record+" + event_type
        validator = self._fast.get(key)
        if validator is None:
            import jsonschema_rs
            combined = self.fast_form("record.schema.json")
            data = self.fast_form(event_schema_name(event_type))
            envelope = combined["properties"]
            # the envelope leaves `data` unconstrained: the payload schema takes its place
            envelope["data"] = data if envelope.get("data", True) in ({}, True) else {"allOf": [envelope["data"], data]}
            validator = jsonschema_rs.Draft202012Validator(combined, registry=self._rs_registry)
            self._fast[key] = validator
        return validator

    def lenient(self, name: str) -> Any:
        """Schema file `name` compiled without its `additionalProperties: false` (and
        `unevaluatedProperties: false`): what a newer dsh's records still fit (cached)."""
        key = "lenient+" + name
        validator = self._fast.get(key)
        if validator is None:
            import jsonschema_rs
            validator = jsonschema_rs.Draft202012Validator(_open(self.fast_form(name)), registry=self._rs_registry)
            self._fast[key] = validator
        return validator

    def unknown_fields(self, name: str, instance: Any) -> list[tuple[str, str]]:
        """(pointer of the object, field) of each field schema `name` does not name, when those
        fields are all that makes `instance` fail it (a newer or forked dsh's additions);
        [] when it is valid or fails for any other reason too."""
        if self.fast(name).is_valid(instance) or not self.lenient(name).is_valid(instance):
            return []
        named: dict[str, set[str]] = {}  # object pointer -> the fields any schema met there names
        objects: dict[str, Any] = {}
        pending = list(self.slow(name).iter_errors(instance))
        while pending:
            error = pending.pop()
            pending.extend(error.context or ())
            if error.validator in ("additionalProperties", "unevaluatedProperties") and type(error.instance) is dict:
                where = json_pointer(error.absolute_path)
                schema = error.schema if isinstance(error.schema, dict) else {}
                named.setdefault(where, set()).update(schema.get("properties", {}))
                objects[where] = error.instance
        return [(where, field) for where in sorted(objects) for field in objects[where]
                if field not in named[where]]

    def errors(self, name: str, instance: Any, *, snapshot: bool = False,
               limit: int | None = None) -> list[SchemaError]:
        """Why `instance` fails schema `name` ([] when it is valid): its first
        `limit` reasons (None: all). The reasons are worked out one by one and
        no further than asked: a record of 90 KB can have 60,000 of them, each
        costing tens of microseconds."""
        if self.fast(name).is_valid(instance):
            return []
        out: list[SchemaError] = []
        for error in self.slow(name).iter_errors(_quotable(instance)):
            excused = _excused(error)
            if not (snapshot and excused):
                out.append(SchemaError(json_pointer(error.absolute_path), _describe(error), excused))
                if len(out) == limit:
                    break
        return out


def _open(node: Any) -> Any:
    """A schema with every `additionalProperties: false` / `unevaluatedProperties: false` dropped."""
    if type(node) is list:
        return [_open(item) for item in node]
    if type(node) is not dict:
        return node
    return {key: _open(value) for key, value in node.items()
            if not (key in ("additionalProperties", "unevaluatedProperties") and value is False)}


class _QuotedList(list[Any]):
    """A list that `jsonschema` quotes in its messages through `shown` (its own
    repr() recurses and overflows on a value nested as deep as the parser goes)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return shown(self, 80)


class _QuotedDict(dict[Any, Any]):
    __slots__ = ()

    def __repr__(self) -> str:
        return shown(self, 80)


def _quotable(value: Any) -> Any:
    """A copy of a parsed value whose arrays and objects quote themselves
    boundedly; made with an explicit stack, so at any depth."""
    kinds: dict[type, type[_QuotedList | _QuotedDict]] = {list: _QuotedList, dict: _QuotedDict}
    if type(value) not in kinds:
        return value
    top = kinds[type(value)]()
    stack: list[tuple[Any, _QuotedList | _QuotedDict]] = [(value, top)]
    while stack:
        source, target = stack.pop()
        for key, item in (source.items() if type(source) is dict else enumerate(source)):
            if type(item) in kinds:
                copy = kinds[type(item)]()
                stack.append((item, copy))
                item = copy
            if isinstance(target, _QuotedDict):
                target[key] = item
            else:
                target.append(item)
    return top


# keywords that say nothing about validity
_ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "$comment", "title", "description", "examples", "default",
                          "deprecated", "readOnly", "writeOnly"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})  # name -> schema
_SCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_ONE = frozenset({"items", "additionalProperties", "not", "if", "then", "else", "contains",
                         "propertyNames", "unevaluatedItems", "unevaluatedProperties"})


class _FastForm:
    """Rewrites a schema into an equivalent one the compiled validator checks faster.

    - `$ref` is replaced by the schema it names (resolved against the file it
      appears in); a reference back into a schema being inlined (recursion)
      stays a `$ref`, made absolute, for the registry to resolve.
    - annotations go (a property *named* "description" stays: maps of names
      are walked as maps).
    - `allOf` made only of clauses {"if": {"properties": {K: {"const": c}},
      "required": [K]}, "then": T}, with distinct constants, in a schema of
      type object that requires K, becomes one `anyOf`: the branch whose
      constant K holds, checked against T, or (unless K's own schema admits
      only those constants) a branch for a K that none of them equals. A
      value matches at most one constant, so the two forms accept exactly
      the same values. A branch is T alone when T's own properties give K
      that same constant (T then holds the condition), and K's own schema
      goes when it is an enum of exactly the constants (the anyOf admits
      those values and no others): each test fewer on every record checked.
    """

    def __init__(self, documents: dict[str, Schema]) -> None:
        self.documents = documents

    def schema(self, node: Schema | bool, base: str, stack: Inlined) -> Schema | bool:
        if type(node) is not dict:
            return node  # true / false
        out: Schema = {}
        ref = node.get("$ref")
        for key, value in node.items():
            if key in _ANNOTATIONS or key == "$ref":
                continue
            if key in _SCHEMA_MAPS:
                out[key] = {name: self.schema(v, base, stack) for name, v in value.items()}
            elif key in _SCHEMA_LISTS:
                out[key] = [self.schema(v, base, stack) for v in value]
            elif key in _SCHEMA_ONE:
                out[key] = self.schema(value, base, stack)
            else:
                out[key] = value
        dispatch = self._dispatch(out)
        if dispatch is not None:
            del out["allOf"]
            out["anyOf"] = dispatch
        if ref is None:
            return out
        target = self._inline(ref, base, stack)
        return target if not out else {"allOf": [target, out]}

    def _inline(self, ref: str, base: str, stack: Inlined) -> Schema | bool:
        path, _, fragment = ref.partition("#")
        if path.startswith(ID_BASE):
            path = path[len(ID_BASE):]
        name = posixpath.normpath(posixpath.join(posixpath.dirname(base), path)) if path else base
        where = (name, fragment)
        if where in stack:  # recursive: leave it to the registry
            return {"$ref": ID_BASE + name + ("#" + fragment if fragment else "")}
        node: Any = self.documents[name]
        for part in filter(None, pointer_parts(fragment)):
            node = node[part]
        return self.schema(node, name, stack + (where,))

    @staticmethod
    def _dispatch(schema: Schema) -> list[Schema] | None:
        """The anyOf equivalent to the schema's allOf of if/then clauses, or None."""
        clauses = schema.get("allOf")
        if not clauses or schema.get("anyOf") is not None or schema.get("type") != "object":
            return None  # (on a non-object, every `if` holds and every `then` applies)
        key: str | None = None
        branches: list[Schema] = []
        constants: list[str] = []
        for clause in clauses:
            if type(clause) is not dict or set(clause) != {"if", "then"}:
                return None
            cond = clause["if"]
            if type(cond) is not dict or set(cond) != {"properties", "required"} or len(cond["properties"]) != 1:
                return None
            (k, test), = cond["properties"].items()
            if cond["required"] != [k] or (key is not None and k != key) or type(test) is not dict \
                    or set(test) != {"const"} or type(test["const"]) is not str or test["const"] in constants:
                return None
            key = k
            constants.append(test["const"])
            then = clause["then"]
            # (a `then` that tests the same constant already holds the branch's condition)
            said = then.get("properties", {}).get(k) == test if type(then) is dict and "$ref" not in then else False
            branches.append(then if said else {"allOf": [{"properties": {k: test}}, then]})
        if key not in schema.get("required", ()):
            return None
        own = schema.get("properties", {}).get(key, {})
        if not (type(own) is dict and set(own) == {"enum"} and set(own["enum"]) <= set(constants)):
            branches.append({"properties": {key: {"not": {"enum": constants}}}})
        elif set(own["enum"]) == set(constants):  # (the branches admit exactly its values: it says nothing more)
            schema["properties"][key] = {}
        return branches


def _excused(error: ValidationError) -> bool:
    """A failure caused only by snapshot placeholders."""
    if is_placeholder(error.instance):
        return True
    if error.validator in ("anyOf", "oneOf") and error.context:
        branches: dict[Union[str, int], list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        return any(all(_excused(sub) for sub in subs) for subs in branches.values())
    return False


def _describe(error: ValidationError) -> str:
    """A short message naming what was expected (and the best sub-error of a combinator)."""
    message: str = error.message
    if error.validator in ("anyOf", "oneOf") and error.context:
        from jsonschema.exceptions import best_match
        # a branch whose type does not even fit says least: prefer the others
        fitting = [e for e in error.context if not (e.validator == "type" and not e.relative_path)]
        deepest = best_match(fitting or error.context)
        where = json_pointer(deepest.absolute_path)
        message = f"matches none of the allowed shapes; closest: {where or '/'}: {deepest.message}"
    if len(message) > 300:
        message = message[:297] + "..."
    return message
