"""The parallel scan takes a surface event inside a run only when the fold would just append it.

Each log below breaks one condition of that shortcut; the fold's answer (its
error, with seq, line and pointer, or its view) must be the one the
sequential reader gives. Every test runs in both modes (see `scan_mode`).
"""

from __future__ import annotations

import pytest

from dshreplay import scan
from dshreplay.api import fold_log
from dshreplay.session import Session

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


def test_a_zstd_log_is_scanned_from_its_checked_text(write_log):
    path = write_log(_log(user(3, "two"), user(4, "three", sources=[9])), "z.jsonl.zstd")
    nodes, error = _fold(path)
    assert error[:4] == ("DSH-E106", 4, 6, "/sourceEventSeqs/0")
    assert fold_log(path, at=3).state.nodes == (1, 3)


def test_small_logs_are_read_sequentially_by_default(monkeypatch):
    monkeypatch.setitem(scan.SCAN, "jobs", 2)
    monkeypatch.setitem(scan.SCAN, "min_bytes", 8 * 1024**2)
    assert not scan.parallel_possible(8 * 1024**2 - 1)
    assert scan.parallel_possible(8 * 1024**2)


def _scan_jobs(_):
    return scan.SCAN["jobs"]


def test_logs_spread_over_processes_are_each_read_sequentially(monkeypatch):
    from dshreplay.parallel import run_map
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
