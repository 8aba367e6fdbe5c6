"""Every fact two surfaces show agrees (#35): over logs of every shape (resumed after a crash, fork
children, projected and mixed layouts, packed rows, zstd, parallel tools, compaction chains) and
every kind of damage (dshreplay.testing.shapes), the turn endings, call counts and outcomes,
seqs, lines and times, and how far each answer reaches are the same in inspect, stats,
transcript, events, request, usage, fold, the bundle (session.json, calls.jsonl, events.csv,
findings.json, the report) and the index."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshreplay.testing import shapes

pytest.importorskip("duckdb")
import duckdb  # noqa: E402

SETTINGS = settings(max_examples=5, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


class Surfaces:
    """What each command, the bundle and the index answer for one log (export and index once)."""

    def __init__(self, cli, log: Path, work: Path) -> None:
        def run(*args):
            return cli(*args, expect=None)

        self.reach: dict[str, int | None] = {}

        def answer(name: str, *args):
            shown = run(*args, "--json").json()
            if type(shown) is dict and set(shown) == {"error", "answeredUpTo", "answer"}:  # a fold failure
                self.reach[name] = shown["answeredUpTo"]
                return shown["answer"]
            self.reach[name] = shown.get("answeredUpTo") if type(shown) is dict else None
            return shown

        self.inspect = answer("inspect", "inspect", log)
        self.stats = answer("stats", "stats", log)["sessions"][0]
        self.transcript = answer("transcript", "transcript", log)
        self.events = answer("events", "events", log)
        self.calls = answer("request --list", "request", log, "--list")
        self.all_calls = answer("request --list --all", "request", log, "--list", "--all")
        usage = answer("usage", "usage", log)
        self.usage, self.usage_fold_failures = usage["total"], usage["foldFailures"]
        self.fold = answer("fold", "fold", log) or {}
        self.whole = self.reach["inspect"] is None  # the fold answers the whole log
        self.validate = run("validate", log, "--json").json()["files"][0]
        run("index", log, "--db", work / "index.duckdb", "--no-default-redaction")
        con = duckdb.connect(str(work / "index.duckdb"), read_only=True)
        try:
            self.index = {table: _rows(con, table) for table in
                          ("sessions", "turns", "model_calls", "tool_calls", "findings")}
        finally:
            con.close()
        self.indexed = self.index["sessions"][0]["status"] != "unreadable"
        run("export", log, "--out", work / "bundle", "--no-default-redaction", "--timestamp", "2026-01-01T00:00:00Z")
        folders = [p.parent for p in (work / "bundle").rglob("session.json")]
        self.exported = bool(folders)
        [folder] = folders
        self.session = json.loads((folder / "session.json").read_text())
        self.bundle_calls = [json.loads(line) for line in (folder / "calls.jsonl").read_text().splitlines()]
        self.events_csv = list(csv.DictReader(io.StringIO((folder / "events.csv").read_text())))
        [self.bundle_findings] = json.loads((folder / "findings.json").read_text())["files"]
        page = (folder / "report.html").read_text()
        self.report = _text(page)
        self.waterfall_turns = [(turn, html.unescape(ending)) for turn, ending in re.findall(
            r'<div class="lbl turn">turn (\S+) <span class="note \w+">([^<]*)</span></div>', page)]
        self.waterfall_calls = re.findall(r'<div class="lbl model">call (\S+) <span', page)


def _rows(con, table: str) -> list[dict]:
    cursor = con.execute(f"select * from {table} order by seq")  # noqa: S608 (a fixed name)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _text(page: str) -> str:
    text = re.sub(r"<script.*?</script>|<style.*?</style>", "", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", text)))


# -- the facts ------------------------------------------------------------

def turn_endings_agree(s: Surfaces) -> None:
    spans = s.inspect["turnEndings"]
    assert s.stats["turnSpans"] == spans
    assert s.stats["turnEndings"] == [t["ending"] for t in spans]
    ended = [(e["turn"], e["ending"]) for e in s.transcript if e["entry"] == "turn-end"]
    # the transcript tells a turn's ending where it ends; one open where the fold fails, by its
    # fold-failure line (nothing past this point)
    assert ended == [(t["turn"], t["ending"]) for t in spans if t["ending"] not in ("not ended", "unknown")]
    assert any(e["entry"] == "fold-failure" for e in s.transcript) == (not s.whole)
    # the bundle's session.json and the index hold every line's facts, read past a fold failure
    # (README: session.json); for a log that folds, the same as the answer
    read = s.session["turnSpans"]
    if s.whole:
        assert read == spans
    assert s.session["turnEndings"] == [t["ending"] for t in read]
    # the report's waterfall draws the answer; its table of session facts is session.json's
    assert s.waterfall_turns == [(str(t["turn"]), t["ending"]) for t in spans]
    shown = ", ".join(f"{t['turn']}: {t['ending']}" for t in read) or "-"
    assert f"turn endings {shown} " in s.report
    assert [(r["turn"], r["seq"], r["end_seq"], r["ending"]) for r in s.index["turns"]] == [
        (t["turn"], t["startSeq"], t["endSeq"], t["ending"]) for t in read]


def call_counts_agree(s: Surfaces) -> None:
    calls, auxiliary = s.stats["calls"], s.stats["auxiliaryCalls"]
    assert (s.inspect["calls"], s.inspect["auxiliaryCalls"]) == (calls, auxiliary)
    assert len(s.calls) == calls
    assert len(s.all_calls) == calls + auxiliary
    listed = [(c["call"], c["outcome"], c["errorCode"]) for c in s.calls]
    failed = dict(Counter(c["errorCode"] for c in s.all_calls if c["outcome"] == "error"))
    assert s.stats["failedCalls"] == failed
    assert s.waterfall_calls == [str(c["call"]) for c in s.calls]  # (the waterfall draws the answer)
    session = s.session
    assert f"turns / steps / model calls {session['turns']} / {session['steps']} / {session['calls']} " \
        in s.report  # (the table of session facts is session.json's)
    # every line's calls (read past a fold failure, as the index reads them)
    bundled = [(c["call"], c["response"]["finish"], c["response"]["errorCode"]) for c in s.bundle_calls]
    if s.whole:
        assert (s.session["calls"], s.session["auxiliaryCalls"], s.session["failedCalls"], bundled) == (
            calls, auxiliary, failed, listed)
    rows = s.index["model_calls"]
    main = [(r["call"], r["outcome"], r["error_code"]) for r in rows if r["kind"] == "main"]
    kinds = Counter(r["kind"] for r in rows)
    counts = (kinds.pop("main", 0), sum(kinds.values()))
    every_failed = dict(Counter(r["error_code"] for r in rows if r["failed"]))
    [row] = s.index["sessions"]
    assert (row["model_calls"], row["auxiliary_calls"], row["failed_calls"]) == (*counts, sum(every_failed.values()))
    if s.whole:
        assert (counts, main, every_failed) == ((calls, auxiliary), listed, failed)
        assert (row["events"], row["turns"], row["steps"]) == (s.stats["events"], s.stats["turns"], s.stats["steps"])
    assert (s.session["calls"], s.session["auxiliaryCalls"], s.session["failedCalls"], bundled) == (
        *counts, every_failed, main)
    # usage counts a fork's seed once, in its parent (its rows are `inherited` in the index)
    assert s.usage["calls"] == sum(not r["inherited"] for r in rows)
    own = dict(Counter(r["error_code"] for r in rows if r["failed"] and not r["inherited"]))
    assert (s.usage["failedByCode"], s.usage["failedCalls"]) == (own, sum(own.values()))


def seqs_and_times_agree(s: Surfaces) -> None:
    rows = [(e["seq"], e["line"], e["time"]) for e in s.events]
    line_of = {seq: line for seq, line, _ in rows}
    time_of = {seq: time for seq, _, time in rows}
    for table in ("turns", "model_calls", "tool_calls"):
        for r in s.index[table]:
            if r["seq"] in line_of:
                assert (table, r["seq"], r["line"]) == (table, r["seq"], line_of[r["seq"]])
    for r in s.index["turns"]:
        if r["seq"] in time_of:
            assert (r["seq"], r["started_at"] is None) == (r["seq"], time_of[r["seq"]] is None)
    findings = [(f["code"], f["seq"], f["line"]) for f in s.validate["findings"]]
    assert sorted(findings, key=str) == sorted(((r["code"], r["seq"], r["line"]) for r in s.index["findings"]),
                                               key=str)
    for code, seq, line in findings:
        if seq in line_of and line is not None:
            assert (code, seq, line) == (code, seq, line_of[seq])
    # validate reads every line, as the bundle and the index do; inspect stops where the fold fails
    if s.whole:
        assert s.validate["events"] == s.inspect["events"]
    assert s.session["events"] == s.validate["events"]
    assert s.index["sessions"][0]["events"] == s.validate["events"]
    table = [(int(r["seq"]), int(r["line"]), r["time"] or None) for r in s.events_csv]
    # events.csv holds every line's event (read past a fold failure); events answers up to it
    assert table[:len(rows)] == rows
    if s.whole:
        assert len(table) == len(rows)
    assert [(f["code"], f["seq"], f["line"]) for f in s.bundle_findings["findings"]] == findings


def reach_agrees(s: Surfaces) -> None:
    reach = s.inspect["answeredUpTo"]
    assert s.stats["answeredUpTo"] == reach
    names = ("inspect", "transcript", "events", "request --list", "request --list --all")
    assert {name: s.reach[name] for name in names} == dict.fromkeys(names, reach)
    torn = s.inspect["tornTail"]
    assert s.stats["tornTail"] == torn
    if reach is None:
        assert s.fold["tornTail"] == torn
    else:  # (the view at the end of the log: no answer, and why)
        assert (s.reach["fold"], s.fold) == (None, {})
        assert max((e["seq"] for e in s.events), default=-1) <= reach
    # (usage reads the index)
    assert len(s.usage_fold_failures) == (reach is not None)
    [session] = s.index["sessions"]
    assert session["answered_up_to"] == reach
    assert bool(session["torn_tail"]) == (torn is not None)
    failure = s.session["foldError"]
    assert (s.session["answeredUpTo"], s.session["tornTail"]) == (None, torn)
    assert (reach, failure is None) == (None, True) or failure["seq"] == reach + 1


def check(cli, tmp_path: Path, shape: str, damage: str, at: int) -> None:
    work = tmp_path / f"{shape}-{damage}-{at}"
    work.mkdir()
    built = shapes.SHAPES[shape]()
    zstd = built.zstd or damage == "corrupt-frame"
    log = work / ("session.jsonl.zstd" if zstd else "session.jsonl")
    log.write_bytes(shapes.write(built, damage, at))
    s = Surfaces(cli, log, work)
    assert (s.exported, s.indexed) == (True, True)  # (a log with a corrupt frame too: its readable part)
    turn_endings_agree(s)
    call_counts_agree(s)
    seqs_and_times_agree(s)
    reach_agrees(s)


@pytest.mark.parametrize("shape", sorted(shapes.SHAPES))
@SETTINGS
@given(damage=st.sampled_from(shapes.DAMAGES), at=st.integers(1, 200))
def test_every_surface_agrees_on_each_shape(cli, tmp_path_factory, shape, damage, at):
    check(cli, tmp_path_factory.mktemp("agree"), shape, damage, at)


@pytest.mark.parametrize("damage", shapes.DAMAGES)
@SETTINGS
@given(shape=st.sampled_from(sorted(shapes.SHAPES)), at=st.integers(1, 200))
def test_every_surface_agrees_on_each_kind_of_damage(cli, tmp_path_factory, damage, shape, at):
    check(cli, tmp_path_factory.mktemp("agree"), shape, damage, at)


# -- what the property found, each pinned ---------------------------------

def test_the_reports_waterfall_tells_a_turn_open_where_the_fold_fails_as_unknown(cli, tmp_path):
    # the waterfall drew turn 1 'completed' (its turn/end at seq 34 is past the failure at 31, read
    # from the lines after it) where stats and inspect answer 'unknown'
    log = tmp_path / "session.jsonl"
    log.write_bytes(shapes.write(shapes.SHAPES["packed"](), "bad-json", 23))  # (line 24: seq 31)
    assert cli("stats", log, "--json", expect=1).json()["sessions"][0]["turnSpans"] == [
        {"turn": 1, "startSeq": 0, "endSeq": None, "ending": "unknown"}]
    cli("export", log, "--out", tmp_path / "b", "--no-default-redaction", "--timestamp", "2026-01-01T00:00:00Z",
        expect=1)
    [page] = (tmp_path / "b").rglob("report.html")
    text = page.read_text()
    assert re.findall(r'<div class="lbl turn">turn (\S+) <span class="note (\w+)">([^<]*)</span>', text) == [
        ("1", "warn", "unknown")]
    assert 'title="turn 1: seqs 0 to the fold failure at seq 31; 2026-07-06T15:36:05.197Z, 146 ms; unknown"' in text


def test_the_bundle_and_the_index_count_the_events_a_log_with_a_missing_seq_holds(cli, tmp_path):
    # validate said 62 events for multi_turn less seq 20, session.json and the index's sessions row 63
    from dshreplay.testing.samples import damaged, multi_turn
    log = tmp_path / "gap.jsonl"
    log.write_bytes(damaged(multi_turn(), "missing", 20))
    assert cli("validate", log, "--json", expect=1).json()["files"][0]["events"] == 62
    cli("export", log, "--out", tmp_path / "b", "--no-default-redaction", "--timestamp", "2026-01-01T00:00:00Z",
        expect=1)
    [session] = (tmp_path / "b").rglob("session.json")
    assert json.loads(session.read_text())["events"] == 62
    cli("index", log, "--db", tmp_path / "i.duckdb", "--no-default-redaction", expect=None)
    con = duckdb.connect(str(tmp_path / "i.duckdb"), read_only=True)
    try:
        assert con.execute("select events from sessions").fetchall() == [(62,)]
    finally:
        con.close()


def test_export_and_index_keep_the_readable_part_of_a_log_with_a_corrupt_frame(cli, tmp_path):
    # (export left the session out and the index marked it unreadable, where every command answers the prefix)
    log = tmp_path / "session.jsonl.zstd"
    log.write_bytes(shapes.write(shapes.SHAPES["resumed"](), "corrupt-frame", 23))  # (frame 4: lines 22-28)
    assert cli("inspect", log, "--json", expect=1).json()["answeredUpTo"] == 20
    cli("index", log, "--db", tmp_path / "i.duckdb", "--no-default-redaction", expect=None)
    con = duckdb.connect(str(tmp_path / "i.duckdb"), read_only=True)
    try:
        indexed = con.execute("select status, answered_up_to from sessions").fetchall()
    finally:
        con.close()
    cli("export", log, "--out", tmp_path / "b", "--no-default-redaction", "--timestamp", "2026-01-01T00:00:00Z",
        expect=None)
    bundled = [json.loads(p.read_text())["foldError"]["seq"] for p in (tmp_path / "b").rglob("session.json")]
    assert (indexed, bundled) == ([("indexed", 20)], [21])


def test_the_transcript_tells_a_turn_ending_once_as_inspect_does_when_its_turn_end_is_written_twice(cli, tmp_path):
    # a repeated turn/end line in a projected log (nothing numbers it): the transcript said
    # 'turn 1 completed' twice (at seqs 34 and 35) where inspect, stats and the index tell one
    # ending (the second turn/end closes no open turn: validate's DSH-E203)
    log = tmp_path / "session.jsonl"
    log.write_bytes(shapes.write(shapes.SHAPES["projected-packed"](), "duplicate", 26))
    entries = cli("transcript", log, "--json", expect=1).json()["answer"]
    assert [(e["seq"], e["turn"], e["ending"]) for e in entries if e["entry"] == "turn-end"] == [
        (34, 1, "completed"), (63, 2, "completed")]
    assert [(t["turn"], t["endSeq"], t["ending"]) for t in cli("inspect", log, "--json", expect=1).json()["answer"][
        "turnEndings"]] == [(1, 34, "completed"), (2, 63, "completed"), (3, None, "unknown")]
