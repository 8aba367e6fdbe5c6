"""One policy for a fold that fails (session.WHEN_THE_FOLD_FAILS), command by command, on
the five kinds of damage: a line that is not JSON, a missing seq, a duplicated line, a
swapped pair, an event of a type dsh does not define (without `ignorable`). Each log is
`compacted()` (95 events, event S on line S + 2) damaged at seq 20 (its first tool/call) with
`samples.damaged`; in it, turn 1 spans seqs 0..34, call 1 streams chunks 4..18 and calls 2..6
start after seq 20, and the compaction at seq 67 replaces seqs 3..37 (the undamaged transcript
shows it).

Where the fold fails (worked out by hand from the damaged lines):
- bad-json: seq 20's line 22 is cut in half: DSH-E001 at seq 20;
- missing: line 22 holds seq 21: DSH-E101 at seq 20;
- duplicate: lines 22 and 23 both hold seq 20: DSH-E101 at seq 21, line 23;
- swap: line 22 holds seq 21, line 23 seq 20: DSH-E101 at seq 20;
- unknown-type: seq 20's type is "custom/probe": DSH-E006 at seq 20 (FORMAT.md §3: refused).
"""

from __future__ import annotations

import json

import pytest

from dshreplay.testing.samples import compacted, damaged

FAILS = {  # kind: (seq where the fold fails, its line, code, pointer, message)
    "bad-json": (20, 22, "DSH-E001", None, "line is not valid JSON: unexpected end of data"),
    "missing": (20, 22, "DSH-E101", "/seq", "seq 21 is not contiguous; expected 20: seq 20 is missing"),
    "duplicate": (21, 23, "DSH-E101", "/seq", "seq 20 is not contiguous; expected 21: its seq is behind the "
                                              "log's place (a repeated or moved line)"),
    "swap": (20, 22, "DSH-E101", "/seq", "seq 21 is not contiguous; expected 20: the line comes before seq 20, "
                                         "ahead of its place"),
    "unknown-type": (20, 22, "DSH-E006", "/type", 'unknown event type "custom/probe" without ignorable: true: dsh '
                                                  "refuses to load the log"),
}
KINDS = list(FAILS)


def fails_at(kind: str) -> str:
    seq, line, code, pointer, message = FAILS[kind]
    where = f"line {line}" + (f", {pointer}" if pointer else "")
    return f"the fold fails at seq {seq} ({code}, {where}: {message})"


def note(kind: str) -> str:
    return f"answered for seqs 0..{FAILS[kind][0] - 1} only: {fails_at(kind)}"


def error(kind: str) -> dict:
    seq, line, code, pointer, message = FAILS[kind]
    return {"stage": "read" if kind == "bad-json" else "fold", "seq": seq, "line": line, "pointer": pointer,
            "message": message, "code": code}


@pytest.fixture
def log(write_log, request):
    return write_log(damaged(compacted(), request.param, 20), f"{request.param}.jsonl")


def each_kind(func):
    return pytest.mark.parametrize("log", KINDS, indirect=True)(func)


def kind_of(log) -> str:
    return log.name.removesuffix(".jsonl")


# -- answered for the prefix: exit 1, answeredUpTo, one stderr line ----------------------------

PREFIX_COMMANDS = [["inspect"], ["shadows"], ["brackets"], ["request", "--list"], ["spills"], ["events"]]


@each_kind
@pytest.mark.parametrize("command", PREFIX_COMMANDS, ids=" ".join)
def test_a_prefix_answer_carries_answered_up_to_and_says_so_on_one_stderr_line(cli, log, command):
    kind = kind_of(log)
    result = cli(command[0], log, *command[1:], "--json", expect=1)
    assert result.stderr == f"dshreplay: {log}: {note(kind)}\n"
    out = result.json()
    assert (out["error"], out["answeredUpTo"]) == (error(kind), FAILS[kind][0] - 1)
    text = cli(command[0], log, *command[1:], expect=1)
    assert text.stderr == result.stderr and text.stdout.splitlines()[-1] == f"({note(kind)})"


@each_kind
def test_stats_gives_answered_up_to_and_the_error_object_and_says_so(cli, log):
    kind = kind_of(log)
    result = cli("stats", log, "--json", expect=1)
    assert result.stderr == f"dshreplay: {log}: {note(kind)}\n"
    [session] = result.json()["sessions"]
    assert (session["error"], session["answeredUpTo"]) == (error(kind), FAILS[kind][0] - 1)
    assert "foldError" not in session
    assert (session["turns"], session["calls"], session["turnEndings"]) == (1, 1, ["unknown"])
    text = cli("stats", log, expect=1).stdout.splitlines()
    assert note(kind) in " ".join(line.strip() for line in text)  # (wrapped to the 100 columns)
    assert "  turns ended: 1 unknown" in text


