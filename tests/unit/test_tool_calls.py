"""The tool tracker: every tool call with its call, result, approval, hooks and outcome,
attached by call id (and a hook by its matcher), never by position."""

from __future__ import annotations

import pytest

from dshreplay.analyses.trackers.hooks import matcher_selects
from dshreplay.session import Session

import scenarios


def calls_of(path) -> list[tuple]:
    return [(c.call_id, c.tool, c.asked_seq, c.call_seq, c.result_seq, c.outcome,
             [(h.point, h.matcher, h.invoked_seq, h.result_seq, h.decision) for h in c.hooks],
             None if c.approval is None else (c.approval.asked_seq, c.approval.decided_seq, c.approval.outcome))
            for c in Session(path).tools()]


def test_parallel_calls_get_their_own_hooks_approval_and_result_by_id(write_log):
    b, s = scenarios.parallel_calls()
    path = write_log(b)
    assert Session(path).validate().findings == []
    assert calls_of(path) == [
        ("call_1", "bash", s["asked"], s["call_1"], s["result_1"], "completed",
         [("PreToolUse", "bash", s["hook_bash"], s["hook_bash_result"], "pass")], None),
        ("call_2", "write", s["asked"], s["call_2"], s["result_2"], "completed",
         [("PreToolUse", "write", s["hook_write"], s["hook_write_result"], "ask")],
         (s["approval_asked"], s["approval_decided"], "allowed-once")),
    ]


def test_a_call_asked_for_and_never_started_is_not_started_and_a_started_one_without_result_outcome_unknown(
        write_log):
    b, s = scenarios.unstarted_calls()
    assert [(c[0], c[1], c[3], c[4], c[5]) for c in calls_of(write_log(b))] == [
        ("call_a", "bash", s["call_a"], s["result_a"], "completed"),
        ("call_b", "bash", s["call_b"], None, "outcome unknown"),
        ("call_c", "read", None, None, "not started"),
    ]


def test_an_interrupted_turn_gives_each_call_the_outcome_of_the_closer_dsh_would_write(write_log):
    b, s = scenarios.unstarted_calls(interrupted=True)
    session = Session(write_log(b))
    assert [(c.call_id, c.outcome) for c in session.tools()] == [
        ("call_a", "completed"), ("call_b", "outcome unknown"), ("call_c", "not started")]
    assert [(c.type, c.call_id, c.code, c.call_seq) for c in session.index().closers] == [
        ("tool/result", "call_b", "TOOL_OUTCOME_UNKNOWN", s["call_b"]),
        ("tool/result", "call_c", "TOOL_NOT_STARTED", None),
        ("step/end", None, None, None), ("turn/end", None, None, None)]


def test_a_result_dsh_wrote_as_not_started_makes_its_call_not_started(write_log):
    b, s = scenarios.unstarted_calls()
    b.events = b.events[:s["call_b"]]  # up to call_a's result: call_b and call_c only asked for
    seq = b.tool_result("call_b", "Error: tool not started", cites=s["asked"], is_error=True)
    b.event(seq)["data"]["error"] = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    assert [(c[0], c[4], c[5]) for c in calls_of(write_log(b))] == [
        ("call_a", s["result_a"], "completed"), ("call_b", seq, "not started"), ("call_c", None, "not started")]


def test_a_hook_two_started_calls_could_have_run_for_names_both_and_belongs_to_neither(write_log):
    from dshreplay.testing.samples import LogBuilder
    b = LogBuilder("ambiguous")
    b.start_turn()
    b.start_step()
    b.assistant("", calls=[("c1", "bash", "{}"), ("c2", "bash", "{}"), ("c3", "read", "{}")])
    calls = [b.tool_call(c, n, "{}") for c, n in (("c1", "bash"), ("c2", "bash"), ("c3", "read"))]
    invoked = b.hook_invoked("PreToolUse", "h1", matcher="bash")
    answered = b.hook_result("PreToolUse", "h1", decision="allow")
    for (call_id, _), seq in zip((("c1", "bash"), ("c2", "bash"), ("c3", "read")), calls):
        b.tool_result(call_id, "ok", cites=seq)
    b.end_turn()
    tools = Session(write_log(b)).tools()
    assert [(c.call_id, [h.label() for h in c.hooks]) for c in tools] == [
        ("c1", ["PreToolUse:allow(one of c1|c2)"]), ("c2", ["PreToolUse:allow(one of c1|c2)"]), ("c3", [])]
    [hook] = tools[0].hooks
    assert (hook.invoked_seq, hook.result_seq, hook.call_id, hook.candidates) == (invoked, answered, None,
                                                                                  ("c1", "c2"))


