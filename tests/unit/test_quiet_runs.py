"""A pass that reads no records (the fold alone) is handed the records the fold only
counts as runs (`Quiet`), one item a run: the same view, the same failures."""

from __future__ import annotations

import orjson
import pytest

from dshreplay.core.driver import STOP, Observer, fold_report, run_pass, states_at
from dshreplay.core.surface import counted_only
from dshreplay.io.reader import LogReader, LogSource
from dshreplay.testing.samples import DAMAGE, LogBuilder, compacted, damage_line, damaged


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


def _line_damage(lines: list[bytes], kind: str, at: int) -> bytes:
    """`damage_line`'s kinds, and two of a packed row's own: data not of dsh's shape, a seq0 off its place."""
    if kind not in ("bad-row", "row-seq0"):
        return damage_line(lines, kind, at)
    record = orjson.loads(lines[at])
    if "seq0" not in record:
        return b"".join(lines)
    if kind == "bad-row":
        record["data"]["dt"] = record["data"]["dt"] + [1]
    else:
        record["seq0"] += 5
    return b"".join([*lines[:at], orjson.dumps(record) + b"\n", *lines[at + 1:]])


def test_packed_rows_at_their_place_are_counted_into_the_run(write_log):
    b = LogBuilder()
    b.start_turn()  # 0
    b.start_step()  # 1
    b.assistant("hello there", reasoning="thinking", finish="stop")
    b.end_step()
    b.end_turn()
    path = write_log(b.to_bytes(pack=True))
    lines = path.read_bytes().splitlines()
    kinds = [orjson.loads(line)["type"] for line in lines[1:]]
    assert "text-chunks" in kinds  # (the call's deltas are packed)
    got = items(path)
    message = kinds.index("assistant/message")
    # every line before the model's message is log-only or a packed row: one run of them
    assert got[0][:2] == ("Quiet", 0) and got[0][3] == 2 and got[1][0] == "Event"
    assert got[1][1] == got[0][2] and got[1][3] == message + 2  # (the message's seq is the run's count)
    with LogReader(path) as reader:
        first = next(iter(reader.records(None, counted_only)))
    assert first.end_line == message + 1  # the run ends on the line before the message


@pytest.mark.parametrize("kind", ["bad-json", "missing", "duplicate", "swap", "bad-row", "row-seq0"])
def test_the_fold_of_a_packed_log_fails_where_a_pass_reading_every_record_does(write_log, kind):
    lines = compacted().to_bytes(pack=True).splitlines(keepends=True)
    rows = [k for k, line in enumerate(lines) if b'"seq0"' in line]
    assert rows  # (the log has packed rows)
    for at in sorted({*rows, *(k - 1 for k in rows), *(k + 1 for k in rows)} - {0, len(lines)}):
        if kind == "swap" and at + 1 == len(lines):
            continue  # (nothing after the last line to swap it with)
        source = LogSource(write_log(_line_damage(lines, kind, at)))
        quiet, every = run_pass(source, on_fold_error=STOP), run_pass(source, [Reads()], on_fold_error=STOP)
        assert (quiet.failure is None) == (every.failure is None), (kind, at)
        if quiet.failure is not None:
            assert (quiet.failure.code, quiet.failure.seq, quiet.failure.line, quiet.failure.message) == \
                (every.failure.code, every.failure.seq, every.failure.line, every.failure.message), (kind, at)
            assert quiet.failure_view.nodes == every.failure_view.nodes and quiet.lines == every.lines
        else:
            assert quiet.fold.nodes == every.fold.nodes and quiet.event_count == every.event_count
