"""No secret of the reference list of kinds (`tests/secret_kinds.py`: gitleaks' default rules and
the kinds issue #34 names) reaches a byte or a file name of an export bundle or of the DuckDB
index, whatever field of the log holds it.

Every kind is planted in every field `test_export_leaks.plant` fills (titles, slash commands and
what they answered, todos, the system prompt, user text, assistant text and reasoning streamed in
deltas, tool arguments, tool names, results as text and as JSON inside JSON, an approval's
reason, hook stderr, retries, provider errors, a finding's quote), and beside them: the text
streamed in deltas cut at random points, tool arguments streamed in two deltas cut inside the
secret, the secret as a JSON object's key, and each kind's own log with it in the session id,
the header and the log's file and folder names (when a file name can hold it: no `/`, no line
break). `export` and `index` run on all of it; every byte and name of the bundle, every value of
every table of the index (the keys, the logs' redacted paths, too) and every byte of the index
file are searched for every secret.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from secret_kinds import GITLEAKS_RULES, KINDS
from test_export_leaks import STAMP, plant

from dshreplay.testing.samples import LogBuilder

duckdb = pytest.importorskip("duckdb")
# the index's columns that hold a log's path (redacted as the bundle's names: #34 item 3)
PATH_COLUMNS = frozenset({"log", "path", "input", "file"})


def nameable(sample: str) -> bool:
    return "/" not in sample and "\n" not in sample and "\\" not in sample and len(sample.encode()) < 200


def plant_more(b: LogBuilder, n: int, sample: str, secret: str, rnd: random.Random) -> None:
    """The fields `plant` leaves out: text and reasoning cut at random points, arguments cut
    inside the secret, the secret as an object's key."""
    b.start_turn()
    b.start_step()
    b.user(f"also {sample}")
    arguments = json.dumps({"command": sample})
    at = arguments.index(json.dumps(secret)[1:-1]) + rnd.randrange(1, len(secret))
    b.assistant(f"said {sample}", reasoning=f"thought {sample}", pieces=rnd.randrange(2, 9),
                calls=[(b.new_id("call"), "bash", [arguments[:at], arguments[at:]]),
                       (b.new_id("call"), "edit", json.dumps({sample: 1, "other": {sample: [sample]}}))])
    b.end_turn()


def main_log(rnd: random.Random) -> LogBuilder:
    b = LogBuilder("kinds-session")
    for n, (_, sample, secret) in enumerate(KINDS):
        plant(b, n, sample, re.search(r'[^"\\\s]{1,10}', sample).group())  # (a finding quotes it cut at its start)
        plant_more(b, n, sample, secret, rnd)
    return b


def header_logs(root: Path) -> list[Path]:
    """Each kind's own log: the sample in its session id and header, and in its file and folder
    names when a name can hold it."""
    inputs = []
    for n, (_, sample, _) in enumerate(KINDS):
        name = sample if nameable(sample) else f"kind{n}"
        folder = root / f"k{n} {name}"
        folder.mkdir(parents=True)
        b = LogBuilder(sample, cwd=f"/home/{sample}", parentSession=sample, origin=sample, title=sample)
        b.start_turn()
        b.user("hello")
        b.end_turn()
        inputs.append(b.write(folder / f"{name}.jsonl"))
    return inputs


def leaks(places: list[tuple[str, bytes]]) -> list[str]:
    """(kind, where) of each secret found in a place's name or bytes."""
    return [f"{kind}: in {where}" for kind, _, secret in KINDS for where, data in places
            if secret.encode() in data or secret in where]


def files(root: Path) -> list[tuple[str, bytes]]:
    return [(p.relative_to(root).as_posix(), p.read_bytes() if p.is_file() else b"") for p in root.rglob("*")]


def index_values(db: Path) -> tuple[list[tuple[str, bytes]], list[tuple[str, bytes]]]:
    """Every value of every table of the index: (table.column, its values as text), the path
    columns apart."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        values, paths = [], []
        columns = con.execute("SELECT table_name, column_name FROM duckdb_columns() WHERE NOT internal").fetchall()
        for table, column in columns:
            text = "\n".join(str(row[0]) for row in con.execute(f'SELECT "{column}" FROM "{table}"').fetchall())
            (paths if column in PATH_COLUMNS else values).append((f"{table}.{column}", text.encode()))
        return values, paths
    finally:
        con.close()


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    root = tmp_path_factory.mktemp("kinds")
    log = main_log(random.Random(34)).write(root / "main.jsonl")
    return root, log, header_logs(root / "in")


def test_the_reference_list_holds_a_kind_for_nearly_every_gitleaks_rule():
    names = [kind for kind, _, _ in KINDS]
    assert len(names) == len(set(names))
    gitleaks = [kind for kind in names if kind.startswith("gitleaks ")]
    assert len(gitleaks) == GITLEAKS_RULES - 1  # all but pkcs12-file, a rule on file names
    assert all(secret in sample and len(secret) >= 8 for _, sample, secret in KINDS)


def test_no_kind_reaches_a_byte_or_a_name_of_the_bundle(cli, planted, tmp_path):
    root, log, inputs = planted
    raw = log.read_bytes()
    assert all(json.dumps(secret)[1:-1].encode() in raw for _, _, secret in KINDS)  # (planted)
    out = tmp_path / "bundle"
    result = cli("export", log, *inputs, "--out", out, "--timestamp", STAMP, expect=1)
    printed = (result.stdout + result.stderr).encode()
    assert leaks([*files(out), ("what export printed", printed)]) == []


def test_no_kind_reaches_the_index(cli, planted, tmp_path):
    root, log, inputs = planted
    db = tmp_path / "main.duckdb"
    cli("index", log, "--db", db, "--messages", "-j", 1)
    values, paths = index_values(db)
    assert sum(len(data) for _, data in values) > 100_000  # (the messages and tool calls were indexed)
    assert leaks([*values, *paths, ("the index file", db.read_bytes())]) == []
    db = tmp_path / "headers.duckdb"
    cli("index", *inputs, "--db", db, "--messages", "-j", 1, expect=None)
    values, paths = index_values(db)  # (each log's key: its path as redacted as the bundle names it)
    assert leaks([*values, *paths, ("the index file", db.read_bytes())]) == []
