"""Each call's record in a bundle: its request rebuilt byte for byte from the
content-addressed messages, and its response."""

from __future__ import annotations

import hashlib
import json

import pytest

from conftest import SAMPLES

LOGS = ["compaction.jsonl", "multi-turn.jsonl", "packed-rows.jsonl", "tool-result-rewrite.jsonl", "prune.jsonl"]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    from click.testing import CliRunner

    from dshreplay.cli import cli
    out = tmp_path_factory.mktemp("calls") / "b"
    result = CliRunner().invoke(cli, ["export", *[str(SAMPLES / n) for n in LOGS], "--out", str(out),
                                      "--no-default-redaction", "--timestamp", "2026-01-01T00:00:00Z"])
    assert result.exit_code == 0, result.output
    return out, json.loads((out / "manifest.json").read_bytes())


@pytest.mark.parametrize("name", LOGS)
def test_every_call_is_rebuilt_from_the_bundle_byte_for_byte(cli, bundle, name):
    out, manifest = bundle
    [entry] = [s for s in manifest["sessions"] if s["input"].endswith("/" + name)]
    folder = out / entry["folder"]
    calls = cli("request", SAMPLES / name, "--list", "--json").json()
    assert calls and len(list((folder / "calls").iterdir())) == len(calls)
    for c in calls:
        expected = cli("request", SAMPLES / name, "--call", c["call"], "--json").stdout
        assert cli("request", "--bundle", folder, "--call", c["call"]).stdout == expected, c["call"]


def test_messages_are_stored_once_under_the_sha256_of_their_bytes(bundle):
    out, _ = bundle
    folder = out / "sample-compaction"
    stored = list((folder / "messages").iterdir())
    assert stored and all(p.name == hashlib.sha256(p.read_bytes()).hexdigest() + ".json" for p in stored)
    cited = [d for p in (folder / "calls").iterdir() for d in json.loads(p.read_bytes())["messages"]]
    assert len(cited) > len(set(cited))  # later calls repeat earlier messages, stored once


def test_a_call_record_holds_its_response(bundle):
    out, _ = bundle
    folder = out / "sample-compaction"
    record = json.loads((folder / "calls" / "0005.json").read_bytes())
    response = record["response"]
    assert (response["messageSeq"], response["finish"], response["errorCode"], response["lastChunkSeq"]) == \
        (79, "tool-calls", None, 78)
    assert response["usage"]["inputTokens"] == 4280
    message = json.loads((folder / "messages" / f"{response['message']}.json").read_bytes())
    assert message["role"] == "assistant"
    assert response["durationMs"] >= 0 and response["firstChunkTime"].endswith("Z")


def test_a_failed_call_names_its_error_code(cli, corpus_dir, tmp_path):
    log = corpus_dir / "upstream" / "headless-agent__compaction-recovery__session.jsonl"
    cli("export", log, "--out", tmp_path / "b", "--snapshot", expect=None)
    [folder] = [p for p in (tmp_path / "b").iterdir() if p.is_dir()]
    record = json.loads((folder / "calls" / "0002.json").read_bytes())
    assert record["response"]["errorCode"] == "CONTEXT_WINDOW_EXCEEDED"
    assert "<td>error CONTEXT_WINDOW_EXCEEDED</td>" in (folder / "report.html").read_text(encoding="utf-8")


def _export_one(cli, log, tmp_path):
    cli("export", log, "--out", tmp_path / "b", "--snapshot", expect=None)
    [folder] = [p for p in (tmp_path / "b").iterdir() if p.is_dir()]
    return folder


