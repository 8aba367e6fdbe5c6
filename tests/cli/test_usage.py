"""`usage`: tokens, calls, failures, retries, compactions and cost, from logs or from the index.

Both read the rows of the one row builder: the same figures either way. Expected
figures are worked out by hand from tests/stores.py `audit_store` (every call's
usage is written there) and docs/prices.example.toml.
"""

from __future__ import annotations

import json

import pytest

from conftest import ROOT
from stores import audit_store

PRICES = ROOT / "docs" / "prices.example.toml"


@pytest.fixture
def store(tmp_path):
    audit_store(tmp_path / "store")
    return tmp_path / "store"


def test_usage_by_day_from_the_logs_with_prices(cli, store):
    report = cli("usage", store, "--by", "day", "--prices", PRICES, "--json", "-j", 1).json()
    # day 1 (flash): alpha 1000+1100+1200 in, 10+20+5 out, 500 cached; fork-1 300/7, fork-2 400/8 (their
    # seeds are alpha's, counted in alpha): 4000 in, 50 out, 500 cached -> (4000*0.27 + 50*1.10 + 500*0.07)/1e6
    # day 2 (pro): beta 131000+2000+2100 in, 0+40+60 out, 1500+1900 cached -> (135100*0.55 + 100*2.19 + 3400*0.14)/1e6
    assert [(r["key"], r["sessions"], r["calls"], r["failedByCode"], r["retries"], r["compactions"],
             r["tokens"]["input"], r["tokens"]["output"], r["tokens"]["cacheRead"], r["cost"])
            for r in report["rows"] + [report["total"]]] == [
        ("2026-07-06", 3, 5, {}, 0, 0, 4000, 50, 500, 0.00117),
        ("2026-07-07", 1, 3, {"CONTEXT_WINDOW_EXCEEDED": 1}, 1, 1, 135100, 100, 3400, 0.075),
        ("(total)", 4, 8, {"CONTEXT_WINDOW_EXCEEDED": 1}, 1, 1, 139100, 150, 3900, 0.07617)]
    assert report["unpricedModels"] == []


def test_the_index_gives_the_same_figures_as_the_logs(cli, store, tmp_path):
    pytest.importorskip("duckdb", reason="the sql extra (duckdb) is not installed")
    db = tmp_path / "index.duckdb"
    cli("index", store, "--db", db, "-j", 1)
    for by in ("day", "week", "month", "session", "model"):
        from_logs = cli("usage", store, "--by", by, "--prices", PRICES, "--json", "-j", 1).stdout
        assert cli("usage", "--db", db, "--by", by, "--prices", PRICES, "--json").stdout == from_logs, by


def test_usage_by_week_month_model_and_session(cli, store):
    def keys(by, *more):
        return [(r["key"], r["calls"]) for r in cli("usage", store, "--by", by, "--json", *more).json()["rows"]]
    assert keys("week") == [("2026-W28", 8)]  # (2026-07-06 is a Monday)
    assert keys("month") == [("2026-07", 8)]
    assert keys("model") == [("deepseek-official/deepseek-v4-flash", 5), ("deepseek-official/deepseek-v4-pro", 3)]
    assert keys("session") == [("alpha", 3), ("beta", 3), ("fork-1", 1), ("fork-2", 1)]
    assert keys("day", "--since", "2026-07-07") == [("2026-07-07", 3)]
    assert keys("day", "--until", "2026-07-06T23:59:59Z") == [("2026-07-06", 5)]


def test_usage_as_a_table(cli, store):
    out = cli("usage", store, "--by", "model", "--prices", PRICES, "--wide").stdout
    assert [line.split() for line in out.splitlines()[2:]] == [
        ["deepseek-official/deepseek-v4-flash", "3", "5", "0", "0", "-", "4000", "50", "500", "0", "0.0012"],
        ["deepseek-official/deepseek-v4-pro", "1", "3", "1", "(CONTEXT_WINDOW_EXCEEDED", "1)", "1", "-", "135100",
         "100", "3400", "0", "0.0750"],
        ["(total)", "4", "8", "1", "(CONTEXT_WINDOW_EXCEEDED", "1)", "1", "-", "139100", "150", "3900", "0",
         "0.0762"]]
    assert out.splitlines()[0].split() == ["model", "sessions", "calls", "failed", "retries", "compactions",
                                           "input", "output", "cacheRead", "cacheWrite", "cost"]


