"""Forensic answers on hand-numbered logs (tests/scenarios.py) and corpus logs."""

from __future__ import annotations

import pytest

from dshreplay.analyses.trackers.provenance import message_provenance
from dshreplay.analyses.validate import validate_log
from dshreplay.errors import FoldError
from dshreplay.session import Session

import scenarios


@pytest.fixture
def session(write_log):
    def make(records) -> Session:
        return Session(write_log([scenarios.HEADER, *records]))
    return make


# -- shadows and brackets ------------------------------------------------------

def test_shadows_of_two_compactions_and_a_prune_with_a_chain(session):
    shadows = [r.to_json() for r in session(scenarios.compactions()).index().shadows]
    assert shadows == [
        {"seq": 7, "kind": "summary", "start": 2, "end": 3, "shadowedSeqs": [2, 3], "meterSeq": 6,
         "tokens": 120, "compactionId": "k1", "chain": []},
        {"seq": 12, "kind": "summary", "start": 7, "end": 4, "shadowedSeqs": [7, 4], "meterSeq": 11,
         "tokens": 80, "compactionId": "k2", "chain": [7]},
        {"seq": 15, "kind": "prune", "start": 9, "end": 9, "shadowedSeqs": [9], "meterSeq": 14,
         "tokens": 5, "compactionId": None, "chain": []},
    ]


def test_the_chained_compaction_log_is_valid(session):
    report = session(scenarios.compactions()).validate()
    assert report.findings == []


def test_brackets_of_the_two_compactions(session):
    brackets = [b.to_json() for b in session(scenarios.compactions()).index().brackets]
    assert brackets == [
        {"compactionId": "k1", "start": 5, "end": 8, "status": "closed", "turn": 1, "summarySeq": 6,
         "replacementSeq": 7, "error": None, "anomalies": []},
        {"compactionId": "k2", "start": 10, "end": 13, "status": "closed", "turn": 1, "summarySeq": 11,
         "replacementSeq": 12, "error": None, "anomalies": []},
    ]


def test_replacing_an_already_shadowed_seq_is_invalid(session, write_log):
    s = session(scenarios.replacing_a_shadowed_seq())
    assert [e.code for e in s.index().fold_errors] == ["DSH-E107"]
    assert [r.seq for r in s.index().shadows] == [7, 12, 15]  # the invalid one is not a replacement
    with pytest.raises(FoldError) as err:
        s.states([16])
    assert (err.value.seq, err.value.failure["message"]) == (16, "replace start seq 2 is not in the surface")
    assert err.value.message == ("no answer: the model's view at seq 16: the fold fails at seq 16 (DSH-E107, "
                                 "line 18, /surfaceOp/start: replace start seq 2 is not in the surface)")
    # the log stops inside its turn, so it is also interrupted
    assert [(f.code, f.seq) for f in s.validate().findings] == [("DSH-E107", 16), ("DSH-W213", 16)]


def test_tool_result_rewrite_is_a_shadow_of_its_own_kind(session):
    [record] = session(scenarios.rewrite_then_crash()).index().shadows
    assert record.to_json() == {"seq": 12, "kind": "tool-result-rewrite", "start": 11, "end": 11,
                                "shadowedSeqs": [11], "meterSeq": None, "tokens": None,
                                "compactionId": None, "chain": []}


# -- provenance and diff -------------------------------------------------------

def test_provenance_follows_replacements_down_to_the_original_messages(session):
    s = session(scenarios.compactions())
    rows = [r.to_json() for r in message_provenance(s.state().node_messages(), s.index())]
    assert rows[0] == {"index": 1, "seq": 12, "type": "user/message",
                       "op": {"op": "replace", "start": 7, "end": 4}, "sources": [10, 11, 7, 4],
                       "origins": [{"seq": 2, "type": "user/message"}, {"seq": 3, "type": "user/message"},
                                   {"seq": 4, "type": "user/message"}, {"seq": 5, "type": "compaction/start"},
                                   {"seq": 6, "type": "compaction/summary"},
                                   {"seq": 7, "type": "user/message"}, {"seq": 10, "type": "compaction/start"},
                                   {"seq": 11, "type": "compaction/summary"}], "spills": [],
                       "replacedBy": None}
    assert rows[1]["origins"] == [{"seq": 9, "type": "user/message"}]


