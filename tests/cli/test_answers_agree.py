"""Each fact once: every surface shows the same answer for the same log (#35)."""

from __future__ import annotations

import csv
import io

import orjson

from dshreplay.testing.samples import LogBuilder


def _projected_with_packed_rows(tmp_path):
    b = LogBuilder("projected")
    b.start_turn()
    b.start_step()
    b.user("hello")
    b.assistant("one two three four five six", pieces=6)
    b.end_step()
    b.end_turn()
    return b.write(tmp_path / "projected.jsonl", layout="projected", pack=True)


def test_a_projected_log_has_no_times_in_any_event_packed_members_included(cli, tmp_path):
    # the members of a packed row after the first got 0 plus their gaps (1970-01-01T00:00:00.003Z,
    # ...) in events and events.csv, while every other event of the projected layout showed none
    log = _projected_with_packed_rows(tmp_path)
    rows = cli("events", log, "--json").json()
    assert len(rows) > 6 and [r["time"] for r in rows] == [None] * len(rows)
    assert "1970" not in cli("events", log, "--wide").stdout
    cli("export", log, "--out", tmp_path / "b", "--no-default-redaction", "--timestamp", "2026-01-01T00:00:00Z")
    [events_csv] = (tmp_path / "b").rglob("events.csv")
    table = list(csv.DictReader(io.StringIO(events_csv.read_text())))
    assert len(table) == len(rows) and {r["time"] for r in table} == {""}


def test_a_time_filter_on_a_projected_log_with_packed_rows_is_a_usage_error(cli, tmp_path):
    # `--since 2026-01-01` printed '0 events', exit 0, and `--since 1970-01-01` only chunks
    log = _projected_with_packed_rows(tmp_path)
    for since in ("2026-01-01", "1970-01-01"):
        result = cli("events", log, "--since", since, expect=2)
        assert result.stderr == (f"dshreplay: usage error: {log}: since on a log without times (a projected log "
                                 "has none): leave out since and until\n")


def _resumed(tmp_path):
    """A session dsh resumed after a crash inside turn 2 (a tool call recorded, no result), then turn 3."""
    b = LogBuilder("resumed")
    b.start_turn()
    b.start_step()
    b.user("first")
    b.assistant("done")
    assert b.end_turn() == 13  # (turn 1: 0 turn/start, 1 step/start, 2 user, 3-10 chunks, 11 message, 12 step/end)
    b.start_turn()
    b.start_step()
    b.user("run it")
    b.assistant("", calls=[("call_1", "bash", '{"command": "make"}')])
    b.tool_call("call_1", "bash", '{"command": "make"}')
    closers, end_seed = b.resume_after_crash()
    b.start_turn()
    b.start_step()
    b.user("go on")
    b.assistant("all good")
    b.end_turn()
    return b.write(tmp_path / "resumed.jsonl"), closers, end_seed


def test_a_resumed_session_says_dsh_closed_the_turn_and_where_its_closers_and_the_resume_are(cli, tmp_path):
    # transcript said "[turn 2 interrupted: the log ends inside it, after seq N]" right before turn 3's
    # user message, and dsh's synthetic tool result read as the tool's own error
    log, closers, end_seed = _resumed(tmp_path)
    turn_end = end_seed - 1
    entries = cli("transcript", log, "--json").json()
    markers = [(e["entry"], e["seq"], e["text"]) for e in entries if e["entry"] != "message"]
    assert markers == [
        ("turn-end", 13, "[turn 1 ended: completed at seq 13]"),
        ("closers", closers, f"[dsh closed interrupted turn 2 on loading the log after a crash: seqs {closers}-"
                             f"{turn_end} are its synthetic closers, not results of the tools]"),
        ("turn-end", turn_end, f"[turn 2 ended: interrupted (closed by dsh) at seq {turn_end}]"),
        ("seed-end", end_seed, f"[the session was resumed at seq {end_seed}; what follows was logged after the "
                               "restart]"),
        ("turn-end", entries[-1]["seq"], f"[turn 3 ended: completed at seq {entries[-1]['seq']}]"),
    ]
    assert [e["seq"] for e in entries] == sorted(e["seq"] for e in entries)
    closer = next(e for e in entries if e["entry"] == "closers")
    assert closer["turn"] == 2 and closer["endSeq"] == turn_end
    # the synthetic result comes after the closers marker
    result = next(e for e in entries if e["entry"] == "message" and e["type"] == "tool/result")
    assert result["seq"] == closers