def test_tools_csv_gives_each_tool_call_with_its_result_and_approval(cli, tmp_path):
    import csv
    folder = _export_one(cli, SAMPLES / "audit-demo.jsonl", tmp_path)
    with open(folder / "tools.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    events = [json.loads(line) for line in (SAMPLES / "audit-demo.jsonl").read_text().splitlines()[1:]]
    assert [r["callId"] for r in rows] == [e["data"]["callId"] for e in events if e["type"] == "tool/call"]
    asked = next(e for e in events if e["type"] == "approval/asked")
    [approved] = [r for r in rows if r["callId"] == asked["data"]["callId"]]
    assert approved["approvalOutcome"] == "allowed-once" and approved["approvalAsked"].endswith("Z")
    assert all(r["durationMs"].isdigit() and r["resultSeq"] > r["callSeq"] for r in rows)


def test_tools_csv_names_the_hook_decisions_after_a_call(cli, corpus_dir, tmp_path):
    import csv
    folder = _export_one(cli, corpus_dir / "upstream" / "acp-agent__hook-cc-posttool-block__session.jsonl", tmp_path)
    with open(folder / "tools.csv", newline="") as fh:
        hooks = [r["hooks"] for r in csv.DictReader(fh)]
    assert "PostToolUse:block" in " ".join(hooks)


@pytest.mark.parametrize("name, endings", [
    ("acp-agent__subagent-continuable__session.1.jsonl", "error UNKNOWN"),
    ("acp-agent__cancel-tool-calls__session.jsonl", "aborted by user"),
])
def test_session_json_says_how_each_turn_ended(cli, corpus_dir, tmp_path, name, endings):
    folder = _export_one(cli, corpus_dir / "upstream" / name, tmp_path)
    facts = json.loads((folder / "session.json").read_bytes())
    assert endings in [t["ending"] for t in facts["turnSpans"]]
    assert facts["calls"] >= 1 and facts["models"]


def test_session_json_counts_calls_tokens_and_failures(cli, corpus_dir, tmp_path):
    folder = _export_one(cli, corpus_dir / "upstream" / "headless-agent__compaction-recovery__session.jsonl", tmp_path)
    facts = json.loads((folder / "session.json").read_bytes())
    assert facts["failedCalls"] == {"CONTEXT_WINDOW_EXCEEDED": 1}
    assert facts["calls"] == 3 and facts["auxiliaryCalls"] == 1
    assert facts["tokens"]["input"] > 0


def test_the_report_card_agrees_with_session_json(cli, corpus_dir, tmp_path):
    import html
    folder = _export_one(cli, corpus_dir / "upstream" / "acp-agent__cancel-tool-calls__session.jsonl", tmp_path)
    facts = json.loads((folder / "session.json").read_bytes())
    page = html.unescape((folder / "report.html").read_text())
    endings = ", ".join(f"{t['turn']}: {t['ending']}" for t in facts["turnSpans"])
    assert f"turn endings</td><td>{endings}<" in page and "aborted by user" in endings


def test_a_call_record_lists_only_what_the_call_before_it_did_not_send(bundle):
    out, _ = bundle
    calls = out / "sample-compaction" / "calls"
    records = [json.loads(p.read_bytes()) for p in sorted(calls.iterdir())]
    # Each call adds the assistant message and tool result of the one before; the summary at
    # seq 67 replaces the first five messages, so call 5 shares no prefix and lists all of its own.
    assert [(r["call"], r["messageCount"], r["messagesFrom"], len(r["messages"])) for r in records] == [
        (1, 1, None, 1), (2, 3, {"call": 1, "first": 1}, 2), (3, 5, {"call": 2, "first": 3}, 2),
        (4, 7, {"call": 3, "first": 5}, 2), (5, 5, None, 5), (6, 7, {"call": 5, "first": 5}, 2)]


def test_every_hundredth_call_record_lists_its_whole_request(cli, tmp_path):
    from dshreplay.testing.samples import LogBuilder
    b = LogBuilder("long")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("go")
    for n in range(205):
        b.tool_round("bash", '{"command": "true"}', f"output {n}")
    b.end_turn()
    log = b.write(tmp_path / "long.jsonl")
    folder = _export_one(cli, log, tmp_path)
    records = {r["call"]: r for r in (json.loads(p.read_bytes()) for p in (folder / "calls").iterdir())}
    assert len(records) == 205
    assert [n for n, r in sorted(records.items()) if r["messagesFrom"] is None] == [1, 101, 201]
    assert records[101]["messageCount"] == len(records[101]["messages"]) == 1 + 2 * 100
    for n in (100, 150, 205):
        expected = cli("request", log, "--call", n, "--json").stdout
        assert cli("request", "--bundle", folder, "--call", n).stdout == expected, n
