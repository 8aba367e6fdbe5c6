"""view.html's timeline lanes are the spans of `timeline` and `otel` (`analyses.spans`), drawn
from the viewer's own one pass: on every sample log and every shape of
`dshreplay.testing.shapes`, whole or with every kind of damage, each lane's rows are the spans
(and moments) that `session_timeline` builds in a pass of its own, seq for seq."""

from __future__ import annotations

import pytest

from dshreplay.analyses.spans import (
    CALL,
    COMPACTION,
    FAILURE,
    NOT_STARTED,
    STEP,
    TOOL,
    TURN,
    SessionTimeline,
    session_timeline,
)
from dshreplay.io.reader import LogSource
from dshreplay.testing import shapes
from dshreplay.testing.samples import LogBuilder
from dshreplay.viewer._model import build_view

from conftest import SAMPLES

SAMPLE_LOGS = sorted(p.name for p in SAMPLES.iterdir() if p.name.endswith((".jsonl", ".zstd"))
                     and p.name != "broken-version-1.jsonl")  # (no header it reads: see test_view_command)


def _seqs(timeline: SessionTimeline, kind: str) -> list[list[int]]:
    return sorted([s.start_seq, s.end_seq] for s in timeline.of_kind(kind))


def _check_lanes(path) -> dict:
    """The page's lanes against the timeline's spans (a pass of its own); the page's data."""
    view = build_view(LogSource(path), "t")
    data = view.to_json()
    timeline = session_timeline(LogSource(path))
    for lane, kind in (("turns", TURN), ("steps", STEP), ("calls", CALL), ("compactions", COMPACTION)):
        assert [row[:2] for row in data[lane]] == _seqs(timeline, kind), (path, lane)
    not_started = [[m.seq, m.seq] for m in timeline.moments if m.kind == NOT_STARTED]
    assert [row[:2] for row in data["tools"]] == sorted(_seqs(timeline, TOOL) + not_started), path
    marks = [m.seq for m in timeline.moments if m.kind == FAILURE]
    if view.failure is not None:
        marks.append(view.failure.seq)
        assert timeline.stats.error is not None and timeline.stats.error.seq == view.failure.seq
    assert [f[0] for f in data["failures"]] == sorted(marks), path
    ends = [row[1] for lane in ("turns", "steps", "calls", "tools", "compactions") for row in data[lane]]
    assert all(type(end) is int and end <= data["last"] for end in ends), path  # (every span ends inside the page)
    return data


@pytest.mark.parametrize("name", SAMPLE_LOGS)
def test_every_sample_log_draws_the_timeline_spans(name):
    _check_lanes(SAMPLES / name)


@pytest.mark.parametrize("damage", shapes.DAMAGES)
@pytest.mark.parametrize("shape", sorted(shapes.SHAPES))
def test_every_shape_whole_or_damaged_draws_the_timeline_spans(shape, damage, tmp_path):
    made = shapes.SHAPES[shape]()
    path = tmp_path / ("log.jsonl.zstd" if made.zstd or damage == "corrupt-frame" else "log.jsonl")
    path.write_bytes(shapes.write(made, damage, at=3))
    _check_lanes(path)


def test_the_failure_lane_marks_what_the_session_summary_lists(tmp_path):
    """A provider error that ended a model call is marked at its finish chunk, named as the
    timeline names it; a tool call whose result is an error (here dsh's closer after a crash) is
    red in the tool lane and no failure: `stats` lists none (the page used to mark it)."""
    path = tmp_path / "chain.jsonl"
    path.write_bytes(shapes.write(shapes.SHAPES["compaction-chain"]()))
    assert _check_lanes(path)["failures"] == [[102, "assistant/chunk RATE_LIMITED: rate limited"]]
    path = tmp_path / "resumed.jsonl"
    path.write_bytes(shapes.write(shapes.SHAPES["resumed"]()))
    data = _check_lanes(path)
    assert data["failures"] == [] and session_timeline(LogSource(path)).stats.failures == []
    assert [row for row in data["tools"] if row[4]] == [[28, 29, "bash call_1", "outcome unknown", True]]


def test_an_open_span_ends_at_the_last_event_read(tmp_path):
    """A turn, step or compaction the log leaves open runs to the last event the pass read, as
    the timeline has it (the page used to get null): here the one before the fold fails at 67."""
    data = _check_lanes(SAMPLES / "broken-replace-start-not-found.jsonl")
    assert data["last"] == data["failure"]["seq"] == 67
    assert data["turns"][-1] == [63, 66, "3", "unknown"] and data["steps"][-1] == [64, 66, "3", "1"]
    assert data["compactions"] == [[65, 66, "compaction compaction-0011", "open"]]


def test_a_tool_call_asked_for_and_never_started_is_a_point_where_it_was_asked(tmp_path):
    """The timeline's moment, not a span from the asking to dsh's closing result (the page used
    to draw it so)."""
    b = LogBuilder("never-started")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("run it")
    asked = b.assistant("", calls=[("call_1", "bash", '{"command": "make"}')])
    closer, _ = b.resume_after_crash()
    data = _check_lanes(b.write(tmp_path / "log.jsonl"))
    assert closer > asked
    assert data["tools"] == [[asked, asked, "bash call_1", "not started", False]]
