"""The forensic commands from the command line: shapes, tables, exit codes."""

from __future__ import annotations

import csv
import html
import json

import pytest

import scenarios
from conftest import SAMPLES


@pytest.fixture
def compactions(write_log):
    return write_log([scenarios.HEADER, *scenarios.compactions()])


@pytest.fixture
def crashed(write_log):
    return write_log([scenarios.HEADER, *scenarios.rewrite_then_crash()])


def test_shadows_json_and_at(cli, compactions):
    out = cli("shadows", compactions, "--json").json()
    assert [r["seq"] for r in out] == [7, 12, 15]
    assert list(out[0]) == ["seq", "kind", "start", "end", "shadowedSeqs", "meterSeq", "tokens",
                            "compactionId", "chain"]
    assert [r["seq"] for r in cli("shadows", compactions, "--at", 12, "--json").json()] == [7, 12]
    cli("shadows", compactions, "--at", 99, expect=2)


def test_provenance_of_a_shadowed_message_names_the_replacement_that_hid_it(cli, compactions):
    [row] = cli("provenance", compactions, "--seq", 3, "--json").json()
    assert (row["index"], row["seq"], row["replacedBy"]) == (
        None, 3, {"seq": 7, "kind": "summary", "compactionId": "k1", "visibleAs": 12})
    [row] = cli("provenance", compactions, "--seq", 7, "--json").json()  # (a summary that a summary replaced)
    assert (row["index"], row["replacedBy"]) == (None, {"seq": 12, "kind": "summary", "compactionId": "k2",
                                                         "visibleAs": 12})
    assert cli("provenance", compactions, "--seq", 12, "--json").json()[0]["replacedBy"] is None
    [row] = cli("provenance", compactions, "--seq", 3, "--at", 9, "--json").json()  # (before k2 replaced 7)
    assert row["replacedBy"] == {"seq": 7, "kind": "summary", "compactionId": "k1", "visibleAs": 7}
    text = cli("provenance", compactions, "--seq", 3).stdout.splitlines()
    assert text[2].split() == ["-", "3", "user/message", "append", "-", "-", "-"]
    assert text[-2] == "0 messages, 1 off the view"
    assert text[-1] == "seq 3 is not in the model's view: replaced at seq 7 (summary, compaction k1); in the view " \
                       "as seq 12"
    assert cli("provenance", compactions, "--seq", 7).stdout.splitlines()[-1] == (
        "seq 7 is not in the model's view: replaced at seq 12 (summary, compaction k2)")
    assert "replaced at" not in cli("provenance", compactions, "--seq", 3, "--at", 4).stdout  # (in the view at 4)


def test_provenance_of_a_seq_with_no_message_says_why(cli, compactions):
    # the scenario's seqs run 0..17 (by hand: scenarios.compactions); 5 is a compaction/start; 9 joins
    # the view at 9, so the view at 4 cannot hold it
    def said(*args):
        return cli("provenance", compactions, *args, expect=2).stderr
    assert said("--seq", 99) == "dshreplay: usage error: seq 99 is no event of the log: its seqs run 0..17\n"
    assert said("--seq", 5) == ("dshreplay: usage error: seq 5 is an event of type compaction/start: only "
                                "user/message, assistant/message and tool/result events are messages of the "
                                "model's view\n")
    assert said("--seq", 9, "--at", 4) == ("dshreplay: usage error: seq 9 comes after the view asked for (at seq "
                                           "4): ask for a view at or after it\n")


def test_shadows_table(cli, compactions):
    lines = cli("shadows", compactions).stdout.splitlines()
    assert lines[3].split() == ["12", "summary", "7..4", "7,", "4", "11", "80", "k2", "7"]
    assert lines[-1] == "3 replacements"


def test_brackets_exit_0_when_all_closed_and_1_when_one_is_open(cli, compactions, write_log):
    out = cli("brackets", compactions, "--json").json()
    assert [(b["compactionId"], b["status"]) for b in out] == [("k1", "closed"), ("k2", "closed")]
    open_log = write_log([scenarios.HEADER, *scenarios.compactions()[:11]])  # k2 started, never ended
    out = cli("brackets", open_log, "--json", expect=1).json()
    assert out[1] == {"compactionId": "k2", "start": 10, "end": None, "status": "open", "turn": 1,
                      "summarySeq": None, "replacementSeq": None, "error": None, "anomalies": []}


def test_brackets_anomaly_end_without_start(cli, write_log):
    log = scenarios.compactions()[:5] + [scenarios.ev(5, "compaction/end", {"compactionId": "z", "turn": 1})]
    out = cli("brackets", write_log([scenarios.HEADER, *log]), "--json", expect=1).json()
    assert out == [{"compactionId": "z", "start": None, "end": 5, "status": "closed", "turn": None,
                    "summarySeq": None, "replacementSeq": None, "error": None,
                    "anomalies": ["end without start (seq 5)"]}]


