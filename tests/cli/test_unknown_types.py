"""An event of a type dsh does not define (FORMAT.md §3): without `ignorable: true` it is where the
fold fails (DSH-E006), for every command that folds, in a JSONL log and in a store; with it, it is
skipped and every answer is the one of the log without it. (test_damaged_logs.py runs the
`unknown-type` damage through fold, diff, provenance, request, inspect, stats, transcript, events.)

The log is `compacted()` (95 events, event S on line S + 2) with seq 20 (its first tool/call)
renamed "custom/probe" (`samples.damaged(..., "unknown-type", 20)`): the fold fails at seq 20,
line 22, so answers reach seqs 0..19."""

from __future__ import annotations

import sqlite3

import pytest

from dshreplay.core.surface import counted_only
from dshreplay.io.reader import LogSource
from dshreplay.testing.samples import compacted, damaged, multi_turn
from dshreplay.testing.sqlitestore import write_store

WHY = ('the fold fails at seq 20 (DSH-E006, line 22, /type: unknown event type "custom/probe" without '
       "ignorable: true: dsh refuses to load the log)")


@pytest.fixture
def unknown(write_log):
    return write_log(damaged(compacted(), "unknown-type", 20), "unknown.jsonl")


@pytest.fixture
def ignorable(write_log):
    """compacted() with one more event (seq 95), of an unknown type marked ignorable."""
    b = compacted()
    b.add("custom/probe", {"x": 1}, ignorable=True)
    return write_log(b, "ignorable.jsonl")


@pytest.mark.parametrize("command", [["view", "--out", "{tmp}/view.html"], ["timeline", "--format", "chrome"],
                                     ["timeline", "--format", "json"], ["otel", "--out", "{tmp}/otel.json"],
                                     ["export", "--out", "{tmp}/bundle", "--no-default-redaction"]],
                         ids=" ".join)
def test_each_folding_command_stops_where_an_unknown_type_is(cli, unknown, tmp_path, command):
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    result = cli(args[0], unknown, *args[1:], expect=1)
    # (otel says first what it wrote: `[1/1] LOG: 4 spans in 1 trace`)
    assert result.stderr.splitlines()[-1] == f"dshreplay: {unknown}: answered for seqs 0..19 only: {WHY}"
    assert "DSH-E006" not in "".join(result.stderr.splitlines()[:-1])


def test_the_timeline_reaches_the_seq_before_an_unknown_type(cli, unknown):
    out = cli("timeline", unknown, "--format", "json", expect=1).json()
    meta = out["metadata"]
    assert (meta["answeredUpTo"], meta["error"]["code"], meta["error"]["seq"]) == (19, "DSH-E006", 20)
    assert max(span["endSeq"] for span in out["spans"] if span["endSeq"] is not None) == 19


def test_validate_reports_the_unknown_type_once_where_the_fold_fails(cli, unknown):
    files = cli("validate", unknown, "--json", expect=1).json()["files"]
    [e006] = [f for f in files[0]["findings"] if f["code"] == "DSH-E006"]
    assert (e006["seq"], e006["line"], e006["pointer"]) == (20, 22, "/type")


def test_an_unknown_type_marked_ignorable_is_skipped_by_every_command(cli, ignorable, write_log):
    plain = write_log(compacted(), "plain.jsonl")
    for command in (["fold"], ["inspect"], ["stats"], ["provenance"], ["timeline", "--format", "chrome"]):
        assert cli(command[0], ignorable, *command[1:]).stderr == ""
    fold = cli("fold", ignorable, "--json").json()
    assert (fold["seq"], fold["nodes"]) == (95, cli("fold", plain, "--json").json()["nodes"])
    findings = cli("validate", ignorable, "--json", expect=None).json()["files"][0]["findings"]
    assert [(f["code"], f["seq"]) for f in findings if f["code"] in ("DSH-N007", "DSH-E006")] == [("DSH-N007", 95)]


def test_the_lean_reader_gives_an_unknown_type_to_the_fold_instead_of_counting_it(unknown):
    with LogSource(unknown).reader() as reader:
        items = [(type(i).__name__, i.seq, i.count) for i in reader.records(None, counted_only)]
    assert ("Event", 20, 1) in items and not any(
        kind == "Quiet" and seq <= 20 < seq + count for kind, seq, count in items)


def store_with(tmp_path, ignorable_row: bool):
    """multi_turn() in a store, its seq 5 a row of an unknown type (marked ignorable or not)."""
    b = multi_turn()
    events = [dict(e) for e in b.events]
    events[5] = {"type": "custom/probe", "seq": 5, "time": events[5]["time"], "data": {"x": 1}}
    if ignorable_row:
        events[5]["ignorable"] = True
    path = tmp_path / "store.sqlite"
    write_store(path, [(b.header, events)])
    return path, b.header["id"], events


def test_a_store_session_with_an_unknown_type_row_stops_there(cli, tmp_path):
    path, session, events = store_with(tmp_path, ignorable_row=False)
    with sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True) as db:
        assert db.execute("SELECT type, ignorable FROM events WHERE seq = 5").fetchall() == [("custom/probe", None)]
    result = cli("fold", f"{path}#{session}", "--json", expect=1)
    assert result.json()["error"] == {
        "stage": "fold", "seq": 5, "line": result.json()["error"]["line"], "pointer": "/type", "code": "DSH-E006",
        "message": 'unknown event type "custom/probe" without ignorable: true: dsh refuses to load the log'}
    assert result.stderr.startswith(f"dshreplay: {path}#{session}") and "the fold fails at seq 5 (DSH-E006" \
        in result.stderr and result.stderr.count("\n") == 1
    assert cli("inspect", f"{path}#{session}", "--json", expect=1).json()["answer"]["answeredUpTo"] == 4


def test_a_store_session_with_an_ignorable_unknown_type_row_folds(cli, tmp_path):
    path, session, _ = store_with(tmp_path, ignorable_row=True)
    assert cli("fold", f"{path}#{session}").stderr == ""
