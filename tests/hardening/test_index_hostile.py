"""The SQL index under attack: as redacted as the bundle (a token in a folder or
file name included), and every database it reads treated as hostile input (its
tables' shapes, its settings, the facts and pass states it keeps per log), with
paths given to DuckDB exactly as they were checked.

Every case runs `python -m dshreplay` in a child limited in CPU time and address
space (`attack`); logs and databases are made here.
"""

from __future__ import annotations

import hmac
import json
import os
from pathlib import Path

import pytest
from harness import attack

from dshreplay.testing.samples import LogBuilder

duckdb = pytest.importorskip("duckdb")

MEM = 1200  # MB of address space: DuckDB and pyarrow map more than they use
TOKENS = ("ghp_0123456789abcdefghijABCDEFGHIJ012345", "ghp_9876543210zyxwvutsrqZYXWVUTSRQ543210",
          "glpat-0123456789abcdefABCD", "AKIAIOSFODNN7EXAMPLE")
FOLDER_A, FOLDER_B, FILE, CONTENT = TOKENS


def secret_log(path: Path, session_id: str) -> Path:
    """A clean log whose cwd and user message hold tokens the default rules mask."""
    b = LogBuilder(session_id, cwd=f"/home/u/{FOLDER_A}")
    b.start_turn()
    b.start_step()
    b.user(f"deploy with {CONTENT} and {FILE}")
    b.end_turn()
    path.parent.mkdir(parents=True, exist_ok=True)
    return b.write(path)


def grow(log: Path) -> None:
    """One turn/start appended to a log (the next seq, the next turn)."""
    last = json.loads(log.read_bytes().splitlines()[-1])
    record = {"type": "turn/start", "seq": last["seq"] + 1, "time": last["time"] + 1, "data": {"turn": 2}}
    with log.open("ab") as fh:
        fh.write(json.dumps(record).encode() + b"\n")


ENGINE_OFF = "dshreplay: warning: the secret engine (Betterleaks) is off"


def index(*args, expect: int, **kw):
    result = attack("index", *args, mem_mb=MEM, seconds=60, **kw)
    assert result.code == expect, result.stderr
    return result


def leaks(db: Path, parquet: Path) -> list[str]:
    """Every place a token is found: each value of each column of each table of `db` (cast to text),
    each byte of the database file, each Parquet file's name and bytes."""
    found = []
    con = duckdb.connect(str(db), read_only=True)
    tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
    assert {"sessions", "turns", "messages", "_inputs", "_meta"} <= set(tables)
    for table in tables:
        columns = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
        for column in columns:
            for (value,) in con.execute(f'SELECT CAST("{column}" AS VARCHAR) FROM {table}').fetchall():
                found += [f"{table}.{column}: {t}" for t in TOKENS if value is not None and t in value]
    con.close()
    files = [db, *sorted(parquet.rglob("*"))]
    assert len(files) > 9
    for file in files:
        found += [f"name {file}: {t}" for t in TOKENS if t in file.name]
        if file.is_file():
            data = file.read_bytes()
            found += [f"bytes of {file.name}: {t}" for t in TOKENS if t.encode() in data]
    return found


