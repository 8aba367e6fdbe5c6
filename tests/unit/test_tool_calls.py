"""The tool tracker: every tool call with its call, result, approval, hooks and outcome,
attached by call id (and a hook by its matcher), never by position."""

from __future__ import annotations

import pytest

from dshreplay.analyses.tools import matcher_selects
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