def test_provenance_shows_a_run_of_consecutive_seqs_as_a_range_and_keeps_the_rest(cli, builder, write_log):
    b = builder()
    b.user("run two commands")
    reply = b.assistant("Running both.", calls=[("c1", "bash", '{"command":"ls"}'),
                                                ("c2", "bash", '{"command":"pwd"}')])
    b.tool_call("c2", "bash", '{"command":"pwd"}')
    first = b.tool_call("c1", "bash", '{"command":"ls"}')
    b.tool_result("c1", "a b", cites=first)
    answer = b.user("and these?")
    b.add("user/message", {"role": "user", "content": [{"type": "text", "text": "cites"}], "id": "m9",
                           "source": {"kind": "user"}}, surfaceOp="append", sourceEventSeqs=[1, 2, 3, 5, first, answer])
    log = write_log(b)
    [row] = cli("provenance", log, "--seq", reply, "--json").json()
    chunks = list(range(reply - 22, reply))  # (every chunk of the reply, one run: checked by hand in the log)
    assert row["sources"] == chunks
    text = cli("provenance", log, "--seq", reply).stdout.splitlines()
    assert text[2].split()[4:8] == [f"{chunks[0]}..{chunks[-1]}", "(22)", "assistant/chunk:",
                                    f"{chunks[0]}..{chunks[-1]}"]
    assert text[2].split()[8] == "(22)"
    [row] = cli("provenance", log, "--seq", answer + 1).stdout.splitlines()[2:3]
    assert row.split()[4:8] == ["1..3,", "5,", f"{first},", f"{answer}"]  # (a run of two, or none, stays listed)


def test_provenance_selectors(cli, compactions):
    assert [r["seq"] for r in cli("provenance", compactions, "--json").json()] == [12, 15]
    assert cli("provenance", compactions, "--message", 2, "--json").json()[0]["sources"] == [9]
    assert cli("provenance", compactions, "--seq", 3, "--at", 4, "--json").json()[0]["index"] == 2
    cli("provenance", compactions, "--seq", 1, expect=2)  # (a step/start: never a message)
    cli("provenance", compactions, "--message", 1, "--seq", 12, expect=2)
    assert "it has 2 messages (1..2)" in cli("provenance", compactions, "--message", 0, expect=2).stderr


def test_diff_json_and_text(cli, compactions):
    out = cli("diff", compactions, "--from", 8, "--to", 13, "--json").json()
    assert out == {"from": 8, "to": 13, "kept": [], "removed": [{"seq": 7, "by": 12}, {"seq": 4, "by": 12}],
                   "added": [12, 9]}
    text = cli("diff", compactions, "--from", 4, "--to", 9, "--text").stdout
    assert "-== seq 2 · user ==\n-  alpha\n" in text  # (a message's lines indented under its head)
    assert "+== seq 7 · user ==\n+  summary of alpha and beta\n" in text
    assert " == seq 4 · user ==\n   gamma\n" in text


def test_request_list_call_and_usage_errors(cli, crashed):
    listing = cli("request", crashed, "--list", "--json").json()
    assert [(c["call"], c["firstChunkSeq"], c["messageCount"]) for c in listing] == [(1, 4, 1), (2, 15, 3)]
    call = cli("request", crashed, "--call", 2, "--json").json()
    assert list(call) == ["call", "turn", "step", "firstChunkSeq", "lastChunkSeq", "outcome", "errorCode", "usage",
                          "atSeq", "headerSeq", "header", "messages", "tornTail"]
    assert [m["id"] for m in call["messages"]] == ["m3", "a9", "r11"]
    assert call["messages"][2]["content"][0]["content"][0]["text"] == "[shortened]"
    cli("request", crashed, "--call", 3, expect=2)
    cli("request", crashed, expect=2)
    cli("request", crashed, "--list", "--call", 1, expect=2)
    cli("request", crashed, "--all", "--call", 1, expect=2)
    table = cli("request", crashed, "--call", 1).stdout
    assert "tools: bash" in table and "system: be brief" in table


def test_transcript_formats(cli, compactions):
    text = cli("transcript", compactions).stdout
    assert "[seqs 2-3 replaced for the model by summary at seq 7]" in text
    assert text.count("── user · seq") == 4
    out = cli("transcript", compactions, "--format", "json").json()
    assert [e["seq"] for e in out] == [2, 3, 4, 7, 9, 12, 15, 17]
    assert out[3]["replacementText"] == "summary of alpha and beta"
    md = cli("transcript", compactions, "--format", "markdown").stdout
    assert "### user · seq 2 · 2026-07-06T15:36:06.020Z\n\n```text\n  alpha\n```\n" in md
    assert "> [seqs 2-3 replaced for the model by summary at seq 7]\n\n```text\n  summary of alpha and beta\n```" in md
    assert "> [turn 1 ended: completed at seq 17]" in md