def test_unpriced_models_have_no_cost(cli, store, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text('{"models": {"deepseek-v4-flash": {"input": 1, "output": 2}}}')
    report = cli("usage", store, "--by", "model", "--prices", prices, "--json").json()
    assert [r["cost"] for r in report["rows"]] == [(4000 * 1 + 50 * 2) / 1e6, None]
    assert report["total"]["cost"] is None
    assert report["unpricedModels"] == ["deepseek-official/deepseek-v4-pro"]


def test_bad_usage_is_one_line_and_exit_2(cli, store, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text('{"models": {"m": {"input": -1}}}')
    assert cli("usage", store, "--prices", prices, expect=2).stderr == (
        f"dshreplay: usage error: {prices}: /models/m: expected {{input, output, cache_read, cache_write}} as "
        "non-negative numbers (per million tokens), got {\"input\":-1}\n")
    assert cli("usage", store, "--db", tmp_path / "x.duckdb", expect=2).stderr == (
        "dshreplay: usage error: give logs (PATH...) or an index (--db FILE), not both\n")
    (store / "broken.jsonl").write_bytes(b"not json\n")
    result = cli("usage", store, "--json", expect=2)
    assert result.json()["total"]["calls"] == 8
    assert result.stderr.startswith(f"dshreplay: unreadable: {store}/broken.jsonl: ")


@pytest.mark.parametrize("command", ["usage", "index"])
def test_standard_input_is_refused_by_the_commands_that_index_log_files(cli, tmp_path, command):
    # `usage -` and `index - --db FILE` stopped with exit 70 (an assertion: the index reads log files).
    pytest.importorskip("duckdb", reason="the sql extra (duckdb) is not installed")
    log = (ROOT / "sample_logs" / "audit-demo.jsonl").read_bytes()
    args = ["--db", tmp_path / "index.duckdb"] if command == "index" else []
    result = cli(command, "-", *args, "--no-default-redaction" if command == "index" else "-q", "-j", 1,
                 input=log, expect=2)
    assert result.stderr == (f"dshreplay: usage error: {command} reads log files, not standard input (-): "
                             "save it to a file and give its path\n")
    assert not (tmp_path / "index.duckdb").exists()


def test_a_log_whose_fold_fails_is_counted_whole_and_named_with_its_calls_past_the_failure(cli, tmp_path):
    # broken-seq-gap is multi-turn with seq 8 written where seq 5 belongs: the fold answers seqs 0..4.
    # multi-turn's four calls start at seqs 4, 24, 38 and 52 (`request --list`): three lie past the
    # failure; `stats`, which stops there, counts the one before it
    from conftest import SAMPLES
    log = (SAMPLES / "broken-seq-gap.jsonl").resolve()
    failure = {"log": str(log), "answeredUpTo": 4, "calls": 4, "callsPast": 3}
    said = (f"dshreplay: {log}: the fold fails at seq 5: 3 of its 4 counted calls lie past it, counted as "
            f"logged (`stats` stops at seq 4; `validate` says why)\n")
    result = cli("usage", log, "--json", expect=1)
    assert (result.json()["total"]["calls"], result.json()["foldFailures"], result.stderr) == (4, [failure], said)
    assert cli("stats", log, "--json", expect=1).json()["sessions"][0]["calls"] == 1
    lines = [json.loads(line) for line in cli("usage", log, "--jsonl", expect=1).stdout.splitlines()]
    assert [line["kind"] for line in lines] == ["day", "total", "foldFailure"]
    assert lines[2] == {"kind": "foldFailure", **failure}
    # a clean log: no failure, exit 0
    assert cli("usage", SAMPLES / "multi-turn.jsonl", "--json").json()["foldFailures"] == []

    pytest.importorskip("duckdb", reason="the sql extra (duckdb) is not installed")
    db = tmp_path / "index.duckdb"
    cli("index", log, "--db", db, expect=1)
    result = cli("usage", "--db", db, "--json", expect=1)
    assert (result.json()["foldFailures"], result.stderr) == ([failure], said)


def test_a_session_given_twice_is_counted_once_and_the_twin_is_named(cli, tmp_path):
    # a log and its zstd twin were 2 sessions and twice the calls in usage, silently
    from dshreplay.testing.samples import multi_turn
    b = multi_turn()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    plain = b.write(tmp_path / "a" / "session.jsonl")
    twin = b.write(tmp_path / "b" / "session.jsonl.zstd")
    once = cli("usage", plain, "--json").json()
    result = cli("usage", plain, twin, "--json")
    both = result.json()
    assert both["total"] == once["total"] and both["total"]["sessions"] == 1
    assert both["duplicates"] == [{"log": str(twin), "sameAs": str(plain), "sessionId": b.header["id"]}]
    assert result.stderr == (f'dshreplay: {twin}: the same session ("{b.header["id"]}") as {plain}: counted once, '
                             "from that log\n")
    # from an index holding both logs: the same figures, the same twin
    cli("index", plain, twin, "--db", tmp_path / "i.duckdb")
    from_db = cli("usage", "--db", tmp_path / "i.duckdb", "--json").json()
    assert from_db["total"] == once["total"] and from_db["duplicates"] == both["duplicates"]
