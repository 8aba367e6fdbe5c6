"""A log that changes while a command reads it: every command fixes the extent of each input
when it first opens it (its size then) and reads, hashes and chains exactly those bytes
(`LogSource.open`). Lines appended meanwhile are left to the next run; a log that shrank
below it is a one-line error.

Before: `index` hashed the file, parsed it, then read the line chain, so lines appended
during the parse were covered by the chain but never parsed (the index held 15,000 of 16,000
messages, and every later run said `1 unchanged`); `export` recorded a size that disagreed
with its own chain; `validate` on a log truncated after it was opened exited 70
(`'Validation' object has no attribute 'run'`).

Each case starts the real command in a child (`spawn`), waits until the child has the log
open (its /proc fd table), then changes the log; whenever the change lands, the outcome
checked holds."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

import pytest
from harness import attack, finish, spawn

from dshreplay.testing.samples import LogBuilder

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/fd")

STAMP = "2026-01-01T00:00:00Z"
TOTAL, FIRST = 16_000, 15_000


def log_lines() -> list[bytes]:
    """A log of TOTAL user messages: its header, the turn's opening records, then a line a message."""
    b = LogBuilder("sample-growing")
    b.start_turn()
    b.request_header()
    b.start_step()
    for n in range(TOTAL):
        b.user(f"message {n} " + "x" * 200)
    return b.to_bytes().splitlines(keepends=True)


@pytest.fixture(scope="module")
def lines() -> list[bytes]:
    return log_lines()


def split(lines: list[bytes]) -> tuple[bytes, bytes]:
    """The log up to its FIRST-th message, and the rest (what is appended while it is read)."""
    cut = len(lines) - (TOTAL - FIRST)
    return b"".join(lines[:cut]), b"".join(lines[cut:])


def wait_until_read(proc, path: Path, offset: int = 2 << 20, seconds: float = 60) -> None:
    """Until the child has read `path` past `offset` (2 MiB: beyond the one block a header read
    takes, so a pass over the log is under way and its extent fixed), from its /proc fd table."""
    target, end = str(path.resolve()), time.monotonic() + seconds
    while time.monotonic() < end:
        assert proc.poll() is None, "the command ended before it read the log that far"
        try:
            for fd in Path(f"/proc/{proc.pid}/fd").iterdir():
                if os.readlink(fd) == target:
                    position = Path(f"/proc/{proc.pid}/fdinfo/{fd.name}").read_text().split()[1]
                    if int(position) > offset:
                        return
        except OSError:  # (an fd closed while listed)
            pass
        time.sleep(0.0005)
    raise AssertionError(f"the command did not read {path} past byte {offset}")


def test_lines_appended_while_index_reads_a_log_are_indexed_by_the_next_run(tmp_path, lines):
    head, rest = split(lines)
    log = tmp_path / "growing.jsonl"
    log.write_bytes(head)
    db = tmp_path / "i.duckdb"
    args = ("index", log, "--db", db, "--messages", "--no-default-redaction")
    proc = spawn(*args, mem_mb=1500, seconds=120)
    wait_until_read(proc, log)
    with log.open("ab") as fh:
        fh.write(rest)
    assert finish(proc, seconds=120).code == 0

    def messages() -> list:
        return json.loads(attack("sql", db, "select count(*) as n from messages", "--json", mem_mb=1500).stdout)
    assert messages() == [{"n": FIRST}]  # (the extent it fixed: what it hashed, chained and parsed)
    again = attack(*args, mem_mb=1500, seconds=120)
    assert again.code == 0 and ": 1 session; this run: 0 new, 1 grown (1 read from where they were indexed)" \
        in again.stdout, again.stdout
    assert messages() == [{"n": TOTAL}]
    assert "0 grown" in attack(*args, mem_mb=1500, seconds=120).stdout


def test_an_export_of_a_log_growing_meanwhile_pins_one_extent_and_verifies(tmp_path, lines):
    head, rest = split(lines)
    log = tmp_path / "growing.jsonl"
    log.write_bytes(head)
    proc = spawn("export", log, "--out", tmp_path / "b", "--timestamp", STAMP, "--no-default-redaction",
                 mem_mb=1500, seconds=120)
    wait_until_read(proc, log)
    with log.open("ab") as fh:
        fh.write(rest)
    done = finish(proc, seconds=120)
    assert done.code == 0, done.stderr
    [entry] = json.loads((tmp_path / "b" / "manifest.json").read_bytes())["sessions"]
    size, chain = entry["size"], entry["chain"]
    assert (size, chain["textBytes"], chain["lines"]) == (len(head), len(head), head.count(b"\n"))  # (one extent)
    assert entry["sha256"] == hashlib.sha256(head).hexdigest()
    digest = "sha256:" + hashlib.sha256((tmp_path / "b" / "manifest.json").read_bytes()).hexdigest()
    out = attack("verify-export", tmp_path / "b", "--grown", "--digest", digest, "--json", mem_mb=1500, seconds=60)
    assert out.code == 0, out.stdout
    [check] = json.loads(out.stdout)["inputs"]
    assert (check["status"], check["notCovered"]["lines"], check["notCovered"]["bytes"]) == (
        "grew", TOTAL - FIRST, len(rest))


SHRANK = " when first opened (truncated or rewritten meanwhile: read it again once nothing rewrites it)"


def test_a_log_truncated_while_validate_reads_it_is_a_one_line_error(tmp_path, lines):
    log = tmp_path / "shrinking.jsonl"
    log.write_bytes(b"".join(lines))
    proc = spawn("validate", log, mem_mb=1500, seconds=120)
    wait_until_read(proc, log)
    os.truncate(log, 4096)
    done = finish(proc, seconds=120)
    assert done.code == 2, (done.code, done.stdout[-300:], done.stderr)
    line = done.one_line()
    assert line.startswith(f"dshreplay: read error: {log}: shrank while it was read: ") and line.endswith(SHRANK)


def test_a_log_truncated_while_export_reads_it_is_a_one_line_error(tmp_path, lines):
    log = tmp_path / "shrinking.jsonl"
    log.write_bytes(b"".join(lines))
    proc = spawn("export", log, "--out", tmp_path / "b", "--no-default-redaction", mem_mb=1500, seconds=120)
    wait_until_read(proc, log)
    os.truncate(log, 4096)
    done = finish(proc, seconds=120)
    assert done.code == 2, (done.code, done.stdout[-300:], done.stderr)
    line = done.stderr.splitlines()[-1]
    assert line.startswith(f"dshreplay: unreadable: {log}: shrank while it was read: ") and line.endswith(SHRANK)
