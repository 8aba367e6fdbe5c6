"""Shapes a script can trust: messages numbered from 1 everywhere, each call's outcome
(a stream an abort cut short is `cancelled`), the turn and step in force at a seq,
reasoning only when asked for, summaries as text, and --jsonl rows that leave nothing out."""

from __future__ import annotations

import json

import pytest

from dshreplay.testing.samples import LogBuilder

ERROR = {"kind": "error", "failure": {"code": "CONTEXT_WINDOW_EXCEEDED", "message": "too long"}}


@pytest.fixture
def outcomes(tmp_path):
    """Five model calls, one of each outcome: call 1 stops, call 2 fails, call 3 is cancelled
    (its interrupted message follows, then the turn ends aborted), call 4 is cancelled before
    any visible content (only the aborted turn/end says so), call 5 is open when the log ends."""
    b = LogBuilder("outcomes")
    seqs = {}
    b.start_turn()
    b.request_header()
    b.start_step()
    seqs["ask"] = b.user("go")
    seqs["call 1"] = b.assistant("done", usage={"inputTokens": 10, "outputTokens": 2})
    seqs["step end"] = b.end_step()
    b.start_step()
    seqs["call 2"] = b.assistant("", finish=ERROR, usage={"inputTokens": 900, "outputTokens": 0})
    seqs["turn end"] = b.end_turn("error")
    b.start_turn()
    b.start_step()
    b.user("a long task")
    seqs["call 3 first"] = b.next_seq
    seqs["call 3"] = b.cancelled("partial answer")
    b.end_turn("aborted", by="user")
    b.start_turn()
    b.start_step()
    b.user("again")
    seqs["call 4"] = b.cancelled("x", message=False)
    b.end_turn("aborted", by="user")
    b.start_turn()
    b.start_step()
    b.user("last")
    seqs["call 5"] = b.cancelled("y", message=False)
    return b.write(tmp_path / "outcomes.jsonl"), b, seqs


def test_every_call_listing_gives_its_outcome_and_a_cancelled_stream_is_cancelled(cli, outcomes, tmp_path):
    log, b, seqs = outcomes
    listing = cli("request", log, "--list", "--json").json()
    assert [(c["call"], c["outcome"], c["errorCode"]) for c in listing] == [
        (1, "stop", None), (2, "error", "CONTEXT_WINDOW_EXCEEDED"), (3, "cancelled", None), (4, "cancelled", None),
        (5, None, None)]
    assert [c["finish"] for c in listing] == [{"kind": "stop"}, ERROR, None, None, None]
    table = cli("request", log, "--list").stdout.splitlines()
    assert table[0].split()[5] == "outcome"
    rows = [line.split() for line in table[2:-1]]
    assert [row[5] for row in rows if row[0].isdigit()] == ["stop", "error", "cancelled", "cancelled", "(open)"]
    assert rows[1][5:7] + rows[2] == ["error", "CONTEXT_WINDOW_", "EXCEEDED"]  # (the outcome column wraps)
    stats = cli("stats", log, "--json").json()["sessions"][0]
    assert (stats["calls"], stats["failedCalls"], stats["cancelledCalls"]) == (5, {"CONTEXT_WINDOW_EXCEEDED": 1}, 2)
    assert "  cancelled calls: 2" in cli("stats", log).stdout.splitlines()
    cli("export", log, "--out", tmp_path / "bundle", expect=None)
    report = (tmp_path / "bundle" / "outcomes" / "report.html").read_text()
    assert [report.count(f"<td>{o}</td>") for o in ("stop", "error CONTEXT_WINDOW_EXCEEDED", "cancelled", "(open)")] \
        == [1, 1, 2, 1]
    records = [json.loads(line) for line in (tmp_path / "bundle" / "outcomes" / "calls.jsonl").read_text().splitlines()]
    assert [r["call"] for r in records] == [1, 2, 3, 4, 5]  # (in call order, answered or not)
    record = records[2]
    assert (record["response"]["finish"], record["response"]["messageSeq"]) == ("cancelled", seqs["call 3"])


