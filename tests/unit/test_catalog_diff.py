"""scripts/catalog_diff.py: a dsh checkout's event catalog against dshreplay's schemas."""

from __future__ import annotations

import json
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import catalog_diff  # noqa: E402

CATALOG = """# Session Persistence Event Catalog

#### `thing/made` — log-only

```ts persistence-catalog
/** A thing. */
'thing/made': {
  turn: number
  /** Where it was made. */
  location?: { file: string; line: number }
  owner: string
}
```

#### `thing/said` — surface

```ts persistence-catalog
'thing/said': SaidData
```

#### `thing/new` — log-only

```ts persistence-catalog
'thing/new': { id: string }
```
"""


def _schema(folder, name, properties, required):
    (folder / "events").mkdir(parents=True, exist_ok=True)
    doc = {"type": "object", "properties": {p: {} for p in properties}, "required": required}
    (folder / "events" / f"{name.replace('/', '__')}.schema.json").write_text(json.dumps(doc))


def test_types_and_fields_that_differ_are_listed_and_exit_1(tmp_path, capsys):
    (tmp_path / "dsh" / "docs").mkdir(parents=True)
    (tmp_path / "dsh" / "docs" / "persistence-catalog.md").write_text(CATALOG)
    schemas = tmp_path / "schemas"
    _schema(schemas, "thing/made", ["turn", "owner", "legacy"], ["turn"])
    _schema(schemas, "thing/said", ["text"], [])
    _schema(schemas, "thing/old", [], [])
    code = catalog_diff.main([str(tmp_path / "dsh"), "--schemas", str(schemas), "--json"])
    assert code == 1
    assert json.loads(capsys.readouterr().out) == {
        "differences": ["thing/new: in dsh's catalog, no schema",
                        "thing/old: a schema, not in dsh's catalog",
                        "thing/made.location: in dsh's catalog, not in the schema",
                        "thing/made.legacy: in the schema, not in dsh's catalog",
                        "thing/made.owner: required in dsh's catalog, optional in the schema"],
        "notCompared": ["thing/said"]}


def test_a_catalog_that_agrees_exits_0_and_a_missing_one_exits_2(tmp_path, capsys):
    (tmp_path / "dsh" / "docs").mkdir(parents=True)
    (tmp_path / "dsh" / "docs" / "persistence-catalog.md").write_text(CATALOG.split("#### `thing/said`")[0])
    schemas = tmp_path / "schemas"
    _schema(schemas, "thing/made", ["turn", "location", "owner"], ["turn", "owner"])
    assert catalog_diff.main([str(tmp_path / "dsh"), "--schemas", str(schemas)]) == 0
    assert capsys.readouterr().out == ("1 types in dsh's catalog, 1 schemas: 0 differences; 0 payloads declared by "
                                       "a type name, fields not compared: none\n")
    assert catalog_diff.main([str(tmp_path / "nowhere"), "--schemas", str(schemas)]) == 2
