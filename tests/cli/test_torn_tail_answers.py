"""A torn tail said inside the request's answer, not only on stderr (issue #35): `request --json`
(`--call N`, `--at S`) carries `tornTail`, null unless a pass that answered read up to the tail
(when it did, stderr's warning says it too), and the bundle's request carries the same."""

from __future__ import annotations

import json

import pytest

from dshreplay.testing.samples import LogBuilder, damaged

from conftest import SAMPLES

TORN = SAMPLES / "torn-tail.jsonl"
TAIL = {"line": 65, "offset": 11341, "bytes": 42}
WARNING = ("dshreplay: warning: {log}: line 65: torn tail: last line has no newline and does not parse; 42 bytes "
           "lost at byte offset 11341")


@pytest.mark.parametrize("ask", [("--call", 1), ("--call", 2), ("--at", 2)])
def test_request_json_says_the_torn_tail_its_passes_read_up_to(cli, ask):
    result = cli("request", TORN, *ask, "--json")
    assert list(result.json())[-1] == "tornTail" and result.json()["tornTail"] == TAIL  # (was no such key)
    assert result.stderr.splitlines() == [WARNING.format(log=TORN)]


def test_request_json_of_a_whole_log_says_no_torn_tail(cli):
    assert cli("request", SAMPLES / "multi-turn.jsonl", "--call", 1, "--json").json()["tornTail"] is None


@pytest.fixture
def torn_and_failing(tmp_path):
    """A log whose fold fails at seq 20 (a line that is not JSON) and that ends in a torn line: the
    passes that answer stop at the failure and never read up to the tail."""
    b = LogBuilder("torn-and-failing")
    for _ in range(2):
        b.start_turn()
        b.request_header()
        b.start_step()
        b.user("hello")
        b.assistant("hi")
        b.end_step()
        b.end_turn()
    log = tmp_path / "torn-and-failing.jsonl"
    log.write_bytes(damaged(b, "bad-json", 20) + b'{"type":"user/message","seq":')
    return log


def test_a_torn_tail_past_the_failure_is_not_read_and_not_said(cli, torn_and_failing):
    result = cli("request", torn_and_failing, "--call", 1, "--json")
    assert result.json()["tornTail"] is None and "torn tail" not in result.stderr


def test_the_bundle_s_request_carries_the_torn_tail_as_the_log_s_does_byte_for_byte(cli, tmp_path,
                                                                                    torn_and_failing):
    cli("export", TORN, torn_and_failing, "--out", tmp_path / "b", "--no-default-redaction", "--timestamp",
        "2026-01-01T00:00:00Z", expect=1)
    sessions = json.loads((tmp_path / "b" / "manifest.json").read_bytes())["sessions"]
    data = torn_and_failing.read_bytes()  # (its last 29 bytes are the torn line)
    assert [s["tornTail"] for s in sessions] == [TAIL, {"line": data.count(b"\n") + 1, "offset": len(data) - 29,
                                                         "bytes": 29}]
    for log, entry in zip((TORN, torn_and_failing), sessions):
        folder = tmp_path / "b" / entry["folder"]
        calls = [c["call"] for c in cli("request", "--json", "--bundle", folder, "--list").json()]
        assert calls == ([1, 2, 3, 4] if log == TORN else [1, 2])
        for n in calls if log == TORN else [1]:  # (call 2 of the failing log ends past the failure: the
            # bundle, read past it, has its end, the log's answer stops at seq 19; left to the agreement work)
            expected = cli("request", log, "--call", n, "--json").stdout
            assert cli("request", "--json", "--bundle", folder, "--call", n).stdout == expected, (log, n)
            assert json.loads(expected)["tornTail"] == (TAIL if log == TORN else None)


def test_a_damaged_torn_tail_in_the_bundle_is_named(cli, tmp_path):
    cli("export", TORN, "--out", tmp_path / "b", "--no-default-redaction", "--timestamp", "2026-01-01T00:00:00Z")
    folder = next(p for p in (tmp_path / "b").iterdir() if p.is_dir())
    session = json.loads((folder / "session.json").read_bytes())
    (folder / "session.json").write_text(json.dumps({**session, "tornTail": {"line": -1}}))
    result = cli("request", "--json", "--bundle", folder, "--call", 1, expect=2)
    assert result.stderr == (f'dshreplay: read error: {folder / "session.json"}: /tornTail: expected null or {{"line", '
                             '"offset", "bytes"} (counts), got {"line":-1} (the bundle is damaged)\n')
