"""Costs that grew faster than the input (issue #20, round 3): each case runs in a
child under CPU-time and address-space limits, at two sizes where that shows the
growth, and asserts the answer as well as the bound.

Inputs are generated here; none is committed. The limits are set so the code
before each fix fails them at the larger size (measured: the figures are in
the comments) while the fixed code passes with a wide margin on a loaded
two-core machine. (That a preview cut before it is cleaned is the one the
whole text gives is tests/unit/test_render.py's.)
"""

from __future__ import annotations

import json
import re

import orjson
import pytest
from test_attacks import HEADER, attack, lines
from wcwidth import wcswidth

from dshreplay.testing.samples import user_record


def _event(seq: int, kind: str, data: dict, **envelope) -> dict:
    return {"type": kind, "seq": seq, "time": 1783352166000 + seq, "data": data, **envelope}


# -- 1. hook results that answer no invocation --------------------------------------------

def hook_log(path, n: int):
    """One turn: `n` invocations of one handler at `n` points, then `n` results at
    `n` other points: every result pairs with none, and its message names the
    oldest unanswered invocation of that handler (which a scan of every waiting
    invocation found, per result)."""
    records = [HEADER, _event(0, "turn/start", {"turn": 1})]
    for k in range(n):
        records.append(_event(1 + k, "hook/invoked", {"turn": 1, "point": f"p{k}", "dialect": "claude-code",
                                                        "handlerId": "h"}))
    for k in range(n):
        records.append(_event(1 + n + k, "hook/result", {"turn": 1, "point": f"q{k}", "handlerId": "h",
                                                           "decision": "pass", "exitCode": 0, "durationMs": 1}))
    records.append(_event(1 + 2 * n, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}))
    path.write_bytes(lines(*records))
    return path


@pytest.mark.parametrize("n", [4_000, 16_000])
def test_unanswered_hook_results_are_paired_in_linear_time(tmp_path, n):
    # before: 16,000 took 50 s in validate and 75 s in stats (each result scanned every waiting invocation)
    log = hook_log(tmp_path / "hooks.jsonl", n)
    result = attack("validate", log, "--json", "--select", "DSH-E402", seconds=8, mem_mb=400)
    assert result.code == 1, result.stderr
    [report] = json.loads(result.stdout)["files"]
    first = report["findings"][0]
    assert (first["code"], first["seq"], first["pointer"]) == ("DSH-E402", 1 + n, "/data/handlerId")
    assert first["message"] == ('hook/result for hook "h" at "q0" in turn 1 answers no unanswered hook/invoked '
                                '(the unanswered hook/invoked of that handler at seq 1 is at "p0" in turn 1)')
    assert report["omitted"]["findings"] == {"DSH-E402": n - 1000}
    result = attack("stats", log, "--json", seconds=8, mem_mb=400)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["sessions"][0]["events"] == 2 * n + 2


def test_many_runs_of_one_handler_are_answered_oldest_first(tmp_path):
    # one key invoked n times, answered n - 1 times: each answer takes the oldest run (list.pop(0)
    # moved every waiting one), so the one left unanswered when the turn closes is the last
    n = 30_000
    records = [HEADER, _event(0, "turn/start", {"turn": 1})]
    data = {"turn": 1, "point": "PreToolUse", "handlerId": "h"}
    records += [_event(1 + k, "hook/invoked", {**data, "dialect": "claude-code"}) for k in range(n)]
    records += [_event(1 + n + k, "hook/result", {**data, "decision": "pass", "durationMs": 1}) for k in range(n - 1)]
    records.append(_event(2 * n, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}))
    (tmp_path / "same.jsonl").write_bytes(lines(*records))
    result = attack("validate", tmp_path / "same.jsonl", "--json", seconds=8, mem_mb=400)
    assert result.code == 0, result.stdout
    [left] = json.loads(result.stdout)["files"][0]["findings"]
    assert (left["code"], left["seq"]) == ("DSH-W403", 2 * n)
    assert left["message"] == f'turn closed with hook "h" at "PreToolUse" (hook/invoked at seq {n}) unanswered'