@each_kind
def test_inspect_says_the_turn_state_past_the_failure_is_unknown_not_interrupted(cli, log):
    kind = kind_of(log)
    answered = FAILS[kind][0] - 1
    health = cli("inspect", log, "--json", expect=1).json()["answer"]
    assert (health["answeredUpTo"], health["error"], health["interrupted"], health["closers"]) == \
        (answered, error(kind), None, [])
    assert health["turnEndings"] == [{"turn": 1, "startSeq": 0, "endSeq": None, "ending": "unknown"}]
    assert (health["events"], health["lines"], health["lastTurn"]) == (answered + 1, answered + 2, "unknown")
    text = cli("inspect", log, expect=1).stdout
    assert "dsh would close" not in text and "interrupted" not in text
    assert f"last turn              unknown past seq {answered} (turn 1, from seq 0)" in text.splitlines()
    assert f"events / lines         {answered + 1} / {answered + 2}" in text.splitlines()
    assert "torn tail              not read (past the failure)" in text.splitlines()


def test_a_log_cut_by_a_crash_is_still_interrupted(cli, write_log):
    b = compacted()
    log = write_log(b"".join(b.to_bytes().splitlines(keepends=True)[:21]))  # (seqs 0..19: no damage)
    health = cli("inspect", log, "--json").json()
    assert (health["answeredUpTo"], health["error"], health["interrupted"], health["lastTurn"]) == \
        (None, None, True, "interrupted")
    assert "dsh would close the interrupted turn with:" in cli("inspect", log).stdout


@each_kind
def test_transcript_ends_with_a_marker_where_the_fold_fails_and_exits_1(cli, log, write_log):
    kind = kind_of(log)
    seq, _, code, _, message = FAILS[kind]
    marker = f"[the fold fails at seq {seq}: {code} {message}; nothing past this point]"
    result = cli("transcript", log, expect=1)
    assert result.stderr == f"dshreplay: {log}: {note(kind)}\n"
    assert result.stdout.splitlines()[-3:] == [marker, "", f"({note(kind)})"]
    assert "replaced for the model by summary" not in result.stdout
    undamaged = cli("transcript", write_log(compacted())).stdout
    assert "[seqs 3-37 replaced for the model by summary at seq 67]" in undamaged
    out = cli("transcript", log, "--format", "json", expect=1).json()
    assert out["answeredUpTo"] == seq - 1 and out["error"] == error(kind)
    assert out["answer"][-1] == {"seq": seq, "entry": "fold-failure", "code": code, "message": message,
                                 "text": marker}
    assert [e["seq"] for e in out["answer"][:-1]] == [3, 19]  # (the user's message, the tool call)
    assert f"> ` {marker} `" in cli("transcript", log, "--format", "markdown", expect=1).stdout


@each_kind
def test_events_lists_the_events_before_the_failure(cli, log):
    kind = kind_of(log)
    seq = FAILS[kind][0]
    result = cli("events", log, "--from", 15, "--to", 25, "--json", expect=1)
    out = result.json()
    assert (out["answeredUpTo"], out["error"]) == (seq - 1, error(kind))
    assert [row["seq"] for row in out["answer"]] == list(range(15, seq))
    assert result.stderr == f"dshreplay: {log}: {note(kind)}\n"
    lines = cli("events", log, "--from", 15, "--to", 25, "--jsonl", expect=1).stdout.splitlines()
    assert json.loads(lines[0]) == {"error": error(kind), "answeredUpTo": seq - 1}
    assert [json.loads(line)["seq"] for line in lines[1:]] == list(range(15, seq))
    assert cli("events", log, "--at", 10, "--from", 8).stderr == ""  # (a question before the failure)


# -- needs the view past the failure: no answer, exit 1 ----------------------------------------

@each_kind
@pytest.mark.parametrize("command", [["fold"], ["fold", "--at", "40"], ["diff", "--from", "0", "--to", "40"],
                                     ["provenance"], ["request", "--at", "40"]], ids=" ".join)
def test_a_view_past_the_failure_has_no_answer(cli, log, command):
    kind = kind_of(log)
    result = cli(command[0], log, *command[1:], "--json", expect=1)
    assert result.json() == {"error": error(kind), "answeredUpTo": None, "answer": None}
    where = "at the end of the log" if command in (["fold"], ["provenance"]) else "at seq 40"
    assert result.stderr == f"dshreplay: {log}: no answer: the model's view {where}: {fails_at(kind)}\n"


@each_kind
def test_a_call_after_the_failure_has_no_request_and_one_before_it_has_its_own(cli, log):
    kind = kind_of(log)
    result = cli("request", log, "--call", 2, expect=1)
    assert result.stderr == (f"dshreplay: {log}: no answer: there is no call 2 before the failure: "
                             f"1 model call before it (the last starts at seq 4): {fails_at(kind)}\n")
    first = cli("request", log, "--call", 1, "--json")
    assert first.stderr == "" and first.json()["atSeq"] == 3
    assert cli("fold", log, "--at", FAILS[kind][0] - 1).stderr == ""


