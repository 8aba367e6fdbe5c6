"""The pass driver: observers in order, the fold-error policy, stopping early."""

from __future__ import annotations

import pytest

from dshreplay.core.driver import SKIP, STOP, Observer, run_pass, states_at
from dshreplay.errors import UsageError
from dshreplay.io.reader import LogSource

import scenarios


class Record(Observer):
    def __init__(self, log: list, name: str) -> None:
        self.log, self.name = log, name

    def begin(self, run) -> None:
        self.log.append((self.name, "begin"))

    def observe(self, item, replacement) -> None:
        self.log.append((self.name, item.seq, None if replacement is None else replacement.seq))

    def rejected(self, item, error) -> None:
        self.log.append((self.name, "rejected", item.seq, error.code))

    def finish(self, run) -> None:
        self.log.append((self.name, "finish", run.complete))


def bad_replace(write_log):
    """seq 0 appended, seq 1 replaces a node that is not on the surface, seq 2 appended."""
    return write_log([scenarios.HEADER, scenarios.user(0, "a"),
                      scenarios.user(1, "b", op=scenarios.replace(7, 7), sources=[0]),
                      scenarios.user(2, "c")])


def test_observers_hear_each_record_in_order_and_skip_goes_past_a_rejected_event(write_log):
    log: list = []
    run = run_pass(LogSource(bad_replace(write_log)), [Record(log, "a"), Record(log, "b")], on_fold_error=SKIP)
    assert log == [("a", "begin"), ("b", "begin"),
                   ("a", 0, None), ("b", 0, None),
                   ("a", "rejected", 1, "DSH-E107"), ("b", "rejected", 1, "DSH-E107"),
                   ("a", 1, None), ("b", 1, None),
                   ("a", 2, None), ("b", 2, None),
                   ("a", "finish", True), ("b", "finish", True)]
    assert run.fold.nodes == [0, 2] and [e.seq for e in run.fold_errors] == [1]


def test_stop_ends_the_pass_at_the_first_fold_error_with_the_state_before_it(write_log):
    log: list = []
    run = run_pass(LogSource(bad_replace(write_log)), [Record(log, "a")], on_fold_error=STOP)
    assert log == [("a", "begin"), ("a", 0, None), ("a", "finish", False)]
    assert run.fold.nodes == [0] and run.fold_error.seq == 1 and run.event_count is None


def test_until_stops_after_that_seq(write_log):
    path = write_log([scenarios.HEADER, *(scenarios.user(n, str(n)) for n in range(5))])
    run = run_pass(LogSource(path), until=2)
    assert (run.last_seq, run.complete) == (2, False)
    states = states_at(LogSource(path), [-1, 3, 1])
    assert {s: st.nodes for s, st in states.items()} == {-1: (), 1: (0, 1), 3: (0, 1, 2, 3)}
    with pytest.raises(UsageError, match="seq 9 is beyond the log: its last seq is 4"):
        states_at(LogSource(path), [9])


def test_a_fold_at_a_seq_inside_a_packed_row_answers_for_that_seq():
    from dshreplay.core.driver import fold_report

    from conftest import SAMPLES
    source = LogSource(SAMPLES / "compaction.jsonl")  # seqs 40..43 are one packed row
    report = fold_report(source, 40)
    assert (report.seq, report.state.nodes, report.error) == (40, (3, 19, 21, 32, 37), None)