def test_request_call_gives_the_outcome_in_text_and_json_as_the_bundle_rebuilds_it(cli, outcomes, tmp_path):
    log, b, seqs = outcomes
    first = cli("request", log, "--call", 1, "--json").json()
    assert {k: first[k] for k in ("outcome", "errorCode", "usage", "firstChunkSeq", "lastChunkSeq")} == {
        "outcome": "stop", "errorCode": None, "usage": {"inputTokens": 10, "outputTokens": 2},
        "firstChunkSeq": seqs["ask"] + 1, "lastChunkSeq": seqs["call 1"] - 1}
    cut = cli("request", log, "--call", 3, "--json").json()
    assert (cut["outcome"], cut["usage"], cut["firstChunkSeq"], cut["lastChunkSeq"]) == \
        ("cancelled", None, seqs["call 3 first"], seqs["call 3"] - 1)
    lines = {n: cli("request", log, "--call", n).stdout.splitlines()[1] for n in (1, 2, 3, 5)}
    assert lines == {
        1: f"outcome: stop; chunks {seqs['ask'] + 1}..{seqs['call 1'] - 1}; usage in 10 out 2",
        2: f"outcome: error CONTEXT_WINDOW_EXCEEDED; chunks {seqs['step end'] + 2}..{seqs['call 2'] - 1}; "
           "usage in 900 out 0",
        3: f"outcome: cancelled; chunks {seqs['call 3 first']}..{seqs['call 3'] - 1}; usage in - out -",
        5: f"outcome: (open); chunks {seqs['call 5'] - 1}..{seqs['call 5']}; usage in - out -"}
    cli("export", log, "--out", tmp_path / "bundle", expect=None)
    for n in range(1, 6):
        assert cli("request", "--json", "--bundle", tmp_path / "bundle" / "outcomes", "--call", n).stdout == \
            cli("request", log, "--call", n, "--json").stdout


def test_request_at_a_seq_gives_the_turn_and_step_in_force_right_after_it(cli, outcomes):
    log, b, seqs = outcomes
    for at, turn, step in [(seqs["call 3 first"], 2, 1), (seqs["step end"], 1, None), (seqs["step end"] + 1, 1, 2),
                           (seqs["turn end"], None, None), (seqs["ask"], 1, 1)]:
        out = cli("request", log, "--at", at, "--json").json()
        assert (out["turn"], out["step"], out["call"], out["outcome"]) == (turn, step, None, None), at
    text = cli("request", log, "--at", seqs["call 3 first"]).stdout.splitlines()[0]
    assert text == f"request at seq {seqs['call 3 first']}: turn 2, step 1; messages as of seq " \
                   f"{seqs['call 3 first']}; header from seq 1"


def test_messages_are_numbered_from_1_in_fold_request_and_provenance(cli, builder, write_log):
    b = builder()
    first = b.user("first question")
    empty = b.assistant("")  # (projects to no message: it takes no number)
    second = b.user("second question")
    log = write_log(b)
    fold = cli("fold", log, "--json").json()
    assert fold["nodes"] == [{"seq": first, "message": 1}, {"seq": empty, "message": None},
                             {"seq": second, "message": 2}]
    request = cli("request", log, "--at", second).stdout.splitlines()
    assert [line.split()[:2] for line in request[-3:-1]] == [["1", "user"], ["2", "user"]]
    assert [(p["index"], p["seq"]) for p in cli("provenance", log, "--json").json()] == [(1, first), (2, second)]
    assert cli("provenance", log, "--message", 2, "--json").json()[0]["seq"] == second


@pytest.fixture
def thoughtful(builder, write_log):
    b = builder()
    b.user("what is 2 + 2?")
    b.assistant("It is 4.", reasoning="PRIVATE-CHAIN adding two and two")
    return write_log(b)


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_transcript_shows_reasoning_only_with_reasoning_in_every_format(cli, thoughtful, fmt):
    plain = cli("transcript", thoughtful, "--format", fmt).stdout
    assert "It is 4." in plain and "PRIVATE-CHAIN" not in plain
    assert "PRIVATE-CHAIN adding two and two" in cli("transcript", thoughtful, "--format", fmt, "--reasoning").stdout


def test_the_library_transcript_keeps_reasoning_only_when_asked(thoughtful):
    import dshreplay
    session = dshreplay.open(thoughtful)
    said = [e.message for e in session.transcript() if e.entry == "message" and e.role == "assistant"]
    assert said == [{"role": "assistant", "content": [{"type": "text", "text": "It is 4."}],
                     "source": {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"},
                     "id": "msg-0002"}]
    thought = [e.message for e in session.transcript(reasoning=True) if e.role == "assistant"]
    assert thought[0]["content"][0] == {"type": "reasoning", "text": "PRIVATE-CHAIN adding two and two"}


def test_events_show_a_compaction_summary_as_its_text(cli, builder, write_log):
    b = builder()
    first = b.user("one")
    second = b.user("two")
    b.compaction(first, second, "The user said one and two.")
    rows = cli("events", write_log(b), "--type", "compaction/summary", "--json").json()
    assert [r["text"] for r in rows] == [f"shadows {first}..{second}: The user said one and two."]


def test_stats_jsonl_gives_every_session_then_the_total_each_with_its_kind(cli, outcomes, tmp_path):
    log, _, _ = outcomes
    missing = tmp_path / "gone.jsonl"
    result = cli("stats", log, log, missing, "--jsonl", expect=2)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["kind"], r["path"], r["calls"]) for r in rows] == [
        ("session", str(log), 5), ("session", str(log), 5), ("session", str(missing), 0), ("total", "(total)", 10)]
    assert rows[2]["error"]["message"].startswith("cannot open")
    assert {k: v for k, v in rows[3].items() if k != "kind"} == cli("stats", log, log, "--json").json()["total"]


