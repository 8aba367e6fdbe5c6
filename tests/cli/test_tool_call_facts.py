"""Every output attaches a tool call's facts by call id: tools.csv gives every call the model
asked for (with its hooks, approval and outcome), events name the call and tool of an approval
or hook, and the transcript labels each result with its tool and call."""

from __future__ import annotations

import csv

import scenarios

STAMP = "2026-01-01T00:00:00Z"


def _bundle(cli, path, tmp_path):
    cli("export", path, "--out", tmp_path / "b", "--timestamp", STAMP, "--no-default-redaction", expect=None)
    [folder] = [p for p in (tmp_path / "b").iterdir() if p.is_dir()]
    return folder


def _rows(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_tools_csv_gives_each_parallel_call_its_own_hooks_and_approval(cli, write_log, tmp_path):
    b, s = scenarios.parallel_calls()
    rows = _rows(_bundle(cli, write_log(b), tmp_path) / "tools.csv")
    assert [(r["callId"], r["tool"], r["outcome"], r["hooks"], r["approvalOutcome"], r["askedSeq"], r["callSeq"],
             r["resultSeq"], r["resultPreview"]) for r in rows] == [
        ("call_1", "bash", "completed", "PreToolUse:pass", "", str(s["asked"]), str(s["call_1"]),
         str(s["result_1"]), "[result bash call_1] 4 passed"),
        ("call_2", "write", "completed", "PreToolUse:ask", "allowed-once", str(s["asked"]), str(s["call_2"]),
         str(s["result_2"]), "[result write call_2] wrote a.py")]


def test_tools_csv_has_a_row_for_every_call_asked_for_with_its_outcome(cli, write_log, tmp_path):
    b, s = scenarios.unstarted_calls()
    rows = _rows(_bundle(cli, write_log(b), tmp_path) / "tools.csv")
    assert [(r["callId"], r["tool"], r["outcome"], r["callSeq"], r["resultSeq"], r["arguments"]) for r in rows] == [
        ("call_a", "bash", "completed", str(s["call_a"]), str(s["result_a"]), '{"command": "ls"}'),
        ("call_b", "bash", "outcome unknown", str(s["call_b"]), "", '{"command": "sleep 999"}'),
        ("call_c", "read", "not started", "", "", '{"path": "README"}')]


def test_events_name_the_call_and_tool_of_each_approval_and_hook(cli, write_log, tmp_path):
    b, s = scenarios.parallel_calls()
    path = write_log(b)
    wanted = ["hook_bash", "hook_bash_result", "hook_write", "hook_write_result", "approval_asked",
              "approval_decided"]
    rows = {r["seq"]: r for r in cli("events", path, "--type", "hook/", "--type", "approval/", "--json").json()}
    assert [(rows[s[n]]["callId"], rows[s[n]]["tool"]) for n in wanted] == [
        ("call_1", "bash"), ("call_1", "bash"), ("call_2", "write"), ("call_2", "write"), ("call_2", "write"),
        ("call_2", "write")]
    assert rows[s["approval_decided"]]["text"] == "write call_2: decided allowed-once"
    assert rows[s["hook_write_result"]]["text"] == "PreToolUse: ask (write call_2)"
    sheet = {int(r["seq"]): r for r in _rows(_bundle(cli, path, tmp_path) / "events.csv")}
    assert [(sheet[s[n]]["callId"], sheet[s[n]]["tool"]) for n in wanted] == [
        ("call_1", "bash"), ("call_1", "bash"), ("call_2", "write"), ("call_2", "write"), ("call_2", "write"),
        ("call_2", "write")]


def test_the_transcript_labels_each_result_with_its_tool_and_call(cli, write_log, tmp_path):
    b, s = scenarios.parallel_calls()
    path = write_log(b)
    entries = {e["seq"]: e for e in cli("transcript", path, "--format", "json").json()}
    assert entries[s["asked"]]["text"] == '[call bash call_1] {"command": "make test"}\n' \
                                          '[call write call_2] {"path": "a.py"}'
    assert [(entries[s[n]]["text"], entries[s[n]]["calls"]) for n in ("result_2", "result_1")] == [
        ("[result write call_2] wrote a.py", [{"callId": "call_2", "tool": "write"}]),
        ("[result bash call_1] 4 passed", [{"callId": "call_1", "tool": "bash"}])]
    text = cli("transcript", path).stdout
    assert "[result write call_2] wrote a.py\n" in text and "[result bash call_1] 4 passed\n" in text
    for markdown in (cli("transcript", path, "--format", "markdown").stdout,
                     (_bundle(cli, path, tmp_path) / "transcript.md").read_text(encoding="utf-8")):
        assert "```text\n  [result write call_2] wrote a.py\n```" in markdown
        assert "```text\n  [result bash call_1] 4 passed\n```" in markdown


def test_events_and_events_csv_give_every_event_the_same_turn_step_and_call(cli, write_log, tmp_path):
    # by hand (scenarios.interleaved_calls): every event from 28 to 40 lies in turn 1 step 1, the
    # hook's and approvals' too (their data name no step); 41 is step 1's step/end, 42 and 43 step 2
    b, s = scenarios.interleaved_calls()
    path = write_log(b)
    listed = [(r["seq"], r["turn"], r["step"], r["callId"], r["tool"])
              for r in cli("events", path, "--from", 28, "--to", 43, "--json").json()]
    assert listed == [
        (28, 1, 1, "c3", "read"), (29, 1, 1, "c2", "bash"), (30, 1, 1, "c1", "bash"), (31, 1, 1, "c3", "read"),
        (32, 1, 1, "c2", "bash"), (33, 1, 1, "c1", "bash"), (34, 1, 1, "c1", "bash"), (35, 1, 1, "c3", "read"),
        (36, 1, 1, "c2", "bash"), (37, 1, 1, "c2", "bash"), (38, 1, 1, "c3", "read"), (39, 1, 1, "zz", "bash"),
        (40, 1, 1, "zz", "bash"), (41, 1, 1, None, None), (42, 1, 2, None, None), (43, 1, 2, "c1", "bash")]
    sheet = _rows(_bundle(cli, path, tmp_path) / "events.csv")
    assert [(int(r["seq"]), int(r["turn"]), int(r["step"]), r["callId"] or None, r["tool"] or None)
            for r in sheet if 28 <= int(r["seq"]) <= 43] == listed


def test_tools_csv_gives_interleaved_calls_their_own_facts_and_an_approval_only_call_no_invented_outcome(
        cli, write_log, tmp_path):
    b, s = scenarios.interleaved_calls()
    rows = _rows(_bundle(cli, write_log(b), tmp_path) / "tools.csv")
    assert [(r["callId"], r["tool"], r["outcome"], r["isError"], r["approvalOutcome"], r["hooks"], r["askedSeq"],
             r["callSeq"], r["resultSeq"]) for r in rows] == [
        ("c1", "bash", "completed", "false", "rejected", "", "27", "30", "43"),
        ("c2", "bash", "error", "true", "allowed-once", "", "27", "29", "37"),
        ("c3", "read", "completed", "false", "", "PreToolUse:allow", "27", "28", "38"),
        ("zz", "bash", "outcome unknown", "", "allowed-once", "", "", "", "")]


def test_events_and_events_csv_keep_a_late_hook_result_and_a_rewrite_with_their_own_call(cli, write_log, tmp_path):
    # by hand (scenarios.reused_call_id): 32 answers the hook the read c1 ran, 33 rewrites its result
    b, s = scenarios.reused_call_id()
    path = write_log(b)
    listed = {r["seq"]: (r["callId"], r["tool"]) for r in cli("events", path, "--from", 31, "--to", 34,
                                                               "--json").json()}
    assert listed == {31: ("c1", "bash"), 32: ("c1", "read"), 33: ("c1", "read"), 34: ("c1", "bash")}
    sheet = {int(r["seq"]): (r["callId"], r["tool"]) for r in _rows(_bundle(cli, path, tmp_path) / "events.csv")}
    assert {seq: sheet[seq] for seq in (31, 32, 33, 34)} == listed
    entries = {e["seq"]: e for e in cli("transcript", path, "--format", "json").json()}
    assert entries[33]["calls"] == [{"callId": "c1", "tool": "read"}]