def test_transcript_markdown_shows_markup_verbatim_inside_a_fence(cli, write_log):
    text = "<script>alert(1)</script> [x](javascript:alert(1)) # not a heading\n```\nstill inside"
    md = cli("transcript", write_log([scenarios.HEADER, scenarios.user(0, text)]), "--format", "markdown").stdout
    # plain text, no entities, each line after two spaces; the fence outgrows the text's
    assert ("\n````text\n  <script>alert(1)</script> [x](javascript:alert(1)) # not a heading\n  ```\n"
            "  still inside\n````\n") in md
    assert "&lt;" not in md and "\\[" not in md


def test_transcript_reasoning_only_on_request(cli):
    path = SAMPLES / "multi-turn.jsonl"
    assert "[reasoning]" not in cli("transcript", path).stdout
    assert "[reasoning] I should list the directory first." in cli("transcript", path, "--reasoning").stdout


def test_events_filters(cli, compactions):
    rows = cli("events", compactions, "--type", "user/message", "--surface", "shadowed", "--json").json()
    assert [r["seq"] for r in rows] == [2, 3, 4, 7, 9]
    rows = cli("events", compactions, "--type", "compaction/", "--from", 10, "--json").json()
    assert [(r["seq"], r["surface"]) for r in rows] == [(10, "log-only"), (11, "log-only"), (13, "log-only"),
                                                        (14, "log-only")]
    rows = cli("events", compactions, "--grep", "GAMMA", "--at", 8, "--json").json()
    assert [(r["seq"], r["surface"], r["turn"]) for r in rows] == [(4, "current", 1)]
    nothing = cli("events", compactions, "--turn", 2, expect=2)  # (a turn past the last: it can match nothing)
    assert (nothing.stdout, nothing.stderr) == ("", f"dshreplay: usage error: {compactions}: turn 2: the log has "
                                                    "1 turn\n")


def test_inspect_of_a_crashed_log(cli, crashed):
    out = cli("inspect", crashed, "--json").json()
    assert (out["events"], out["turns"], out["steps"], out["calls"], out["interrupted"]) == (25, 1, 2, 2, True)
    assert [(c["type"], c["callId"], c["code"]) for c in out["closers"]] == [
        ("tool/result", "c2", "TOOL_OUTCOME_UNKNOWN"), ("tool/result", "c3", "TOOL_NOT_STARTED"),
        ("step/end", None, None), ("turn/end", None, None)]
    assert out["header"]["createdAt"] == "2026-07-06T15:36:05.190Z"
    text = cli("inspect", crashed).stdout
    assert 'tool/result TOOL_OUTCOME_UNKNOWN for "c2" (its tool/call at seq 24 may have had side effects)' in text


def test_inspect_reports_a_torn_tail(cli):
    data = (SAMPLES / "torn-tail.jsonl").read_bytes()
    tail = data[data.rindex(b"\n") + 1:]
    out = cli("inspect", SAMPLES / "torn-tail.jsonl", "--json").json()
    assert out["tornTail"] == {"line": data.count(b"\n") + 1, "offset": len(data) - len(tail),
                               "bytes": len(tail)}
    assert out["interrupted"] is False


def test_commands_refuse_unreadable_logs_with_one_line(cli, tmp_path):
    for command in (["shadows"], ["brackets"], ["provenance"], ["diff", "--from", "0", "--to", "1"],
                    ["request", "--list"], ["transcript"], ["events"], ["inspect"]):
        result = cli(*command[:1], SAMPLES / "broken-version-1.jsonl", *command[1:], expect=2)
        assert result.stderr.count("\n") == 1 and "format version 1 not supported" in result.stderr


def test_stats_command_with_a_total_row(cli):
    out = cli("stats", SAMPLES / "audit-demo.jsonl", SAMPLES / "prune.jsonl", "--json").json()
    assert [s["turns"] for s in out["sessions"]] == [4, 1]
    assert out["total"]["turns"] == 5
    table = cli("stats", SAMPLES / "audit-demo.jsonl", SAMPLES / "prune.jsonl").stdout
    first, second = table.splitlines()[:2]  # (the headers that do not fit break onto two lines)
    assert first.split() == ["call/", "tool/", "ask/", "sum/", "tok"]
    assert second.split() == ["session", "turns", "steps", "fail", "retry", "err", "deny", "prn", "in/out",
                              "surface"]
    assert first.index("call/") == second.index("fail") and first.index("tok") == second.index("in/out")
    assert "(total)" in table and all(len(line) <= 100 for line in table.splitlines())


