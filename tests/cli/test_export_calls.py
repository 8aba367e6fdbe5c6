"""Each call's record in a bundle: its request rebuilt byte for byte from the
content-addressed messages, and its response. A session's calls are two JSON Lines
files, calls.jsonl and messages.jsonl, that plain `json`, jq, pandas and duckdb read
line by line; `request --bundle` reads them, and the files of a format 2 bundle."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess

import pytest
from bundles import to_format_2

from conftest import SAMPLES

KEY = len('{"sha256":"') + 64 + len('","message":')  # where a stored message's bytes start in its line


def call_records(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "calls.jsonl").read_bytes().splitlines()]


def stored_messages(folder) -> dict:
    return {json.loads(line)["sha256"]: json.loads(line)["message"]
            for line in (folder / "messages.jsonl").read_bytes().splitlines()}

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
    assert calls and [r["call"] for r in call_records(folder)] == [c["call"] for c in calls]
    for c in calls:
        expected = cli("request", SAMPLES / name, "--call", c["call"], "--json").stdout
        assert cli("request", "--json", "--bundle", folder, "--call", c["call"]).stdout == expected, c["call"]


def test_messages_are_stored_once_under_the_sha256_of_their_bytes(bundle):
    out, _ = bundle
    folder = out / "sample-compaction"
    lines = (folder / "messages.jsonl").read_bytes().splitlines()
    keys = [json.loads(line)["sha256"] for line in lines]
    assert lines and len(keys) == len(set(keys))
    assert all(line.startswith(b'{"sha256":"' + key.encode() + b'","message":') and line.endswith(b"}")
               and hashlib.sha256(line[KEY:-1]).hexdigest() == key for line, key in zip(lines, keys))
    cited = [d for r in call_records(folder) for d in r["messages"]]
    assert set(cited) <= set(keys) and len(cited) > len(set(cited))  # later calls repeat earlier messages


def test_a_request_is_rebuilt_from_the_two_files_with_plain_json_line_by_line(cli, bundle):
    """What a third party does without dshreplay: each record's messages are the first
    `messagesFrom.first` of the call it names, then its own."""
    out, _ = bundle
    folder = out / "sample-compaction"
    stored, requests = stored_messages(folder), {}
    with open(folder / "calls.jsonl", encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            base = record["messagesFrom"]
            ids = record["messages"] if base is None else \
                requests[base["call"]][1][:base["first"]] + record["messages"]
            assert len(ids) == record["messageCount"]
            requests[record["call"]] = (record["header"], ids)
    assert sorted(requests) == [1, 2, 3, 4, 5, 6]
    for call, (header, ids) in requests.items():
        expected = cli("request", SAMPLES / "compaction.jsonl", "--call", call, "--json").json()
        assert stored[header] == expected["header"]
        assert [stored[d] for d in ids] == expected["messages"], call


def test_the_bundle_lists_its_calls_as_the_log_does(cli, bundle):
    out, _ = bundle
    listed = cli("request", SAMPLES / "compaction.jsonl", "--list", "--json").json()
    assert cli("request", "--json", "--bundle", out / "sample-compaction", "--list").json() == [
        {k: v for k, v in c.items() if k != "finish"} for c in listed]


def test_jq_reads_both_files_line_by_line(bundle):
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    folder = bundle[0] / "sample-compaction"
    calls = subprocess.run(["jq", "-c", "[.call, .messageCount]", str(folder / "calls.jsonl")], capture_output=True,
                           text=True, check=True).stdout.split()
    assert calls == ["[1,1]", "[2,3]", "[3,5]", "[4,7]", "[5,5]", "[6,7]"]
    keys = subprocess.run(["jq", "-r", ".sha256", str(folder / "messages.jsonl")], capture_output=True, text=True,
                          check=True).stdout.split()
    assert keys == list(stored_messages(folder))


def test_pandas_reads_both_files(bundle):
    pandas = pytest.importorskip("pandas")
    folder = bundle[0] / "sample-compaction"
    calls = pandas.read_json(folder / "calls.jsonl", lines=True)
    assert list(calls["call"]) == [1, 2, 3, 4, 5, 6] and list(calls["messageCount"]) == [1, 3, 5, 7, 5, 7]
    messages = pandas.read_json(folder / "messages.jsonl", lines=True)
    assert list(messages["sha256"]) == list(stored_messages(folder))


def test_duckdb_reads_both_files(bundle):
    duckdb = pytest.importorskip("duckdb")
    folder = bundle[0] / "sample-compaction"
    rows = duckdb.sql(f"select call, messageCount from read_json_auto('{folder / 'calls.jsonl'}') order by call")
    assert rows.fetchall() == [(1, 1), (2, 3), (3, 5), (4, 7), (5, 5), (6, 7)]
    [(count,)] = duckdb.sql(f"select count(*) from read_json_auto('{folder / 'messages.jsonl'}')").fetchall()
    assert count == len(stored_messages(folder))


def test_a_format_2_bundle_is_still_read_and_verified(cli, tmp_path):
    """A bundle of the format before (calls/NNNN.json, messages/<sha256>.json, plain input hashes),
    made from today's."""
    from dshreplay.integrity._signing import legacy_digest
    cli("export", SAMPLES / "compaction.jsonl", "--out", tmp_path / "v2", "--timestamp", "2026-01-01T00:00:00Z",
        "--no-default-redaction")
    to_format_2(tmp_path / "v2")
    folder = tmp_path / "v2" / "sample-compaction"
    assert sorted(p.name for p in (folder / "calls").iterdir()) == [f"000{n}.json" for n in range(1, 7)]
    assert not (folder / "calls.jsonl").exists()
    digest = legacy_digest(json.loads((tmp_path / "v2" / "manifest.json").read_bytes()))
    assert "verified" in cli("verify-export", tmp_path / "v2", "--digest", digest).stdout
    for n in range(1, 7):
        assert cli("request", "--json", "--bundle", folder, "--call", n).stdout == \
            cli("request", SAMPLES / "compaction.jsonl", "--call", n, "--json").stdout, n
    listed = cli("request", "--json", "--bundle", folder, "--list").json()
    assert [(c["call"], c["provider"], c["messageCount"]) for c in listed] == [
        (1, None, 1), (2, None, 3), (3, None, 5), (4, None, 7), (5, None, 5), (6, None, 7)]
    (folder / "calls" / "0003.json").write_bytes(b"{}\n")
    assert "sample-compaction/calls/0003.json" in cli("verify-export", tmp_path / "v2", expect=1).stdout


