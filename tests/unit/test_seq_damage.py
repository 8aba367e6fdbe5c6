"""One damaged line costs one finding: the reader places each record by what the
next one says, the fold reports the seq defect once (DSH-E101, or DSH-E001 for a
line that cannot be read) and goes on from the correct lines' own seqs.

Every log here is `compacted()` (95 events, event S on line S + 2, a compaction at
seq 65..68 whose summary replaces seqs 3..37), damaged at one event with
`samples.damaged`. The expected findings were worked out by hand from its events:
seq 1 request/header, 3 user/message, 10 and 11 assistant/chunk, 19 assistant/message
(cites chunks 4..18), 20 tool/call, 21 tool/result (cites 20), 22 step/end, 23 step/start.
"""

from __future__ import annotations

import pytest

from dshreplay.analyses.validate import validate_log
from dshreplay.core.driver import SKIP, STOP, run_pass
from dshreplay.io.reader import Fault, LogReader, LogSource, Misplaced
from dshreplay.testing.samples import compacted, damaged


def found(path):
    return [(f.code, f.seq, f.line, f.caused_by) for f in validate_log(path).findings]


@pytest.fixture(scope="module")
def log():
    return compacted()


@pytest.fixture(scope="module")
def undamaged(log, tmp_path_factory):
    path = tmp_path_factory.mktemp("clean") / "clean.jsonl"
    path.write_bytes(log.to_bytes())
    return run_pass(LogSource(path), on_fold_error=STOP).fold


def test_the_undamaged_log_is_clean(log, write_log):
    assert found(write_log(log.to_bytes())) == []


# -- each kind of damage: exactly one finding, the correct lines after it clean -----------

def test_a_line_that_is_not_json_is_one_finding_and_the_next_line_resumes_the_check(log, write_log):
    path = write_log(damaged(log, "bad-json", 1))  # request/header on line 3
    report = validate_log(path)
    assert [(f.code, f.seq, f.line) for f in report.findings] == [("DSH-E001", 1, 3)]
    assert report.findings[0].message.startswith("line is not valid JSON")
    assert report.events == 95


def test_a_missing_seq_is_one_finding_at_the_line_after_the_gap(log, write_log):
    report = validate_log(write_log(damaged(log, "missing", 1)))
    assert [(f.code, f.seq, f.line) for f in report.findings] == [("DSH-E101", 1, 3)]
    assert report.findings[0].message == ("seq 2 is not contiguous; expected 1: seq 1 is missing "
                                          "(checking goes on from seq 2)")
    assert report.events == 94  # the events the log holds (95 counted the missing seq)


def test_a_duplicated_line_is_one_finding_at_the_repeat(log, write_log):
    report = validate_log(write_log(damaged(log, "duplicate", 10)))  # chunk 10 on lines 12 and 13
    assert [(f.code, f.seq, f.line) for f in report.findings] == [("DSH-E101", 11, 13)]
    assert report.findings[0].message == ("seq 10 is not contiguous; expected 11: its seq is behind the "
                                          "log's place (a repeated or moved line) (line skipped)")


def test_a_swapped_pair_is_one_finding_and_both_events_keep_their_seqs(log, write_log):
    report = validate_log(write_log(damaged(log, "swap", 10)))  # line 12 holds seq 11, line 13 seq 10
    assert [(f.code, f.seq, f.line) for f in report.findings] == [("DSH-E101", 10, 12)]
    assert report.findings[0].message == ("seq 11 is not contiguous; expected 10: the line comes before "
                                          "seq 10, ahead of its place (taken at its place, after seq 10)")


def test_a_wrong_seq_value_is_one_finding_and_the_line_keeps_its_place(write_log):
    b = compacted()
    b.events[10]["seq"] = 80  # the chunk on line 12 says 80
    report = validate_log(write_log(b.to_bytes()))
    assert [(f.code, f.seq, f.line) for f in report.findings] == [("DSH-E101", 10, 12)]
    assert report.findings[0].message == ("seq 80 is not contiguous; expected 10: the line's seq is wrong "
                                          "(the line after it has seq 11) (taken as seq 10)")


@pytest.mark.parametrize("kind", ["duplicate", "swap"])
def test_a_repeated_or_swapped_packed_row_is_one_finding(kind, write_log):
    b = compacted()
    rows = b.to_bytes(pack=True).splitlines(keepends=True)
    at = next(i for i, line in enumerate(rows) if b'"text-chunks"' in line)
    if kind == "duplicate":
        rows.insert(at, rows[at])
    else:
        rows[at], rows[at + 1] = rows[at + 1], rows[at]
    report = validate_log(write_log(b"".join(rows)))
    # (rows[at] is on line at + 1: a repeat is the second copy, a swap's early line the first)
    assert [(f.code, f.line) for f in report.findings] == [("DSH-E101", at + 2 if kind == "duplicate" else at + 1)]
    assert report.findings[0].pointer == ("/seq0" if kind == "duplicate" else "/seq")