def test_lineage_command_exit_codes(cli, tmp_path):
    from dshreplay.testing.samples import fork_child, multi_turn
    multi_turn().write(tmp_path / "parent.jsonl")
    fork_child().write(tmp_path / "child.jsonl")
    out = cli("lineage", tmp_path / "parent.jsonl", tmp_path / "child.jsonl", "--json").json()
    assert out["problems"] == []
    [child] = out["sessions"][0]["children"]
    assert (child["sessionId"], child["seedVerified"], child["seedLength"]) == ("sample-fork-child", True, 35)
    assert "seed ok" in cli("lineage", tmp_path / "parent.jsonl", tmp_path / "child.jsonl").stdout
    cli("lineage", tmp_path / "child.jsonl", expect=1)  # its parent is missing
    (tmp_path / "empty.jsonl").write_bytes(b"")
    result = cli("lineage", tmp_path / "parent.jsonl", tmp_path / "empty.jsonl", "--json", expect=2)
    assert result.json()["problems"] == [f"{tmp_path / 'empty.jsonl'}: empty log: no session header"]
    assert result.stderr == f"dshreplay: unreadable: {tmp_path / 'empty.jsonl'}: empty log: no session header\n"
    assert [s["sessionId"] for s in result.json()["sessions"]] == ["sample-multi-turn"]
    cli("lineage", tmp_path / "missing.jsonl", expect=2)  # (as validate and stats: 2, cannot read)


def test_request_list_answers_for_the_events_before_a_fold_error_and_says_so(cli, write_log):
    records = [scenarios.HEADER, *scenarios.rewrite_then_crash()]
    assert records[10]["seq"] == 9 and records[10]["type"] == "assistant/message"
    records[10]["seq"] = 90
    path = write_log(records)
    result = cli("request", path, "--list", "--json", expect=1)
    out = result.json()
    assert (out["error"]["seq"], out["answeredUpTo"]) == (9, 8)
    assert [(c["call"], c["messageCount"]) for c in out["answer"]] == [(1, 1)]
    note = ("answered for seqs 0..8 only: the fold fails at seq 9 (DSH-E101, line 11, /seq: seq 90 is not "
            "contiguous; expected 9: the line's seq is wrong (the line after it has seq 10))")
    assert result.stderr == f"dshreplay: {path}: {note}\n"
    text = cli("request", path, "--list", expect=1).stdout
    assert text.splitlines()[-1] == f"({note})"


@pytest.mark.parametrize("command", [["shadows"], ["brackets"], ["inspect"], ["request", "--list"], ["events"],
                                     ["spills"]])
def test_a_command_answering_before_a_fold_error_says_so_and_exits_1(cli, command):
    log = SAMPLES / "broken-replace-start-not-found.jsonl"
    out = cli(command[0], log, *command[1:], "--json", expect=1).json()
    assert (out["error"]["stage"], out["error"]["seq"], out["answeredUpTo"]) == ("fold", 67, 66)
    result = cli(command[0], log, *command[1:], expect=1)
    assert result.stderr == (f"dshreplay: {log}: answered for seqs 0..66 only: the fold fails at seq 67 (DSH-E107, "
                             "line 69, /surfaceOp/start: replace start seq 1 is not in the surface)\n")


@pytest.mark.parametrize("command", [["provenance"], ["fold"], ["diff", "--from", "0", "--to", "70"],
                                     ["request", "--at", "70"]])
def test_a_command_that_needs_the_failed_fold_prints_one_json_error_object(cli, command):
    out = cli(command[0], SAMPLES / "broken-replace-start-not-found.jsonl", *command[1:], "--json", expect=1).json()
    assert out == {"error": {"stage": "fold", "seq": 67, "line": 69, "pointer": "/surfaceOp/start",
                             "code": "DSH-E107", "message": "replace start seq 1 is not in the surface"},
                   "answeredUpTo": None, "answer": None}


@pytest.mark.parametrize("command", [["shadows"], ["brackets"], ["provenance"], ["request", "--list"],
                                     ["transcript"], ["events"], ["inspect"]])
def test_every_command_that_reads_a_torn_tail_says_so_on_one_line(cli, command):
    data = (SAMPLES / "torn-tail.jsonl").read_bytes()
    tail = data[data.rindex(b"\n") + 1:]
    result = cli(command[0], SAMPLES / "torn-tail.jsonl", *command[1:])
    assert result.stderr == (f"dshreplay: warning: {SAMPLES / 'torn-tail.jsonl'}: line 65: torn tail: last "
                             f"line has no newline and does not parse; {len(tail)} bytes lost at byte offset "
                             f"{len(data) - len(tail)}\n"), result.stderr
    assert cli(command[0], SAMPLES / "multi-turn.runtime.jsonl", *command[1:]).stderr == ""


