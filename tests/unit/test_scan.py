"""The parallel scan takes a surface event inside a run only when the fold would just append it.

Each log below breaks one condition of that shortcut; the fold's answer (its
error, with seq, line and pointer, or its view) must be the one the
sequential reader gives. Every test runs in both modes (see `scan_mode`).
"""

from __future__ import annotations

import errno
import json
import os

import pytest

from dshreplay import scan
from dshreplay.api import fold_log
from dshreplay.analyses.rules import RelationChecker
from dshreplay.testing.samples import zstd_frames
from dshreplay.session import Session
from dshreplay.analyses.validate import ValidateOptions, validate_log

from scenarios import HEADER, ev, user

pytestmark = pytest.mark.usefixtures("scan_mode")


def _log(*surface) -> list[dict]:
    """Off-surface events around the given surface events (seqs 3 and 4)."""
    return [HEADER, ev(0, "turn/start", {"turn": 1}), user(1, "one"), ev(2, "step/start", {"turn": 1, "step": 1}),
            *surface, ev(5, "step/end", {"turn": 1, "step": 1})]


def _fold(path):
    report = fold_log(path)
    error = report.error
    return (report.state.nodes if report.state else None,
            error and (error.code, error.seq, error.line, error.pointer, error.message))


@pytest.mark.parametrize("sources,code,seq", [
    ([1, 4], "DSH-E106", 4),  # cites itself
    ([1, 9], "DSH-E106", 4),  # cites a later event
    ([1, 1], "DSH-E106", 4),  # a duplicate
    ([], "DSH-E106", 4),  # empty, on a user message
    ("1", "DSH-E106", 4),  # not an array
    ([1.0], None, None),  # a float seq that is an integer: allowed, as in dsh
    ([-1], "DSH-E106", 4),
])
def test_source_seqs_are_checked_as_the_fold_checks_them(write_log, sources, code, seq):
    path = write_log(_log(user(3, "two"), user(4, "three", sources=sources)))
    nodes, error = _fold(path)
    assert (error and error[:2]) == ((code, seq) if code else None)
    if code is None:
        assert nodes == (1, 3, 4)


def test_a_written_seq_out_of_place_breaks_the_run_where_the_fold_breaks(write_log):
    records = _log(user(3, "two"), user(4, "three"))
    records[5]["seq"] = 7
    nodes, error = _fold(write_log(records))
    assert error[:4] == ("DSH-E101", 4, 6, "/seq")


def test_an_empty_assistant_message_is_on_the_surface_but_yields_no_message(write_log):
    message = {"turn": 1, "step": 1, "message": {"role": "assistant", "content": []}}
    path = write_log(_log(user(3, "two"), ev(4, "assistant/message", message, surfaceOp="append",
                                                 sourceEventSeqs=[])))
    report = fold_log(path)
    assert report.state.nodes == (1, 3, 4)
    assert [m["content"][0]["text"] for m in report.messages] == ["one", "two"]


def test_views_inside_a_run_hold_only_the_appends_before_them(write_log):
    path = write_log(_log(user(3, "two"), user(4, "three")))
    states = Session(path).states([1, 2, 3, 4, 5])
    assert {seq: state.nodes for seq, state in states.items()} == {
        1: (1,), 2: (1,), 3: (1, 3), 4: (1, 3, 4), 5: (1, 3, 4)}
    assert fold_log(path, at=3).state.nodes == (1, 3)


def _zstd(records) -> bytes:
    return zstd_frames(b"".join(json.dumps(r).encode() + b"\n" for r in records), batch=2)


def test_a_zstd_log_is_scanned_from_its_checked_text(write_log):
    path = write_log(_zstd(_log(user(3, "two"), user(4, "three", sources=[9]))), "z.jsonl.zstd")
    nodes, error = _fold(path)
    assert error[:4] == ("DSH-E106", 4, 6, "/sourceEventSeqs/0")
    assert fold_log(path, at=3).state.nodes == (1, 3)


def test_a_zstd_log_is_read_sequentially_when_its_text_cannot_be_written(write_log, monkeypatch, scan_mode):
    path = write_log(_zstd(_log(user(3, "two"), user(4, "three"))), "z.jsonl.zstd")
    made = []

    class NoSpace(scan._TemporaryText):
        def __init__(self):
            super().__init__()
            made.append(self.name)
            self.write = self._fail

        @staticmethod
        def _fail(data):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(scan, "_TemporaryText", NoSpace)
    assert _fold(path) == ((1, 3, 4), None)
    assert len(made) == (0 if scan_mode == "sequential" else 1)
    assert not any(os.path.exists(name) for name in made)


