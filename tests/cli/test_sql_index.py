"""`index`, `sql`: the SQL index of many sessions, kept current incrementally, and queried.

DuckDB is the `sql` extra: without it these tests skip (and .ci/run, which
installs it, runs them). The store is written by our own builder
(tests/stores.py `audit_store`); every expected row was worked out by hand
from the builder's calls (seqs, lines, usages).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import sys

import pytest

duckdb = pytest.importorskip("duckdb", reason="the sql extra (duckdb) is not installed")
pytest.importorskip("pyarrow", reason="the sql extra (pyarrow) is not installed")

from dshreplay.sql._doc import example  # noqa: E402
from dshreplay.sql.rows import TABLES  # noqa: E402

import scenarios  # noqa: E402
from stores import audit_store  # noqa: E402


@pytest.fixture
def store(tmp_path):
    root = tmp_path / "store"
    audit_store(root)
    return root


@pytest.fixture
def indexed(cli, store, tmp_path):
    db = tmp_path / "index.duckdb"
    cli("index", store, "--db", db, "--messages", "-j", 1)
    return db


def dump(db) -> dict:
    """Every table's rows, sorted (a table's row order means nothing)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        present = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        return {name: sorted(con.execute(f"SELECT * FROM {name}").fetchall(), key=repr)
                for name in TABLES if name in present}
    finally:
        con.close()


def rows(cli, db, query: str) -> list:
    return [list(r.values()) for r in cli("sql", db, query, "--json").json()]


# -- the documented example queries, against the fixture store -----------------------------------

def test_tool_calls_running_rm_rf_or_curl_without_an_approval(cli, indexed):
    # alpha asks for `rm -rf build` at seq 13 (turn/start, request/header, step/start, user, 9 chunks:
    # line 15, the header being line 1) and runs it with no approval; its curl was allowed. fork-1
    # repeats alpha's first turn (seed of 18: not its own) and runs curl at seq 31 with no approval;
    # beta's curl was rejected and never ran.
    assert rows(cli, indexed, example("unapproved-commands").sql) == [
        ["alpha", 13, 15, "call-0002", "rm -rf build", None, "completed"],
        ["fork-1", 31, 33, "call-0002", "curl -s https://example.com/CHANGES", None, "completed"]]


def test_sessions_hitting_the_context_window_and_what_the_compaction_dropped(cli, indexed):
    # beta: two user messages (seqs 3, 4), the failed call's usage and finish chunks (5, 6), then
    # compaction/start 7, its summary 8 (120000 tokens) and the checkpoint at 9 replacing 3..4.
    assert rows(cli, indexed, example("context-window").sql) == [
        ["beta", 5, 7, 9, 120000, 3, "user", "Summarize the whole repository."],
        ["beta", 5, 7, 9, 120000, 4, "user", "Include every file."]]


def test_tokens_and_failed_calls_per_model_per_day(cli, indexed):
    # day 1, flash: alpha's three calls (1000+1100+1200 in, 10+20+5 out, 500 cached) and one of each
    # fork's own (300/7 and 400/8; their seeds' copies of alpha's calls left out); day 2, pro: beta's
    # failed call (131000/0), then 2000/40/1500 and 2100/60/1900.
    assert rows(cli, indexed, example("tokens-per-model-per-day").sql) == [
        ["2026-07-06", "deepseek-v4-flash", 5, 4000, 50, 500, 0, None],
        ["2026-07-07", "deepseek-v4-pro", 3, 135100, 100, 3400, 1, "CONTEXT_WINDOW_EXCEEDED"]]


def test_sessions_sharing_a_seed_with_a_fork(cli, indexed, store):
    got = rows(cli, indexed, example("shared-seed").sql)
    assert got == [["alpha", str(store / "project" / "alpha" / "session.jsonl"), "parent", 18],
                   ["fork-2", str(store / "project" / "fork-2" / "session.jsonl"), "sibling", 18]]


def test_the_reference_documents_every_table_and_column():
    from conftest import ROOT
    doc = (ROOT / "docs" / "reference" / "sql.md").read_text()
    for name, columns in TABLES.items():
        assert f"### {name}" in doc
        for column in columns:
            assert f"| `{column.name}` | {column.type} |" in doc, (name, column.name)


# -- rows trace back to the log -------------------------------------------------------------------

def test_each_row_names_its_seq_and_line(cli, indexed, store):
    [[log, seq, line]] = rows(cli, indexed, "SELECT log, seq, line FROM approvals WHERE session_id = 'beta'")
    [shown] = cli("events", log, "--lines", line, "--json").json()
    record = json.loads(shown["text"])
    assert (record["seq"], record["type"]) == (seq, "approval/asked") == (21, "approval/asked")
    assert rows(cli, indexed, "SELECT session_id, status, verdict, turns, model_calls, failed_calls, retries, "
                              "tool_calls, compactions, input_tokens, cache_read_tokens, seed_length "
                              "FROM sessions ORDER BY session_id") == [
        ["alpha", "indexed", "ok", 2, 3, 0, 0, 2, 0, 3300, 500, None],
        ["beta", "indexed", "ok", 1, 3, 1, 1, 1, 1, 135100, 3400, None],
        ["fork-1", "indexed", "ok", 2, 2, 0, 0, 2, 0, 1300, 0, 18],
        ["fork-2", "indexed", "ok", 3, 4, 0, 0, 2, 0, 3700, 500, 46]]  # (a fork's seed counted, as stats does)