def test_provenance_of_an_assistant_message_names_its_chunks(session):
    s = session(scenarios.rewrite_then_crash())
    rows = message_provenance(s.state().node_messages(), s.index())
    assert [(r.seq, r.origins) for r in rows if r.seq == 9] == [
        (9, tuple((q, "assistant/chunk") for q in range(4, 9)))]
    assert [(r.seq, r.origins) for r in rows if r.seq == 12] == [
        (12, ((10, "tool/call"), (11, "tool/result")))]


def test_diff_names_the_replacement_that_shadowed_each_node(session):
    s = session(scenarios.compactions())
    assert s.diff(4, 17).to_json() == {"from": 4, "to": 17, "kept": [],
                                        "removed": [{"seq": 2, "by": 7}, {"seq": 3, "by": 7},
                                                    {"seq": 4, "by": 12}],
                                        "added": [12, 15]}
    assert s.diff(8, 13).to_json() == {"from": 8, "to": 13, "kept": [],
                                        "removed": [{"seq": 7, "by": 12}, {"seq": 4, "by": 12}],
                                        "added": [12, 9]}


def test_diff_backwards_shows_the_other_direction(session):
    s = session(scenarios.compactions())
    assert s.diff(13, 8).to_json() == {"from": 13, "to": 8, "kept": [],
                                        "removed": [{"seq": 12, "by": None}, {"seq": 9, "by": None}],
                                        "added": [7, 4]}
    assert s.diff(9, 12).to_json()["kept"] == [9]


# -- calls and requests -----------------------------------------------------------

def test_calls_of_the_crashed_log(session):
    calls = [c.to_json() for c in session(scenarios.rewrite_then_crash()).calls()]
    assert calls == [
        {"call": 1, "turn": 1, "step": 1, "firstChunkSeq": 4, "lastChunkSeq": 8,
         "provider": "deepseek-official", "model": "deepseek-v4-flash", "finish": {"kind": "tool-calls"},
         "outcome": "tool-calls", "errorCode": None, "usage": {"inputTokens": 100, "outputTokens": 7},
         "messageCount": 1},
        {"call": 2, "turn": 1, "step": 2, "firstChunkSeq": 15, "lastChunkSeq": 22,
         "provider": "deepseek-official", "model": "deepseek-v4-flash", "finish": {"kind": "tool-calls"},
         "outcome": "tool-calls", "errorCode": None, "usage": {"inputTokens": 200, "outputTokens": 7},
         "messageCount": 3},
    ]


def test_request_of_call_2_holds_the_rewritten_result(session):
    log = scenarios.rewrite_then_crash()
    request = session(log).request(2).to_json()
    assert (request["call"], request["atSeq"], request["headerSeq"]) == (2, 14, 1)
    assert request["header"] == log[1]["data"]["header"]
    assert request["messages"] == [log[3]["data"], log[9]["data"]["message"], log[12]["data"]["message"]]


def test_request_at_a_seq(session):
    log = scenarios.compactions()
    request = session(log).request(at=9).to_json()
    assert request["messages"] == [log[7]["data"], log[4]["data"], log[9]["data"]]
    assert (request["call"], request["headerSeq"]) == (None, None)


# -- crash inspection ---------------------------------------------------------------

def test_interrupted_turn_closers_name_both_kinds_of_pending_call(session):
    closers = [c.to_json() for c in session(scenarios.rewrite_then_crash()).index().closers]
    assert closers == [
        {"type": "tool/result", "turn": 1, "step": 2, "callId": "c2", "code": "TOOL_OUTCOME_UNKNOWN",
         "callSeq": 24},
        {"type": "tool/result", "turn": 1, "step": 2, "callId": "c3", "code": "TOOL_NOT_STARTED",
         "callSeq": None},
        {"type": "step/end", "turn": 1, "step": 2, "callId": None, "code": None, "callSeq": None},
        {"type": "turn/end", "turn": 1, "step": None, "callId": None, "code": None, "callSeq": None},
    ]


# -- transcript -------------------------------------------------------------------

def test_transcript_keeps_the_conversation_and_marks_replacements(session):
    entries = session(scenarios.compactions()).transcript()
    assert [(e.seq, e.entry) for e in entries] == [
        (2, "message"), (3, "message"), (4, "message"), (7, "replacement"), (9, "message"),
        (12, "replacement"), (15, "replacement"), (17, "turn-end")]
    assert entries[3].marker_text() == "[seqs 2-3 replaced for the model by summary at seq 7]"
    assert entries[3].message["content"][0]["text"] == "summary of alpha and beta"  # what replaced them
    assert entries[6].marker_text() == "[seq 9 replaced for the model by prune at seq 15]"
    assert entries[7].marker_text() == "[turn 1 ended: completed at seq 17]"


