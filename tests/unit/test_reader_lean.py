"""The reader's lean loop (`io.lean.regular_records`) gives what the exact path gives.

Every log is read twice, once as `LogReader.records()` reads it (the lean loop while the
lines are regular, the exact path from the first line that is not) and once with the lean
loop handing every line over at once (the exact path alone, as before the loop existed):
the items, the findings with their locations, the reader's account of the log, and the fold
(the view, or where and why it fails) must be the same, for dsh's own logs (the corpus),
every shape with every kind of damage, and logs Hypothesis damages at random.
"""

from __future__ import annotations

import io

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dshreplay.io.reader as reader_module
from dshreplay.core.driver import SKIP, STOP, fold_report, run_pass
from dshreplay.core.surface import counted_only
from dshreplay.errors import DshReplayError
from dshreplay.io._lean import regular_records
from dshreplay.io._placement import Placement
from dshreplay.io.reader import LogReader, LogSource
from dshreplay.testing.samples import LogBuilder
from dshreplay.testing.shapes import DAMAGES, SHAPES, lines, write

from conftest import CORPUS, corpus_available


def exact_only(reader, lines, placement, quiet):
    """The lean loop that reads nothing: every line goes to the exact path."""
    return next(lines, None)
    yield  # (a generator, as the lean loop is)


def _item(item) -> tuple:
    record = getattr(item, "record", None)
    members = [m.record for m in item.members()] if type(item).__name__ == "PackedRun" else None
    return (type(item).__name__, item.seq, item.count, item.line, item.end_line, item.offset,
            getattr(item, "fault", None), item.type, record, members)


def _error(error: DshReplayError) -> tuple:
    return (type(error).__name__, getattr(error, "code", None), str(error), error.line, error.seq,
            getattr(error, "pointer", None))


def account(data: bytes) -> dict:
    """What the reader and the fold make of `data`, every way a pass reads it."""
    out: dict = {}
    for name, quiet in (("all", None), ("quiet", counted_only)):
        errors: list[tuple] = []
        try:
            with LogSource(data).reader() as reader:
                items = [_item(i) for i in reader.records(lambda e, heard=errors: heard.append(_error(e)), quiet)]
                out[name] = (items, errors, reader.event_count, reader.missing, reader.lines, reader.torn_tail,
                             reader.final_newline)
        except DshReplayError as exc:
            out[name] = _error(exc)
        try:
            with LogSource(data).reader() as reader:
                out[name + " raising"] = [_item(i) for i in reader.records(None, quiet)]
        except DshReplayError as exc:
            out[name + " raising"] = _error(exc)
    try:
        report = fold_report(LogSource(data))
        out["fold"] = (report.state.to_json() if report.state is not None and report.error is None else None,
                       None if report.error is None else _error(report.error), report.event_count, report.torn_tail)
        for policy in (STOP, SKIP):
            run = run_pass(LogSource(data), on_fold_error=policy)
            out[policy] = ([_error(e) for e in run.fold_errors], run.fold.state().to_json() if policy == SKIP
                           and not run.fold_errors else run.fold.next_seq, run.event_count, run.lines,
                           run.final_newline)
    except DshReplayError as exc:
        out["fold"] = _error(exc)
    return out


def same_both_ways(data: bytes, monkeypatch) -> dict:
    lean = account(data)
    with monkeypatch.context() as patched:
        patched.setattr(reader_module, "regular_records", exact_only)
        exact = account(data)
    assert lean == exact
    return lean


def test_a_clean_log_is_read_by_the_lean_loop_to_its_end():
    data = b"".join(lines(SHAPES["packed"]()))
    with LogSource(data).reader() as reader:
        reader.header  # noqa: B018
        placement = Placement(reader, 0)
        loop = regular_records(reader, reader._lines, placement, counted_only)
        kinds = []
        try:
            while True:
                kinds.append(type(next(loop)).__name__)
        except StopIteration as end:
            assert end.value is None
    assert orjson.loads(data.splitlines()[-1])["seq"] == 94  # (the last event: turn/end)
    assert placement.seq == 95
    assert set(kinds) == {"Event", "Quiet"}  # (the surface events given, the rest counted in runs)


def test_the_lean_loop_hands_the_first_irregular_line_over_unread():
    b = LogBuilder()
    b.start_turn()  # 0
    b.user("hello")  # 1
    b.end_turn()  # 2
    text = b.to_bytes().splitlines(keepends=True)
    text[2] = text[2].replace(b'"seq":1', b'"seq":7')
    with LogSource(b"".join(text)).reader() as reader:
        reader.header  # noqa: B018
        placement = Placement(reader, 0)
        loop = regular_records(reader, reader._lines, placement, None)
        given = [next(loop).seq]
        with pytest.raises(StopIteration) as end:
            next(loop)
    assert given == [0]
    assert end.value.value == (3, len(text[0]) + len(text[1]), text[2])
    assert placement.seq == 1


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("damage", DAMAGES)
def test_every_shape_and_damage_reads_the_same_lean_or_exact(shape, damage, monkeypatch):
    for at in (1, 4, 9):
        same_both_ways(write(SHAPES[shape](), damage, at), monkeypatch)


def test_a_damage_is_still_found_where_it_is():
    data = write(SHAPES["packed"](), "wrong-seq", 4)
    with LogReader(io.BytesIO(data)) as reader:
        faults = [(i.seq, i.fault) for i in reader.records(None, counted_only) if getattr(i, "fault", None)]
    assert faults == [(3, ("wrong-seq", 3, 4))]


@st.composite
def damaged_logs(draw) -> bytes:
    text = lines(SHAPES[draw(st.sampled_from(sorted(SHAPES)))]())
    for _ in range(draw(st.integers(0, 3))):
        i = draw(st.integers(1, len(text) - 1))
        kind = draw(st.sampled_from(["drop", "repeat", "swap", "blank", "cut", "seq", "type", "not-object",
                                     "no-newline"]))
        if kind == "drop" and len(text) > 2:
            del text[i]
        elif kind == "repeat":
            text.insert(i, text[i])
        elif kind == "swap":
            j = draw(st.integers(1, len(text) - 1))
            text[i], text[j] = text[j], text[i]
        elif kind == "blank":
            text.insert(i, b"\n")
        elif kind == "cut":
            text[i] = text[i][:len(text[i]) // 2] + b"\n"
        elif kind in ("seq", "type"):
            try:
                record = orjson.loads(text[i])
            except orjson.JSONDecodeError:
                continue
            if type(record) is not dict:
                continue
            key = kind if kind == "type" else ("seq0" if "seq0" in record else "seq")
            record[key] = draw(st.sampled_from([0, 1, 2, 5, 40, -1, 2.0, True, None, "x", 10**7]))
            text[i] = orjson.dumps(record) + b"\n"
        elif kind == "not-object":
            text[i] = b"[1, 2]\n"
        elif kind == "no-newline":
            text[-1] = text[-1].rstrip(b"\n")
    return b"".join(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=damaged_logs())
def test_logs_damaged_at_random_read_the_same_lean_or_exact(data, monkeypatch):
    same_both_ways(data, monkeypatch)


def corpus_logs() -> list:
    if not corpus_available():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"conformance corpus not found at {CORPUS}"))]
    return sorted(p for p in (CORPUS / "upstream").iterdir() if p.name.endswith((".jsonl", ".jsonl.zstd")))


@pytest.mark.parametrize("log", corpus_logs(), ids=lambda p: getattr(p, "name", "absent"))
def test_every_corpus_log_reads_the_same_lean_or_exact(log, monkeypatch):
    same_both_ways(log.read_bytes(), monkeypatch)