def test_a_log_whose_fold_fails_is_indexed_whole_and_named_with_exit_1(cli, tmp_path):
    # broken-seq-gap is multi-turn with seq 8 written where seq 5 belongs: the fold answers seqs 0..4,
    # and the rows hold every line (multi-turn's four calls start at seqs 4, 24, 38 and 52)
    from conftest import SAMPLES
    log = (SAMPLES / "broken-seq-gap.jsonl").resolve()
    db = tmp_path / "index.duckdb"
    result = cli("index", log, "--db", db, "--json", expect=1)
    assert result.json()["foldFailures"] == [{"log": str(log), "answeredUpTo": 4}]
    assert result.stderr == (f"dshreplay: {log}: the fold fails at seq 5: indexed whole, every line as logged; "
                             f"the fold's answers stop at seq 4 (sessions.answered_up_to; `validate` says why)\n")
    assert rows(cli, db, "SELECT answered_up_to, verdict FROM sessions") == [[4, "errors"]]
    assert rows(cli, db, "SELECT seq FROM model_calls ORDER BY seq") == [[4], [24], [38], [52]]
    again = cli("index", log, "--db", db)  # (unchanged: nothing indexed in this run, nothing to say)
    assert again.stdout.endswith(", 1 unchanged, 0 vanished, 0 unreadable, 0 whose fold fails\n")


# -- incremental and safe -------------------------------------------------------------------------

def test_two_runs_over_the_same_files_give_the_same_tables(cli, store, tmp_path):
    first, second = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    cli("index", store, "--db", first, "--messages", "-j", 1)
    before = dump(first)
    result = cli("index", store, "--db", first, "--messages", "-j", 1)
    assert result.stdout == (f"{first}: 4 sessions; this run: 0 new, 0 grown (0 read from where they were "
                             "indexed), 0 rewritten (indexed again whole), 4 unchanged, 0 vanished, 0 unreadable, "
                             "0 whose fold fails\n")
    assert dump(first) == before
    cli("index", store, "--db", second, "--messages", "-j", 2)
    assert dump(second) == before
    assert {name: len(r) for name, r in before.items()} == {
        # (fork-1 repeats alpha's first turn: 1 call, 1 tool call, 3 messages; fork-2 all of alpha)
        "sessions": 4, "turns": 8, "model_calls": 3 + 3 + (1 + 1) + (3 + 1), "tool_calls": 2 + 1 + (1 + 1) + 2,
        "approvals": 1 + 1 + 0 + 1, "replacements": 1, "compactions": 1, "findings": 0,
        "messages": 6 + 5 + (3 + 3) + (6 + 1)}


def test_a_log_that_grew_is_read_on_and_the_others_are_left_as_they_are(cli, store, tmp_path):
    db = tmp_path / "index.duckdb"
    cli("index", store, "--db", db, "-j", 1)
    log = store / "project" / "beta" / "session.jsonl"
    lines = log.read_bytes()
    turn = {"type": "turn/start", "seq": 36, "time": 1783438565999, "data": {"turn": 2}}
    log.write_bytes(lines + json.dumps(turn).encode() + b"\n")
    result = cli("index", store, "--db", db, "-j", 1, "--json")
    report = result.json()
    assert report["appended"] == [{"log": str(log), "detail": "lines 38..38 appended (78 bytes, 1 event)"}]
    assert (report["new"], report["rewritten"], report["unchanged"], report["resumed"]) == ([], [], 3, 1)
    assert rows(cli, db, "SELECT turn, seq, line, ending FROM turns WHERE session_id = 'beta' ORDER BY seq") == [
        [1, 0, 2, "completed"], [2, 36, 38, "interrupted"]]
    fresh = tmp_path / "fresh.duckdb"
    cli("index", store, "--db", fresh, "-j", 1)
    assert dump(db) == dump(fresh)


def test_a_grown_log_is_read_on_from_where_it_was_indexed_and_gives_the_rows_of_a_whole_read(cli, tmp_path):
    from dshreplay.testing.samples import LogBuilder
    # a log that grows turn by turn, through the open calls, approvals, brackets and messages a pass
    # carries across the cut: each run reads on from the last and gives a fresh index's tables
    b = LogBuilder("growing")
    log = tmp_path / "logs" / "session.jsonl"
    log.parent.mkdir()
    log.write_bytes(b.to_bytes()[:b.to_bytes().index(b"\n") + 1])
    db, steps = tmp_path / "index.duckdb", []
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("first")
    steps.append(b.drain())
    call = b.new_id("call")
    b.assistant("", calls=[(call, "bash", '{"command": "curl x"}')])
    b.approval(call, "bash", None)  # (asked, decided in the next part)
    steps.append(b.drain())
    b.add("approval/decided", {"id": "approval-0004", "outcome": "allowed-once"})
    seq = b.tool_call(call, "bash", '{"command": "curl x"}')
    steps.append(b.drain())
    b.tool_result(call, "ok", cites=seq)
    b.end_turn()
    b.start_turn()
    b.start_step()
    nodes = b.surface()
    b.compaction(nodes[0], nodes[2], "summary")
    b.assistant("done")
    steps.append(b.drain(pack=True))
    b.end_turn()
    steps.append(b.drain())
    for n, part in enumerate(steps):
        with open(log, "ab") as fh:
            fh.write(part)
        report = cli("index", log.parent, "--db", db, "--messages", "--json").json()
        assert (len(report["new"]), len(report["appended"]), report["resumed"]) == ((1, 0, 0) if n == 0 else (0, 1, 1))
        fresh = tmp_path / f"fresh{n}.duckdb"
        cli("index", log.parent, "--db", fresh, "--messages")
        assert dump(db) == dump(fresh), n
    assert rows(cli, db, "SELECT approval_outcome, outcome FROM tool_calls") == [["allowed-once", "completed"]]
    assert rows(cli, db, "SELECT status FROM compactions") == [["closed"]]