def test_a_call_record_holds_its_response(bundle):
    out, _ = bundle
    folder = out / "sample-compaction"
    record = call_records(folder)[4]
    response = record["response"]
    assert (record["call"], record["provider"], record["model"]) == (5, "deepseek-official", "deepseek-v4-flash")
    assert (response["messageSeq"], response["finish"], response["errorCode"], response["lastChunkSeq"]) == \
        (79, "tool-calls", None, 78)
    assert response["usage"]["inputTokens"] == 4280
    message = stored_messages(folder)[response["message"]]
    assert message["role"] == "assistant"
    assert response["durationMs"] >= 0 and response["firstChunkTime"].endswith("Z")


def test_a_failed_call_names_its_error_code(cli, corpus_dir, tmp_path):
    log = corpus_dir / "upstream" / "headless-agent__compaction-recovery__session.jsonl"
    cli("export", log, "--out", tmp_path / "b", "--snapshot", expect=None)
    [folder] = [p for p in (tmp_path / "b").iterdir() if p.is_dir()]
    record = call_records(folder)[1]
    assert (record["call"], record["response"]["errorCode"]) == (2, "CONTEXT_WINDOW_EXCEEDED")
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
    assert approved["approvalOutcome"] == "allowed-once" and approved["approvalAskedAt"].endswith("Z")
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
    records = call_records(out / "sample-compaction")
    # Each call adds the assistant message and tool result of the one before; the summary at
    # seq 67 replaces the first five messages, so call 5 shares no prefix and lists all of its own.
    assert [(r["call"], r["messageCount"], r["messagesFrom"], len(r["messages"])) for r in records] == [
        (1, 1, None, 1), (2, 3, {"call": 1, "first": 1}, 2), (3, 5, {"call": 2, "first": 3}, 2),
        (4, 7, {"call": 3, "first": 5}, 2), (5, 5, None, 5), (6, 7, {"call": 5, "first": 5}, 2)]