def test_a_torn_tail_is_told_in_one_text_by_every_command_the_finding_and_the_report(cli, tmp_path):
    log = SAMPLES / "torn-tail.jsonl"
    text = "torn tail: last line has no newline and does not parse; 42 bytes lost at byte offset 11341"
    assert cli("stats", log).stderr == f"dshreplay: warning: {log}: line 65: {text}\n"
    assert cli("export", log, "--out", tmp_path / "b").stderr == \
        f"dshreplay: warning: {log}: line 65: {text} (not exported)\n"
    inspect = cli("inspect", log).stdout.splitlines()
    at = next(i for i, line in enumerate(inspect) if line.startswith("torn tail"))
    assert " ".join(" ".join(line.split()) for line in inspect[at:at + 2]) == f"torn tail line 65: {text}"
    findings = cli("validate", log, "--json").json()["files"][0]["findings"]
    assert [(f["code"], f["line"], f["message"]) for f in findings] == [("DSH-W010", 65, text)]
    assert f"<td>torn tail</td><td>{text}</td>" in (tmp_path / "b" / "sample-multi-turn" / "report.html").read_text()


def test_a_seq_beyond_a_torn_log_names_the_torn_tail_before_the_error(cli):
    # (a diff inside the log stops reading at its later seq: no warning then)
    assert cli("diff", SAMPLES / "torn-tail.jsonl", "--from", "0", "--to", "62").stderr == ""
    result = cli("diff", SAMPLES / "torn-tail.jsonl", "--from", "0", "--to", "63", expect=2)
    warning, error = result.stderr.splitlines()
    assert "bytes lost at byte offset" in warning
    assert error.endswith("seq 63 is beyond the log: its last seq is 62")


def test_a_replacement_with_no_bracket_is_unbracketed_not_open(cli, corpus_dir):
    log = corpus_dir / "upstream" / "acp-agent__agent-instructions__session.jsonl"
    [bracket] = cli("brackets", log, "--json").json()  # exit 0: nothing is open
    assert (bracket["status"], bracket["start"], bracket["anomalies"]) == ("unbracketed", None, [])
    assert cli("stats", log, "--json").json()["sessions"][0]["compactions"]["open"] == 0


def test_an_unknown_finding_code_is_a_usage_error_naming_the_closest(cli):
    result = cli("validate", "--select", "DSH-E99", SAMPLES / "compaction.jsonl", expect=2)
    assert "DSH-E99 is no finding code or prefix of one (the closest is DSH-E309" in result.stderr
    assert cli("validate", "--ignore", "dsh-w", SAMPLES / "compaction.jsonl").exit_code == 0


def test_lineage_finds_sessions_in_a_flat_folder_of_logs(cli, tmp_path):
    import shutil
    for name in ("multi-turn.jsonl", "fork-child.jsonl"):
        shutil.copy(SAMPLES / name, tmp_path / name)
    [root] = cli("lineage", tmp_path, "--json").json()["sessions"]
    assert (root["sessionId"], [c["sessionId"] for c in root["children"]]) == ("sample-multi-turn",
                                                                               ["sample-fork-child"])
    assert root["children"][0]["seedVerified"] is True


@pytest.mark.parametrize("name, last", [
    ("acp-agent__error-finish__session.jsonl", "error AUTH (turn 1, seq 11)"),
    ("acp-agent__cancel-tool-calls__session.jsonl", "aborted by user (turn 1, seq 23)"),
])
def test_inspect_says_how_the_last_turn_ended(cli, corpus_dir, name, last):
    out = cli("inspect", corpus_dir / "upstream" / name).stdout
    assert f"last turn              {last}" in out
    facts = cli("inspect", corpus_dir / "upstream" / name, "--json").json()
    assert facts["lastTurn"] == last.split(" (")[0] and not facts["interrupted"]


def test_stats_counts_failed_calls_by_code_and_what_the_model_forgot(cli, corpus_dir):
    log = corpus_dir / "upstream" / "headless-agent__compaction-recovery__session.jsonl"
    [s] = cli("stats", log, "--json").json()["sessions"]
    assert s["failedCalls"] == {"CONTEXT_WINDOW_EXCEEDED": 1}
    assert s["turnEndings"] == ["completed"]
    assert s["surface"]["forgotten"] >= 1
    assert list(s["tokensByModel"]) and all("inputTokens" in t for t in s["tokensByModel"].values())
    text = cli("stats", log).stdout
    assert "failed calls: CONTEXT_WINDOW_EXCEEDED 1" in text
    assert f"{s['surface']['now']}/{s['surface']['appended']}/{s['surface']['forgotten']}" in text