def test_a_kept_state_opens_only_with_its_log_and_loads_only_a_pass(cli, store, tmp_path, evidence_key_file):
    import hashlib
    import hmac
    import pickle

    import zstandard

    from dshreplay.core._passstate import KEY_TAG, StateError, dump_state, load_state
    db = tmp_path / "index.duckdb"
    cli("index", store, "--db", db, "-j", 1)
    log = store / "project" / "beta" / "session.jsonl"
    evidence = bytes.fromhex(evidence_key_file.read_text())  # (the index redacts: its seals are keyed)
    key = hmac.digest(evidence, KEY_TAG + log.read_bytes(), "sha256")  # (the log and the key: the index has neither)
    con = duckdb.connect(str(db))
    [[kept]] = con.execute("SELECT state FROM _inputs WHERE log = ?", [str(log)]).fetchall()
    state = load_state(kept, key)
    assert state.run.header["id"] == "beta"
    assert b"Summarize the whole repository" not in kept  # (the log's text is sealed)
    with pytest.raises(StateError, match="does not open with this log's key"):
        load_state(kept, hmac.digest(evidence, KEY_TAG + log.read_bytes()[:-1], "sha256"))
    with pytest.raises(StateError, match="does not open with this log's key"):
        load_state(kept, hashlib.sha256(KEY_TAG + log.read_bytes()).digest())  # (the log alone does not open it)
    with pytest.raises(StateError, match="does not open"):
        load_state(kept[:-1] + bytes([kept[-1] ^ 1]), key)
    # sealed with the right key, a pickle that names anything but a pass's classes is refused
    from dshreplay.core import _passstate as passstate
    cipher, nonce = passstate._cipher(key)
    evil = cipher.encrypt(nonce, zstandard.ZstdCompressor().compress(pickle.dumps(__import__("os").system)), None)
    with pytest.raises(StateError, match="a pass's state holds no posix.system"):
        load_state(evil, key)
    assert dump_state(state, key) == dump_state(load_state(kept, key), key)  # (sealing is deterministic)
    con.execute("UPDATE _inputs SET state = ? WHERE log = ?", [evil, str(log)])
    con.close()
    log.write_bytes(log.read_bytes() + json.dumps(
        {"type": "turn/start", "seq": 36, "time": 1783438565999, "data": {"turn": 2}}).encode() + b"\n")
    report = cli("index", store, "--db", db, "-j", 1, "--json").json()
    assert (len(report["appended"]), report["resumed"]) == (1, 0)  # (read whole instead)
    fresh = tmp_path / "fresh.duckdb"
    cli("index", store, "--db", fresh, "-j", 1)
    assert dump(db) == dump(fresh)


def test_a_log_rewritten_inside_what_was_indexed_is_indexed_again_whole_and_reported(cli, store, tmp_path):
    db = tmp_path / "index.duckdb"
    cli("index", store, "--db", db, "-j", 1)
    log = store / "project" / "alpha" / "session.jsonl"
    log.write_bytes(log.read_bytes().replace(b"rm -rf build", b"rm -rf /tmp"))
    result = cli("index", store, "--db", db, "-j", 1, expect=1)
    assert result.stderr.splitlines() == [
        f"dshreplay: warning: {log}: rewritten since it was indexed (rewritten inside the exported prefix, "
        "within lines 1..19): indexed again whole"]  # (checkpoints: every turn end; line 15 changed)
    assert rows(cli, db, "SELECT arguments FROM tool_calls WHERE session_id = 'alpha' ORDER BY seq")[0] == \
        ['{"command": "rm -rf /tmp"}']
    fresh = tmp_path / "fresh.duckdb"
    cli("index", store, "--db", fresh, "-j", 1)
    assert dump(db) == dump(fresh)


def test_a_log_that_vanished_is_marked_and_its_rows_kept(cli, store, tmp_path):
    db = tmp_path / "index.duckdb"
    cli("index", store, "--db", db, "-j", 1)
    log = store / "project" / "fork-2" / "session.jsonl"
    log.unlink()
    result = cli("index", store, "--db", db, "-j", 1, expect=1)
    assert result.stderr.splitlines() == [
        f"dshreplay: warning: {log}: vanished since it was indexed: marked vanished, its rows kept"]
    assert rows(cli, db, "SELECT session_id, status FROM sessions ORDER BY session_id") == [
        ["alpha", "indexed"], ["beta", "indexed"], ["fork-1", "indexed"], ["fork-2", "vanished"]]
    assert rows(cli, db, "SELECT count(*) FROM model_calls WHERE session_id = 'fork-2'") == [[4]]
    log.write_bytes(b"".join(b.to_bytes() for b in [audit_store(tmp_path / "again")["fork-2"]]))
    cli("index", store, "--db", db, "-j", 1)  # (back, unchanged)
    assert rows(cli, db, "SELECT status FROM sessions WHERE session_id = 'fork-2'") == [["indexed"]]