def test_reading_stopped_by_a_fold_error_leaves_an_unanswered_call_unread(write_log):
    b, s = scenarios.parallel_calls()
    b.event(s["result_2"])["surfaceOp"] = {"op": "replace", "start": 999, "end": 999}  # the fold stops here
    tools = Session(write_log(b)).tools()
    assert [(c.call_id, c.result_seq, c.outcome) for c in tools] == [("call_1", None, "unread"),
                                                                      ("call_2", None, "unread")]


@pytest.mark.parametrize("matcher, tool, selects", [
    (None, "bash", True), ("", "bash", True), ("*", "write", True),
    ("bash", "bash", True), ("bash", "write", False), ("Edit|Write", "Write", True), ("Edit|Write", "bash", False),
    ("mcp__.*", "mcp__fs__read", True), ("mcp__.*", "bash", False),
    ("(a+)+$", "bash", None), ("ba[sh]", "bash", None), ("bash", 3, None),
])
def test_a_matcher_selects_tools_by_name_and_a_pattern_is_never_run(matcher, tool, selects):
    assert matcher_selects(matcher, tool) is selects


def test_interleaved_parallel_calls_with_one_name_and_arguments_each_get_their_own_facts_by_id(write_log):
    # by hand (scenarios.interleaved_calls): c1 asked at 27, started at 30, approval 33/34 rejected,
    # answered at 43 in step 2; c2 started at 29, approval 32/36 allowed-once, its error result at 37;
    # c3 started at 28, the read hook 31/35 (matcher read: the one started read call), result at 38;
    # zz is named only by the approval 39/40: no ask, no tool/call, so its outcome is unknown
    b, s = scenarios.interleaved_calls()
    assert calls_of(write_log(b)) == [
        ("c1", "bash", 27, 30, 43, "completed", [], (33, 34, "rejected")),
        ("c2", "bash", 27, 29, 37, "error", [], (32, 36, "allowed-once")),
        ("c3", "read", 27, 28, 38, "completed", [("PreToolUse", "read", 31, 35, "allow")], None),
        ("zz", "bash", None, None, None, "outcome unknown", [], (39, 40, "allowed-once")),
    ]


def test_where_the_fold_stops_midway_no_fact_past_it_is_attached_to_a_call(write_log):
    # by hand: the fold stops at seq 38 (replace start 999); c3's result (39), zz's approval (40/41)
    # and c1's result (44) lie past it: c1 and c3 are unread, zz is not known, c2 is whole
    b, s = scenarios.interleaved_calls(broken=True)
    session = Session(write_log(b))
    assert [(c.call_id, c.call_seq, c.result_seq, c.outcome,
             None if c.approval is None else (c.approval.asked_seq, c.approval.decided_seq))
            for c in session.tools()] == [
        ("c1", 30, None, "unread", (33, 34)), ("c2", 29, 37, "error", (32, 36)), ("c3", 28, None, "unread", None)]
    assert (session.partial.seq, session.partial.code) == (38, "DSH-E107")


