"""The library's results: `to_json()` is the command's `--json`, byte for byte; reprs say what a
result holds; `to_records()`/`to_arrow()` give flat columns; an event filter that can match
nothing is a FilterError naming the fix."""

from __future__ import annotations

import datetime

import pytest

import dshreplay
from dshreplay.analyses.stats import SessionStats
from dshreplay.analyses.validate import FileReport
from dshreplay.console._interface import json_text
from dshreplay.errors import FilterError, UsageError

from conftest import SAMPLES

COMPACTION = SAMPLES / "compaction.jsonl"
BROKEN = SAMPLES / "broken-seq-gap.jsonl"  # the fold fails at seq 5: listings are answered for seqs 0..4


def same_bytes(result, cli_output: str) -> None:
    """The result's JSON, written as the command line writes JSON, is its output exactly."""
    assert json_text(result.to_json()) + "\n" == cli_output


# -- to_json() is the CLI's --json ------------------------------------------------------------

@pytest.mark.parametrize("log", [COMPACTION, BROKEN], ids=["clean", "fold-fails"])
@pytest.mark.parametrize("command, ask", [
    (["shadows"], lambda s: s.shadows()),
    (["brackets"], lambda s: s.brackets()),
    (["request", "--list"], lambda s: s.calls()),
    (["request", "--list", "--all"], lambda s: s.calls(include_auxiliary=True)),
    (["transcript"], lambda s: s.transcript()),
    (["transcript", "--reasoning"], lambda s: s.transcript(reasoning=True)),
    (["events"], lambda s: s.query()),
    (["events", "--type", "user/", "--from", "40", "--to", "2"], lambda s: s.query(type="user/", start=40, end=2)),
    (["events", "--lines", "3-5"], lambda s: s.lines(3, 5)),
    (["spills"], lambda s: s.spills()),
    (["inspect"], lambda s: s.inspect()),
], ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_a_listing_or_summary_prints_as_its_command(cli, log, command, ask):
    expect = 1 if log == BROKEN and command[:2] != ["events", "--lines"] else 0
    same_bytes(ask(dshreplay.open(log)), cli(command[0], log, *command[1:], "--json", expect=expect).stdout)


def test_a_partial_listing_says_how_far_it_reaches_as_the_command_does():
    calls = dshreplay.open(BROKEN).calls()
    body = calls.to_json()
    assert (body["answeredUpTo"], body["error"]["code"], body["error"]["seq"]) == (4, "DSH-E101", 5)
    assert [c["firstChunkSeq"] for c in body["answer"]] == [4]


@pytest.mark.parametrize("at", [None, 40, 4])
def test_fold_prints_as_fold(cli, at):
    args = [] if at is None else ["--at", at]
    same_bytes(dshreplay.open(COMPACTION).fold(at), cli("fold", COMPACTION, *args, "--json").stdout)


def test_a_fold_that_fails_prints_as_fold(cli):
    report = dshreplay.open(BROKEN).fold()
    same_bytes(report, cli("fold", BROKEN, "--json", expect=1).stdout)
    assert report.to_json()["answer"] is None and report.to_json()["error"]["seq"] == 5


def test_request_provenance_and_diff_print_as_their_commands(cli):
    s = dshreplay.open(COMPACTION)
    same_bytes(s.request(5), cli("request", COMPACTION, "--call", 5, "--json").stdout)
    same_bytes(s.request(at=20), cli("request", COMPACTION, "--at", 20, "--json").stdout)
    same_bytes(s.provenance(), cli("provenance", COMPACTION, "--json").stdout)
    same_bytes(s.provenance(message=1), cli("provenance", COMPACTION, "--message", 1, "--json").stdout)
    same_bytes(s.diff(60, 70), cli("diff", COMPACTION, "--from", 60, "--to", 70, "--json").stdout)


@pytest.mark.parametrize("log, expect", [(COMPACTION, 0), (BROKEN, 1)], ids=["clean", "fold-fails"])
def test_validate_and_stats_print_as_their_command_given_this_log(cli, log, expect):
    report = dshreplay.open(log).validate()
    same_bytes(report, cli("validate", log, "--json", expect=expect).stdout)
    figures = dshreplay.open(log).stats()
    same_bytes(figures, cli("stats", log, "--json", expect=expect).stdout)
    # the log's own object is still there, as the base class gives it
    assert report.to_json() == {"files": [FileReport.to_json(report)]}
    assert figures.to_json() == {"sessions": [SessionStats.to_json(figures)]}


def test_validate_and_stats_keep_their_fields():
    report = dshreplay.open(BROKEN).validate()
    # 64 lines: the header and 63 events, every one read; line 7 holds seq 8 where 5 belongs
    assert (report.ok, report.events, [(f.code, f.seq) for f in report.findings]) == (False, 63, [("DSH-E101", 5)])
    assert report.to_json()["files"][0]["path"] == str(BROKEN)
    figures = dshreplay.open(COMPACTION).stats()
    assert (figures.turns, figures.calls, figures.forgotten) == (3, 6, 5)
    assert figures.to_json()["sessions"][0]["turns"] == 3
    assert "total" not in figures.to_json()  # (one log: no total row, as the command prints)


@pytest.mark.parametrize("logs, expect", [(["multi-turn.jsonl", "fork-child.jsonl"], 0),
                                          (["fork-child.jsonl", "broken-seq-gap.jsonl"], 0),
                                          (["fork-child.jsonl"], 1)],
                         ids=["clean", "parent-fold-fails", "missing-parent"])
def test_lineage_prints_as_lineage(cli, logs, expect):
    paths = [SAMPLES / name for name in logs]
    result = dshreplay.lineage(paths)
    same_bytes(result, cli("lineage", *paths, "--json", expect=expect).stdout)
    roots, problems = result  # (it unpacks as before)
    assert (roots, problems) == (result.roots, result.problems)


def test_a_lineage_names_its_sessions_and_problems():
    roots, problems = dshreplay.lineage([SAMPLES / "multi-turn.jsonl", SAMPLES / "fork-child.jsonl"])
    body = dshreplay.lineage([SAMPLES / "multi-turn.jsonl", SAMPLES / "fork-child.jsonl"]).to_json()
    assert [r["sessionId"] for r in body["sessions"]] == ["sample-multi-turn"]
    assert [c["sessionId"] for c in body["sessions"][0]["children"]] == ["sample-fork-child"]
    assert body["problems"] == []


@pytest.mark.parametrize("log, expect", [(COMPACTION, 0), (BROKEN, 1)], ids=["clean", "fold-fails"])
def test_export_prints_as_export(cli, tmp_path, log, expect):
    out, key = tmp_path / "bundle", tmp_path / "evidence.key"
    printed = cli("export", log, "--out", out, "--timestamp", "2026-01-01T00:00:00Z", "--evidence-key", key,
                  "--json", expect=expect).stdout
    result = dshreplay.export([str(log)], out, timestamp="2026-01-01T00:00:00Z", evidence_key=key, force=True)
    same_bytes(result, printed)
    body = result.to_json()
    assert (body["out"], body["files"], [s["verdict"] for s in body["sessions"]]) == (
        str(out), len(result["files"]), ["ok" if expect == 0 else "errors"])
    # the digest is "sha256:" and the manifest file's sha256 (what `sha256sum manifest.json` prints)
    import hashlib
    assert result.digest == "sha256:" + hashlib.sha256((out / "manifest.json").read_bytes()).hexdigest()
    assert result["sessions"] == body["sessions"]  # (still the manifest, as a dict)
    assert repr(result) == f"<Exported {str(out)!r}: 1 sessions, {body['files']} files, digest {result.digest}>"


# -- reprs --------------------------------------------------------------------------------------

def test_reprs_say_what_a_result_holds():
    s = dshreplay.open(COMPACTION)
    assert repr(s) == f"<Session {str(COMPACTION)!r}: not read yet>"  # (a repr reads nothing)
    assert repr(s.fold(at=40)).endswith("at seq 40: 5 nodes, 5 messages, 0 replacements>")
    assert repr(s.calls()) == "<6 calls: first chunk seq 4 ... first chunk seq 84>"
    assert repr(s.query(type="user/", surface="shadowed")) == "<2 events: seq 3 ... seq 37>"
    assert repr(s.query(type="user/", surface="shadowed")[0]) == "<EventRow seq 3 line 5 user/message shadowed>"
    assert repr(s.inspect()).endswith(": 95 events, 3 turns, 6 calls, fold ok>")
    assert repr(s).endswith(": 95 events, fold ok>")
    assert repr(s.validate()) == f"<Validation {str(COMPACTION)!r}: 95 events, 0 findings, ok>"
    assert repr(s.stats()) == f"<Stats {str(COMPACTION)!r}: 95 events, 3 turns, 6 calls>"
    assert repr(dshreplay.lineage([SAMPLES / "multi-turn.jsonl", SAMPLES / "fork-child.jsonl"])) == (
        "<Lineage: 1 roots, 2 sessions, 0 problems>")
    broken = dshreplay.open(BROKEN)
    assert repr(broken.validate()) == f"<Validation {str(BROKEN)!r}: 63 events, 1 findings, errors>"
    assert repr(broken.stats()).endswith(": 5 events, 1 turns, 1 calls; answered for seqs 0..4 only: the fold "
                                         "fails at seq 5 (DSH-E101, line 7, /seq: seq 8 is not contiguous; "
                                         "expected 5: the line's seq is wrong (the line after it has seq 6))>")
    broken.calls()
    assert repr(broken).endswith(": fold fails at seq 5 (answered up to seq 4)>")
    assert repr(broken.calls()).startswith("<1 calls: first chunk seq 4; answered for seqs 0..4 only: the fold "
                                           "fails at seq 5 (DSH-E101")


# -- filters --------------------------------------------------------------------------------------

def test_a_filter_takes_iso_times_datetimes_and_epoch_ms_alike():
    expected = 1780384140000  # 2026-06-02T07:09:00Z in epoch ms, worked out by hand: 20606 days + 7 h 9 min
    assert dshreplay.EventFilter(since="2026-06-02T07:09:00Z").since == expected
    assert dshreplay.EventFilter(since="2026-06-02T09:09:00+02:00").since == expected
    assert dshreplay.EventFilter(since="2026-06-02T07:09:00").since == expected  # naive: UTC
    assert dshreplay.EventFilter(until=datetime.datetime(2026, 6, 2, 7, 9)).until == expected
    assert dshreplay.EventFilter(until=datetime.datetime(2026, 6, 2, 9, 9, tzinfo=datetime.timezone(
        datetime.timedelta(hours=2)))).until == expected
    assert dshreplay.EventFilter(since=expected).since == expected


def test_keyword_filters_are_an_event_filter():
    s = dshreplay.open(COMPACTION)
    # the log's times run from 2026-07-06T15:36:05Z; seq 20's is 15:36:05.277
    rows = s.query(type="tool/", since="2026-07-06T15:36:05.277Z", until="2026-07-06T15:36:05.278Z")
    assert [(r.seq, r.type, r.time) for r in rows] == [(20, "tool/call", "2026-07-06T15:36:05.277Z")]
    swapped = s.query(type="tool/", since="2026-07-06T15:36:05.278Z", until="2026-07-06T15:36:05.277Z")
    assert [r.seq for r in swapped] == [20]  # (a time range in either order, as a seq range)
    assert [r.seq for r in s.query(types={"user/message"}, surface="current")] == [67, 69]


@pytest.mark.parametrize("filters, message", [
    ({"type": "usr/"}, 'no event type family "usr/"; families: agent-preset/, agent/, approval/, assistant/, '
                       "command/, compaction/, feedback/, goal/, hook/, llm/, permission/, plan/, request/, "
                       "sandbox/, schedule/, session/, step/, subagent/, team/, todo/, tool-workflow/, tool/, turn/, "
                       "user/, web/"),
    ({"type": "user"}, 'no event type "user": every type names its family, as user/message does; did you mean '
                       '"user/"?'),
    ({"since": "yesterday"}, 'since: "yesterday" is not an ISO 8601 time (such as 2026-07-06T15:36:05Z)'),
    ({"until": 1.5}, "until: 1.5 is no time: give ISO 8601 text (such as 2026-07-06T15:36:05Z), epoch "
                     "milliseconds or a datetime"),
    ({"surface": "visible"}, 'surface "visible": give one of current, shadowed, log-only'),
    ({"turn": 0}, "turn 0: turns count from 1"),
    ({"kind": "user/"}, "no event filter 'kind'; filters: type, types, start, end, turn, surface, grep, since, "
                        "until"),
])
def test_a_filter_that_cannot_match_is_a_usage_error_naming_the_fix(filters, message):
    with pytest.raises(FilterError) as raised:
        dshreplay.open(COMPACTION).query(**filters)
    assert raised.value.message == message
    assert isinstance(raised.value, UsageError)  # (the command line exits 2)


def test_a_turn_past_the_last_is_known_after_the_pass():
    with pytest.raises(FilterError) as raised:
        dshreplay.open(COMPACTION).query(turn=9)
    assert str(raised.value) == f"{COMPACTION}: turn 9: the log has 3 turns"
    assert [r.seq for r in dshreplay.open(COMPACTION).query(turn=3, type="user/")] == [67, 69]  # the last turn
    # (turn 3 starts at seq 63, line 50 of the log: its summary, seq 67, and the next prompt)


def test_a_time_filter_on_a_log_without_times_is_an_error(write_log):
    import scenarios
    b, _ = scenarios.parallel_calls()
    for event in b.events:
        event["time"] = 0  # the projected layout's "no time"
    log = write_log(b)
    with pytest.raises(FilterError) as raised:
        dshreplay.open(log).query(since="2026-01-01T00:00:00Z")
    assert raised.value.message == "since on a log without times (a projected log has none): leave out since and until"


def test_the_command_line_refuses_a_filter_that_cannot_match(cli):
    result = cli("events", COMPACTION, "--type", "usr/", expect=2)
    assert result.stdout == ""
    assert result.stderr.startswith('dshreplay: usage error: no event type family "usr/"; families: agent-preset/')


# -- records and Arrow ----------------------------------------------------------------------

def test_records_name_the_tool_call_its_arguments_and_the_compaction():
    rows = {r["seq"]: r for r in dshreplay.open(COMPACTION).to_records()}
    assert rows[20] == {"seq": 20, "line": 16, "time": "2026-07-06T15:36:05.277Z", "type": "tool/call", "turn": 1,
                        "step": 1, "surface": "log-only", "op": None, "callId": "call-0002", "tool": "bash",
                        "arguments": '{"command": "ls"}', "compactionId": None, "text": 'bash {"command": "ls"}'}
    assert [s for s, r in rows.items() if r["compactionId"] is not None] == [65, 66, 67, 68]
    assert {rows[s]["compactionId"] for s in (65, 66, 67, 68)} == {"compaction-0011"}
    assert (rows[21]["callId"], rows[21]["arguments"]) == ("call-0002", '{"command": "ls"}')  # its tool/result


SECRET = "ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


def test_records_redact_as_an_export_does(builder, write_log, tmp_path):
    b = builder()
    b.user("deploy")
    b.tool_round("bash", '{"command": "git push https://x:' + SECRET + '@example.com"}', "ok")
    log = write_log(b)
    plain = dshreplay.open(log).to_records()
    assert any(SECRET in str(r) for r in plain)
    redacted = dshreplay.open(log).to_records(redact=True)
    assert not any("Z9y8X7w6V5u4T3s2" in str(r) for r in redacted)
    call = next(r for r in redacted if r["type"] == "tool/call")
    assert call["arguments"] == '{"command": "git push https://x:[REDACTED]@example.com"}'
    assert [r["seq"] for r in redacted] == [r["seq"] for r in plain]
    rules = tmp_path / "rules.json"
    rules.write_text('{"text": ["deploy"]}')
    user = next(r for r in dshreplay.open(log).to_records(redact=rules) if r["type"] == "user/message")
    assert user["text"] == "[REDACTED]"


def test_to_arrow_is_a_typed_table_pandas_reads():
    table = dshreplay.open(COMPACTION).to_arrow(type="tool/")
    assert table.num_rows == 6  # tool/call and tool/result at seqs 20, 21, 48, 49, 80, 81 (lines 16-17, 38-39, 64-65)
    assert [str(t) for t in table.schema.types] == ["int64", "int64", "string", "string", "int64", "int64",
                                                    "string", "string", "string", "string", "string", "string",
                                                    "string"]
    frame = table.to_pandas()
    assert list(frame["seq"][:2]) == [20, 21]
    assert list(frame["callId"][:2]) == ["call-0002", "call-0002"]


def test_to_arrow_without_pyarrow_names_the_extra(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # (import pyarrow raises ImportError)
    with pytest.raises(UsageError) as raised:
        dshreplay.open(COMPACTION).to_arrow()
    assert raised.value.message == "to_arrow needs pyarrow: pip install 'dshreplay[sql]'"


def test_the_package_ships_its_types():
    from pathlib import Path
    assert (Path(dshreplay.__file__).parent / "py.typed").is_file()
    import configparser
    setup = configparser.ConfigParser()
    setup.read(Path(__file__).resolve().parents[2] / "setup.cfg")
    assert setup["options.package_data"]["dshreplay"].strip() == "py.typed"
