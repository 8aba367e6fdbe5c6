"""export and verify-export: a bundle that verifies, is reproducible and catches tampering."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dshreplay.bundle._layout import folder_name

from conftest import SAMPLES

CORPUS_LOGS = ["headless-agent__compaction-recovery__session.jsonl",
               "acp-agent__subagent-fork-in-process__session.jsonl",
               "acp-agent__agent-instructions__session.runtime.jsonl.zstd"]
STAMP = "2026-11-29T12:00:00Z"


def bundle_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def inputs(corpus_dir):
    return [str(corpus_dir / "upstream" / name) for name in CORPUS_LOGS] + [
        str(SAMPLES / "audit-demo.jsonl"), str(SAMPLES / "tool-result-rewrite.jsonl")]


def test_export_verifies_and_is_byte_identical_when_rerun(cli, inputs, tmp_path):
    exported = cli("export", *inputs, "--out", tmp_path / "a", "--timestamp", STAMP, expect=1)  # two verdicts err
    cli("export", *inputs, "--out", tmp_path / "b", "--timestamp", STAMP, expect=1)
    first, second = bundle_bytes(tmp_path / "a"), bundle_bytes(tmp_path / "b")
    assert first == second
    manifest = json.loads(first["manifest.json"])
    assert [s["input"] for s in manifest["sessions"]] == inputs
    assert manifest["generatedAt"] == STAMP
    assert manifest["format"] == 4
    assert [f["path"] for f in manifest["files"]] == sorted(set(first) - {"manifest.json"})
    assert all(f["size"] == len(first[f["path"]]) for f in manifest["files"])
    digest = exported.stdout.splitlines()[-1].removeprefix("bundle digest: ")
    out = cli("verify-export", tmp_path / "a", "--digest", digest, "--json").json()
    assert out == {"bundle": str(tmp_path / "a"), "ok": True, "format": manifest["format"], "generatedAt": STAMP,
                   "sessions": 5, "manifestCheckedBy": ["digest"], "bundleVerified": True, "inputsVerified": 5,
                   "differences": [],
                   "inputs": [{"input": given, "sizeAtExport": Path(given).stat().st_size, "status": "matches",
                               "detail": "", "notCovered": None} for given in inputs],
                   "notChecked": [], "inputsNotChecked": [], "inputsGrown": []}


def test_bundle_contents_per_session(cli, tmp_path):
    cli("export", SAMPLES / "audit-demo.jsonl", "--out", tmp_path / "out", "--timestamp", STAMP)
    folder = tmp_path / "out" / "sample-audit-demo"
    assert sorted(p.name for p in folder.iterdir()) == [
        "approvals.csv", "brackets.json", "calls.jsonl", "events.csv", "findings.json", "messages.jsonl",
        "report.html", "session.json", "shadows.json", "spills.json", "tools.csv", "transcript.md",
        "view.html"]
    calls = [json.loads(line)["call"] for line in (folder / "calls.jsonl").read_bytes().splitlines()]
    assert calls == list(range(1, 9))
    request = cli("request", SAMPLES / "audit-demo.jsonl", "--call", 3, "--json").json()
    assert cli("request", "--json", "--bundle", folder, "--call", 3).json() == request  # (unredacted)
    events = (folder / "events.csv").read_text().splitlines()
    assert events[0] == "seq,line,time,type,turn,step,surface,op,callId,tool,compactionId,preview,rawSha256"
    assert len(events) == 1 + 131
    approvals = (folder / "approvals.csv").read_text().splitlines()
    assert approvals[1].split(",")[5:8] == ["allowed-once", "deploys to a shared environment", ""]
    assert approvals[0].endswith("askedAt,decidedAt,arguments")
    assert approvals[1].endswith('2026-07-06T15:36:05.707Z,2026-07-06T15:36:05.714Z,"{""command"": ""./deploy.sh""}"')
    assert json.loads((folder / "shadows.json").read_text())[0]["seq"] == 67


def test_default_redaction_masks_the_secret_everywhere_but_never_the_input(cli, tmp_path):
    log = tmp_path / "in.jsonl"
    shutil.copy(SAMPLES / "audit-demo.jsonl", log)
    before = log.read_bytes()
    cli("export", log, "--out", tmp_path / "out", "--timestamp", STAMP)
    assert log.read_bytes() == before and b"sk-stag1ng0123456789abcdef" in before
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert b"sk-stag1ng" not in path.read_bytes(), path
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["redaction"]["replacements"] >= 1
    cli("export", log, "--out", tmp_path / "raw", "--timestamp", STAMP, "--no-default-redaction")
    assert b"sk-stag1ng" in (tmp_path / "raw" / "sample-audit-demo" / "events.csv").read_bytes() or \
        b"sk-stag1ng" in (tmp_path / "raw" / "sample-audit-demo" / "transcript.md").read_bytes()


def test_redaction_rules_file(cli, tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"text": ["main\\.py"], "pointers": ["/data/header/system"], "keys": ["cwd"]}))
    cli("export", SAMPLES / "compaction.jsonl", "--out", tmp_path / "out", "--redact", rules, "--timestamp", STAMP)
    folder = tmp_path / "out" / "sample-compaction"
    call = cli("request", "--json", "--bundle", folder, "--call", 1).json()
    assert call["header"]["system"] == "[REDACTED]"
    assert "main.py" not in (folder / "transcript.md").read_text()
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["sessions"][0]["header"]["cwd"] == "[REDACTED]"
    assert manifest["redaction"]["rules"] == {"text": 1, "pointers": 1, "keys": 1}  # (counts: no hash to guess at)
    assert manifest["redaction"]["replacements"] > 3
    bad = tmp_path / "bad.json"
    bad.write_text('{"text": ["("]}')
    result = cli("export", SAMPLES / "compaction.jsonl", "--out", tmp_path / "x", "--redact", bad, expect=2)
    assert 'redaction text rule 1 "(" cannot be used: missing ): (' in result.stderr


def test_tampered_bundle_file_and_input_are_caught(cli, tmp_path):
    log = tmp_path / "in.jsonl"
    shutil.copy(SAMPLES / "prune.jsonl", log)
    cli("export", log, "--out", tmp_path / "out", "--timestamp", STAMP)
    report = tmp_path / "out" / "sample-prune" / "report.html"
    report.write_text(report.read_text().replace("prune", "Prune", 1))
    (tmp_path / "out" / "extra.txt").write_text("smuggled")
    with log.open("ab") as fh:
        fh.write(b"\n")
    out = cli("verify-export", tmp_path / "out", "--json", expect=1).json()
    assert out["differences"] == [
        {"path": "sample-prune/report.html", "problem": "content changed (SHA-256 differs)"},
        {"path": "extra.txt", "problem": "not listed in the manifest (added)"},
        {"path": str(log), "problem": f"input size changed: {log.stat().st_size} bytes, manifest says "
                                      f"{log.stat().st_size - 1}"}]
    log.unlink()
    (tmp_path / "out" / "extra.txt").unlink()
    (tmp_path / "out" / "sample-prune" / "events.csv").unlink()
    out = cli("verify-export", tmp_path / "out", "--json", expect=1).json()
    assert {"path": str(log), "problem": "input not found (give its folder with --inputs, or --bundle-only to "
                                         "check the bundle alone)"} in out["differences"]
    assert {"path": "sample-prune/events.csv", "problem": "listed in the manifest but missing"} in out["differences"]
    out = cli("verify-export", tmp_path / "out", "--json", "--bundle-only", expect=1).json()
    assert out["inputsNotChecked"] == [str(log)]
    assert [d["path"] for d in out["differences"]] == ["sample-prune/events.csv", "sample-prune/report.html"]


def test_out_must_be_empty_unless_force_replaces_a_bundle(cli, tmp_path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    result = cli("export", SAMPLES / "prune.jsonl", "--out", busy, expect=2)
    assert "is not empty" in result.stderr
    result = cli("export", SAMPLES / "prune.jsonl", "--out", busy, "--force", expect=2)
    assert "not a dshreplay bundle" in result.stderr and (busy / "keep.txt").exists()
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", "--timestamp", STAMP)
    cli("export", SAMPLES / "multi-turn.jsonl", "--out", tmp_path / "b", "--force", "--timestamp", STAMP)
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["sessions"][0]["folder"] == "sample-multi-turn"
    assert not any(p.name.startswith(".b.partial") for p in tmp_path.iterdir())


def test_an_unreadable_input_is_recorded_and_exits_2(cli, tmp_path):
    out = cli("export", SAMPLES / "broken-version-1.jsonl", SAMPLES / "prune.jsonl", "--out", tmp_path / "o",
              "--json", expect=2).json()
    assert [s["verdict"] for s in out["sessions"]] == ["unreadable", "ok"]
    cli("verify-export", tmp_path / "o", "--digest", out["digest"])


@pytest.mark.parametrize("session_id,name", [
    ("abc-1.2_x", "abc-1.2_x"), ("../../etc", "..~002F..~002Fetc"), (".", "~002E"),
    ("..", "~002E~002E"), ("a/b", "a~002Fb"), ("a~002Fb", "a~007E002Fb"), ("", "~~empty"),
    ("nul\x00byte", "nul~0000byte"), ("😀", "~U01F600"), (None, "null"),
])
def test_folder_names_are_escaped_injectively(session_id, name):
    assert folder_name(session_id) == name


def test_long_ids_are_cut_with_a_hash_and_stay_distinct():
    a, b = folder_name("x" * 300), folder_name("x" * 299 + "y")
    assert len(a) == 118 and a != b and "~~" in a


@pytest.mark.parametrize("secret", [
    "sk-abcdefghijklmnop1234", "Bearer eyJhbGciOiJIUzI1NiJ9.abc", "AKIAABCDEFGHIJKLMNOP",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----", "password=hunter2hunter2",
    "ghp_" + "a" * 36, "xoxb-123456789012-abc", "AIza" + "B" * 35,
])
def test_default_rules_mask_each_kind_of_secret(secret):
    from dshreplay.redaction.redactor import MASK, load_redactor
    redactor = load_redactor(None)
    assert secret not in redactor.text(f"before {secret} after")
    assert MASK in redactor.text(f"before {secret} after")
    assert redactor.text("an ordinary sentence about tokens") == "an ordinary sentence about tokens"


@pytest.mark.parametrize("secret", [
    "sk-abcdefghijklmnop1234", "Bearer eyJhbGciOiJIUzI1NiJ9.abc", "password=hunter2hunter2",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----",
])
@pytest.mark.parametrize("written", ["plain", "escaped", "non-ascii"])
def test_default_rules_mask_secrets_in_records_however_the_line_is_written(secret, written):
    # the reader hands each record with its raw line; a line of plain ASCII without escapes
    # is searched as it is, any other line string by string
    from dshreplay.redaction.redactor import MASK, load_redactor
    text = {"plain": f"before {secret} after", "escaped": f"before {secret} after \u00e9",
            "non-ascii": f"before {secret.replace('Bearer ', 'Bearer' + chr(0x2003))} after \u00e9"}[written]
    record = {"type": "user/message", "data": {"content": [{"type": "text", "text": text}]}}
    raw = json.dumps(record, ensure_ascii=written == "escaped").encode() + b"\n"
    assert raw.isascii() == (written != "non-ascii")
    masked = load_redactor(None).record(record, raw)["data"]["content"][0]["text"]
    assert MASK in masked and secret.split()[-1] not in masked


def test_default_rules_leave_a_record_with_only_trigger_words_untouched():
    from dshreplay.redaction.redactor import load_redactor
    record = {"type": "assistant/chunk", "data": {"chunk": {"type": "usage", "usage": {"inputTokens": 123456789}}}}
    raw = json.dumps(record).encode() + b"\n"
    assert load_redactor(None).record(record, raw) is record


def test_an_interrupted_export_leaves_no_bundle_behind(tmp_path, monkeypatch, evidence_key_file):
    import dshreplay.bundle.export as export_module
    from dshreplay.redaction.redactor import load_redactor

    calls = []

    def dies_on_the_second_session(given, *args):
        calls.append(given)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the auditor pressed Ctrl-C mid-way
        return real(given, *args)

    real = export_module._export_session
    monkeypatch.setattr(export_module, "_export_session", dies_on_the_second_session)
    from dshreplay.options import Options
    options = export_module.ExportOptions(tmp_path / "out", Options(redactor=load_redactor(None)), timestamp=STAMP,
                                          evidence_key=evidence_key_file)
    with pytest.raises(KeyboardInterrupt):
        export_module.export([str(SAMPLES / "prune.jsonl"), str(SAMPLES / "multi-turn.jsonl")], options)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no out, no staging folder


def test_placeholder_session_ids_take_their_folder_name_from_the_file(cli, tmp_path):
    from dshreplay.testing.samples import LogBuilder
    logs = []
    for name in ("alpha__session.jsonl", "beta.jsonl", "alpha__session.jsonl"):
        b = LogBuilder("{{sessionId}}")
        b.start_turn()
        b.user("hi")
        b.end_turn()
        folder = tmp_path / f"in{len(logs)}"
        folder.mkdir()
        logs.append(b.write(folder / name))
    store = tmp_path / "store" / "0f3c"
    store.mkdir(parents=True)
    b = LogBuilder("{{sessionId}}")
    b.start_turn()
    b.end_turn()
    logs.append(b.write(store / "session.jsonl"))
    out = cli("export", *logs, "--out", tmp_path / "o", "--snapshot", "--json").json()
    assert [s["folder"] for s in out["sessions"]] == ["alpha__session", "beta", "alpha__session~~2", "0f3c"]
