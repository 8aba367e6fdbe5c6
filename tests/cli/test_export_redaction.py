"""What the bundle says of a session beyond its messages, redacted: the log-only story in
events.csv's preview and session.json (provider errors, retries, hooks, titles, slash
commands, todo lists); input paths and session ids with secrets; replacements counted per
rule and per session; JSON text masked in place."""

from __future__ import annotations

import csv
import io
import json

from dshreplay.testing.samples import LogBuilder

STAMP = "2026-01-01T00:00:00Z"
KEY = "sk-proj-Op3nA1KeyAbCdEfGhIjKlMnOpQrStUvWx"


def story() -> tuple[LogBuilder, dict]:
    """A session whose turn fails after a retry, with a title, a slash command, a todo list and a
    hook that blocks: each log-only event's seq by name."""
    b = LogBuilder("story")
    seq = {"turn": b.start_turn()}
    seq["title"] = b.add("session/title", {"title": "Deploy with hf_QwErTyUiOpAsDfGhJkLzXcVbNm12345678",
                                           "messageSeqs": [], "source": {"kind": "provider", "provider": "p"}})
    seq["run"] = b.add("command/run", {"commandId": "c1", "name": "deploy", "args": "--token T0kenValue123",
                                       "source": {"kind": "user"}})
    seq["done"] = b.add("command/done", {"commandId": "c1", "kind": "error", "text": "denied: password=Qz9x!"})
    seq["todo"] = b.add("todo/write", {"todos": [{"content": "rotate AKIAQ3EGUXDVB7JNS4TQ", "status": "in_progress"},
                                                 {"content": "ship", "status": "pending"}]})
    b.start_step()
    b.user("deploy it")
    seq["retry"] = b.add("llm/retry", {
        "mode": "normal", "retryId": "r1", "turn": 1, "step": 1, "provider": "p", "policyKey": "rate", "retry": 1,
        "maxRetries": 3, "delayMs": 500, "failure": {"code": "RATE_LIMIT", "status": 429, "message": "slow down"}})
    message = b.assistant("", finish={"kind": "error", "failure": {"code": "AUTH", "status": 401,
                                                                   "message": f"invalid key {KEY}"}})
    seq["finish"] = message - 1
    b.hook_invoked("Stop", "h1")
    seq["hook"] = b.add("hook/result", {"turn": 1, "point": "Stop", "handlerId": "h1", "decision": "block",
                                        "exitCode": 2, "durationMs": 3,
                                        "stderrSummary": "token ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"})
    b.end_step()
    b.turn_open = False
    seq["end"] = b.add("turn/end", {"turn": 1, "reason": {"kind": "error", "error": {
        "code": "AUTH", "status": 401, "message": f"invalid key {KEY}"}}})
    return b, seq


def rows(path) -> dict[int, dict]:
    return {int(r["seq"]): r for r in csv.DictReader(io.StringIO(path.read_text()))}