def test_a_token_in_a_folder_or_file_name_is_in_no_table_column_or_byte_of_the_index(tmp_path):
    # The log column of sessions, turns, _inputs (and every other table), and the Parquet files, kept
    # the path as it is: a token the bundle masks in a folder or file name was there for anyone to read.
    store = tmp_path / "store"
    a = secret_log(store / FOLDER_A / f"{FILE}.jsonl", "sess-a")
    b = secret_log(store / FOLDER_B / f"{FILE}.jsonl", "sess-b")  # (masked alike: still two keys)
    db, pq, key = tmp_path / "index.duckdb", tmp_path / "pq", tmp_path / "evidence.key"
    first = index(store, "--db", db, "--parquet", pq, "--messages", "--evidence-key", key, "-j", "1", expect=0)
    assert first.stdout.splitlines()[0].endswith(": 2 sessions; this run: 2 new, 0 grown (0 read from where they "
                                                 "were indexed), 0 rewritten (indexed again whole), 0 unchanged, 0 "
                                                 "vanished, 0 unreadable, 0 whose fold fails")
    assert not any(t in first.stdout + first.stderr for t in TOKENS)
    assert leaks(db, pq) == []
    con = duckdb.connect(str(db), read_only=True)
    logs = [r[0] for r in con.execute("SELECT log FROM sessions ORDER BY session_id").fetchall()]
    con.close()
    evidence = bytes.fromhex(key.read_text().strip())
    for log, path in zip(logs, (a, b)):  # (the path masked, then the HMAC of the real path under the key)
        digest = hmac.new(evidence, os.fsencode(path), "sha256").hexdigest()[:16]
        assert log == f"{store}/[REDACTED]/[REDACTED].jsonl#{digest}"
    assert logs[0] != logs[1]
    # the next run finds each log again by its key: unchanged; then one grows and is read on from its pass
    again = index(store, "--db", db, "--parquet", pq, "--messages", "--evidence-key", key, "-j", "1", expect=0)
    assert "this run: 0 new, 0 grown (0 read from where they were indexed), 0 rewritten (indexed again whole), " \
           "2 unchanged, 0 vanished," in again.stdout
    grow(a)
    grown = index(store, "--db", db, "--parquet", pq, "--messages", "--evidence-key", key, "-j", "1", expect=0)
    assert "this run: 0 new, 1 grown (1 read from where they were indexed), 0 rewritten (indexed again whole), " \
           "1 unchanged, 0 vanished," in grown.stdout, grown.stdout
    # a log gone from under its input is still found vanished (by the keyed hashes of its folders)
    b.unlink()
    gone = index(store, "--db", db, "--parquet", pq, "--messages", "--evidence-key", key, "-j", "1", expect=1)
    said = [line for line in gone.stderr.splitlines() if not line.startswith(ENGINE_OFF)]  # (under this test's
    # address-space limit the secret engine is off, and the index says so)
    assert said == [f"dshreplay: warning: {logs[1]}: vanished since it was indexed: marked vanished, its rows kept"]
    assert leaks(db, pq) == []


# -- a database is input: its shape is checked, never trusted -----------------------------------------

def indexed(tmp_path: Path) -> tuple[Path, Path]:
    log = secret_log(tmp_path / "logs" / "a.jsonl", "sess-a")
    db = tmp_path / "index.duckdb"
    index(log.parent, "--db", db, "--no-default-redaction", "-j", "1", expect=0)
    return log, db


def change(db: Path, *statements: str) -> None:
    con = duckdb.connect(str(db))
    for statement in statements:
        con.execute(statement)
    con.close()


def test_settings_that_are_not_json_are_refused_in_one_line(tmp_path):
    # 'orjson.JSONDecodeError: unexpected character', exit 70
    log, db = indexed(tmp_path)
    change(db, "UPDATE _meta SET value = 'not json' WHERE key = 'settings'")
    result = index(log.parent, "--db", db, "--no-default-redaction", "-j", "1", expect=2)
    assert result.one_line() == (f"dshreplay: usage error: {db}: not an index database this dshreplay writes: "
                                 "_meta's settings are not a JSON object; index into a new --db")


@pytest.mark.parametrize("facts, why", [
    ("'[]'", "/size: expected a byte count, got nothing"),
    ("'{'", "not JSON"),
    ("NULL", "not JSON"),
    ("""'{"size": 1, "sha256": "00"}'""", "/sha256: expected a SHA-256 in hex, got \"00\""),
])
def test_facts_of_another_shape_make_the_log_be_indexed_again_whole_and_reported(tmp_path, facts, why):
    # 'list' object has no attribute 'get', exit 70
    log, db = indexed(tmp_path)
    change(db, f"UPDATE _inputs SET facts = {facts}")
    result = index(log.parent, "--db", db, "--no-default-redaction", "-j", "1", expect=1)
    assert result.one_line() == (f"dshreplay: warning: {log}: rewritten since it was indexed (the facts the index "
                                 f"kept of it are not the index's: {why}): indexed again whole")
    again = index(log.parent, "--db", db, "--no-default-redaction", "-j", "1", expect=0)
    assert ", 1 unchanged, " in again.stdout


