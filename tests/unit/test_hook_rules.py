"""The hook protocol: each `hook/result` pairs with an earlier unanswered `hook/invoked`
of the same turn, point and handlerId, both inside that open turn (dsh's hook-protocol
invariant). Each test builds a small log and asserts the exact findings."""

from __future__ import annotations

import pytest

from dshreplay.analyses.validate import validate_log
from dshreplay.testing.samples import LogBuilder

pytestmark = pytest.mark.usefixtures("read_mode")  # each test: checks here, and in worker windows


def findings(path) -> list[tuple[str, int | None, str]]:
    return [(f.code, f.seq, f.message) for f in validate_log(path).findings]


@pytest.fixture
def turn(builder) -> LogBuilder:
    """Turn 1 open with step 1 (seqs 0-2) and a user message (seq 3)."""
    b = builder()
    b.user("list files")
    return b


def test_a_correct_hook_exchange_has_no_finding(turn, write_log):
    b = turn
    b.hook_invoked("UserPromptSubmit", "cc:UserPromptSubmit:1")
    b.hook_result("UserPromptSubmit", "cc:UserPromptSubmit:1")
    # one handler run twice before either answers, the answers across a step boundary (dsh allows both)
    b.hook_invoked("PreToolUse", "cc:PreToolUse:1", matcher="bash")
    b.hook_invoked("PreToolUse", "cc:PreToolUse:1", matcher="bash")
    b.tool_round("bash", '{"command":"ls"}', "a\nb\n")
    b.end_step()
    b.start_step()
    b.hook_result("PreToolUse", "cc:PreToolUse:1", decision="allow")
    b.hook_result("PreToolUse", "cc:PreToolUse:1", decision="block", exit_code=2)
    b.assistant("two files")
    b.hook_invoked("Stop", "codex:Stop:1", dialect="codex")
    b.hook_result("Stop", "codex:Stop:1", exit_code=None, duration_ms=0)
    b.end_turn()
    assert findings(write_log(b)) == []
    assert findings(write_log(b, layout="projected", pack=True)) == []


def test_e401_hook_invoked_outside_the_open_turn(turn, write_log):
    b = turn
    b.hook_invoked("PreToolUse", "h1", turn=2)  # 4
    b.hook_result("PreToolUse", "h1", turn=2)  # 5: pairs with 4, and is as misplaced
    b.end_turn()  # 6 step/end, 7 turn/end
    b.hook_invoked("Stop", "h2", turn=1)  # 8
    b.hook_result("Stop", "h2", turn=1)  # 9
    assert findings(write_log(b)) == [
        ("DSH-E401", 4, "hook/invoked names turn 2 but the open turn is 1"),
        ("DSH-E401", 5, "hook/result names turn 2 but the open turn is 1"),
        ("DSH-E401", 8, "hook/invoked for turn 1 outside any open turn"),
        ("DSH-E401", 9, "hook/result for turn 1 outside any open turn"),
    ]


def test_e401_hook_result_names_another_turn_than_its_invocation(turn, write_log):
    b = turn
    b.hook_invoked("PreToolUse", "h1")  # 4
    b.hook_result("PreToolUse", "h1", turn=2)  # 5
    b.end_turn()
    assert findings(write_log(b)) == [
        ("DSH-E401", 5, "hook/result names turn 2 but the open turn is 1 (its hook/invoked at seq 4 "
                        "names turn 1)"),
    ]


def test_e401_hook_result_after_its_turn_closed(turn, write_log):
    b = turn
    b.hook_invoked("Stop", "h1")  # 4
    b.end_turn()  # 5 step/end, 6 turn/end
    b.hook_result("Stop", "h1")  # 7
    assert findings(write_log(b)) == [
        ("DSH-W403", 6, 'turn closed with hook "h1" at "Stop" (hook/invoked at seq 4) unanswered'),
        ("DSH-E401", 7, "hook/result for turn 1 outside any open turn (its hook/invoked at seq 4 was left "
                        "unanswered when its turn closed at seq 6)"),
    ]


def test_e402_hook_result_whose_handler_was_never_invoked(turn, write_log):
    b = turn
    b.hook_invoked("PreToolUse", "h1")  # 4
    b.hook_result("PreToolUse", "h1")  # 5
    b.hook_result("PreToolUse", "h9")  # 6
    b.end_turn()
    assert findings(write_log(b)) == [
        ("DSH-E402", 6, 'hook/result for hook "h9" at "PreToolUse" in turn 1 answers no unanswered '
                        "hook/invoked"),
    ]