def test_the_log_only_story_is_in_events_csv_and_session_json_redacted(cli, tmp_path):
    b, seq = story()
    log = b.write(tmp_path / "story.jsonl")
    cli("export", log, "--out", tmp_path / "b", "--timestamp", STAMP)
    events = rows(tmp_path / "b" / "story" / "events.csv")
    assert [(events[seq[k]]["type"], events[seq[k]]["preview"]) for k in seq] == [
        ("turn/start", "turn 1"),
        ("session/title", "title by provider: Deploy with [REDACTED]"),
        ("command/run", "/deploy --token [REDACTED]"),
        ("command/done", "error: denied: password=[REDACTED]"),
        ("todo/write", "[in_progress] rotate [REDACTED]; [pending] ship"),
        ("llm/retry", "retry 1/3 (normal) in 500 ms after RATE_LIMIT (HTTP 429): slow down"),
        ("assistant/chunk", "finish error AUTH (HTTP 401): invalid key [REDACTED]"),
        ("hook/result", "Stop: block exit 2: token [REDACTED]"),
        ("turn/end", "turn 1 error AUTH (HTTP 401): invalid key [REDACTED]"),
    ]
    assert {events[s]["preview"] for s in range(seq["retry"] + 1, seq["finish"])} == {""}  # (usage only)
    session = json.loads((tmp_path / "b" / "story" / "session.json").read_bytes())
    assert session["title"] == "Deploy with [REDACTED]"
    assert session["failures"] == [
        {"seq": seq["done"], "type": "command/done", "turn": None, "step": None, "code": "error", "status": None,
         "message": "denied: password=[REDACTED]"},
        {"seq": seq["retry"], "type": "llm/retry", "turn": 1, "step": 1, "code": "RATE_LIMIT", "status": 429,
         "message": "slow down"},
        {"seq": seq["finish"], "type": "assistant/chunk", "turn": 1, "step": 1, "code": "AUTH", "status": 401,
         "message": "invalid key [REDACTED]"},
        {"seq": seq["hook"], "type": "hook/result", "turn": 1, "step": None, "code": "block", "status": 2,
         "message": "token [REDACTED]"},
        {"seq": seq["end"], "type": "turn/end", "turn": 1, "step": None, "code": "AUTH", "status": 401,
         "message": "invalid key [REDACTED]"},
    ]


def test_replacements_are_counted_per_rule_for_each_session_and_printed(cli, tmp_path, monkeypatch):
    b, _ = story()
    story_log = b.write(tmp_path / "story.jsonl")
    plain = LogBuilder("plain")
    plain.start_turn()
    plain.user("nothing to hide")
    plain.end_turn()
    result = cli("export", story_log, plain.write(tmp_path / "plain.jsonl"), "--out", tmp_path / "b",
                 "--timestamp", STAMP, "--json")
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_bytes())
    counted = [e["redactions"] for e in manifest["sessions"]]
    # the title's Hugging Face token, the command's --token, the command's password, the todo's AWS key
    # id, the key in the finish chunk and in the turn's end, the hook's GitHub token (three rules find it: two
    # of ours and the engine's)
    assert counted == [
        {"replacements": 9, "byRule": {"AWS Access Key": 1, "GitHub Token": 1, "GitHub token, any length": 1,
                                       "Hugging Face token": 1, "betterleaks github-pat": 1,
                                       "password assignment": 1, "password flag": 1, "sk- key": 2}},
        {"replacements": 0, "byRule": {}}]
    assert manifest["redaction"]["replacements"] == 9
    assert [s["redactions"] for s in result.json()["sessions"]] == counted
    monkeypatch.chdir(tmp_path)
    table = cli("export", "story.jsonl", "--out", "c", "--timestamp", STAMP).stdout.splitlines()
    assert table[0].split() == ["input", "folder", "verdict", "events", "redactions"]
    assert table[2].split(None, 4) == ["story.jsonl", "story", "ok", "15",
                                       "9 (sk- key 2, AWS Access Key 1, GitHub Token 1, ...)"]