def test_a_projected_log_resumes_after_a_bad_line_by_position(log, write_log):
    lines = log.to_bytes(layout="projected").splitlines(keepends=True)
    lines[2] = b"{not json\n"  # seq 1
    assert found(write_log(b"".join(lines))) == [("DSH-E001", 1, 3, None)]


# -- findings that follow from the damage say so ---------------------------------------------

def test_a_replacement_of_a_lost_node_follows_from_the_line_that_held_it(log, write_log):
    for kind, code in (("bad-json", "DSH-E001"), ("missing", "DSH-E101")):
        report = validate_log(write_log(damaged(log, kind, 3)))  # the user/message the summary replaces
        assert [(f.code, f.seq, f.caused_by) for f in report.findings] == [(code, 3, None), ("DSH-E107", 67, 3)]
        assert report.findings[1].message == ("replace start seq 3 is not in the surface (event skipped for "
                                              "surface purposes; follows from the finding at seq 3)")
        assert report.findings[1].to_json()["causedBy"] == 3


def test_rule_findings_about_a_lost_event_follow_from_it(log, write_log):
    # the tool/result (seq 21) cites the lost tool/call; the message (seq 19) cites the lost chunk
    assert found(write_log(damaged(log, "missing", 20))) == [("DSH-E101", 20, 22, None),
                                                             ("DSH-E210", 21, 22, 20)]
    assert found(write_log(damaged(log, "bad-json", 11))) == [("DSH-E001", 11, 13, None),
                                                              ("DSH-E212", 19, 21, 11)]
    # a lost step/end: the next step/start opens inside step 1
    assert found(write_log(damaged(log, "bad-json", 22))) == [("DSH-E001", 22, 24, None),
                                                              ("DSH-E206", 23, 25, 22),
                                                              ("DSH-E207", 23, 25, 22)]


# -- the fold: dsh's failure point, and the state after the damage -------------------------

@pytest.mark.parametrize("kind,seq,line", [("missing", 10, 12), ("duplicate", 11, 13), ("swap", 10, 12)])
def test_the_fold_fails_where_dsh_does(log, write_log, kind, seq, line):
    run = run_pass(LogSource(write_log(damaged(log, kind, 10))), on_fold_error=STOP)
    assert (run.failure.code, run.failure.seq, run.failure.line) == ("DSH-E101", seq, line)
    assert run.answered_up_to == seq - 1 and run.last_seq == seq - 1 and not run.complete


@pytest.mark.parametrize("kind", ["duplicate", "swap"])
def test_going_on_past_a_repeat_or_a_swap_folds_every_event_at_its_seq(log, write_log, undamaged, kind):
    run = run_pass(LogSource(write_log(damaged(log, kind, 3))), on_fold_error=SKIP)
    assert run.fold.nodes == undamaged.nodes and run.event_count == 95
    assert [r.to_json() for r in run.fold.replacements] == [r.to_json() for r in undamaged.replacements]


def test_going_on_past_a_missing_seq_keeps_the_written_seqs(log, write_log, undamaged):
    run = run_pass(LogSource(write_log(damaged(log, "missing", 20))), on_fold_error=SKIP)
    assert run.fold.nodes == undamaged.nodes  # (seq 20 is a tool/call: off the surface)
    assert run.fold.lost == [(20, 20, True)]


# -- the reader's placement -----------------------------------------------------------------

def placed(path):
    with LogReader(path) as reader:
        return [(type(item).__name__, item.seq, item.line, getattr(item, "fault", None))
                for item in reader.records() if 8 <= item.line <= 14]


def test_the_reader_gives_an_early_line_again_at_its_place(log, write_log):
    assert placed(write_log(damaged(log, "swap", 10))) == [
        ("Event", 6, 8, None), ("Event", 7, 9, None), ("Event", 8, 10, None), ("Event", 9, 11, None),
        ("Misplaced", 11, 12, (Fault.EARLY, 10, None)), ("Event", 10, 13, None), ("Event", 11, 12, None),
        ("Event", 12, 14, None)]


def test_the_reader_numbers_the_lines_after_a_gap_by_their_written_seqs(log, write_log):
    assert placed(write_log(damaged(log, "missing", 10))) == [
        ("Event", 6, 8, None), ("Event", 7, 9, None), ("Event", 8, 10, None), ("Event", 9, 11, None),
        ("Event", 11, 12, (Fault.GAP, 10, None)), ("Event", 12, 13, None), ("Event", 13, 14, None)]


def test_the_reader_keeps_a_repeat_out_of_the_events(log, write_log):
    with LogReader(write_log(damaged(log, "duplicate", 10))) as reader:
        items = list(reader.records())
    repeats = [item for item in items if type(item) is Misplaced]
    assert [(m.seq, m.line, m.fault, m.count) for m in repeats] == [(10, 13, (Fault.REPEAT, 11, None), 0)]
    assert [item.seq for item in items if item.count] == list(range(95))