def test_transcript_marks_a_failed_call_and_the_turn_it_ended(session):
    failure = {"kind": "error", "failure": {"code": "CONTEXT_WINDOW_EXCEEDED"}}
    log = [scenarios.ev(0, "turn/start", {"turn": 1}), scenarios.ev(1, "step/start", {"turn": 1, "step": 1}),
           scenarios.user(2, "hello"), scenarios.chunk(3, 1, 1, {"type": "finish", "reason": failure}),
           scenarios.ev(4, "step/end", {"turn": 1, "step": 1}),
           scenarios.ev(5, "turn/end", {"turn": 1, "reason": {"kind": "error", "error": {
               "code": "CONTEXT_WINDOW_EXCEEDED", "message": "too long"}}})]
    entries = session(log).transcript()
    assert [(e.seq, e.entry, e.marker_text() if e.entry != "message" else None) for e in entries] == [
        (2, "message", None),
        (3, "failed-call", "[call 1 failed: error CONTEXT_WINDOW_EXCEEDED at seq 3]"),
        (5, "turn-end", "[turn 1 ended: error CONTEXT_WINDOW_EXCEEDED at seq 5]")]
    assert entries[1].to_json() == {"seq": 3, "entry": "failed-call", "call": 1, "turn": 1,
                                         "finish": "error CONTEXT_WINDOW_EXCEEDED",
                                         "time": "2026-07-06T15:36:06.030Z",
                                         "text": "[call 1 failed: error CONTEXT_WINDOW_EXCEEDED at seq 3]"}


def test_transcript_says_the_log_ends_inside_a_turn(session):
    entries = session(scenarios.rewrite_then_crash()).transcript()
    assert entries[-1].entry == "turn-end"
    assert entries[-1].marker_text() == "[turn 1 interrupted: the log ends inside it, after seq 24]"


# -- corpus logs ----------------------------------------------------------------------

def test_compaction_recovery_retry_sees_the_checkpoint(corpus_dir):
    s = Session(corpus_dir / "upstream" / "headless-agent__compaction-recovery__session.jsonl")
    calls = s.calls()
    assert [(c.call, c.first_chunk_seq, c.last_chunk_seq) for c in calls] == [(1, 8, 12), (2, 18, 18),
                                                                             (3, 23, 27)]
    assert calls[1].finish["failure"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
    overflowed, retry = s.request(2), s.request(3)
    first_text = overflowed.messages[0]["content"][0]["text"]
    assert first_text.startswith("Establish a durable compaction premise")
    assert retry.messages[0]["source"] == {"kind": "plugin", "plugin": "compact",
                                           "compactionId": "338e88fa-e78b-4d49-bd38-8f919e85f5e1"}
    assert retry.messages[1:] == overflowed.messages[1:]
    assert [c.kind for c in s.calls(include_auxiliary=True)] == ["main", "main", "compaction-summary", "main"]


def test_packed_chunks_corpus_log_calls_span_their_rows(corpus_dir):
    s = Session(corpus_dir / "upstream" / "acp-agent__bash-tool-turn__session.jsonl")
    index = s.index()
    assert index.counts["assistant/chunk"] == sum(1 for t in index.types if t == "assistant/chunk")
    for call in s.calls():
        assert index.type_of(call.first_chunk_seq) == "assistant/chunk"
        assert index.type_of(call.last_chunk_seq) == "assistant/chunk"
        assert call.finish is not None


def test_subagent_child_with_seed(corpus_dir):
    path = corpus_dir / "upstream" / "acp-agent__subagent-fork-in-process__session.1.jsonl"
    s = Session(path)
    assert s.header["seedLength"] == 42
    assert s.index().type_of(42) == "session/end-seed"
    assert s.index().closers == []
    codes = {f.code for f in validate_log(path).findings}
    assert "DSH-E014" not in codes


def test_a_session_keeps_no_reader_it_has_closed_yet_remembers_a_torn_tail():
    from dshreplay.session import Session

    from conftest import SAMPLES
    session = Session(SAMPLES / "torn-tail.jsonl")
    assert session.torn_tail is None  # nothing read yet
    for seq in (5, 10, 20):
        session.states([seq])  # each pass stops early: it never reaches the tail
    assert session.torn_tail is None
    session.index()
    assert session.torn_tail.line == 65
    session.states([5])
    assert session.torn_tail.line == 65