def test_input_paths_and_session_ids_holding_a_secret_are_named_redacted(cli, tmp_path):
    secret_dir = tmp_path / "ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    secret_dir.mkdir()
    logs = []
    ids = ("xoxb-123456789012-Sl4ckB0tT0kenAbCdEf", "xoxb-123456789012-Oth3rT0kenAbCdEf",
           {"k": "xoxb-123456789012-Obj3ctT0kenAbCdEf"})  # (an id that is no string: a finding, and exported)
    for n, session_id in enumerate(ids):
        b = LogBuilder(session_id)
        b.start_turn()
        b.user("hi")
        b.end_turn()
        logs.append(b.write(secret_dir / f"AKIAQ3EGUXDVB7JNS4T{n}.jsonl"))
    broken = secret_dir / "AKIAQ3EGUXDVB7JNS4TX.jsonl"
    broken.write_bytes(b"not json\n")
    result = cli("export", *logs, broken, "--out", tmp_path / "b", "--timestamp", STAMP, expect=2)
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_bytes())
    shown = f"{tmp_path}/[REDACTED]"
    assert [(e["input"], e.get("folder")) for e in manifest["sessions"]] == [
        (f"{shown}/[REDACTED].jsonl", "~005BREDACTED~005D"), (f"{shown}/[REDACTED].jsonl", "~005BREDACTED~005D~~2"),
        (f"{shown}/[REDACTED].jsonl", "~007B~0022k~0022~003A~0022~005BREDACTED~005D~0022~007D"),
        (f"{shown}/[REDACTED].jsonl", None)]
    assert f"dshreplay: unreadable: {shown}/[REDACTED].jsonl: " in result.stderr
    for path in (tmp_path / "b").rglob("*"):
        data = path.read_bytes() if path.is_file() else b""
        for secret in ("Z9y8X7w6V5", "AKIAQ3EGUX", "Sl4ckB0tT0", "Oth3rT0ken", "Obj3ctT0ke"):
            assert secret.encode() not in data and secret not in str(path), (secret, path)
    findings = json.loads((tmp_path / "b" / "~005BREDACTED~005D" / "findings.json").read_bytes())
    assert findings["files"][0]["path"] == f"{shown}/[REDACTED].jsonl"


def test_tool_arguments_and_json_results_keep_every_byte_outside_a_secret(cli, tmp_path):
    arguments = '{"command": "deploy",  "command": "ls", "password": "Summer2024!", "ratio": 1.10, "n": 1e2}'
    result = '{\n  "ok": true,\n  "env": "{\\"GITHUB_TOKEN\\": \\"ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2\\"}"\n}'
    b = LogBuilder("in-place")
    b.start_turn()
    b.start_step()
    b.user("go")
    b.tool_round("bash", arguments, result)
    b.assistant("done")  # (a call whose request holds the result: the bundle stores its messages)
    b.end_turn()
    cli("export", b.write(tmp_path / "l.jsonl"), "--out", tmp_path / "b", "--timestamp", STAMP)
    [row] = csv.DictReader(io.StringIO((tmp_path / "b" / "in-place" / "tools.csv").read_text()))
    assert row["arguments"] == arguments.replace("Summer2024!", "[REDACTED]")
    lines = (tmp_path / "b" / "in-place" / "messages.jsonl").read_bytes().splitlines()
    results = [json.loads(line)["message"] for line in lines]
    texts = [c["content"][0]["text"] for m in results if type(m) is dict for c in m.get("content", [])
             if type(c) is dict and c.get("type") == "tool-result"]
    assert texts == [result.replace("ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2", "[REDACTED]")]


def test_a_secret_in_an_input_path_counts_as_a_replacement_of_its_session(cli, tmp_path):
    secret_dir = tmp_path / "ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    secret_dir.mkdir()
    b = LogBuilder("s1")
    b.start_turn()
    b.user("hi")
    b.end_turn()
    log = b.write(secret_dir / "AKIAQ3EGUXDVB7JNS4T0.jsonl")
    broken = secret_dir / "AKIAQ3EGUXDVB7JNS4TX.jsonl"
    broken.write_bytes(b"not json\n")
    result = cli("export", log, broken, "--out", tmp_path / "b", "--timestamp", STAMP, "--json", expect=2)
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_bytes())
    # the folder's GitHub token (three rules find it: two of ours and the engine's) and the file's AWS key id, in
    # each input's path; nothing else in either session holds a secret (the unreadable one is counted too)
    path = {"replacements": 4, "byRule": {"AWS Access Key": 1, "GitHub Token": 1, "GitHub token, any length": 1,
                                          "betterleaks github-pat": 1}}
    assert [(e["verdict"], e["redactions"]) for e in manifest["sessions"]] == [("ok", path), ("unreadable", path)]
    assert manifest["redaction"]["replacements"] == 8
    assert [s["redactions"] for s in result.json()["sessions"]] == [path, path]