def test_an_unreadable_log_is_a_row_saying_why_and_exit_2(cli, store, tmp_path):
    (store / "project" / "broken").mkdir()
    (store / "project" / "broken" / "session.jsonl").write_bytes(b'{"type": "turn/start"}\n')
    db = tmp_path / "index.duckdb"
    result = cli("index", store, "--db", db, "-j", 1, expect=2)
    assert result.stderr.splitlines() == [
        f"dshreplay: unreadable: {store}/project/broken/session.jsonl: line 1: first record must be the session "
        'header (type "session"), got type "turn/start"']  # (the line, as every command names it)
    assert rows(cli, db, "SELECT status, verdict, error IS NOT NULL FROM sessions WHERE session_id IS NULL") == [
        ["unreadable", "unreadable", True]]
    assert rows(cli, db, "SELECT count(*) FROM sessions WHERE status = 'indexed'") == [[4]]


def test_an_index_built_with_other_settings_is_refused(cli, store, tmp_path):
    db = tmp_path / "index.duckdb"
    cli("index", store, "--db", db, "-j", 1)
    result = cli("index", store, "--db", db, "--messages", "-j", 1, expect=2)
    assert result.stderr == (f"dshreplay: usage error: {db}: the index was built with other settings: "
                             "messages False (now True); index into a new --db\n")


# -- redaction --------------------------------------------------------------------------------------

SECRET = "sk-live-abcdefghijklmnop0123"


def test_text_from_the_logs_is_redacted_as_export_redacts_it(cli, tmp_path):
    from dshreplay.testing.samples import LogBuilder

    from stores import run_tool
    b = LogBuilder("secretive")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user(f"use the key {SECRET}")
    run_tool(b, json.dumps({"command": f"curl -H 'Authorization: Bearer {SECRET}' x"}), f"echo {SECRET}",
             usage={"inputTokens": 1, "outputTokens": 1})
    b.end_turn()
    log = b.write(tmp_path / "secret.jsonl")

    def found(db) -> list:
        return [name for name in TABLES if SECRET in json.dumps(rows(cli, db, f"SELECT * FROM {name}"))]
    cli("index", log, "--db", tmp_path / "masked.duckdb", "--messages")
    assert found(tmp_path / "masked.duckdb") == []
    assert "[REDACTED]" in rows(cli, tmp_path / "masked.duckdb", "SELECT arguments FROM tool_calls")[0][0]
    con = duckdb.connect(str(tmp_path / "masked.duckdb"), read_only=True)
    facts, state = con.execute("SELECT facts, state FROM _inputs").fetchone()
    con.close()
    assert SECRET not in facts and SECRET.encode() not in state  # (the kept pass is sealed)
    assert SECRET.encode() not in (tmp_path / "masked.duckdb").read_bytes()
    cli("index", log, "--db", tmp_path / "plain.duckdb", "--messages", "--no-default-redaction")
    assert found(tmp_path / "plain.duckdb") == ["tool_calls", "messages"]