def test_null_cells_of_the_kept_inputs_are_passed_over(tmp_path):
    # a NULL log or folders list (an _inputs made without its primary key) failed the vanished check
    # ('<' not supported between NoneType and str; 'NoneType' object is not iterable), exit 70
    log, db = indexed(tmp_path)
    change(db, "CREATE TABLE t AS SELECT * FROM _inputs", "DROP TABLE _inputs",
           "CREATE TABLE _inputs AS SELECT * FROM t", "DROP TABLE t", "UPDATE _inputs SET folders = NULL",
           "INSERT INTO _inputs VALUES (NULL, NULL, NULL, NULL, NULL)")
    result = index(log.parent, "--db", db, "--no-default-redaction", "-j", "1", expect=0)
    assert "this run: 0 new, 0 grown (0 read from where they were indexed), 0 rewritten (indexed again whole), " \
           "1 unchanged, 0 vanished, " in result.stdout


def test_a_table_of_another_shape_is_refused_before_anything_is_written(tmp_path):
    log, db = indexed(tmp_path)
    change(db, "ALTER TABLE _inputs DROP COLUMN state")
    result = index(log.parent, "--db", db, "--no-default-redaction", "-j", "1", expect=2)
    assert result.one_line() == (f"dshreplay: usage error: {db}: not an index database this dshreplay writes: "
                                 "table _inputs: column 5 state BLOB expected, nothing found")


def test_an_index_of_the_format_before_is_refused_as_built_with_other_settings(tmp_path):
    # format 1 kept each log's path as it is: refused by its settings (never rebuilt or mixed in place),
    # before its _inputs of three columns is taken for a damaged table
    log, db = indexed(tmp_path)
    change(db, """UPDATE _meta SET value = replace(value, '"format":2', '"format":1')""",
           "ALTER TABLE _inputs DROP COLUMN path_hash", "ALTER TABLE _inputs DROP COLUMN folders")
    result = index(log.parent, "--db", db, "--no-default-redaction", "-j", "1", expect=2)
    assert result.one_line() == (f"dshreplay: usage error: {db}: the index was built with other settings: format 1 "
                                 "(now 2); index into a new --db")


def test_usage_on_an_empty_duckdb_file_says_it_is_no_index(tmp_path):
    # 'Catalog Error: Table with name model_calls does not exist', exit 70 (sql answers on it)
    db = tmp_path / "empty.duckdb"
    duckdb.connect(str(db)).close()
    result = attack("usage", "--db", db, mem_mb=MEM)
    assert result.code == 2
    assert result.one_line() == (f"dshreplay: usage error: {db}: not an index database this dshreplay writes: it "
                                 "has no sessions table (build one with `dshreplay index PATH... --db FILE`)")
    assert attack("sql", db, "SELECT 42 AS answer", "--json", mem_mb=MEM).stdout == '[{"answer":42}]\n'


def test_usage_on_a_text_token_column_says_which_column(tmp_path):
    # "unsupported operand type(s) for +=: 'int' and 'str'", exit 70
    _, db = indexed(tmp_path)
    change(db, "ALTER TABLE model_calls ALTER input_tokens TYPE VARCHAR")
    result = attack("usage", "--db", db, mem_mb=MEM)
    assert result.code == 2
    assert result.one_line() == (f"dshreplay: usage error: {db}: not an index database this dshreplay writes: "
                                 "table model_calls: column 17 input_tokens BIGINT expected, input_tokens VARCHAR "
                                 "found")


def test_usage_by_session_on_rows_with_no_log_or_session_id_groups_them_apart(tmp_path):
    # a NULL session id and log beside a named session: '<' not supported between NoneType and str, exit 70
    from dshreplay.testing.samples import multi_turn
    log = multi_turn().write(tmp_path / "a.jsonl")
    db = tmp_path / "index.duckdb"
    index(log, "--db", db, "--no-default-redaction", "-j", "1", expect=0)
    change(db, "UPDATE model_calls SET log = NULL, session_id = NULL WHERE seq = (SELECT min(seq) FROM model_calls)")
    result = attack("usage", "--db", db, "--by", "session", "--json", mem_mb=MEM)
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)["rows"]
    assert [(r["key"], r["calls"]) for r in rows] == [("null", 1), ("sample-multi-turn", 3)]


