"""Hostile values: log values and settings that used to end in exit 70.

A value nested as deep as the parser reads, in any id a message quotes; a
spill note with a 5,000-digit byte count; a fork chain thousands of sessions
deep; sizes and SOURCE_DATE_EPOCH in other scripts' digits or past any bound.
Each case runs `python -m dshreplay` in a child process under limits
(`attack`), and ends in a finding (exit 1), an answer (exit 0) or one usage
line (exit 2), never an internal error.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import orjson
import pytest
from test_attacks import HEADER, attack, lines

from dshreplay._jsvalues import as_key, as_text, js_same, parse_count, shown
from dshreplay.bundle.export import generated_at
from dshreplay.errors import UsageError
from dshreplay.options import MAX_SIZE, Options, parse_size

from conftest import SAMPLES

DEPTH = 1000  # 2 KB of JSON; orjson reads up to 1,024 levels, Python's repr() and str() overflow near 1,000


def deep(depth: int = DEPTH):
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


# -- 1. a value nested 1,000 deep where an id or a name belongs ---------------------------

def _first(records, kind, test=lambda r: True) -> dict:
    return next(r for r in records if r.get("type") == kind and test(r))


def _block(record, kind) -> dict:
    return next(b for b in record["data"]["message"]["content"] if b.get("type") == kind)


def _checkpoint(records) -> dict:
    return _first(records, "user/message", lambda r: "compactionId" in r["data"].get("source", {}))["data"]["source"]


# field -> (sample, the object holding it, its key, the pointer validate names, the commands that read it)
FIELDS = {
    "header-id": ("audit-demo", lambda rs: rs[0], "id", "/id",
                  [["inspect"], ["lineage"], ["export"]]),
    "parentSession": ("fork-child", lambda rs: rs[0], "parentSession", "/parentSession",
                      [["inspect"], ["lineage", "--json"], ["export"]]),
    "tool-call-callId": ("audit-demo", lambda rs: _first(rs, "tool/call")["data"], "callId", "/data/callId",
                         [["stats"], ["spills"], ["inspect"]]),
    "tool-call-name": ("audit-demo", lambda rs: _first(rs, "tool/call")["data"], "name", "/data/name",
                       [["events"], ["spills", "--json"], ["export"]]),
    "tool-result-callId": ("audit-demo", lambda rs: _first(rs, "tool/result")["data"]["message"]["source"],
                           "callId", "/data/message/source/callId",
                           [["brackets"], ["provenance"], ["shadows"]]),
    "assistant-tool-call-name": ("audit-demo", lambda rs: _block(_first(rs, "assistant/message", lambda r: any(
        b.get("type") == "tool-call" for b in r["data"]["message"]["content"])), "tool-call"), "name",
        "/data/message/content", [["fold"], ["transcript", "--format", "markdown"], ["request", "--call", "1"]]),
    "compactionId": ("audit-demo", lambda rs: _first(rs, "compaction/start")["data"], "compactionId",
                     "/data/compactionId", [["brackets"], ["shadows"], ["events"]]),
    "checkpoint-compactionId": ("audit-demo", _checkpoint, "compactionId", "/data/source/compactionId",
                                [["brackets", "--json"], ["provenance"], ["stats", "--json"]]),
    "approval-callId": ("audit-demo", lambda rs: _first(rs, "approval/asked")["data"], "callId", "/data/callId",
                        [["events"], ["export"]]),
}


def _deep_log(tmp_path: Path, field: str) -> Path:
    sample, holder, key, _, _ = FIELDS[field]
    records = [orjson.loads(raw) for raw in (SAMPLES / f"{sample}.jsonl").read_bytes().splitlines()]
    target = holder(records)
    assert key in target, field  # (the field is where the sample has it)
    target[key] = deep()
    path = tmp_path / f"{field}.jsonl"
    path.write_bytes(lines(*records))
    return path


@pytest.mark.parametrize("field", FIELDS)
def test_a_value_nested_1000_deep_in_an_id_is_a_finding_not_a_crash(tmp_path, field):
    log = _deep_log(tmp_path, field)
    report = attack("validate", log, "--json", seconds=10)
    assert report.code == 1, report.stderr
    findings = orjson.loads(report.stdout)["files"][0]["findings"]
    pointer = FIELDS[field][3]
    assert any((f["pointer"] or "").startswith(pointer) and f["code"] in ("DSH-E003", "DSH-E005")
               for f in findings), findings
    quoted = [f["message"] for f in findings if "[[[[" in f["message"]]
    assert quoted and all(len(m) < 400 for m in quoted)  # the value is quoted, cut short
    for command in FIELDS[field][4]:
        args = ["--out", tmp_path / f"bundle-{command[0]}"] if command[0] == "export" else []
        result = attack(command[0], log, *command[1:], *args, seconds=10)
        assert result.code in (0, 1), (command, result.code, result.stderr)
        assert result.code == 1 or command[0] != "export", result.stderr  # (export: its verdict has errors)
        assert "Traceback" not in result.stderr
        if "--json" in command:
            orjson.loads(result.stdout)


def test_one_log_with_every_deep_id_is_answered_by_every_command(tmp_path):
    records = [orjson.loads(raw) for raw in (SAMPLES / "audit-demo.jsonl").read_bytes().splitlines()]
    for sample, holder, key, _, _ in FIELDS.values():
        if sample == "audit-demo":
            holder(records)[key] = deep()
    records[0]["parentSession"] = deep()
    log = tmp_path / "every.jsonl"
    log.write_bytes(lines(*records))
    for command in (["validate"], ["inspect"], ["stats"], ["events"], ["brackets"], ["shadows"], ["provenance"],
                    ["spills"], ["fold"], ["transcript"], ["request", "--list"], ["lineage"],
                    ["export", "--out", tmp_path / "b"]):
        result = attack(command[0], log, *command[1:], seconds=10)
        assert result.code == (1 if command[0] in ("validate", "export", "brackets", "lineage") else 0), \
            (command, result.code, result.stderr)


@pytest.mark.parametrize("command", [["lineage", "--json"], ["stats", "--json"], ["validate"], ["export"]])
def test_deep_values_cross_the_process_pool(tmp_path, command):
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes((SAMPLES / "prune.jsonl").read_bytes())
    _deep_log(folder, "header-id")
    args = ["--out", tmp_path / "b"] if command[0] == "export" else []
    result = attack(command[0], folder, *command[1:], "-j", 2, "-q", *args, seconds=10)
    assert result.code == (1 if command[0] in ("validate", "export") else 0), result.stderr
    if "--json" in command:
        assert '"' + "[" * 40 in result.stdout or "[" * 40 in result.stdout


def test_a_key_written_twice_in_a_line_nested_1000_deep_is_still_found(tmp_path):
    log = tmp_path / "dup.jsonl"
    line = '{"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1, "turn": 1, "x": %s}}\n' % (
        "[" * DEPTH + "1" + "]" * DEPTH)
    log.write_bytes(lines(HEADER) + line.encode())
    result = attack("validate", log, "--json", seconds=10)
    assert result.code == 0  # (a repeated key and a field the schema does not name are warnings)
    findings = orjson.loads(result.stdout)["files"][0]["findings"]
    assert [(f["code"], f["pointer"]) for f in findings if f["code"] == "DSH-W016"] == [("DSH-W016", "/data")]
    assert [(f["code"], f["pointer"]) for f in findings if f["code"] == "DSH-W018"] == [("DSH-W018", "/data/x")]


def test_a_header_that_is_no_session_header_names_its_type_boundedly(tmp_path):
    log = tmp_path / "not-a-header.jsonl"
    log.write_bytes(lines({"type": deep()}))
    result = attack("fold", log, seconds=10)
    assert result.code == 2
    line = result.one_line()
    assert "first record must be the session header (type \"session\"), got type [[[[" in line
    assert len(line) < 300


# -- the one bounded, iterative way to show a value ---------------------------------------

def test_shown_never_recurses_and_is_cut_to_its_width():
    value = deep(50_000)  # (deeper than any parser gives: the helper has no depth of its own)
    assert shown(value, 20) == "[" * 17 + "..."
    assert shown({"a": [1, 2.5, None, True]}) == '{"a":[1,2.5,null,true]}'
    assert shown("x" * 10**6, 10) == '"xxxxxx...'
    assert shown("id", quote=False) == "id" and shown("id") == '"id"'
    assert as_text(value).startswith("[[[") and len(as_text(value)) == 2 * 50_000 + 3
    assert as_text(None) == "null" and as_text(7) == "7"


def test_deep_values_key_dicts_and_compare_as_javascript_does():
    assert as_key(deep()) == as_key(deep()) and hash(as_key(deep())) == hash(as_key(deep()))
    assert as_key([1]) != "[1]" and as_key("a") == "a"
    assert shown(as_key(deep(3))) == '[[["x"]]]'
    a, b = deep(), deep()
    assert not js_same(a, b) and js_same(a, a)  # (arrays are === only to themselves)
    assert js_same(1, 1.0) and not js_same(True, 1) and not js_same("1", 1)


# -- 2. a spill note with a 5,000-digit byte count ----------------------------------------

def _spill_log(tmp_path: Path, count: str) -> Path:
    records = [orjson.loads(raw) for raw in (SAMPLES / "multi-turn.jsonl").read_bytes().splitlines()]
    result = _first(records, "tool/result")
    note = f"(Omitted {count} bytes. Full formatted result stored at: /tmp/out.txt. Use read to see it.)"
    result["data"]["message"]["content"][0]["content"] = [{"type": "text", "text": note}]
    path = tmp_path / "spill.jsonl"
    path.write_bytes(lines(*records))
    return path


def test_a_spill_note_with_a_5000_digit_count_is_no_spill_note(tmp_path):
    log = _spill_log(tmp_path, "9" * 5000)
    spills = attack("spills", log, "--json", seconds=10)
    assert spills.code == 0 and json.loads(spills.stdout) == []
    for command in (["stats", "--json"], ["inspect"], ["provenance"], ["events"]):
        assert attack(command[0], log, *command[1:], seconds=10).code == 0
    assert attack("export", log, "--out", tmp_path / "b", seconds=10).code == 0
    stats = json.loads((tmp_path / "b" / "sample-multi-turn" / "session.json").read_bytes())
    assert stats["spills"] == {"results": 0, "omittedBytes": 0, "inherited": 0}


@pytest.mark.parametrize("count", [str(2**53), "١٢٣"])
def test_a_spill_count_past_2_53_or_in_other_digits_is_no_spill_note(tmp_path, count):
    spills = attack("spills", _spill_log(tmp_path, count), "--json", seconds=10)
    assert spills.code == 0 and json.loads(spills.stdout) == []


def test_a_spill_note_at_the_largest_safe_count_is_read(tmp_path):
    log = _spill_log(tmp_path, str(2**53 - 1))
    result = attack("spills", log, "--json", seconds=10)
    assert result.code == 0
    [spill] = json.loads(result.stdout)
    assert spill["omittedBytes"] == 2**53 - 1 and spill["locator"] == "/tmp/out.txt"


def test_counts_are_parsed_in_ascii_digits_with_a_bound():
    assert parse_count("42", 100) == 42 and parse_count("0042", 42) == 42
    assert [parse_count(t, 10**6) for t in ("²", "³", "٣", "-1", "+1", " 1", "1 ", "1.0", "", "9" * 5000)] \
        == [None] * 10
    assert parse_count("101", 100) is None and parse_count("0", -1) is None


def test_a_bundle_csv_line_number_in_other_digits_is_ignored_by_verify_grown(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes((SAMPLES / "multi-turn.jsonl").read_bytes())
    assert attack("export", log, "--out", tmp_path / "b", seconds=10).code == 0
    events = next((tmp_path / "b").glob("*/events.csv"))
    rows = events.read_text(encoding="utf-8").split("\n")
    for i in (2, 3):
        cells = rows[i].split(",")
        cells[1] = ["²", "9" * 5000][i - 2]  # (the line column)
        rows[i] = ",".join(cells)
    events.write_text("\n".join(rows), encoding="utf-8")
    # (the manifest made to list the doctored file, so that verify-export trusts its line hashes)
    manifest_path = tmp_path / "b" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    rel = events.relative_to(tmp_path / "b").as_posix()
    for entry in manifest["files"]:
        if entry["path"] == rel:
            entry["size"], entry["sha256"] = events.stat().st_size, hashlib.sha256(events.read_bytes()).hexdigest()
    manifest_path.write_text(json.dumps(manifest))
    raw = log.read_bytes().splitlines(keepends=True)
    raw[5] = raw[5].rstrip(b"\n") + b" \n"  # the input rewritten at its line 6
    log.write_bytes(b"".join(raw))
    result = attack("verify-export", tmp_path / "b", "--grown", seconds=10)
    assert result.code == 1, result.stderr
    assert "rewritten inside the exported prefix: line 6 differs" in result.stdout


# -- 3. a fork chain thousands of sessions deep --------------------------------------------

def _chain(folder: Path, n: int, *, cycle: bool = False) -> Path:
    folder.mkdir()
    for i in range(n):
        header = {**HEADER, "id": f"s{i}", "origin": "fork"}
        if i or cycle:
            header["parentSession"] = f"s{(i - 1) % n}"
        (folder / f"{i:05d}.jsonl").write_bytes(lines(header))
    return folder


@pytest.mark.parametrize("n", [400, 5000])
def test_lineage_of_a_fork_chain_thousands_deep(tmp_path, n):
    chain = _chain(tmp_path / "chain", n)
    text = attack("lineage", chain, "-q", "-j", 1, seconds=15)
    assert text.code == 0, text.stderr
    rows = text.stdout.splitlines()
    assert len(rows) == n and rows[1].startswith("  └─ s1 [fork]")
    assert rows[-1].startswith(" " * 40 + f"└─ [{n - 1}] s{n - 1} [fork]")  # indented 20 levels at most
    assert max(map(len, rows)) < 200
    result = attack("lineage", chain, "-q", "-j", 1, "--json", seconds=15)
    assert result.code == 0, result.stderr
    assert result.stdout.count('"children":[') == n and result.stdout.endswith("}]" * n + ',"problems":[]}\n')
    if n <= 400:  # (nested 2n deep: a parser reads it up to about 500 sessions)
        [node] = orjson.loads(result.stdout)["sessions"]
        for i in range(n):
            assert node["sessionId"] == f"s{i}"
            node = node["children"][0] if i < n - 1 else node


def test_a_cycle_of_five_thousand_sessions_is_found_in_linear_time(tmp_path):
    chain = _chain(tmp_path / "ring", 5000, cycle=True)
    result = attack("lineage", chain, "-q", "-j", 1, "--json", seconds=6)  # (it took 8 s of CPU: quadratic)
    assert result.code == 1
    sessions = json.loads(result.stdout)["sessions"]
    assert len(sessions) == 5000
    assert sessions[0]["problems"] == ['cycle: "s4999" descends from this session']


# -- 4. sizes and SOURCE_DATE_EPOCH --------------------------------------------------------

@pytest.mark.parametrize(("option", "size"), [("--max-bytes", "²"), ("--max-line", "³K"), ("--max-bytes", "9" * 5000),
                                              ("--max-line", "2P")])
def test_a_size_that_is_not_ascii_digits_or_past_1p_is_a_usage_error(option, size):
    result = attack(option, size, "fold", SAMPLES / "prune.jsonl", seconds=10)
    assert result.code == 2
    error = result.one_line()
    assert error.startswith(f"dshreplay: usage error: Invalid value for '{option}': ")
    assert error.endswith("want a size such as 500M or 4G: ASCII digits and K, M, G, T or P, from 1 byte to 1P "
                          "(see 'dshreplay --help')")
    assert len(error) < 300


def test_sizes_are_read_in_one_place():
    assert parse_size("8m") == 8 << 20 and parse_size(" 4G ") == 4 << 30 and parse_size("1P") == MAX_SIZE
    assert parse_size("512") == 512 and parse_size("0008K") == 8192
    for size in ("²", "³K", "9" * 5000, "0", "0K", "2P", "1025T", "1.5G", "-5", "+5", "8 M", "8MB", "", "K"):
        with pytest.raises(ValueError, match="want a size such as 500M or 4G"):
            parse_size(size)
    with pytest.raises(ValueError):
        Options(max_line=MAX_SIZE + 1)


@pytest.mark.parametrize("epoch", ["99999999999999", "9" * 5000, "²"])
def test_a_source_date_epoch_past_the_year_9999_or_not_digits_is_a_usage_error(tmp_path, epoch):
    result = attack("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", env={"SOURCE_DATE_EPOCH": epoch},
                    seconds=10)
    assert result.code == 2
    line = result.one_line()
    assert line.startswith("dshreplay: usage error: SOURCE_DATE_EPOCH ")
    assert "want whole seconds since 1970-01-01 in ASCII digits, at most 253402300799" in line
    assert len(line) < 250
    assert not (tmp_path / "b").exists()


def test_source_date_epoch_is_read_in_ascii_digits_up_to_the_end_of_9999(monkeypatch):
    for epoch in ("253402300800", "1.5", "-1", "now", "1e9", "٣"):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
        with pytest.raises(UsageError, match="^SOURCE_DATE_EPOCH "):
            generated_at(None)
    for epoch, moment in (("0", "1970-01-01T00:00:00Z"), (" 1783352165 ", "2026-07-06T15:36:05Z")):
        monkeypatch.setenv("SOURCE_DATE_EPOCH", epoch)
        assert generated_at(None) == moment
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "")
    assert generated_at("2026-01-01T00:00:00Z") == "2026-01-01T00:00:00Z"


def test_a_source_date_epoch_at_the_end_of_9999_is_the_bundle_time(tmp_path):
    result = attack("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b",
                    env={"SOURCE_DATE_EPOCH": "253402300799"}, seconds=10)
    assert result.code == 0, result.stderr
    assert json.loads((tmp_path / "b" / "manifest.json").read_bytes())["generatedAt"] == "9999-12-31T23:59:59Z"