def test_pointer_rules_are_refused_by_index(cli, store, tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text('{"pointers": ["/data/arguments"]}')
    result = cli("index", store, "--db", tmp_path / "x.duckdb", "--redact", rules, expect=2)
    assert result.stderr == (f"dshreplay: usage error: {rules}: the index writes values, not records: its "
                             "redaction takes text and keys rules; pointer rules would not apply (mask those "
                             "members by name with keys)\n")
    assert not (tmp_path / "x.duckdb").exists()


def test_keys_rules_mask_members_in_arguments_and_messages(cli, tmp_path):
    from dshreplay.testing.samples import LogBuilder

    from stores import run_tool
    b = LogBuilder("keyed")
    b.start_turn()
    b.request_header()
    b.start_step()
    run_tool(b, '{"command": "deploy", "target": "prod-cluster-7"}', "ok", usage={"inputTokens": 1, "outputTokens": 1})
    b.end_turn()
    log = b.write(tmp_path / "keyed.jsonl")
    rules = tmp_path / "rules.json"
    rules.write_text('{"keys": ["target"]}')
    db = tmp_path / "x.duckdb"
    cli("index", log, "--db", db, "--messages", "--redact", rules)
    # (masked in place: every byte outside the masked value as the model wrote it)
    assert rows(cli, db, "SELECT arguments FROM tool_calls") == [['{"command": "deploy", "target": "[REDACTED]"}']]
    assert rows(cli, db, "SELECT text FROM messages WHERE role = 'assistant'") == [
        ['[call bash call-0001] {"command": "deploy", "target": "[REDACTED]"}']]


# -- Parquet -----------------------------------------------------------------------------------------

def test_parquet_partitions_read_back_as_the_tables(cli, store, tmp_path):
    db, out = tmp_path / "index.duckdb", tmp_path / "parquet"
    cli("index", store, "--db", db, "--parquet", out, "-j", 1)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet") if "tool_calls" in str(p)) == [
        "tool_calls/day=2026-07-06/data.parquet", "tool_calls/day=2026-07-07/data.parquet"]
    tables = dump(db)
    con = duckdb.connect()
    for name in (name for name, r in tables.items() if r):  # (a table with no rows has no file)
        read = con.execute(f"SELECT * EXCLUDE (day) FROM read_parquet('{out}/{name}/*/*.parquet', "
                           "hive_partitioning = true)").fetchall()
        days = con.execute(f"SELECT DISTINCT day FROM read_parquet('{out}/{name}/*/*.parquet', "
                           "hive_partitioning = true)").fetchall()
        if name == "sessions":
            want = sorted((r[:17] + r[18:] for r in tables[name]), key=repr)  # (day is the partition)
        else:
            want = tables[name]
        assert sorted(read, key=repr) == want, name
        assert all(type(d[0]).__name__ == "date" for d in days)
    # a later run rewrites the days that changed, and only those
    old = {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")}
    log = store / "project" / "beta" / "session.jsonl"
    log.write_bytes(log.read_bytes() + json.dumps(
        {"type": "turn/start", "seq": 36, "time": 1783438565999, "data": {"turn": 2}}).encode() + b"\n")
    cli("index", store, "--db", db, "--parquet", out, "-j", 1)
    changed = sorted(p.relative_to(out).parent.name for p in out.rglob("*.parquet")
                     if p.stat().st_mtime_ns != old.get(p))
    assert set(changed) == {"day=2026-07-07"}
    assert con.execute(f"SELECT count(*) FROM read_parquet('{out}/turns/*/*.parquet')").fetchone() == (9,)


# -- sql ----------------------------------------------------------------------------------------------

def test_sql_prints_a_table_json_lines_or_csv(cli, indexed):
    query = "SELECT session_id, turns, started_at FROM sessions WHERE session_id IN ('alpha', 'beta') ORDER BY 1"
    assert cli("sql", indexed, query).stdout == (
        "session_id    turns    started_at\n"
        "------------  -------  ------------------------\n"
        "alpha         2        2026-07-06T15:36:05.197Z\n"
        "beta          1        2026-07-07T15:36:05.197Z\n"
        "(2 rows)\n")
    assert cli("sql", indexed, query, "--jsonl").stdout == (
        '{"session_id":"alpha","turns":2,"started_at":"2026-07-06T15:36:05.197Z"}\n'
        '{"session_id":"beta","turns":1,"started_at":"2026-07-07T15:36:05.197Z"}\n')
    assert cli("sql", indexed, query, "--csv").stdout == (
        "session_id,turns,started_at\nalpha,2,2026-07-06T15:36:05.197Z\nbeta,1,2026-07-07T15:36:05.197Z\n")


def test_sql_errors_are_one_line_and_exit_2(cli, indexed, tmp_path):
    result = cli("sql", indexed, "SELECT nope FROM sessions", expect=2)
    assert result.stderr.startswith("dshreplay: usage error: the query failed: Binder Error: ")
    assert len(result.stderr.splitlines()) == 1
    result = cli("sql", indexed, "DELETE FROM sessions", expect=2)  # (read-only)
    assert "read-only" in result.stderr and len(result.stderr.splitlines()) == 1
    result = cli("sql", indexed, f"SELECT * FROM read_csv('{indexed}')", expect=2)  # (no other file)
    assert len(result.stderr.splitlines()) == 1
    result = cli("sql", tmp_path / "none.duckdb", "SELECT 1", expect=2)
    assert result.stderr == (f"dshreplay: usage error: {tmp_path / 'none.duckdb'}: no index database there "
                             "(build one with `dshreplay index PATH... --db FILE`)\n")


def test_without_the_sql_extra_a_one_line_error_and_exit_2(cli, store, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "duckdb", None)  # (import duckdb raises ImportError)
    for args in (["index", store, "--db", tmp_path / "x.duckdb"], ["sql", tmp_path / "x.duckdb", "SELECT 1"]):
        result = cli(*args, expect=2)
        assert result.stderr == ("dshreplay: usage error: this command needs the sql extra (DuckDB, pyarrow, "
                                 "cryptography): pip install 'dshreplay[sql]'\n")
    assert not (tmp_path / "x.duckdb").exists()


# -- the hashes of the inputs: keyed when the index redacts -------------------------------------------

PASSWORD = '"password": "Summer2024!"'
HEX64 = re.compile(r"[0-9a-f]{64}")


def password_log(tmp_path):
    """A log whose user message and tool call hold a password the default rules mask, and
    the bytes of its first turn (a prefix ending at a turn end)."""
    from dshreplay.testing.samples import LogBuilder

    from stores import run_tool
    b = LogBuilder("keyed")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user(f"the config is {{{PASSWORD}}}")
    run_tool(b, json.dumps({"command": f"echo '{{{PASSWORD}}}' > config.json"}), "ok",
             usage={"inputTokens": 1, "outputTokens": 1})
    b.end_turn()
    first = b.to_bytes()
    b.start_turn()
    b.start_step()
    b.user("and again")
    b.assistant("done")
    b.end_turn()
    log = tmp_path / "logs" / "session.jsonl"
    log.parent.mkdir()
    log.write_bytes(b.to_bytes())
    assert log.read_bytes().startswith(first) and first.count(b"\n") > 5
    return log, first


def plain_hashes(data: bytes) -> set[str]:
    """Every plain SHA-256 an index could hold of `data`: the file's, each line's (with and without
    its newline), and each link of the plain line chain (SHA-256 of the last link and the line,
    from SHA-256 of "dshreplay line chain v1"), worked out here, not by the code under test."""
    found = {hashlib.sha256(data).hexdigest()}
    link = hashlib.sha256(b"dshreplay line chain v1").digest()
    for line in data.splitlines(keepends=True):
        found |= {hashlib.sha256(line).hexdigest(), hashlib.sha256(line.rstrip(b"\n")).hexdigest()}
        link = hashlib.sha256(link + line).digest()
        found.add(link.hex())
    return found


def every_value(db) -> str:
    """Every value of every column of every table of the database (the hidden ones too), as text;
    a BLOB also in hex."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        texts = []
        for table, column, kind in con.execute(
                "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE NOT internal").fetchall():
            texts += [str(v) for (v,) in con.execute(f'SELECT CAST("{column}" AS VARCHAR) FROM "{table}"').fetchall()]
            if kind == "BLOB":
                texts += [str(v) for (v,) in con.execute(f'SELECT lower(hex("{column}")) FROM "{table}"').fetchall()]
        return "\n".join(texts)
    finally:
        con.close()


def settings_of(db) -> dict:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return json.loads(con.execute("SELECT value FROM _meta WHERE key = 'settings'").fetchone()[0])
    finally:
        con.close()


def test_an_index_that_redacts_holds_no_plain_hash_of_its_logs_their_lines_or_their_chain(cli, tmp_path):
    log, _ = password_log(tmp_path)
    data, key = log.read_bytes(), tmp_path / "evidence.key"
    db = tmp_path / "keyed.duckdb"
    cli("index", log, "--db", db, "--messages", "--evidence-key", key)
    plain = plain_hashes(data)
    values, raw = every_value(db), db.read_bytes()
    assert "Summer2024!" not in values and b"Summer2024!" not in raw
    assert set(HEX64.findall(values.lower())) & plain == set()
    assert set(HEX64.findall(raw.decode("latin-1").lower())) & plain == set()
    assert not any(bytes.fromhex(h) in raw for h in plain)  # (nor as raw digests)
    secret = bytes.fromhex(key.read_text())
    assert settings_of(db)["inputHash"] == "hmac-sha256"
    assert settings_of(db)["evidenceKey"] == hmac.digest(secret, b"dshreplay evidence key", "sha256").hex()
    assert hmac.digest(secret, data, "sha256").hex() in values  # (the keyed hash: checkable with the key)
    # the control: without redaction the same facts are plain, and the scan finds them
    control = tmp_path / "plain.duckdb"
    cli("index", log, "--db", control, "--messages", "--no-default-redaction")
    values, raw = every_value(control), control.read_bytes()
    head = hashlib.sha256(b"dshreplay line chain v1").digest()
    for line in data.splitlines(keepends=True):
        head = hashlib.sha256(head + line).digest()
    assert {hashlib.sha256(data).hexdigest(), head.hex()} <= set(HEX64.findall(values)) & plain
    assert hashlib.sha256(data).hexdigest().encode() in raw  # (the byte grep finds a plain hash when there is one)
    assert (settings_of(control)["inputHash"], settings_of(control)["evidenceKey"]) == ("sha256", None)


def test_an_index_that_redacts_needs_the_evidence_key_and_is_updated_only_with_it(cli, tmp_path, monkeypatch):
    log, _ = password_log(tmp_path)
    db, key, other = tmp_path / "index.duckdb", tmp_path / "evidence.key", tmp_path / "other.key"
    monkeypatch.delenv("DSHREPLAY_EVIDENCE_KEY")
    result = cli("index", log, "--db", db, expect=2)
    assert result.stderr == ("dshreplay: usage error: this index redacts, so the hashes of its inputs are keyed: "
                             "give --evidence-key FILE (made if absent; keep it with the logs, never with the "
                             "index), or index with --no-default-redaction and no --redact to hash them "
                             "plainly\n")
    assert not db.exists()
    result = cli("index", log, "--db", db, "--evidence-key", db, expect=2)
    assert result.stderr == (f"dshreplay: usage error: --evidence-key {db} lies inside --db {db}: the key must be "
                             "kept beside the index (with the logs), never in it\n")
    result = cli("index", log, "--db", db, "--parquet", tmp_path / "pq", "--evidence-key", tmp_path / "pq" / "k",
                 expect=2)
    assert result.stderr == (f"dshreplay: usage error: --evidence-key {tmp_path}/pq/k lies inside --parquet "
                             f"{tmp_path}/pq: the key must be kept beside the index (with the logs), never in it\n")
    assert not db.exists()
    cli("index", log, "--db", db, "--evidence-key", key)
    assert key.stat().st_mode & 0o777 == 0o600
    monkeypatch.setenv("DSHREPLAY_EVIDENCE_KEY", str(other))
    result = cli("index", log, "--db", db, expect=2)
    first = hmac.digest(bytes.fromhex(key.read_text()), b"dshreplay evidence key", "sha256").hex()
    second = hmac.digest(bytes.fromhex(other.read_text()), b"dshreplay evidence key", "sha256").hex()
    assert result.stderr == (f"dshreplay: usage error: {db}: the index was built with other settings: "
                             f"evidenceKey '{first}' (now '{second}'); index into a new --db\n")
    result = cli("index", log, "--db", db, "--no-default-redaction", expect=2)  # (without it: plain hashes)
    assert result.stderr == (f"dshreplay: usage error: {db}: the index was built with other settings: "
                             f"defaultRules True (now False), evidenceKey '{first}' (now None), inputHash "
                             "'hmac-sha256' (now 'sha256'); index into a new --db\n")


def test_a_keyed_index_reads_on_a_log_that_grew(cli, tmp_path):
    log, first = password_log(tmp_path)
    data, key = log.read_bytes(), tmp_path / "evidence.key"
    log.write_bytes(first)
    db = tmp_path / "index.duckdb"
    cli("index", log.parent, "--db", db, "--messages", "--evidence-key", key)
    assert cli("index", log.parent, "--db", db, "--evidence-key", key, "--messages", "--json").json()["unchanged"] == 1
    log.write_bytes(data)
    report = cli("index", log.parent, "--db", db, "--messages", "--evidence-key", key, "--json").json()
    assert (report["new"], len(report["appended"]), report["resumed"]) == ([], 1, 1)
    fresh = tmp_path / "fresh.duckdb"
    cli("index", log.parent, "--db", fresh, "--messages", "--evidence-key", key)
    assert dump(db) == dump(fresh)
    facts = json.loads(rows(cli, db, "SELECT facts FROM _inputs")[0][0])
    assert facts["sha256"] == hmac.digest(bytes.fromhex(key.read_text()), data, "sha256").hex()
    assert set(HEX64.findall(every_value(db))) & plain_hashes(data) == set()


def test_a_turn_left_without_its_turn_end_counts_only_its_own_steps(cli, write_log, tmp_path):
    # by hand (scenarios.turn_left_open): each turn has one step/start (1, 11, 23); turn 1 stops
    # where turn 2 starts (10), so it holds step 1 only
    db = tmp_path / "index.duckdb"
    cli("index", write_log(scenarios.turn_left_open()), "--db", db, "--no-default-redaction", "-j", 1)
    assert rows(cli, db, "SELECT turn, end_seq, ending, steps FROM turns ORDER BY turn") == [
        [1, None, "not ended", 1], [2, 21, "completed", 1], [3, None, "interrupted", 1]]


def test_a_state_kept_by_a_dshreplay_of_another_state_version_is_not_resumed_but_read_whole(
        cli, write_log, tmp_path, monkeypatch):
    # a state kept under the v1 tag (before ToolTracker._results and Span.cut) does not open: the grown
    # log is read whole (resumed 0) and gives a fresh index's tables, where resuming it failed (exit 70)
    from dshreplay.core import _passstate as passstate
    b, s = scenarios.reused_call_id()
    lines = b.to_bytes().splitlines(keepends=True)
    log = write_log(b"".join(lines[:19]))  # (the header and turn 1: seqs 0..17)
    db = tmp_path / "index.duckdb"
    with monkeypatch.context() as patch:
        patch.setattr(passstate, "KEY_TAG", b"dshreplay pass state v1\n")
        cli("index", log, "--db", db, "--no-default-redaction", "-j", 1)
    with open(log, "ab") as fh:
        fh.write(b"".join(lines[19:]))
    report = cli("index", log, "--db", db, "--no-default-redaction", "-j", 1, "--json").json()
    assert (len(report["appended"]), report["resumed"]) == (1, 0)
    fresh = tmp_path / "fresh.duckdb"
    cli("index", log, "--db", fresh, "--no-default-redaction", "-j", 1)
    assert dump(db) == dump(fresh)


# -- --db must be a DuckDB database file of its own ----------------------------------------------------

@pytest.mark.parametrize("name, data", [
    ("session.jsonl", None),  # (the input log itself)
    ("notes.csv", b"a,b\n1,2\n"),
    ("data.json", b'{"a": 1}\n'),
    (":memory:", None),
])
def test_index_refuses_a_db_that_duckdb_would_open_as_no_database_file(cli, tmp_path, monkeypatch, name, data):
    # DuckDB opens a CSV or JSON file (the log too), or ":memory:", as an in-memory database:
    # the run said "1 session" and exit 0, and kept nothing.
    from dshreplay.testing.samples import multi_turn
    monkeypatch.chdir(tmp_path)
    (tmp_path / "session.jsonl").write_bytes(multi_turn().to_bytes())
    if data is not None:
        (tmp_path / name).write_bytes(data)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    result = cli("index", "session.jsonl", "--db", name, "--no-default-redaction", "-q", "-j", 1, expect=2)
    assert result.stderr == (f"dshreplay: usage error: {name}: not a DuckDB database file (DuckDB would open it "
                             "as an in-memory database, and an index there is lost): an index is a file of its "
                             "own, such as index.duckdb\n")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


@pytest.mark.parametrize("name, data", [
    ("session.jsonl", None),  # (a log)
    ("notes.csv", b"a,b\n1,2\n"),
    ("app.sqlite", b"SQLite format 3\x00" + bytes(84)),
])
def test_sql_on_a_file_that_is_no_index_says_so_in_one_line(cli, write_log, tmp_path, monkeypatch, name, data):
    # it said "cannot open the index database: Catalog Error: Cannot launch in-memory database in read-only
    # mode!" for a log or a CSV file
    monkeypatch.chdir(tmp_path)
    if data is None:
        write_log(scenarios.turn_left_open(), name)
    else:
        (tmp_path / name).write_bytes(data)
    result = cli("sql", name, "SELECT 1", expect=2)
    assert result.stderr == (f"dshreplay: usage error: {name}: not a DuckDB database file (DuckDB would open it "
                             "as an in-memory database, and an index there is lost): an index is a file of its "
                             "own, such as index.duckdb\n")


def test_index_installs_and_loads_no_duckdb_extension_for_its_db(cli, tmp_path, monkeypatch):
    # A SQLite file (or md:NAME, s3://...) as --db made DuckDB download an extension from the
    # network and would have written the index's tables into the user's SQLite database.
    import sqlite3

    from dshreplay.testing.samples import multi_turn
    monkeypatch.chdir(tmp_path)
    (tmp_path / "session.jsonl").write_bytes(multi_turn().to_bytes())
    con = sqlite3.connect(tmp_path / "user.sqlite")
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    before = (tmp_path / "user.sqlite").read_bytes()
    result = cli("index", "session.jsonl", "--db", "user.sqlite", "--no-default-redaction", "-q", "-j", 1, expect=2)
    assert result.stderr.startswith("dshreplay: usage error: user.sqlite: not a DuckDB database file ")
    assert (tmp_path / "user.sqlite").read_bytes() == before
    # a name DuckDB reads as an extension's (MotherDuck): DuckDB is given the file checked, ./md:x (its
    # absolute path), so no extension is fetched or loaded
    result = cli("index", "session.jsonl", "--db", "md:x", "--no-default-redaction", "-q", "-j", 1)
    assert result.stderr == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["md:x", "session.jsonl", "user.sqlite"]
    assert (tmp_path / "md:x").read_bytes()[8:12] == b"DUCK"


# -- --parquet deletes only partitions the index wrote --------------------------------------------------

def test_parquet_into_a_folder_holding_files_of_another_tool_deletes_nothing(cli, store, tmp_path):
    # A Hive-partitioned lake of another tool (sessions/day=.../part-0.parquet) given as --parquet:
    # the first write to it removed every day=* folder of every table name, the user's files too.
    lake = tmp_path / "lake"
    theirs = lake / "sessions" / "day=2020-01-01" / "part-0.parquet"
    theirs.parent.mkdir(parents=True)
    theirs.write_bytes(b"not ours")
    result = cli("index", store, "--db", tmp_path / "index.duckdb", "--parquet", lake, "-q", "-j", 1, expect=2)
    assert result.stderr == (f"dshreplay: usage error: --parquet {lake} holds sessions/day=2020-01-01/part-0.parquet, "
                             "which the index does not write: nothing was deleted; give --parquet a folder of its "
                             "own\n")
    assert theirs.read_bytes() == b"not ours"
    assert sorted(p.relative_to(lake).as_posix() for p in lake.rglob("*")) == [
        "sessions", "sessions/day=2020-01-01", "sessions/day=2020-01-01/part-0.parquet"]


def test_parquet_never_deletes_through_a_linked_table_folder(cli, store, tmp_path):
    # lake/turns -> a folder elsewhere: its day=* folders were removed through the link.
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "day=2019-01-01").mkdir(parents=True)
    (elsewhere / "day=2019-01-01" / "data.parquet").write_bytes(b"kept")
    lake = tmp_path / "lake"
    lake.mkdir()
    (lake / "turns").symlink_to(elsewhere)
    result = cli("index", store, "--db", tmp_path / "index.duckdb", "--parquet", lake, "-q", "-j", 1, expect=2)
    assert result.stderr == (f"dshreplay: usage error: --parquet {lake} holds turns, which the index does not "
                             "write: nothing was deleted; give --parquet a folder of its own\n")
    assert (elsewhere / "day=2019-01-01" / "data.parquet").read_bytes() == b"kept"


def test_parquet_from_another_index_is_replaced_by_a_new_one(cli, store, tmp_path):
    # (what the first write's removal is for: partitions an index wrote, of days the new one lacks)
    lake, old = tmp_path / "lake", tmp_path / "lake" / "turns" / "day=2001-01-01"
    old.mkdir(parents=True)
    (old / "data.parquet").write_bytes(b"old")
    cli("index", store, "--db", tmp_path / "index.duckdb", "--parquet", lake, "-q", "-j", 1)
    assert not old.exists()
    assert (lake / "turns" / "day=2026-07-06" / "data.parquet").is_file()


def test_parquet_that_is_the_db_file_is_refused_before_the_database_is_made(cli, store, tmp_path, monkeypatch):
    # The database was made, then the run ended with "dshreplay: error: index.duckdb: File exists".
    monkeypatch.chdir(tmp_path)
    result = cli("index", store, "--db", "index.duckdb", "--parquet", "index.duckdb", "-q", "-j", 1, expect=2)
    assert result.stderr == ("dshreplay: usage error: --parquet index.duckdb is the --db file: give the Parquet "
                             "tables a folder of their own\n")
    assert not (tmp_path / "index.duckdb").exists()


def test_a_parquet_write_that_fails_names_the_partitions_not_the_database(cli, store, tmp_path, monkeypatch):
    import dshreplay.sql._database as sqlindex
    db, out = tmp_path / "index.duckdb", tmp_path / "parquet"

    def full(*args):
        raise duckdb.IOException("No space left on device")
    monkeypatch.setattr(sqlindex, "_write_day", full)
    result = cli("index", store, "--db", db, "--parquet", out, expect=2)
    assert result.stderr == (f"dshreplay: output error: {out}: cannot write the Parquet partitions (the index "
                             "database is up to date): No space left on device\n")
    monkeypatch.undo()  # (the next run writes them)
    cli("index", store, "--db", db, "--parquet", out)
    assert sorted(p.parent.name for p in (out / "sessions").glob("day=*/data.parquet")) == [
        "day=2026-07-06", "day=2026-07-07"]


def test_sql_takes_the_database_as_index_and_usage_do(cli, tmp_path):
    # index --db FILE and usage --db FILE, but only sql FILE QUERY
    from dshreplay.testing.samples import multi_turn
    log = multi_turn().write(tmp_path / "s.jsonl")
    db = tmp_path / "i.duckdb"
    cli("index", log, "--db", db)
    query = "SELECT count(*) AS n FROM sessions"
    assert cli("sql", "--db", db, query, "--json").json() == cli("sql", db, query, "--json").json() == [{"n": 1}]
    for args in ((query,), ("--db", db, db, query), ()):
        assert cli("sql", *args, expect=2).stderr == (
            "dshreplay: usage error: give the database and one QUERY: sql --db FILE QUERY (or sql FILE QUERY) "
            "(see 'dshreplay sql --help')\n")