# -- raw lines ------------------------------------------------------------------------------

def test_events_lines_shows_lines_as_stored_with_their_numbers(cli, write_log):
    data = damaged(compacted(), "bad-json", 20)
    lines = data.splitlines()
    lines[20] = lines[20].replace(b'"seq":19', b'"seq":19,"x":"\x1b[31m\xff"')  # (a control, a stray byte)
    log = write_log(b"\n".join(lines) + b"\n")
    out = cli("events", log, "--lines", "21-22").stdout.splitlines()
    # (both hold no record: the stray byte is no UTF-8, the half line no JSON; each is marked, and why said)
    assert out[0].startswith('21! {"type":"assistant/message","seq":19,"x":"\\x1b[31m\\xff"')
    assert out[1] == "22! " + lines[21].decode()  # the half line, as it is
    assert [line.split(":")[0] for line in out[2:]] == ["(line 21", "(line 22"]
    assert cli("events", log, "--lines", "22-21").stdout.splitlines() == out  # (a range in either order)
    rows = cli("events", log, "--lines", "22", "--json").json()
    assert rows == [{"line": 22, "offset": len(b"\n".join(lines[:21])) + 1, "bytes": len(lines[21]),
                     "text": lines[21].decode(), "problem": rows[0]["problem"]}]
    assert rows[0]["problem"].startswith("line is not valid JSON: ")
    assert cli("events", log, "--lines", "1").stdout.startswith('1  {"type":"session"')


def test_events_lines_refuses_a_range_it_cannot_show(cli, write_log):
    log = write_log(compacted())
    assert "line 500 is beyond the log: it has 96 lines" in cli("events", log, "--lines", "500-510",
                                                                expect=2).stderr
    assert "lines count from 1" in cli("events", log, "--lines", "0-3", expect=2).stderr
    assert "--lines goes alone" in cli("events", log, "--lines", "1-2", "--type", "user/", expect=2).stderr
    assert "not a line range" in cli("events", log, "--lines", "a-b", expect=2).stderr


# -- export: every call listed, none given a view past the failure ----------------------------

@each_kind
def test_export_writes_no_model_view_for_a_call_after_the_failure(cli, log, tmp_path):
    kind = kind_of(log)
    seq = FAILS[kind][0]
    result = cli("export", log, "--out", tmp_path / "b", "--json", expect=1)
    assert result.stderr == f"dshreplay: {log}: {note(kind)}\n"
    [entry] = json.loads((tmp_path / "b" / "manifest.json").read_bytes())["sessions"]
    assert (entry["answeredUpTo"], entry["failure"], entry["verdict"]) == (seq - 1, error(kind), "errors")
    folder = tmp_path / "b" / entry["folder"]
    records = [json.loads(line) for line in (folder / "calls.jsonl").read_bytes().splitlines()]
    calls = {r["call"]: r for r in records}
    assert [r["call"] for r in records] == [1, 2, 3, 4, 5, 6]
    assert calls[1]["messageCount"] == 1 and "view" not in calls[1]
    for number in range(2, 7):
        record = calls[number]
        assert (record["view"], record["failure"]) == (None, error(kind))
        assert record["reason"] == f"{fails_at(kind)}: no model view past seq {seq - 1}"
        assert "messages" not in record and record["response"]["finish"] in ("stop", "tool-calls")
    listed = cli("request", "--json", "--bundle", folder, "--list").json()
    assert [(c["call"], c["messageCount"]) for c in listed] == [(1, 1)] + [(n, None) for n in range(2, 7)]
    rebuilt = cli("request", "--json", "--bundle", folder, "--call", 1).json()
    assert rebuilt == cli("request", log, "--call", 1, "--json").json()
    refused = cli("request", "--json", "--bundle", folder, "--call", 2, expect=1)
    assert refused.stderr == \
        f"dshreplay: {folder}: no answer: call 2 has no model view in the bundle: {fails_at(kind)}\n"
    assert json.loads(refused.stdout) == {"error": error(kind), "answeredUpTo": None, "answer": None}
    rows = (folder / "events.csv").read_text().splitlines()[1:]
    surfaces = {int(r.split(",")[0]): r.split(",")[6] for r in rows}
    assert surfaces[19] == "current" and surfaces[21] == "" and surfaces[67] == ""  # (no status from the failure)
    assert json.loads((folder / "shadows.json").read_bytes()) == []  # (the compaction lies past it)
    assert (folder / "transcript.md").read_text().rstrip().endswith(
        f"[the fold fails at seq {seq}: {FAILS[kind][2]} {FAILS[kind][4]}; nothing past this point] `")
    page = (folder / "report.html").read_text()
    assert "no model view" in page and "Interrupted turn" not in page