def test_lineage_jsonl_gives_each_tree_and_each_problem_as_a_row(cli, tmp_path):
    from dshreplay.testing.samples import fork
    parent = LogBuilder("parent")
    parent.start_turn()
    parent.end_turn()
    child = fork(parent, "child", 1)
    parent.write(tmp_path / "parent.jsonl")
    child.write(tmp_path / "child.jsonl")
    (tmp_path / "broken.jsonl").write_text("not json\n")
    result = cli("lineage", tmp_path / "parent.jsonl", tmp_path / "child.jsonl", tmp_path / "broken.jsonl",
                 "--jsonl", expect=2)  # (a log that cannot be read: 2, as in every command)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["kind"] for r in rows] == ["session", "problem"]
    assert (rows[0]["sessionId"], [c["sessionId"] for c in rows[0]["children"]]) == ("parent", ["child"])
    assert rows[1]["problem"] == f"{tmp_path / 'broken.jsonl'}: line 1: header line is not valid JSON: invalid " \
                                 "literal, expected 'null'"
    assert {k: v for k, v in rows[0].items() if k != "kind"} == \
        cli("lineage", tmp_path / "parent.jsonl", tmp_path / "child.jsonl", "--json").json()["sessions"][0]


def test_a_listing_answered_for_a_prefix_gives_its_envelope_line_then_its_rows_in_jsonl(cli, builder, write_log):
    b = builder()
    b.user("hello")
    b.assistant("hi")
    b.user("more")
    b.assistant("sure")
    b.events[-1]["seq"] = 99  # the fold fails at the last event (DSH-E101): two calls before it
    log = write_log(b)
    out = cli("request", log, "--list", "--json", expect=1).json()
    rows = [json.loads(line) for line in cli("request", log, "--list", "--jsonl", expect=1).stdout.splitlines()]
    assert rows[0] == {"error": out["error"], "answeredUpTo": out["answeredUpTo"]}
    assert rows[1:] == out["answer"] and [r["call"] for r in rows[1:]] == [1, 2]


def test_stats_rows_have_the_same_keys_whether_the_log_folds_fails_or_cannot_be_read(cli, builder, write_log,
                                                                                     tmp_path):
    clean = builder()
    clean.user("hello")
    clean.assistant("hi")
    failing = builder()
    failing.user("hello")
    failing.assistant("hi")
    bad = failing.user("more")
    failing.events[-1]["seq"] = 99  # (the fold fails at the third event: a seq gap, DSH-E101)
    logs = [write_log(clean), write_log(failing), tmp_path / "gone.jsonl"]
    sessions = cli("stats", *logs, "--json", expect=2).json()["sessions"]
    assert [s["answeredUpTo"] for s in sessions] == [None, bad - 1, None]
    assert sorted(sessions[0]) == sorted(sessions[1]) == sorted(sessions[2])
    assert "foldError" not in sessions[0]  # (where the fold fails is `error` with `answeredUpTo`)
    assert sessions[1]["error"] == {
        "stage": "fold", "seq": bad, "line": bad + 2, "pointer": "/seq", "code": "DSH-E101",
        "message": f"seq 99 is not contiguous; expected {bad}: seqs {bad}..98 are missing"}
    rows = [json.loads(line) for line in cli("stats", *logs[:2], "--jsonl", expect=1).stdout.splitlines()]
    assert [sorted(r) for r in rows[:2]] == [sorted([*sessions[0], "kind"])] * 2


def test_fold_json_when_the_fold_fails_is_the_envelope_the_readme_documents(cli, builder, write_log):
    from conftest import ROOT
    b = builder()
    b.user("hello")
    bad = b.user("more")
    b.events[-1]["seq"] = 99
    out = cli("fold", write_log(b), "--json", expect=1).json()
    assert out == {"error": {"stage": "fold", "seq": bad, "line": bad + 2, "pointer": "/seq", "code": "DSH-E101",
                             "message": f"seq 99 is not contiguous; expected {bad}: seqs {bad}..98 are missing"},
                   "answeredUpTo": None, "answer": None}
    fold = (ROOT / "docs" / "reference" / "json.md").read_text().split("## dshreplay fold", 1)[1].split("##", 1)[0]
    assert 'When the fold fails it prints `{"error": {"stage", "seq", "line",\n"pointer", "message", "code"}, ' \
           '"answeredUpTo": null, "answer": null}` and exits 1' in fold