# -- 2. the preview of a huge message ------------------------------------------------------

def test_a_message_of_thirty_million_characters_is_previewed_at_the_cost_of_its_column(tmp_path):
    # before: each preview cleaned and folded the whole text (fold spent 7.5 s on a 100 MB message
    # against a 0.75 s parse); this one, 16 million words the fold replaces one by one, took 4.7 s
    log = tmp_path / "long.jsonl"
    log.write_bytes(lines(HEADER, user_record(0, "w " * 16_000_000)))
    result = attack("fold", log, seconds=3, mem_mb=600)
    assert result.code == 0, result.stderr
    assert result.stdout.splitlines()[2:] == ["1  0    user  append  32000053  " + "w " * 33 + "w…",
                                              "1 node, 1 message, 0 replacements at seq 0"]


def test_a_table_cell_of_a_million_characters_is_cut_at_the_cost_of_its_column(tmp_path):
    # before: a table too wide for the terminal gave its widest column back one character at a
    # time (an event type of 2 million characters, cut to 1 million in its cell: inspect 3.3 s,
    # events 3.9 s, and 20 s under load); now 0.5 s each, most of it the start and the parse
    log = tmp_path / "wide.jsonl"
    log.write_bytes(lines(HEADER, {"type": "x/" + "x" * 2_000_000, "seq": 0, "time": 1783352166000, "data": {},
                                   "ignorable": True}))  # (unknown: skipped, as FORMAT.md §3 allows)
    inspect = attack("inspect", log, seconds=3, mem_mb=600, env={"COLUMNS": "80"})
    assert inspect.code == 0, inspect.stderr
    # (72 + 2 + 6 columns: the cell is the type's first million characters and "…", cut in its middle)
    assert inspect.stdout.splitlines()[-1] == "x/" + "x" * 21 + "…" + "x" * 47 + "…  1"
    events = attack("events", log, seconds=3, mem_mb=600, env={"COLUMNS": "80"})
    assert events.code == 0, events.stderr
    assert events.stdout.splitlines()[2] == ("0    15:36:06.000  x/" + "x" * 8 + "…" + "x" * 21
                                             + "…  -     -     log-only  -")


def test_a_wide_type_among_a_messages_origins_is_cut_and_wrapped_in_bounded_time(tmp_path):
    # before: provenance wrapped the whole type in its origins cell, measuring the rest of the word
    # again for every line (a type of a million wide characters: minutes); now cut to 100 characters
    log = tmp_path / "origins.jsonl"
    log.write_bytes(lines(HEADER, {"type": "数" * 1_000_000, "seq": 0, "time": 1783352166000, "data": {},
                                   "ignorable": True},
                          user_record(1, "hi", sources=[0])))
    result = attack("provenance", log, seconds=5, mem_mb=600, env={"COLUMNS": "80"})
    assert result.code == 0, result.stderr
    rows = result.stdout.splitlines()[2:-1]
    assert rows[0].split()[:5] == ["1", "1", "user/message", "append", "0"]
    assert result.stdout.count("数") == 99 and rows[-1].endswith("数…: 0")  # (wrapped onto 7 lines of 80)
    assert len(rows) == 7 and all(wcswidth(row) <= 80 for row in rows)


# -- 3. many small logs with the default --jobs --------------------------------------------

def test_the_default_jobs_cost_no_more_than_one_process_on_many_small_logs(tmp_path):
    # before: every log measured idle cores over a 50 ms sleep (1,000 logs: 26.9 s against 1.05 s
    # with --jobs 1), and every log was a round trip to a worker
    for k in range(400):
        (tmp_path / f"s{k}.jsonl").write_bytes(lines({**HEADER, "id": f"s{k}"}, user_record(0, f"hi {k}")))
    alone = attack("validate", tmp_path, "--jobs", "1", seconds=20)
    default = attack("validate", tmp_path, seconds=20)
    assert alone.code == default.code == 1, default.stderr  # (each message outside a turn: two errors)
    assert default.stdout == alone.stdout
    assert "400 files: 0 ok, 400 with errors" in default.stdout
    assert default.seconds < 2 * alone.seconds + 1.0, (default.seconds, alone.seconds)