def test_e402_hook_result_before_its_invocation(turn, write_log):
    b = turn
    b.hook_result("PreToolUse", "h1")  # 4
    b.hook_invoked("PreToolUse", "h1")  # 5
    b.end_turn()  # 6 step/end, 7 turn/end
    assert findings(write_log(b)) == [
        ("DSH-E402", 4, 'hook/result for hook "h1" at "PreToolUse" in turn 1 answers no unanswered '
                        "hook/invoked"),
        ("DSH-W403", 7, 'turn closed with hook "h1" at "PreToolUse" (hook/invoked at seq 5) unanswered'),
    ]


def test_e402_a_second_result_for_one_invocation(turn, write_log):
    b = turn
    b.hook_invoked("Stop", "h1")  # 4
    b.hook_result("Stop", "h1")  # 5
    b.hook_result("Stop", "h1")  # 6
    b.end_turn()
    assert findings(write_log(b)) == [
        ("DSH-E402", 6, 'hook/result for hook "h1" at "Stop" in turn 1 answers no unanswered hook/invoked '
                        "(its hook/invoked at seq 4 was already answered at seq 5)"),
    ]


def test_e402_hook_result_for_another_point_than_its_invocation(turn, write_log):
    b = turn
    b.hook_invoked("PreToolUse", "h1")  # 4
    b.hook_result("Stop", "h1")  # 5
    b.end_turn()  # 6 step/end, 7 turn/end
    assert findings(write_log(b)) == [
        ("DSH-E402", 5, 'hook/result for hook "h1" at "Stop" in turn 1 answers no unanswered hook/invoked '
                        '(the unanswered hook/invoked of that handler at seq 4 is at "PreToolUse" in turn 1)'),
        ("DSH-W403", 7, 'turn closed with hook "h1" at "PreToolUse" (hook/invoked at seq 4) unanswered'),
    ]


def test_w403_unanswered_hook_at_the_end_of_a_turn_and_of_the_log(turn, write_log):
    b = turn
    b.hook_invoked("PostToolUse", "h1")  # 4
    b.end_turn()  # 5 step/end, 6 turn/end
    b.start_turn()  # 7
    b.hook_invoked("UserPromptSubmit", "h2")  # 8: the log ends here, inside turn 2
    assert findings(write_log(b)) == [
        ("DSH-W403", 6, 'turn closed with hook "h1" at "PostToolUse" (hook/invoked at seq 4) unanswered'),
        ("DSH-W213", 8, "log ends inside turn 2; dsh would append turn/end (interrupted)"),
        ("DSH-W403", 8, 'log ends with hook "h2" at "UserPromptSubmit" (hook/invoked at seq 8) unanswered'),
    ]


@pytest.mark.parametrize("field,value,message", [
    ("point", "", "'' should be non-empty"),
    ("handlerId", "", "'' should be non-empty"),
    ("dialect", "claude", "'claude' is not one of ['claude-code', 'codex']"),
])
def test_e005_hook_invoked_payload_dsh_refuses(turn, write_log, field, value, message):
    b = turn
    b.hook_invoked("PreToolUse", "h1")  # 4
    b.hook_result("PreToolUse", "h1")  # 5
    b.end_turn()
    for seq in (4, 5):  # (the result names the same point and handler: the pair still matches)
        if field in b.event(seq)["data"]:
            b.event(seq)["data"][field] = value
    report = validate_log(write_log(b))
    assert [(f.code, f.seq, f.pointer, f.message) for f in report.findings] == [
        ("DSH-E005", 4, f"/data/{field}", message)]


def test_e005_hook_result_with_a_negative_duration(turn, write_log):
    b = turn
    b.hook_invoked("PreToolUse", "h1")  # 4
    b.hook_result("PreToolUse", "h1", duration_ms=-1)  # 5
    b.end_turn()
    report = validate_log(write_log(b))
    assert [(f.code, f.seq, f.pointer, f.message) for f in report.findings] == [
        ("DSH-E005", 5, "/data/durationMs", "-1 is less than the minimum of 0")]
