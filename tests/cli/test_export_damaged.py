"""export and verify-export on a zstd log with a corrupt frame in the middle: the readable part is
exported with its findings (DSH-E013 among them), its chain covers the readable lines and the
manifest says where and why reading stopped; verify-export checks it, and says a changed or grown
log precisely (issue #35: one policy for unreadable bytes)."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
import zstandard

from dshreplay.testing.samples import LogBuilder

STAMP = "2026-01-01T00:00:00Z"
SECRET = b"Summer2024!"
WHY = "zstd decompressor error: Restored data doesn't match checksum"


def frames_of(b: LogBuilder, batch: int = 7) -> list[bytes]:
    """dsh's zstd layout of `b`, frame by frame: the header alone, then `batch` lines a frame."""
    cctx = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True)
    lines = b.to_bytes().splitlines(keepends=True)
    return [cctx.compress(lines[0])] + [cctx.compress(b"".join(lines[k:k + batch]))
                                        for k in range(1, len(lines), batch)]


def corrupt(frame: bytes) -> bytes:
    """The frame with its content checksum (its last 4 bytes) changed."""
    return frame[:-1] + bytes([frame[-1] ^ 0xFF])


@pytest.fixture
def damaged(tmp_path):
    """A log with a password in turn 1 (line 17, readable) and a corrupt frame 6 of 10: lines 1..29
    (the header and events 0..27) can be read, the rest (from line 30, seq 28) cannot."""
    b = LogBuilder("sample-damaged")
    for n in range(3):
        b.start_turn()
        b.request_header()
        b.start_step()
        b.user(f"question {n}")
        if n == 0:
            b.tool_round("bash", '{"command": "cat db.json"}', '{"host": "db", "password": "Summer2024!"}')
        b.assistant(f"answer {n}")
        b.end_step()
        b.end_turn()
    frames = frames_of(b)
    assert len(frames) == 10 and SECRET in b.to_bytes().splitlines()[16]
    log = tmp_path / "in" / "s.jsonl.zstd"
    log.parent.mkdir()
    log.write_bytes(b"".join(frames[:5]) + corrupt(frames[5]) + b"".join(frames[6:]))
    text = b.to_bytes().splitlines(keepends=True)
    return log, frames, text, sum(map(len, frames[:5]))


def chain_head(lines: list[bytes], key: bytes) -> str:
    """The line chain worked out by hand: h0 = SHA-256 of the seed text, h(n) = HMAC(h(n-1) || line n)."""
    h = hashlib.sha256(b"dshreplay line chain v1").digest()
    for line in lines:
        h = hmac.digest(key, h + line, "sha256")
    return h.hex()


def test_export_keeps_the_readable_part_of_a_log_with_a_corrupt_frame_and_its_findings(cli, tmp_path, damaged,
                                                                                         evidence_key_file):
    log, _, text, offset = damaged
    result = cli("export", log, "--out", tmp_path / "b", "--timestamp", STAMP, expect=1)  # (was 2: left out)
    reason = f"corrupt zstd data in the frame at byte offset {offset}: {WHY}"
    assert result.stderr.splitlines()[-1] == (
        f"dshreplay: {log}: answered for seqs 0..27 only: the fold fails at seq 28 (DSH-E013, line 30: the rest "
        f"of the log cannot be read: {reason})")
    entry = json.loads((tmp_path / "b" / "manifest.json").read_bytes())["sessions"][0]
    key = bytes.fromhex(evidence_key_file.read_text())
    assert (entry["verdict"], entry["events"], entry["answeredUpTo"], entry["tornTail"]) == ("errors", 28, 27, None)
    assert {k: entry["failure"][k] for k in ("code", "seq", "line")} == {"code": "DSH-E013", "seq": 28, "line": 30}
    assert entry["chain"] == {"every": 1000, "lines": 29, "textBytes": sum(map(len, text[:29])),
                              "head": chain_head(text[:29], key), "checkpoints": [{"line": 28, "sha256": chain_head(
                                  text[:28], key)}], "unreadableFrom": {"line": 30, "reason": reason}}
    folder = tmp_path / "b" / entry["folder"]
    findings = json.loads((folder / "findings.json").read_bytes())["files"][0]
    assert (findings["events"], [(f["code"], f["seq"], f["line"]) for f in findings["findings"]]) == \
        (28, [("DSH-E013", 28, 30)])
    assert sorted(p.name for p in folder.iterdir()) == [
        "approvals.csv", "brackets.json", "calls.jsonl", "events.csv", "findings.json", "messages.jsonl",
        "report.html", "session.json", "shadows.json", "spills.json", "tools.csv", "transcript.md",
        "view.html"]
    assert b"db.json" in (folder / "transcript.md").read_bytes()  # (the readable part is there...)
    for path in (tmp_path / "b").rglob("*"):  # (...its password masked as always)
        assert not path.is_file() or SECRET not in path.read_bytes(), path