def test_events_gives_each_event_a_time_and_a_line_of_text_and_a_tool_event_its_call(cli):
    rows = cli("events", SAMPLES / "audit-demo.jsonl", "--from", 111, "--to", 116, "--json").json()
    assert [(r["seq"], r["time"], r["text"], r["callId"], r["tool"]) for r in rows] == [
        (111, "2026-07-06T15:36:05.690Z", "usage in 5640 out 38", None, None),
        (112, "2026-07-06T15:36:05.693Z", "finish tool-calls", None, None),
        (113, "2026-07-06T15:36:05.700Z", rows[2]["text"], None, None),
        (114, "2026-07-06T15:36:05.707Z", "bash call-0019: deploys to a shared environment", "call-0019", "bash"),
        (115, "2026-07-06T15:36:05.714Z", "bash call-0019: decided allowed-once", "call-0019", "bash"),
        (116, "2026-07-06T15:36:05.721Z", 'bash {"command": "./deploy.sh"}', "call-0019", "bash")]
    table = cli("events", SAMPLES / "audit-demo.jsonl", "--from", 115, "--to", 115).stdout
    assert table.splitlines()[2].split()[:3] == ["115", "15:36:05.714", "approval/decided"]
    projected = cli("events", SAMPLES / "multi-turn.jsonl", "--to", 0, "--json").json()
    assert projected[0]["time"] is None


def test_events_grep_searches_the_whole_record_and_since_until_filter_by_time(cli, corpus_dir):
    assert [r["seq"] for r in cli("events", SAMPLES / "audit-demo.jsonl", "--grep", "ALLOWED-once",
                                  "--json").json()] == [115]
    window = cli("events", SAMPLES / "audit-demo.jsonl", "--since", "2026-07-06T15:36:05.700Z",
                 "--until", "2026-07-06T15:36:05.714Z", "--json").json()
    assert [r["seq"] for r in window] == [113, 114, 115]
    assert cli("events", SAMPLES / "audit-demo.jsonl", "--since", "yesterday", expect=2).stderr.count(
        "is not an ISO 8601 time") == 1
    hooks = cli("events", corpus_dir / "upstream" / "acp-agent__hook-cc-posttool-block__session.jsonl",
                "--type", "hook/result", "--json").json()
    assert [(r["text"], r["callId"]) for r in hooks] == [  # (each hook ran for the one call then in progress)
        ("PostToolUse: block (bash call_00_VAByyMjsct4c7P6k1ysX9256) exit 2: tool output rejected by policy: retry "
         "once", "call_00_VAByyMjsct4c7P6k1ysX9256"),  # (its exit code and stderr summary)
        ("PostToolUse: pass (bash call_00_tDV4j1p5eAeHTtQhXOfn6856)", "call_00_tDV4j1p5eAeHTtQhXOfn6856")]


def test_spills_lists_each_result_dsh_moved_out_and_finds_its_stored_file(cli, corpus_dir, tmp_path):
    log = corpus_dir / "upstream" / "acp-agent__bash-spill__session.jsonl"
    [spill] = cli("spills", log, "--json").json()
    locator = "/tmp/dsh-acp-snap-ee77dff02/session-5e53dc8acfe4/2ce9d7a31a38-bash.txt"
    assert spill == {"seq": 16, "callId": "call_spill", "tool": "bash", "omittedBytes": 1417, "locator": locator,
                     "inherited": False, "found": False, "storedBytes": None, "sizeMatches": None}
    stored = tmp_path / "session-5e53dc8acfe4" / "2ce9d7a31a38-bash.txt"
    stored.parent.mkdir()
    stored.write_bytes(b"x" * 1500)
    [found] = cli("spills", log, "--spill-root", tmp_path, "--json").json()
    assert (found["found"], found["storedBytes"], found["sizeMatches"]) == (True, 1500, True)
    assert "1 spilled result\n" in cli("spills", log).stdout


def test_a_fork_child_marks_the_spills_it_inherited(cli, corpus_dir, write_log):
    lines = (corpus_dir / "upstream" / "acp-agent__bash-spill__session.jsonl").read_bytes().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["seedLength"] = 20  # a child whose first 20 events repeat its parent's
    child = write_log(b"".join([json.dumps(header).encode() + b"\n", *lines[1:]]))
    assert [s["inherited"] for s in cli("spills", child, "--json").json()] == [True]


def test_provenance_and_export_mention_the_spilled_result(cli, corpus_dir, tmp_path):
    import csv
    log = corpus_dir / "upstream" / "acp-agent__bash-spill__session.jsonl"
    rows = cli("provenance", log, "--json").json()
    assert [(r["seq"], r["spills"]) for r in rows if r["spills"]] == [(16, [{
        "omittedBytes": 1417, "locator": "/tmp/dsh-acp-snap-ee77dff02/session-5e53dc8acfe4/2ce9d7a31a38-bash.txt",
        "inherited": False}])]
    [line] = [line for line in cli("provenance", log).stdout.splitlines() if line.startswith("4 ")]
    assert line.split()[:3] == ["4", "16", "tool/result"] and line.endswith("1,417 B")
    cli("export", log, "--out", tmp_path / "b", "--snapshot")
    [folder] = [p for p in (tmp_path / "b").iterdir() if p.is_dir()]
    assert [(s["seq"], s["omittedBytes"]) for s in json.loads((folder / "spills.json").read_bytes())] == [(16, 1417)]
    facts = json.loads((folder / "session.json").read_bytes())
    assert facts["spills"] == {"results": 1, "omittedBytes": 1417, "inherited": 0}
    with open(folder / "tools.csv", newline="") as fh:
        assert [(r["callId"], r["spilledBytes"]) for r in csv.DictReader(fh)] == [("call_spill", "1417")]
    assert "1 (1,417 bytes kept out of the model's view; see spills.json)" in \
        html.unescape((folder / "report.html").read_text(encoding="utf-8"))


