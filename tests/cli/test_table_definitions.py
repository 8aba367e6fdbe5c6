"""Each table's columns are defined once, by name (`results.tables`): tools.csv, approvals.csv and
the index's tool_calls and approvals tables read the same facts, a fact has the same name in every
table (snake_case in SQL, camelCase in a CSV), and the index's shape is pinned with INDEX_FORMAT."""

from __future__ import annotations

import csv
import hashlib
import json

import pytest

from dshreplay.results._tables import APPROVALS_CSV, SQL_COLUMNS, TOOLS_CSV, camel
from dshreplay.sql.rows import INDEX_FORMAT, TABLES

import scenarios

STAMP = "2026-01-01T00:00:00Z"


def test_the_index_tables_shape_is_pinned_with_its_format():
    # A column added, renamed, retyped or moved changes this digest: raise INDEX_FORMAT (an index of the
    # old shape is then refused, never mixed) and pin both anew here.
    spec = json.dumps({t: [[c.name, c.type] for c in cols] for t, cols in TABLES.items()}, sort_keys=True)
    assert (INDEX_FORMAT, hashlib.sha256(spec.encode()).hexdigest()[:16]) == (2, "a289b818381f5982")


def test_camel_names_a_fact_as_a_csv_header_does():
    assert [camel(n) for n in ("call_id", "approval_asked_at", "spilled_bytes", "tool")] == \
        ["callId", "approvalAskedAt", "spilledBytes", "tool"]


@pytest.mark.parametrize(("csv_columns", "table"), [(TOOLS_CSV, "tool_calls"), (APPROVALS_CSV, "approvals")])
def test_a_fact_in_a_csv_and_in_the_index_is_one_definition(csv_columns, table):
    by_name = {f.name: f for f in SQL_COLUMNS[table]}
    shared = [f for f in csv_columns if f.name in by_name]
    assert shared and all(by_name[f.name] is f for f in shared)
    assert [c.name for c in TABLES[table]][4:] == [f.name for f in SQL_COLUMNS[table]]


def _rows(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_tools_csv_and_the_index_give_a_tool_call_the_same_facts(cli, write_log, tmp_path):
    pytest.importorskip("duckdb")
    import duckdb

    b, s = scenarios.parallel_calls()
    log = write_log(b)
    cli("export", log, "--out", tmp_path / "b", "--timestamp", STAMP, "--no-default-redaction")
    [folder] = [p for p in (tmp_path / "b").iterdir() if p.is_dir()]
    cli("index", log, "--db", tmp_path / "i.duckdb", "--no-default-redaction", "-q")
    rows = _rows(folder / "tools.csv")
    assert list(rows[0]) == [camel(f.name) for f in TOOLS_CSV]
    assert "approvalAskedAt" in rows[0] and "approvalAsked" not in rows[0]
    con = duckdb.connect(str(tmp_path / "i.duckdb"), read_only=True)
    shared = [f for f in TOOLS_CSV if f.name in {c.name for c in SQL_COLUMNS["tool_calls"]}]
    names = ", ".join(f.name for f in shared)
    indexed = con.execute(f"select {names} from tool_calls order by call_id").fetchall()
    con.close()

    def cell(value, kind):
        if value is None:
            return ""
        if kind == "time":
            return value.isoformat(timespec="milliseconds") + "Z"
        if kind == "bool":
            return str(value).lower()  # (the CSV writes a log's JSON true/false)
        return str(int(value)) if kind == "ms" and value == int(value) else str(value)

    assert [[cell(v, f.kind) for v, f in zip(row, shared)] for row in indexed] == \
        [[r[camel(f.name)] for f in shared] for r in sorted(rows, key=lambda r: r["callId"])]
    assert [r["approvalAskedAt"] != "" for r in sorted(rows, key=lambda r: r["callId"])] == [False, True]