def test_small_logs_are_read_sequentially_by_default(monkeypatch):
    monkeypatch.setitem(scan.SCAN, "jobs", 2)
    monkeypatch.setitem(scan.SCAN, "min_bytes", 8 * 1024**2)
    assert not scan.parallel_possible(8 * 1024**2 - 1)
    assert scan.parallel_possible(8 * 1024**2)


def _scan_jobs(_):
    return scan.SCAN["jobs"]


def test_logs_spread_over_processes_are_each_read_sequentially(monkeypatch):
    from dshreplay.core.parallel import run_map
    monkeypatch.setitem(scan.SCAN, "jobs", 2)
    assert run_map(_scan_jobs, [1, 2, 3], jobs=2) == [1, 1, 1]  # no pool inside a pool
    assert scan.SCAN["jobs"] == 2  # this process is left as it was


def test_a_call_opening_inside_a_run_counts_only_the_messages_before_it(clean, write_log):
    # call 1 (the tool round) is followed by its message and the tool's result, then call 2
    calls = Session(write_log(clean)).calls()
    # call 1 sees the user's message; call 2 also the assistant's tool call and the result
    assert [(c.call, c.message_count, c.finish) for c in calls] == [
        (1, 1, {"kind": "tool-calls"}), (2, 3, {"kind": "stop"})]


def test_calls_after_a_lost_first_event_see_no_messages(clean, write_log):
    del clean.events[0]  # every written seq is now one ahead: the fold takes no event at all
    calls = Session(write_log(clean)).calls()
    assert [(c.call, c.message_count) for c in calls] == [(1, 0), (2, 0)]


# -- validate: a whole step is one item only when the rules would find nothing in it --

@pytest.fixture
def two_steps(clean):
    """`clean` with its second step and its turn closed."""
    clean.end_step()
    clean.end_turn()
    return clean


def _problems(path):
    return [(f.code, f.seq, f.line, f.pointer) for f in validate_log(path, ValidateOptions()).findings]


def test_whole_steps_are_taken_as_one_item_when_read_in_one_window(two_steps, write_log, scan_mode,
                                                                     monkeypatch):
    taken = []
    original = RelationChecker._whole_step
    monkeypatch.setattr(RelationChecker, "_whole_step", lambda self: taken.append(1) or original(self))
    assert _problems(write_log(two_steps)) == []
    if scan_mode != "parallel":  # (windows of 200 bytes cut every step)
        assert len(taken) == {"sequential": 0, "one-window": 2}[scan_mode]


def test_a_whole_step_numbered_wrong_is_still_reported(two_steps, write_log):
    start = next(e for e in two_steps.events if e["type"] == "step/start" and e["data"]["step"] == 2)
    for e in two_steps.events[start["seq"]:]:
        if e["type"] != "turn/end" and "step" in e["data"]:
            e["data"]["step"] = 3
    assert _problems(write_log(two_steps)) == [("DSH-E207", start["seq"], start["seq"] + 2, "/data/step")]


def test_a_chunk_naming_another_step_inside_a_whole_step_is_reported(two_steps, write_log):
    chunk = next(e for e in reversed(two_steps.events) if e["type"] == "assistant/chunk")
    chunk["data"]["step"] = 1
    assert _problems(write_log(two_steps)) == [("DSH-E208", chunk["seq"], chunk["seq"] + 2, None)]


def test_a_message_citing_a_chunk_of_the_step_before_is_reported(two_steps, write_log):
    first = next(e["seq"] for e in two_steps.events if e["type"] == "assistant/chunk")
    message = next(e for e in reversed(two_steps.events) if e["type"] == "assistant/message")
    message["sourceEventSeqs"] = [first, *message["sourceEventSeqs"]]
    assert _problems(write_log(two_steps)) == [
        ("DSH-E212", message["seq"], message["seq"] + 2, "/sourceEventSeqs")]


def test_a_meter_before_a_whole_step_is_reported_unanswered(builder, write_log):
    b = builder()
    b.user("hello")
    b.assistant("hi")
    b.end_step()
    node = b.surface()[0]
    prune = b.add("compaction/prune", {"shadowedRange": {"start": node, "end": node}, "shadowedSeqs": [node],
                                       "shadowedTokenCount": 10})
    b.start_step()
    b.assistant("again")
    b.end_step()
    b.end_turn()
    [found] = validate_log(write_log(b), ValidateOptions()).findings
    assert (found.code, found.seq) == ("DSH-E313", prune)
    assert found.message.endswith("(next is step/start)")