def test_tables_fit_the_terminal_and_cut_ids_in_the_middle(cli, corpus_dir):
    log = corpus_dir / "upstream" / "headless-agent__compaction-recovery__session.jsonl"
    from click.testing import CliRunner

    from dshreplay.cli import cli as command
    roomy = CliRunner(env={"COLUMNS": "90"}).invoke(command, ["brackets", str(log)]).output
    assert all(len(line) <= 90 for line in roomy.splitlines())
    assert "338e88fa-e78b-4d49-bd38-8f919e85f5e1" in roomy  # (it fits: nothing is cut)
    narrow = CliRunner(env={"COLUMNS": "72"}).invoke(command, ["brackets", str(log)]).output
    assert all(len(line) <= 72 for line in narrow.splitlines())
    [cell] = [line.split()[0] for line in narrow.splitlines() if line.startswith("338")]
    assert cell.startswith("338e88") and cell.endswith("85f5e1") and "…" in cell  # start and end kept
    wide = CliRunner(env={"COLUMNS": "72"}).invoke(command, ["brackets", str(log), "--wide"]).output
    assert "338e88fa-e78b-4d49-bd38-8f919e85f5e1" in wide


def test_jsonl_prints_one_object_per_line(cli):
    lines = cli("validate", SAMPLES / "compaction.jsonl", SAMPLES / "prune.jsonl", "--jsonl").stdout.splitlines()
    assert [json.loads(line)["path"] for line in lines] == [str(SAMPLES / "compaction.jsonl"),
                                                            str(SAMPLES / "prune.jsonl")]
    rows = cli("events", SAMPLES / "compaction.jsonl", "--to", 2, "--jsonl").stdout.splitlines()
    assert [json.loads(line)["seq"] for line in rows] == [0, 1, 2]


@pytest.mark.parametrize("name", ["headless-agent__compaction-recovery", "acp-agent__cancel-tool-calls",
                                  "acp-agent__bash-spill", "acp-agent__error-finish"])
def test_every_table_fits_80_columns(corpus_dir, name, tmp_path):
    from click.testing import CliRunner

    from dshreplay.cli import cli as command
    upstream = corpus_dir / "upstream"
    log = str(upstream / f"{name}__session.jsonl")
    other = str(upstream / "acp-agent__error-finish__session.jsonl")
    runs = [["validate", log, "--snapshot"], ["fold", log], ["shadows", log], ["brackets", log],
            ["provenance", log], ["events", log], ["request", log, "--list"], ["request", log, "--call", "1"],
            ["stats", log, other], ["inspect", log], ["spills", log],
            ["diff", log, "--from", "3", "--to", "10"],
            ["export", log, other, "--out", str(tmp_path / "b"), "--force", "--snapshot"]]
    if name == "acp-agent__error-finish":  # (once: every corpus log)
        runs += [["lineage", str(upstream)], ["validate", "--snapshot", str(upstream)]]
    for args in runs:
        result = CliRunner(env={"COLUMNS": "80"}).invoke(command, args)
        assert result.exit_code in (0, 1), (args, result.output)
        wide = [line for line in result.stdout.splitlines() if len(line) > 80 and not line.startswith(
            ("bundle digest: sha256:", "/tmp/")) and str(upstream) not in line]
        # (the digest to copy whole, the bundle's path, and a summary line naming its file: never cut)
        assert not wide, (args, wide)


@pytest.mark.parametrize("name", ["headless-agent__compaction-recovery", "acp-agent__empty-response-retry"])
def test_stats_count_a_call_issued_again_after_its_failure_as_a_retry(cli, corpus_dir, name):
    # compaction-recovery: call 2 fails with CONTEXT_WINDOW_EXCEEDED, a compaction follows and call 3
    # runs in the same step; empty-response-retry: call 1 ends EMPTY_RESPONSE, llm/retry, call 2.
    [figures] = cli("stats", corpus_dir / "upstream" / f"{name}__session.jsonl", "--json").json()["sessions"]
    assert (figures["calls"], figures["retries"], sum(figures["failedCalls"].values())) == (
        {"headless-agent__compaction-recovery": 3, "acp-agent__empty-response-retry": 2}[name], 1, 1)