def test_every_surface_tells_a_turn_dsh_closed_on_resume_the_same_way(cli, tmp_path):
    log, closers, end_seed = _resumed(tmp_path)
    endings = ["completed", "interrupted (closed by dsh)", "completed"]
    inspected = cli("inspect", log, "--json").json()
    assert [t["ending"] for t in inspected["turnEndings"]] == endings
    assert inspected["lastTurn"] == "completed" and inspected["interrupted"] is False
    assert cli("stats", log, "--json").json()["sessions"][0]["turnEndings"] == endings
    cli("export", log, "--out", tmp_path / "b", "--no-default-redaction", "--timestamp", "2026-01-01T00:00:00Z")
    [report] = (tmp_path / "b").rglob("report.html")
    html = report.read_text()
    assert "the log ends inside turn" not in html
    assert "turn 2 interrupted (closed by dsh)" in html
    [md] = (tmp_path / "b").rglob("transcript.md")
    assert "the log ends inside" not in md.read_text()
    assert "[dsh closed interrupted turn 2 on loading the log after a crash" in md.read_text()


def test_a_fork_childs_transcript_marks_where_its_inherited_history_ends(cli, tmp_path):
    from dshreplay.testing.samples import fork_child
    b = fork_child()
    log = b.write(tmp_path / "child.jsonl")
    seed = b.header["seedLength"]
    entries = cli("transcript", log, "--json").json()
    [mark] = [e for e in entries if e["entry"] == "seed-end"]
    assert mark["seq"] == seed and mark["kind"] == "inherited"
    assert mark["text"] == (f"[the history inherited from the parent session ends at seq {seed}; this session's "
                            "own follows]")
    assert all(e["seq"] < seed for e in entries[:entries.index(mark)])
    assert all(e["seq"] > seed for e in entries[entries.index(mark) + 1:])


def _mixed_with_a_wrong_seq(tmp_path):
    """multi_turn's events, every other record in the projected layout (no seq, no time), and the
    record on line 23 (seq 21 by position) written with seq 24."""
    from dshreplay.testing.samples import multi_turn
    b = multi_turn()
    records = b.records(layout="runtime")
    lines = [orjson.dumps(b.header)]
    for k, rec in enumerate(records):
        rec = dict(rec)
        if k % 2 == 0:
            del rec["seq"], rec["time"]
        elif k == 21:
            rec["seq"] = 24
        lines.append(orjson.dumps(rec))
    log = tmp_path / "mixed.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    return log, len(records)


def test_a_wrong_explicit_seq_in_a_mixed_log_is_one_error_and_later_seqs_stay_positions(cli, tmp_path):
    # the checker renumbered from the bad line's seq: every later finding was 3 seqs off, 12 follow-on
    # errors, and the summary said 66 events for a file of 63
    log, count = _mixed_with_a_wrong_seq(tmp_path)
    report = cli("validate", log, "--json", expect=1).json()["files"][0]
    assert report["events"] == count == 63
    assert [(f["code"], f["seq"], f["line"], f["message"]) for f in report["findings"]] == [
        ("DSH-E101", 21, 23, "seq 24 is not contiguous; expected 21: the line's seq is wrong (taken as seq 21)"),
        ("DSH-N009", None, None, "the file mixes runtime records (with seq/time) and projected records (without)"),
    ]
    # events.csv carried the shifted seqs: each line's seq is its position
    cli("export", log, "--out", tmp_path / "b", "--no-default-redaction", "--timestamp", "2026-01-01T00:00:00Z",
        expect=1)
    [events_csv] = (tmp_path / "b").rglob("events.csv")
    table = list(csv.DictReader(io.StringIO(events_csv.read_text())))
    assert [(int(r["seq"]), int(r["line"])) for r in table] == [(seq, seq + 2) for seq in range(count)]