def test_a_reused_call_id_leaves_a_late_hook_result_and_a_rewrite_with_the_call_they_belong_to(write_log):
    # by hand (scenarios.reused_call_id): the hook 14 ran for the read c1 (13) and answers at 32,
    # after the bash c1 (31) started; the rewrite 33 replaces the read's result 15
    b, s = scenarios.reused_call_id()
    session = Session(write_log(b))
    assert calls_of(write_log(b)) == [
        ("c1", "read", 12, 13, 15, "completed", [("PreToolUse", None, 14, 32, "pass")], None),
        ("c1", "bash", 30, 31, 34, "completed", [], None)]
    rows = {r.seq: (r.call_id, r.tool, r.arguments) for r in session.query()}
    assert [rows[seq] for seq in (13, 14, 15, 31, 32, 33, 34)] == [
        ("c1", "read", '{"path": "a"}'), ("c1", "read", '{"path": "a"}'), ("c1", "read", '{"path": "a"}'),
        ("c1", "bash", '{"command": "ls"}'), ("c1", "read", '{"path": "a"}'), ("c1", "read", '{"path": "a"}'),
        ("c1", "bash", '{"command": "ls"}')]


def _one_round_out_of_order(first: str):
    """A turn whose call c1 is asked for, then logged with its tool/call and tool/result in the other
    order (`first`: "result"), or with its tool/call before the ask (`first`: "call")."""
    from dshreplay.testing.samples import LogBuilder
    b = LogBuilder("out-of-order")
    b.start_turn()
    b.start_step()
    b.user("go")
    seqs = {}
    if first == "call":
        seqs["call"] = b.tool_call("c1", "bash", '{"command": "ls"}')
    seqs["asked"] = b.assistant("", calls=[("c1", "bash", '{"command": "ls -l"}')])
    if first == "result":
        seqs["result"] = b.tool_result("c1", "out", cites=seqs["asked"])
        seqs["call"] = b.tool_call("c1", "bash", '{"command": "ls"}')
    else:
        seqs["result"] = b.tool_result("c1", "out", cites=seqs["call"])
    seqs["step_end"] = b.end_step()
    b.end_turn()
    return b, seqs


def test_a_result_logged_before_its_call_is_that_calls_result_one_call_by_id(write_log):
    b, s = _one_round_out_of_order("result")
    session = Session(write_log(b))
    assert calls_of(session.path) == [("c1", "bash", s["asked"], s["call"], s["result"], "completed", [], None)]
    assert session.tools()[0].arguments == '{"command": "ls"}'  # (the tool/call's, as logged)
    # a result logged before its call has no duration (it made stats' tool times -7 ms)
    assert session.tools()[0].duration_ms is None and session.stats().times["tools"] is None
    # validate still says what is out of order: the result answered no started call of its step, and
    # the step closed with the call started after it unanswered
    assert [(f.code, f.seq) for f in session.validate().findings] == [("DSH-E210", s["result"]),
                                                                      ("DSH-W211", s["step_end"])]


def test_a_call_logged_before_the_ask_is_the_call_asked_for_with_its_own_name_and_arguments(write_log):
    b, s = _one_round_out_of_order("call")
    [call] = Session(write_log(b)).tools()
    assert (call.call_id, call.asked_seq, call.call_seq, call.result_seq, call.outcome, call.arguments) == (
        "c1", s["asked"], s["call"], s["result"], "completed", '{"command": "ls"}')


def test_an_event_of_a_later_turn_naming_an_earlier_turns_call_id_is_a_call_of_its_own(write_log):
    # turn 1: c1 asked, started, never answered; turn 2: an approval names c1 with no ask and no
    # tool/call of its own. A call's facts are its turn's: the approval is a call of turn 2
    # (outcome unknown: dsh asks after the tool/call it logs), not turn 1's c1
    from dshreplay.testing.samples import LogBuilder
    b = LogBuilder("late")
    b.start_turn()
    b.start_step()
    asked = b.assistant("", calls=[("c1", "bash", "{}")])
    started = b.tool_call("c1", "bash", "{}")
    b.end_step()
    b.end_turn()
    b.start_turn()
    b.start_step()
    approval = b.approval("c1", "bash", "rejected")
    b.end_step()
    b.end_turn()
    tools = Session(write_log(b)).tools()
    assert [(c.call_id, c.turn, c.asked_seq, c.call_seq, c.outcome,
             None if c.approval is None else (c.approval.asked_seq, c.approval.decided_seq, c.approval.outcome))
            for c in tools] == [("c1", 1, asked, started, "outcome unknown", None),
                                ("c1", 2, None, None, "outcome unknown", (*approval, "rejected"))]