def test_verify_export_checks_a_damaged_log_and_says_precisely_how_it_changed_or_grew(cli, tmp_path, damaged):
    log, frames, _, offset = damaged
    digest = cli("export", log, "--out", tmp_path / "b", "--timestamp", STAMP, expect=1).stdout.splitlines()[-1]
    digest = digest.removeprefix("bundle digest: ")
    bundle = tmp_path / "b"

    def verify(*more, expect=0):
        return cli("verify-export", bundle, "--digest", digest, "--json", *more, expect=expect).json()

    for more in ((), ("--grown",)):  # (the key is the run's, in DSHREPLAY_EVIDENCE_KEY)
        out = verify(*more)
        assert out["ok"] and out["inputs"][0]["status"] == "matches", out
    exported = log.read_bytes()
    reason = f"corrupt zstd data in the frame at byte offset {offset}: {WHY}"
    log.write_bytes(exported + frames[-1])  # dsh wrote on after the corrupt frame
    assert verify("--grown", expect=1)["differences"] == [{"path": str(log), "problem": (
        f"the exported bytes are all still there, and {len(frames[-1])} bytes were appended after the rest the "
        f"export could not read (from line 30: {reason}): bytes hidden from every reader")}]
    log.write_bytes(b"".join(frames))  # the corrupt frame repaired: its bytes changed
    assert verify("--grown", expect=1)["differences"][0]["problem"] == (
        f"the export could not read the log from line 30 ({reason}); it now reads on: the bytes there changed")
    log.write_bytes(b"".join(frames[:2]) + corrupt(frames[2]) + b"".join(frames[3:]))  # an earlier frame corrupt
    assert verify("--grown", expect=1)["differences"][0]["problem"] == (
        f"the log can be read for 8 lines, fewer than the 29 the export read: line 9: corrupt zstd data in the "
        f"frame at byte offset {len(frames[0]) + len(frames[1])}: {WHY}")
    log.write_bytes(exported[:-1] + bytes([exported[-1] ^ 1]))  # a byte of the unreadable rest changed
    assert verify("--grown", expect=1)["differences"][0]["problem"] == (
        f"the log's first {len(exported)} bytes are not the ones exported (their HMAC-SHA256 differs from the "
        "manifest's), though its readable lines match the chain")


def test_a_log_that_becomes_unreadable_past_the_exported_lines_is_not_growth(cli, tmp_path, damaged):
    log, frames, _, _ = damaged
    log.write_bytes(b"".join(frames[:5]))  # exported whole (29 lines), then a corrupt frame appended
    digest = cli("export", log, "--out", tmp_path / "b", "--timestamp", STAMP).stdout.splitlines()[-1]
    entry = json.loads((tmp_path / "b" / "manifest.json").read_bytes())["sessions"][0]
    assert entry["chain"]["unreadableFrom"] is None
    log.write_bytes(b"".join(frames[:5]) + corrupt(frames[5]))
    out = cli("verify-export", tmp_path / "b", "--digest", digest.removeprefix("bundle digest: "), "--grown",
              "--json", expect=1).json()
    assert out["differences"][0]["problem"] == (
        f"the log's text cannot be read from line 30 (corrupt zstd data in the frame at byte offset "
        f"{sum(map(len, frames[:5]))}: {WHY}): bytes were added that no reader can read")


def test_index_reads_the_readable_part_and_reads_it_whole_again_once_bytes_follow(cli, tmp_path, damaged):
    # (the index's line chain is export's: it refused the log, "unreadable", exit 2)
    log, frames, _, _ = damaged
    db = tmp_path / "i.db"
    cli("index", log, "--db", db, "--no-default-redaction", expect=1)
    query = "select status, verdict, events, answered_up_to from sessions"
    assert cli("sql", "--db", db, query, "--json").json() == [
        {"status": "indexed", "verdict": "errors", "events": 28, "answered_up_to": 27}]
    with log.open("ab") as fh:
        fh.write(frames[-1])  # (after the corrupt frame: no reader reads it, so nothing is read on from the chain)
    result = cli("index", log, "--db", db, "--no-default-redaction", expect=1)
    assert "0 grown (0 read from where they were indexed), 1 rewritten (indexed again whole)" in result.stdout
    assert cli("sql", "--db", db, query, "--json").json()[0]["events"] == 28