def test_a_runtime_log_missing_one_seq_counts_the_events_it_holds(cli, tmp_path):
    # validate said 63 events for a file of 62 (the missing seq counted)
    from dshreplay.testing.samples import multi_turn
    b = multi_turn()
    lines = [orjson.dumps(b.header)] + [orjson.dumps(r) for r in b.records(layout="runtime")]
    del lines[21]  # seq 20
    log = tmp_path / "gap.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    report = cli("validate", log, "--json", expect=1).json()["files"][0]
    assert report["events"] == len(lines) - 1 == 62
    assert report["findings"][0]["message"] == ("seq 21 is not contiguous; expected 20: seq 20 is missing "
                                                "(checking goes on from seq 21)")


def test_a_torn_tail_is_said_inside_the_answers_not_only_on_stderr(cli, tmp_path):
    # transcript LOG > file ended as if the log were whole, and fold --json carried no torn-tail field
    b = LogBuilder("torn")
    b.start_turn()
    b.start_step()
    b.user("hello")
    b.assistant("hi")
    b.end_turn()
    whole = b.to_bytes()
    torn = whole + b'{"type":"user/message","seq":'
    log = tmp_path / "torn.jsonl"
    log.write_bytes(torn)
    last = b.next_seq - 1
    lines = whole.count(b"\n")
    tail = {"line": lines + 1, "offset": len(whole), "bytes": len(torn) - len(whole)}
    why = (f"torn tail: last line has no newline and does not parse; {tail['bytes']} bytes lost at byte offset "
           f"{tail['offset']}")
    assert cli("fold", log, "--json").json()["tornTail"] == tail
    assert cli("fold", log, "--at", 2, "--json").json()["tornTail"] is None  # (a view before the tail: whole)
    (tmp_path / "whole.jsonl").write_bytes(whole)
    assert cli("fold", tmp_path / "whole.jsonl", "--json").json()["tornTail"] is None
    entries = cli("transcript", log, "--json").json()
    assert entries[-1] == {"seq": last, "entry": "torn-tail", "line": lines + 1,
                           "text": f"[line {lines + 1}: {why}; the transcript ends at seq {last}]"}
    text = cli("transcript", log).stdout
    assert text.rstrip().endswith(f"[line {lines + 1}: {why}; the transcript ends at seq {last}]")


def test_a_missing_log_with_a_log_piped_in_says_to_give_a_dash(cli):
    # `dshreplay fold < log` said only "Missing argument 'LOG'"
    result = cli("fold", input=b'{"type": "session"}\n', expect=2)
    assert result.stderr == ("dshreplay: usage error: Missing argument 'LOG'. A log on standard input is read when "
                             "LOG is -: dshreplay fold - < LOG. (see 'dshreplay fold --help')\n")


def test_events_lines_marks_a_line_that_holds_no_record_and_says_why(cli):
    # --lines printed the unreadable line like any other
    from conftest import SAMPLES
    log = SAMPLES / "broken-bad-json-line.jsonl"
    out = cli("events", log, "--lines", "5-7", "--wide").stdout.splitlines()
    assert [line[:3] for line in out[:3]] == ["5  ", "6! ", "7  "]
    assert out[3:] == ["(line 6: line is not valid JSON: unexpected end of data)"]
    rows = cli("events", log, "--lines", "5-6", "--json").json()
    assert [r["problem"] for r in rows] == [None, "line is not valid JSON: unexpected end of data"]
    report = cli("validate", log, "--json", expect=1).json()["files"][0]
    assert [(f["line"], f["message"]) for f in report["findings"] if f["code"] == "DSH-E001"] == [
        (6, "line is not valid JSON: unexpected end of data (line skipped)")]