# -- a kept pass state is input: bounded, shape-checked, replaced when in doubt -------------------------

def sealed(log_bytes: bytes, payload: bytes) -> bytes:
    """`payload` sealed as `index` seals the state of a log that redacts nothing: with a key anyone
    holding the log computes."""
    from dshreplay.core._passstate import _cipher, state_key
    key = state_key()
    key.update(log_bytes)
    cipher, nonce = _cipher(key.digest())
    return cipher.encrypt(nonce, payload, None)


@pytest.mark.parametrize("payload, why", [
    ("bomb", "the kept state inflates past the {ceiling} bytes its log can need"),
    ("big", "the kept state is {size} bytes, more than the {ceiling} its log can need"),
    ("huge", "the kept state is {size} bytes, more than the {now} its log can need"),  # (not read out of the db)
    ("list", "not a pass's state"),
])
def test_a_forged_pass_state_is_bounded_and_the_log_read_whole_with_a_note(tmp_path, payload, why):
    # a 48 KiB state (zstd of zeros) made index inflate it to 1.66 GB (a ceiling of 16 GiB)
    import pickle

    import zstandard

    from dshreplay.core._passstate import state_ceiling
    log, db = indexed(tmp_path)
    data = log.read_bytes()
    ceiling = state_ceiling(len(data))
    if payload == "bomb":  # (1 GiB of zeros)
        packer = zstandard.ZstdCompressor(level=19).compressobj()
        body = b"".join(packer.compress(bytes(1 << 20)) for _ in range(1024)) + packer.flush()
        assert len(body) < 64 << 10
    elif payload == "big":
        body = bytes(ceiling)
    elif payload == "huge":  # (past the ceiling of the log as it is now, grown)
        body = bytes(ceiling + (8 << 20))
    else:
        body = zstandard.ZstdCompressor().compress(pickle.dumps([1, 2, 3]))
    state = sealed(data, body)
    con = duckdb.connect(str(db))
    con.execute("UPDATE _inputs SET state = ?", [state])
    con.close()
    grow(log)
    result = attack("index", log.parent, "--db", db, "--no-default-redaction", "-j", "1", mem_mb=MEM, seconds=60)
    assert result.code == 0, result.stderr
    note = why.format(ceiling=ceiling, size=len(state), now=state_ceiling(log.stat().st_size))
    assert result.one_line() == (f"dshreplay: note: {log}: the pass kept where it was indexed is not used ({note}): "
                                 "read whole")
    assert ": 1 session; this run: 0 new, 1 grown (0 read from where they were indexed), " in result.stdout
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT turns FROM sessions").fetchall() == [(2,)]
    con.close()


# -- paths reach DuckDB as they were checked ------------------------------------------------------------

def test_a_db_and_parquet_folder_named_with_a_tilde_are_written_where_they_were_checked(tmp_path):
    # --db '~x.duckdb' was checked as ./~x.duckdb and written by DuckDB as $HOME/x.duckdb (and sql ~x.duckdb
    # then found nothing); --parquet '~pq' likewise
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    log = secret_log(work / "logs" / "a.jsonl", "sess-a")
    result = attack("index", log.parent, "--db", "~x.duckdb", "--parquet", "~pq", "--no-default-redaction", "-j",
                    "1", mem_mb=MEM, seconds=60, cwd=work, env={"HOME": str(home)})
    assert result.code == 0, result.stderr
    assert sorted(os.listdir(home)) == []
    assert sorted(os.listdir(work)) == ["logs", "~pq", "~x.duckdb"]
    assert sorted(p.name for p in (work / "~pq").iterdir())[:2] == ["approvals", "compactions"]
    answer = attack("sql", "~x.duckdb", "SELECT count(*) AS n FROM sessions", "--json", mem_mb=MEM, cwd=work,
                    env={"HOME": str(home)})
    assert answer.stdout == '[{"n":1}]\n'