def test_a_checkpoint_builds_on_an_earlier_checkpoint_and_every_request_is_rebuilt(cli, tmp_path):
    """Calls 101, 201, 301 are checkpoints: call 100m + 1 builds on checkpoint m - lowbit(m)
    (101 and 201 on call 1, 301 on 201), where format 3 listed each whole."""
    from dshreplay.testing.samples import LogBuilder
    b = LogBuilder("long")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("go")
    for n in range(305):
        b.tool_round("bash", '{"command": "true"}', f"output {n}")
    b.end_turn()
    log = b.write(tmp_path / "long.jsonl")
    folder = _export_one(cli, log, tmp_path)
    records = {r["call"]: r for r in call_records(folder)}
    assert list(records) == list(range(1, 306))
    assert [n for n, r in sorted(records.items()) if r["messagesFrom"] is None] == [1]
    # call n is sent the user's message and the n - 1 rounds before it: 1 + 2(n - 1) messages
    assert {n: (records[n]["messageCount"], records[n]["messagesFrom"], len(records[n]["messages"]))
            for n in (100, 101, 102, 201, 301)} == {
        100: (199, {"call": 99, "first": 197}, 2), 101: (201, {"call": 1, "first": 1}, 200),
        102: (203, {"call": 101, "first": 201}, 2), 201: (401, {"call": 1, "first": 1}, 400),
        301: (601, {"call": 201, "first": 401}, 200)}
    for n in (100, 101, 150, 201, 301, 305):
        expected = cli("request", log, "--call", n, "--json").stdout
        assert cli("request", "--json", "--bundle", folder, "--call", n).stdout == expected, n


def test_transcript_md_quotes_a_long_tool_result_and_names_its_whole_message(cli, tmp_path):
    """The bundle holds each message once: transcript.md quotes a tool result to 1,000 characters
    and names the message in messages.jsonl that holds it whole, sent to the model or not."""
    from dshreplay.testing.samples import LogBuilder
    b = LogBuilder("quotes")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("go")
    output = "".join(f"line {n:04d} of the output\n" for n in range(100))  # 2,400 characters
    b.tool_round("bash", '{"command": "seq 100"}', output)
    _, rewritten = b.tool_round("bash", '{"command": "seq 100"}', output.replace("line", "LINE"))
    b.rewrite_tool_result(rewritten, "[output trimmed]")  # (before any call sent it)
    b.end_step()
    b.start_step()
    b.assistant("done")
    b.end_turn()
    folder = _export_one(cli, b.write(tmp_path / "quotes.jsonl"), tmp_path)
    transcript = (folder / "transcript.md").read_text()
    stored = stored_messages(folder)
    # the text is "[result bash call-000N] " and the output, 24 + 2,399 characters (its last newline left out)
    notes = re.findall(r"^> \[1,423 more characters: the whole tool result is the message ([0-9a-f]{64}) of "
                       r"messages\.jsonl\]$", transcript, re.M)
    assert len(notes) == 2
    for key, lines in zip(notes, ("line", "LINE")):
        assert f"{lines} 0099 of the output" in json.dumps(stored[key])
        assert f"] {lines} 0000 of the output\n" in transcript and f"{lines} 0099" not in transcript
    sent = {d for r in call_records(folder) for d in r["messages"]}
    assert notes[0] in sent and notes[1] not in sent  # (the rewritten one no call sent: stored for the transcript)


def test_a_request_reads_only_the_lines_it_needs(cli, bundle, tmp_path):
    """--call N reads calls.jsonl up to call N (its records from the last full one) and
    messages.jsonl up to the last message it names: damage past them is not read; --list
    reads every record, and says where the damage is."""
    out, _ = bundle
    shutil.copytree(out / "sample-compaction", tmp_path / "s")
    folder = tmp_path / "s"
    expected = cli("request", "--json", "--bundle", folder, "--call", 1).stdout
    with open(folder / "calls.jsonl", "ab") as fh:
        fh.write(b"not a record\n")
    with open(folder / "messages.jsonl", "ab") as fh:
        fh.write(b"not a stored message\n")
    assert cli("request", "--json", "--bundle", folder, "--call", 1).stdout == expected
    damaged = cli("request", "--json", "--bundle", folder, "--list", expect=2)
    assert damaged.stderr.startswith(f"dshreplay: read error: {folder / 'calls.jsonl'}: line 7: a call record is "
                                     "not valid JSON: ")  # (then orjson's words)


def test_a_stored_message_s_key_is_checked_with_standard_tools(bundle):
    """What the documentation tells a third party: the key is the SHA-256 of the line from its
    88th byte to the byte before its closing brace."""
    folder = bundle[0] / "sample-compaction"
    for n in (1, 5):
        line = subprocess.run(["sed", "-n", f"{n}p", str(folder / "messages.jsonl")], capture_output=True,
                              check=True).stdout
        body = subprocess.run("cut -c88- | sed 's/}$//' | tr -d '\\n' | sha256sum", shell=True, input=line,
                              capture_output=True, check=True).stdout.split()[0].decode()
        assert body == json.loads(line)["sha256"]
