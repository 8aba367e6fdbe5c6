"""The library's one table for a fold that fails (session.WHEN_THE_FOLD_FAILS): every
question is in it, docs/guide/damaged-logs.md shows it, and each Session method does what its
entry says. The log is `compacted()` with seq 20 (its first tool/call) missing: the fold
fails at seq 20 (DSH-E101 on line 22), call 1 (chunks 4..18) lies before it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dshreplay.errors import FoldError, NoViewError, answered_for
from dshreplay.session import EVERY_LINE, NEEDS_VIEW, PREFIX, WHEN_THE_FOLD_FAILS, Session
from dshreplay.testing.samples import compacted, damaged

DOC = Path(__file__).resolve().parents[2] / "docs" / "guide" / "damaged-logs.md"

# each Session question -> its entry in the table
QUESTIONS = {"fold": "fold", "states": "states", "state": "states", "diff": "states", "request": "request",
             "provenance": "provenance", "calls": "calls", "call_list": "calls", "shadows": "shadows",
             "brackets": "brackets", "spills": "spills", "tools": "tools", "transcript": "transcript", "query": "query",
             "to_records": "query", "to_arrow": "query", "inspect": "inspect", "stats": "stats", "validate": "validate",
             "lines": "lines"}
NOT_QUESTIONS = {"header", "records", "events", "index"}  # (the log itself, and the index the questions share)


@pytest.fixture
def session(write_log):
    return Session(write_log(damaged(compacted(), "missing", 20)))


def test_every_question_of_a_session_has_its_entry():
    methods = {name for name in dir(Session) if not name.startswith("_")}
    assert methods == set(QUESTIONS) | NOT_QUESTIONS
    assert set(QUESTIONS.values()) <= set(WHEN_THE_FOLD_FAILS)
    assert set(WHEN_THE_FOLD_FAILS.values()) == {PREFIX, NEEDS_VIEW, EVERY_LINE}


def test_the_documented_table_is_the_table():
    rows = dict(re.findall(r"^\| `([^`]+)` \| (prefix|needs-view|every-line) \|", DOC.read_text(), re.M))
    assert rows == WHEN_THE_FOLD_FAILS


def test_a_prefix_answer_names_the_failure_until_the_next_question(session):
    health = session.inspect()
    assert (session.partial.code, session.partial.seq, session.partial.line) == ("DSH-E101", 20, 22)
    assert answered_for(session.partial) == ("answered for seqs 0..19 only: the fold fails at seq 20 (DSH-E101, "
                                             "line 22, /seq: seq 21 is not contiguous; expected 20: seq 20 is "
                                             "missing)")
    assert health.to_json()["answeredUpTo"] == 19
    assert [c.call for c in session.calls()] == [1] and session.partial is not None
    assert session.request(1).at_seq == 3 and session.partial is None  # (complete: before the failure)
    assert [r.seq for r in session.query()][-1] == 19 and session.partial.seq == 20
    assert session.stats().answered_up_to == 19 and session.partial.seq == 20
    assert [line.line for line in session.lines(21, 22)] == [21, 22] and session.partial is None


def test_a_view_past_the_failure_raises_and_one_before_it_is_given(session):
    with pytest.raises(NoViewError) as raised:
        session.states([30])
    assert isinstance(raised.value, FoldError) and raised.value.failure["seq"] == 20
    assert raised.value.message.startswith("no answer: the model's view at seq 30: the fold fails at seq 20")
    assert session.states([19])[19].nodes == (3, 19)
    report = session.fold()
    assert isinstance(report.error, NoViewError) and report.state is None
    assert session.fold(at=19).error is None
    with pytest.raises(NoViewError, match="there is no call 2 before the failure: 1 model call before it"):
        session.request(2)


def test_a_log_whose_fold_holds_is_answered_in_full(write_log):
    s = Session(write_log(compacted()))
    s.inspect()
    assert s.partial is None and s.fold().error is None and s.stats().answered_up_to is None


def test_an_answer_reaches_the_seq_before_the_failure_in_every_form_of_it():
    from dshreplay.errors import FoldError, answered_up_to
    assert answered_up_to(FoldError("x", code="DSH-E101", seq=5, line=7)) == 4
    assert answered_up_to({"seq": 0, "code": "DSH-E001"}) == -1  # (as a bundle keeps it: nothing answered)
    assert answered_up_to(None) is None  # (a whole answer)