# -- 4. the duplicate-key check on a long line ---------------------------------------------

def _line_with_a_duplicate(megabytes: int) -> bytes:
    """A message whose data holds a long list written with spaces (so the line is not one
    orjson writes back, and is checked), and whose `role` is written twice."""
    body = b"[" + b", ".join([b"1"] * ((megabytes << 20) // 3)) + b"]"
    return (b'{"type": "user/message", "seq": 0, "time": 1783352166000, "surfaceOp": "append", '
            b'"data": {"role": "user", "role": "user", "content": [{"type": "text", "text": "hi"}], '
            b'"extra": ' + body + b"}}\n")


@pytest.mark.parametrize("megabytes", [4, 16])
def test_a_duplicate_key_in_a_long_line_is_found_in_bounded_memory(tmp_path, megabytes):
    # before: json.loads with a hook rebuilt the line as Python objects (a 16 MB line took 2.2 GB
    # and a segfault under a 1 GB cap; this one took 1.4 GB)
    log = tmp_path / "dup.jsonl"
    log.write_bytes(lines(HEADER) + _line_with_a_duplicate(megabytes))
    result = attack("validate", log, "--json", "--select", "DSH-W016", seconds=10, mem_mb=500)
    assert result.code == 0, result.stderr
    [found] = json.loads(result.stdout)["files"][0]["findings"]
    assert found == {"code": "DSH-W016", "severity": "warning", "seq": 0, "line": 2, "pointer": "/data",
                     "message": 'key "role" appears twice in one object; dsh\'s JSON.parse keeps the last value, '
                                "and so does dshreplay"}


def test_the_first_duplicate_is_the_one_of_the_object_that_opens_first_at_any_depth(tmp_path):
    # a duplicate deep inside is met first in the bytes, but the outer object opens first
    # (900 levels: the scan keeps its own stack, it does not recurse)
    deep = b'{"a": ' * 900 + b'{"k": 1, "k": 2}' + b"}" * 900
    record = (b'{"type": "user/message", "seq": 0, "time": 1, "surfaceOp": "append", "data": {"role": "user", '
              b'"content": [{"type": "text", "text": "x"}, {"type": "x", "z": [0, ' + deep +
              b', {"b~/": {"t": 1, "u": 2, "t": 3}}]}], "role": "user"}}\n')
    orjson.loads(record)  # (readable: dsh keeps the last values)
    log = tmp_path / "deep.jsonl"
    log.write_bytes(lines(HEADER) + record)
    result = attack("validate", log, "--json", "--select", "DSH-W016")
    [found] = json.loads(result.stdout)["files"][0]["findings"]
    assert (found["pointer"], found["message"][:14]) == ("/data", 'key "role" app')
    log.write_bytes(lines(HEADER) + record.replace(b', "role": "user"}}', b"}}"))
    [found] = json.loads(attack("validate", log, "--json", "--select", "DSH-W016").stdout)["files"][0]["findings"]
    assert found["pointer"] == "/data/content/1/z/1" + "/a" * 900 and '"k"' in found["message"]
    log.write_bytes(lines(HEADER) + record.replace(b', "role": "user"}}', b"}}").replace(b'"k": 2', b'"j": 2'))
    [found] = json.loads(attack("validate", log, "--json", "--select", "DSH-W016").stdout)["files"][0]["findings"]
    assert (found["pointer"], found["message"][:11]) == ("/data/content/1/z/2/b~0~1", 'key "t" app')


# -- 5. schema findings within one record --------------------------------------------------

def todo_log(path, items: int, records: int = 1):
    """`records` todo/write events whose list holds `items` empty todos: two errors each."""
    events = [_event(0, "turn/start", {"turn": 1})]
    events += [_event(1 + r, "todo/write", {"todos": [{}] * items}) for r in range(records)]
    events.append(_event(1 + records, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}))
    path.write_bytes(lines(HEADER, *events))
    return path


@pytest.mark.parametrize("items", [30_000, 600_000])
def test_one_record_lists_twenty_schema_errors_then_says_there_are_more(tmp_path, items):
    # before: 30,000 empty todos (90 KB) gave 60,000 findings and an 8 MB findings.json; the
    # work grew with them (a 2 MB log: 141 s and 1.8 GB)
    log = todo_log(tmp_path / "todos.jsonl", items)
    for extra in ([], ["--all-findings"]):
        result = attack("validate", log, "--json", *extra, seconds=8, mem_mb=500)
        assert result.code == 1, result.stderr
        findings = json.loads(result.stdout)["files"][0]["findings"]
        assert len(findings) == 21
        assert [f["pointer"] for f in findings[:4]] == ["/data/todos/0"] * 2 + ["/data/todos/1"] * 2
        assert findings[0]["message"] == "'content' is a required property"
        assert findings[20] == {"code": "DSH-E005", "severity": "error", "seq": 1, "line": 3, "pointer": None,
                                "message": "... and more schema errors in this record (only its first 20 are "
                                           "listed)"}
    text = attack("validate", log, seconds=8, mem_mb=500)
    assert re.search(r"DSH-E005  1    3     -  +\.\.\. and more schema errors in this record", text.stdout)


def test_all_findings_lists_every_record_but_twenty_errors_of_each(tmp_path):
    log = todo_log(tmp_path / "todos.jsonl", 100, records=1500)
    result = attack("validate", log, "--json", "--all-findings", seconds=20, mem_mb=500)
    report = json.loads(result.stdout)["files"][0]
    assert len(report["findings"]) == 1500 * 21 and "omitted" not in report
    result = attack("validate", log, "--json", seconds=20, mem_mb=500)
    report = json.loads(result.stdout)["files"][0]
    assert len(report["findings"]) == 1000 * 21 and report["omitted"]["schemaRecords"] == 500


# -- 6. provenance of a citation chain -----------------------------------------------------

def chain_log(path, n: int):
    """`n` assistant messages, each citing the one before: message k stands for k others."""
    chain = [_event(s, "assistant/message", {"turn": 1, "step": 1, "message": {
        "role": "assistant", "content": [{"type": "text", "text": f"a{s}"}]}}, surfaceOp="append",
        sourceEventSeqs=[s - 1]) for s in range(1, n + 1)]
    path.write_bytes(lines(HEADER, user_record(0, "start"), *chain))
    return path


@pytest.mark.parametrize("n", [1_000, 2_500])
def test_provenance_of_every_message_of_a_chain_keeps_one_row_of_origins_at_a_time(tmp_path, n):
    # before: every row's origins were kept until the end (a chain of 5,000: 925 MB for the table,
    # 4.35 GB for --json); the table's memory is now its rows, the JSON is written row by row
    log = chain_log(tmp_path / "chain.jsonl", n)
    table = attack("provenance", log, "--wide", seconds=10, mem_mb=150)
    assert table.code == 0, table.stderr
    *_, last, count = table.stdout.splitlines()
    assert count == f"{n + 1} messages"
    assert last.split() == [str(n + 1), str(n), "assistant/message", "append", str(n - 1), "user/message:", "0;",
                            "assistant/message:", f"1..{n - 1}", f"({n - 1})", "-"]  # (one run: 1 to n - 1)
    if n > 1_000:
        return  # (the JSON lists n²/2 origins: 40 MB here already)
    rows = attack("provenance", log, "--jsonl", seconds=10, mem_mb=150)
    assert rows.code == 0, rows.stderr
    last = json.loads(rows.stdout.splitlines()[-1])
    assert (last["seq"], len(last["origins"]), last["origins"][0]) == (n, n, {"seq": 0, "type": "user/message"})
    assert json.loads(attack("provenance", log, "--json", seconds=10, mem_mb=150).stdout)[-1] == last
