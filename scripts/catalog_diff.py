"""Compare a dsh checkout's event catalog with dshreplay's schemas: what changed upstream.

dsh generates `docs/persistence-catalog.md` from its sources: one `#### \\`TYPE\\` — surface`
(or `— log-only`) heading per event type, with the payload's TypeScript declaration
(`'TYPE': { field: T; other?: U }`, or `'TYPE': NamedType`). This lists, against
`schemas/events/*.schema.json`:

- event types the catalog has and no schema has, and the reverse;
- for a payload declared inline, fields the catalog has that the schema does not name,
  fields the schema names that the catalog does not, and fields required in one and
  optional in the other (a payload declared by a type name is named as not compared).

Usage: python scripts/catalog_diff.py DSH_CHECKOUT [--schemas DIR] [--json]
Exit 0 when nothing differs, 1 when something does, 2 when a file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

HEADING = re.compile(r"^#### `([^`]+)` — (surface|log-only)\s*$")
FIELD = re.compile(r"^\s*(?:readonly\s+)?([A-Za-z_$][\w$]*|'[^']+')(\??):")
ROOT = Path(__file__).resolve().parent.parent


def catalog_types(text: str) -> dict[str, dict[str, Any]]:
    """TYPE -> {"surface": bool, "fields": {name: required} or None (declared by a type name)}."""
    types: dict[str, dict[str, Any]] = {}
    lines = text.splitlines()
    for at, line in enumerate(lines):
        heading = HEADING.match(line)
        if heading is None:
            continue
        name, kind = heading.groups()
        types[name] = {"surface": kind == "surface", "fields": _declared_fields(lines, at + 1, name)}
    return types


def _declared_fields(lines: list[str], start: int, name: str) -> dict[str, bool] | None:
    """The top-level fields of `'NAME': { ... }` in the code block after a heading."""
    opener = f"'{name}':"
    for at in range(start, len(lines)):
        line = lines[at]
        if line.startswith("#### "):
            return None
        if not line.startswith(opener):
            continue
        rest = line[len(opener):].strip()
        if not rest.startswith("{"):
            return None  # declared by a type name
        fields: dict[str, bool] = {}
        depth = 0
        for body in [rest, *lines[at + 1:]]:
            stripped = body.strip()
            if stripped.startswith(("/*", "*", "//")):
                continue
            if depth == 1:
                field = FIELD.match(body)
                if field is not None:
                    fields[field.group(1).strip("'")] = field.group(2) != "?"
            elif depth == 0 and body is rest:  # `{ a: T; b?: U }` on the heading's line
                for part in stripped.strip("{}").split(";"):
                    field = FIELD.match(part)
                    if field is not None:
                        fields[field.group(1).strip("'")] = field.group(2) != "?"
            depth += body.count("{") - body.count("}")
            if depth <= 0:
                return fields
        return fields
    return None


def schema_types(folder: Path) -> dict[str, dict[str, bool]]:
    """TYPE -> {field: required} from each event payload schema's top level."""
    out = {}
    for path in sorted((folder / "events").glob("*.schema.json")):
        doc = json.loads(path.read_text())
        name = path.name[:-len(".schema.json")].replace("__", "/")
        required = set(doc.get("required", ()))
        out[name] = {field: field in required for field in doc.get("properties", {})}
    return out


def differences(catalog: dict[str, dict[str, Any]], schemas: dict[str, dict[str, bool]]) -> tuple[list[str], list[str]]:
    """What differs, and the types whose fields could not be compared (declared by a type name)."""
    unread = [name for name in sorted(set(catalog) & set(schemas)) if catalog[name]["fields"] is None]
    found = [f"{name}: in dsh's catalog, no schema" for name in sorted(set(catalog) - set(schemas))]
    found += [f"{name}: a schema, not in dsh's catalog" for name in sorted(set(schemas) - set(catalog))]
    for name in sorted(set(catalog) & set(schemas)):
        fields = catalog[name]["fields"]
        if fields is None:
            continue
        known = schemas[name]
        found += [f"{name}.{f}: in dsh's catalog, not in the schema" for f in fields if f not in known]
        found += [f"{name}.{f}: in the schema, not in dsh's catalog" for f in known if f not in fields]
        found += [f"{name}.{f}: {'required' if fields[f] else 'optional'} in dsh's catalog, "
                  f"{'required' if known[f] else 'optional'} in the schema"
                  for f in fields if f in known and fields[f] != known[f]]
    return found, unread


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a dsh checkout (holding docs/persistence-catalog.md)")
    parser.add_argument("--schemas", type=Path, default=ROOT / "schemas", help="dshreplay's schemas folder")
    parser.add_argument("--json", action="store_true", help="print the differences as a JSON list")
    args = parser.parse_args(argv)
    catalog_path = args.checkout / "docs" / "persistence-catalog.md"
    try:
        catalog = catalog_types(catalog_path.read_text(encoding="utf-8"))
        schemas = schema_types(args.schemas)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        print(f"catalog_diff: cannot read: {exc}", file=sys.stderr)
        return 2
    if not catalog:
        print(f"catalog_diff: {catalog_path} lists no event type (no '#### `TYPE` — surface' heading)",
              file=sys.stderr)
        return 2
    found, unread = differences(catalog, schemas)
    if args.json:
        print(json.dumps({"differences": found, "notCompared": unread}, indent=1))
    else:
        for line in found:
            print(line)
        print(f"{len(catalog)} types in dsh's catalog, {len(schemas)} schemas: {len(found)} differences; "
              f"{len(unread)} payloads declared by a type name, fields not compared: {', '.join(unread) or 'none'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
