"""A pass that reads no records (the fold alone) is handed the records the fold only
counts as runs (`Quiet`), one item a run: the same view, the same failures."""

from __future__ import annotations

import orjson
import pytest

from dshreplay.core.driver import STOP, Observer, fold_report, run_pass, states_at
from dshreplay.core.surface import counted_only
from dshreplay.io.reader import LogReader, LogSource
from dshreplay.testing.samples import DAMAGE, LogBuilder, compacted, damaged


def small() -> LogBuilder:
    b = LogBuilder()
    b.start_turn()  # 0
    b.start_step()  # 1
    b.user("hello")  # 2
    b.end_step()  # 3
    b.end_turn()  # 4
    return b


def items(path, recover=None) -> list[tuple]:
    with LogReader(path) as reader:
        return [(type(i).__name__, i.seq, i.count, i.line) for i in reader.records(recover, counted_only)]


class Reads(Observer):
    """An observer that reads every record: its pass is handed each one."""

    def observe(self, record) -> None:
        pass


def test_the_records_the_fold_only_counts_come_as_runs(write_log):
    assert items(write_log(small())) == [("Quiet", 0, 2, 2), ("Event", 2, 1, 4), ("Quiet", 3, 2, 5)]


def test_a_pass_that_reads_records_is_handed_each_one(write_log):
    seen = []

    class Types(Observer):
        def observe(self, record) -> None:
            seen.append(record.item.type)

    run_pass(LogSource(write_log(small())), [Types()], on_fold_error=STOP)
    assert seen == ["turn/start", "step/start", "user/message", "step/end", "turn/end"]


def test_a_log_only_record_with_a_surface_field_is_given_and_rejected(write_log):
    lines = small().to_bytes().splitlines(keepends=True)
    record = orjson.loads(lines[2])  # step/start, seq 1
    record["surfaceOp"] = "append"
    lines[2] = orjson.dumps(record) + b"\n"
    path = write_log(b"".join(lines))
    assert items(path) == [("Quiet", 0, 1, 2), ("Event", 1, 1, 3), ("Event", 2, 1, 4), ("Quiet", 3, 2, 5)]
    failure = fold_report(LogSource(path)).error
    assert (failure.code, failure.seq, failure.line, failure.pointer) == ("DSH-E102", 1, 3, "/surfaceOp")


def test_a_record_off_its_place_is_given_and_ends_the_run(write_log):
    path = write_log(damaged(small(), "swap", 0))  # step/start (seq 1) on line 2, turn/start (seq 0) on line 3
    failure = fold_report(LogSource(path)).error
    assert (failure.code, failure.seq, failure.line) == ("DSH-E101", 0, 2)


def test_a_run_ends_before_a_line_that_cannot_be_read(write_log):
    path = write_log(damaged(small(), "bad-json", 1))
    heard = []
    order = [(kind, seq) for kind, seq, _, _ in items(path, lambda error: heard.append(error.seq))]
    assert order == [("Quiet", 0), ("Event", 2), ("Quiet", 3)] and heard == [1]
    failure = fold_report(LogSource(path)).error
    assert (failure.code, failure.seq, failure.line) == ("DSH-E001", 1, 3)


@pytest.mark.parametrize("kind", DAMAGE)
@pytest.mark.parametrize("seq", [0, 3, 10, 40])
def test_the_fold_fails_where_a_pass_reading_every_record_does(write_log, kind, seq):
    source = LogSource(write_log(damaged(compacted(), kind, seq)))
    quiet, every = run_pass(source, on_fold_error=STOP), run_pass(source, [Reads()], on_fold_error=STOP)
    assert quiet.failure is not None and every.failure is not None
    assert (quiet.failure.code, quiet.failure.seq, quiet.failure.line, quiet.failure.message) == \
        (every.failure.code, every.failure.seq, every.failure.line, every.failure.message)
    assert quiet.failure_view.nodes == every.failure_view.nodes and quiet.lines == every.lines


def test_views_at_seqs_inside_a_run_are_those_of_the_seqs(write_log):
    path = write_log(small())
    states = states_at(LogSource(path), [0, 1, 3, 4])
    assert {seq: (state.seq, state.nodes) for seq, state in states.items()} == \
        {0: (0, ()), 1: (1, ()), 3: (3, (2,)), 4: (4, (2,))}