def test_every_table_fits_80_columns_by_display_width_with_chinese_japanese_and_emoji(tmp_path):
    import unicodedata

    from click.testing import CliRunner

    from dshreplay.cli import cli as command
    from dshreplay.testing.samples import LogBuilder

    def columns(line: str) -> int:  # checked by hand: wide characters take two columns, combining marks none
        return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
                   for c in line)

    b = LogBuilder("会话-中文-セッション")
    b.start_turn()
    b.request_header(system="你是一个乐于助人的编程助手。请用中文回答所有问题，并给出完整的代码示例。")
    b.start_step()
    b.user("请帮我把这个函数改成异步的，并且加上错误处理和重试逻辑。谢谢！🙏 " * 3)
    b.tool_round("bash", '{"command": "grep -rn 非同期 ./源代码/"}', "関数を非同期に書き換えました ✅ " * 5,
                 text="了解しました。関数を非同期に書き換えます 🚀 e\u0301te\u0301 " * 3)
    b.assistant("完成了！所有的函数现在都是异步的。🎉 " * 4)
    b.end_turn()
    log = str(b.write(tmp_path / "中文日志.jsonl"))
    runs = [["fold", log], ["events", log], ["provenance", log], ["request", log, "--list"],
            ["request", log, "--call", "1"], ["stats", log], ["inspect", log], ["shadows", log], ["validate", log]]
    for args in runs:
        result = CliRunner(env={"COLUMNS": "80"}).invoke(command, args)
        assert result.exit_code in (0, 1), (args, result.output)
        lines = result.stdout.splitlines()
        assert lines, args
        wide = [(columns(line), line) for line in lines if columns(line) > 80 and log not in line]
        assert not wide, (args, wide)


def test_repeated_grep_keeps_only_the_events_holding_every_text(cli):
    log = SAMPLES / "multi-turn.jsonl"
    # (checked by hand: "bash" is in seqs 1 11 16 19 20 39 44 47 48, "ls" in 1 14 16 18 19 20 21 46 49)
    both = [r["seq"] for r in cli("events", log, "--grep", "bash", "--grep", "LS", "--json").json()]
    assert both == [1, 16, 19, 20]


def test_an_events_range_may_be_given_in_either_order(cli):
    log = SAMPLES / "multi-turn.jsonl"
    forward = cli("events", log, "--from", 10, "--to", 20, "--json").json()
    assert [r["seq"] for r in forward] == list(range(10, 21))
    assert cli("events", log, "--from", 20, "--to", 10, "--json").json() == forward


def test_transcript_takes_json_as_every_forensic_command_does(cli):
    log = SAMPLES / "multi-turn.jsonl"
    assert cli("transcript", log, "--json").stdout == cli("transcript", log, "--format", "json").stdout
    assert cli("transcript", log, "--json").json()


def test_a_type_filter_without_a_family_is_a_usage_error_naming_the_fix(cli):
    result = cli("events", SAMPLES / "multi-turn.jsonl", "--type", "user", expect=2)
    assert result.stdout == ""
    assert result.stderr == ('dshreplay: usage error: no event type "user": every type names its family, as '
                             'user/message does; did you mean "user/"? (see \'dshreplay events --help\')\n')


def test_a_hook_invocation_names_the_tool_call_it_runs_for(cli, write_log):
    b, _ = scenarios.parallel_calls()  # PreToolUse for bash (call_1), then for write (call_2)
    rows = cli("events", write_log(b), "--type", "hook/invoked", "--json").json()
    assert [(r["callId"], r["tool"]) for r in rows] == [("call_1", "bash"), ("call_2", "write")]
    assert [r["text"].endswith(f"invoked for {tool} ({tool} {call})") for r, (call, tool)
            in zip(rows, [("call_1", "bash"), ("call_2", "write")])] == [True, True]


def test_events_records_and_events_csv_name_the_same_compaction_for_every_event(cli, write_log, tmp_path):
    # by hand (scenarios.hook_inside_a_compaction): 5..10 lie in bracket k1 (the hook 6 and 7 name
    # none themselves), 12 is a checkpoint whose source names k0 with no bracket around it
    from dshreplay.session import Session
    path = write_log([scenarios.HEADER, *scenarios.hook_inside_a_compaction()])
    wanted = [None] * 5 + ["k1"] * 6 + [None, "k0", None, None]
    assert [r["compactionId"] for r in Session(path).to_records()] == wanted
    cli("export", path, "--out", tmp_path / "b", "--no-default-redaction", expect=None)
    with open(tmp_path / "b" / "scenario" / "events.csv", newline="", encoding="utf-8") as fh:
        assert [r["compactionId"] or None for r in csv.DictReader(fh)] == wanted
