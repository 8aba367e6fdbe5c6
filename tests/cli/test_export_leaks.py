"""No secret of a kind the default rules name reaches an export bundle, wherever
the log holds it: plain text, JSON text inside strings (tool arguments, tool
results), tool arguments split across streamed deltas (plain chunk events and
packed rows), tool names, titles, error messages, hook output, the header.

Each secret is planted, the bundle is written, and every byte of every file
of the bundle is searched for it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshreplay.testing.samples import LogBuilder

# the distinctive part of each secret (what must not appear) and how it is planted
SECRETS = {
    "hunter2": "curl -u admin:hunter2 https://example.com",
    "correcthorsebattery": None,  # a "password" member of JSON arguments
    "sk-proj-abcdefghijklmnopqrstu": "key sk-proj-abcdefghijklmnopqrstu here",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789": "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "AKIAIOSFODNN7EXAMPLE": "aws AKIAIOSFODNN7EXAMPLE",
    "xoxb-1234567890-abcdefghij": "slack xoxb-1234567890-abcdefghij",
    "eyJzdWIiOiIxMjM0NTY3ODkwIn0": "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3",
    "Zm9vYmFyYmF6cXV4": "Authorization: Bearer Zm9vYmFyYmF6cXV4",
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC": ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n"
                                         "-----END PRIVATE KEY-----"),
    "s3cretpass": "git clone https://deploy:s3cretpass@example.com/repo.git",
    "supersecretvalue": "DB_PASSWORD=supersecretvalue",
    "basicauthvalue99": "authorization: basicauthvalue99",
}


def text_of(secret: str) -> str:
    return SECRETS[secret] or f"password {secret}"


def build(pack: bool) -> LogBuilder:
    b = LogBuilder(f"leaky-{'packed' if pack else 'plain'}", cwd="/home/u/DB_PASSWORD=supersecretvalue")
    b.start_turn()
    b.add("session/title", {"title": "deploy with " + SECRETS["AKIAIOSFODNN7EXAMPLE"]})
    b.request_header(system="system prompt: " + SECRETS["sk-proj-abcdefghijklmnopqrstu"])
    b.start_step()
    b.user("please run " + SECRETS["hunter2"] + " and " + SECRETS["s3cretpass"])
    arguments = json.dumps({"command": SECRETS["hunter2"], "password": "correcthorsebattery",
                            "env": SECRETS["supersecretvalue"], "header": SECRETS["basicauthvalue99"]})
    b.tool_round("bash", arguments, "done: " + SECRETS["ghp_abcdefghijklmnopqrstuvwxyz0123456789"],
                 text="running " + SECRETS["xoxb-1234567890-abcdefghij"])
    b.end_step()
    b.start_step()
    result = json.dumps({"stdout": SECRETS["eyJzdWIiOiIxMjM0NTY3ODkwIn0"], "token": "plainvalue123"})
    call_id = b.new_id("call")
    b.assistant("reading", calls=[(call_id, "read " + SECRETS["AKIAIOSFODNN7EXAMPLE"], '{"path": "/x"}')])
    call = b.tool_call(call_id, "read " + SECRETS["AKIAIOSFODNN7EXAMPLE"], '{"path": "/x"}')
    b.tool_result(call_id, result, cites=call, is_error=True)
    b.add("hook/invoked", {"turn": b.turn, "id": "hook-1", "hook": "pre", "event": "x"})
    b.add("hook/result", {"turn": b.turn, "id": "hook-1", "output": SECRETS["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"],
                          "message": SECRETS["Zm9vYmFyYmF6cXV4"]})
    b.assistant("the key was " + SECRETS["Zm9vYmFyYmF6cXV4"])
    b.end_step()
    b.end_turn()
    return b


@pytest.mark.parametrize("pack", [False, True], ids=["plain-deltas", "packed-rows"])
def test_no_planted_secret_reaches_any_file_of_the_bundle(cli, tmp_path, pack):
    log = build(pack).write(tmp_path / "leaky.jsonl", pack=pack)
    raw = log.read_bytes()
    for secret in SECRETS:
        assert secret.encode() in raw.replace(b"\\n", b"\n"), secret  # planted
    out = tmp_path / "bundle"
    cli("export", log, "--out", out, "--timestamp", "2026-01-01T00:00:00Z", expect=None)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "events.csv" for p in files) and any(p.name == "calls.jsonl" for p in files)
    for path in files:
        data = path.read_bytes()
        for secret in SECRETS:
            assert secret.encode() not in data, f"{secret} in {path.relative_to(out)}"
        for name in (p.name for p in files):
            for secret in SECRETS:
                assert secret not in name
    manifest = json.loads((out / "manifest.json").read_bytes())
    assert manifest["redaction"]["replacements"] > len(SECRETS)
    by_rule = manifest["redaction"]["replacementsByRule"]
    assert sum(by_rule.values()) == manifest["redaction"]["replacements"]
    assert {"tool-call arguments", "secret-named member", "URL credentials", "JSON web token"} <= set(by_rule)
    assert log.read_bytes() == raw  # the input is untouched


def test_a_password_member_in_json_arguments_is_masked_and_the_arguments_stay_json():
    from dshreplay.output.redact import MASK, load_redactor
    redactor = load_redactor(None)
    arguments = json.dumps({"command": "ls", "password": "pw", "apiKey": "abc", "inputTokens": 12})
    masked = json.loads(redactor.string(arguments))
    assert masked == {"command": "ls", "password": MASK, "apiKey": MASK, "inputTokens": 12}
    assert redactor.string('{"command": "ls"}') == '{"command": "ls"}'  # unchanged text stays as written


def test_a_keys_rule_reaches_members_of_json_text_inside_strings(tmp_path):
    from dshreplay.output.redact import MASK, load_redactor
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"keys": ["command"]}))
    redactor = load_redactor(str(rules), defaults=False)
    record = {"data": {"arguments": json.dumps({"command": "rm -rf /", "cwd": "/"}),
                       "tools": [{"properties": {"command": {"type": "string"}}}]}}
    out = redactor.value(record)
    assert json.loads(out["data"]["arguments"]) == {"command": MASK, "cwd": "/"}
    assert out["data"]["tools"] == [{"properties": {"command": MASK}}]


def test_secret_calls_are_found_only_once_their_deltas_are_put_together(tmp_path):
    from dshreplay.analyses.validate import validate_log
    from dshreplay.output.redact import ArgumentDeltas, load_redactor
    b = build(False)
    log = b.write(tmp_path / "l.jsonl")
    deltas = ArgumentDeltas()
    validate_log(log, observers=[deltas])
    redactor = load_redactor(None)
    pieces = [p for parts in deltas.parts.values() for p in parts]
    assert not any("correcthorsebattery" in p for p in pieces)  # no single delta holds the whole secret
    assert deltas.secret_calls(redactor) == {(1, 1, 1)}  # turn 1, step 1, block 1: the bash call


def test_findings_are_computed_on_the_original_and_written_redacted(cli, tmp_path):
    log = tmp_path / "x.jsonl"
    b = LogBuilder("finding-leak")
    b.start_turn()
    b.add("unknown/AKIAIOSFODNN7EXAMPLE", {"x": 1})
    b.write(log)
    out = tmp_path / "b"
    cli("export", log, "--out", out, expect=None)
    findings = json.loads((out / "finding-leak" / "findings.json").read_bytes())["files"][0]["findings"]
    assert [f["code"] for f in findings][:1] == ["DSH-E004"] or "DSH-E006" in [f["code"] for f in findings]
    assert "AKIAIOSFODNN7EXAMPLE" not in (out / "finding-leak" / "findings.json").read_text()
    assert any("[REDACTED]" in f["message"] for f in findings)
    assert "AKIAIOSFODNN7EXAMPLE" in Path(log).read_text()
