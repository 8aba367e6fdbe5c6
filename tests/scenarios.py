"""Small hand-numbered logs whose folds were worked out by hand (see each docstring).

Every event is written with its seq in a comment-like position, so the
expected answers in the tests can be checked by reading these lines.
"""

from __future__ import annotations

HEADER = {"type": "session", "version": 0, "id": "scenario", "createdAt": 1783352165190,
          "cwd": "/work/project", "delegationDepth": 0}
CONFIG = {"provider": "deepseek-official", "model": "deepseek-v4-flash"}


def ev(seq: int, type_: str, data, **envelope) -> dict:
    return {"type": type_, "seq": seq, "time": 1783352166000 + 10 * seq, "data": data, **envelope}


def user(seq: int, text: str, op="append", sources=None, **source) -> dict:
    message = {"content": [{"type": "text", "text": text}], "source": source or {"kind": "user"},
               "role": "user", "id": f"m{seq}"}
    envelope = {"surfaceOp": op}
    if sources is not None:
        envelope["sourceEventSeqs"] = sources
    return ev(seq, "user/message", message, **envelope)


def replace(start: int, end: int) -> dict:
    return {"op": "replace", "start": start, "end": end}


def chunk(seq: int, turn: int, step: int, body: dict) -> dict:
    return ev(seq, "assistant/chunk", {"turn": turn, "step": step, "chunk": body})


def summary(seq: int, cid: str, shadowed: list[int], tokens: int) -> dict:
    return ev(seq, "compaction/summary", {
        "compactionId": cid, "summary": [{"type": "text", "text": f"summary {cid}"}],
        "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]}, "shadowedSeqs": shadowed,
        "shadowedTokenCount": tokens, **CONFIG})


def compactions() -> list[dict]:
    """Two compactions, the second shadowing the first's summary (a chain), then a prune.

    Surface: after 4 [2, 3, 4]; after 7 [7, 4]; after 9 [7, 4, 9]; after 12 [12, 9];
    after 15 [12, 15].
    """
    compact = {"kind": "plugin", "plugin": "compact"}
    return [
        ev(0, "turn/start", {"turn": 1}),
        ev(1, "step/start", {"turn": 1, "step": 1}),
        user(2, "alpha"),
        user(3, "beta"),
        user(4, "gamma"),
        ev(5, "compaction/start", {"compactionId": "k1", "turn": 1}),
        summary(6, "k1", [2, 3], 120),
        user(7, "summary of alpha and beta", replace(2, 3), [5, 6, 2, 3], **compact, compactionId="k1"),
        ev(8, "compaction/end", {"compactionId": "k1", "turn": 1}),
        user(9, "delta"),
        ev(10, "compaction/start", {"compactionId": "k2", "turn": 1}),
        summary(11, "k2", [7, 4], 80),
        user(12, "summary of everything", replace(7, 4), [10, 11, 7, 4], **compact, compactionId="k2"),
        ev(13, "compaction/end", {"compactionId": "k2", "turn": 1}),
        ev(14, "compaction/prune", {"shadowedRange": {"start": 9, "end": 9}, "shadowedSeqs": [9],
                                    "shadowedTokenCount": 5}),
        user(15, "[delta pruned]", replace(9, 9), [9], kind="plugin", plugin="prune"),
        ev(16, "step/end", {"turn": 1, "step": 1}),
        ev(17, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
    ]


def replacing_a_shadowed_seq() -> list[dict]:
    """`compactions()` plus a replacement naming seq 2, shadowed since seq 7: invalid."""
    log = compactions()[:16]
    log.append(user(16, "again", replace(2, 2), [2]))
    return log


def tool_message(seq: int, call_id: str, text: str, op="append", sources=None, id_seq=None) -> dict:
    message = {"source": {"kind": "tool", "callId": call_id},
               "content": [{"type": "tool-result", "toolCallId": call_id,
                            "content": [{"type": "text", "text": text}], "isError": False}],
               "role": "user", "id": f"r{id_seq if id_seq is not None else seq}"}
    return ev(seq, "tool/result", {"turn": 1, "step": 1, "message": message},
              surfaceOp=op, sourceEventSeqs=sources)


def stream(first: int, step: int, calls: list[tuple[str, str]]) -> list[dict]:
    """One model call asking for tools: block-start, delta, block-end per call, usage, finish."""
    out, seq = [], first
    for index, (call_id, name) in enumerate(calls):
        out.append(chunk(seq, 1, step, {"type": "block-start", "index": index, "blockType": "tool-call"}))
        out.append(chunk(seq + 1, 1, step, {"type": "tool-call-delta", "index": index, "id": call_id,
                                            "name": name, "argumentsDelta": "{}"}))
        out.append(chunk(seq + 2, 1, step, {"type": "block-end", "index": index, "block": {
            "type": "tool-call", "id": call_id, "name": name, "arguments": "{}"}}))
        seq += 3
    out.append(chunk(seq, 1, step, {"type": "usage", "usage": {"inputTokens": 100 * step, "outputTokens": 7}}))
    out.append(chunk(seq + 1, 1, step, {"type": "finish", "reason": {"kind": "tool-calls"}}))
    return out


def assistant(seq: int, step: int, calls: list[tuple[str, str]], sources: list[int]) -> dict:
    content = [{"type": "tool-call", "id": c, "name": n, "arguments": "{}"} for c, n in calls]
    message = {"role": "assistant", "content": content, "id": f"a{seq}",
               "source": {"kind": "model", **CONFIG}}
    return ev(seq, "assistant/message", {"turn": 1, "step": step, "message": message},
              surfaceOp="append", sourceEventSeqs=sources)


def rewrite_then_crash() -> list[dict]:
    """A tool result rewritten in place, then a turn cut off with two calls pending.

    0 turn/start, 1 request/header, 2 step/start, 3 user, 4-8 call 1 (asks c1), 9 its message,
    10 tool/call c1, 11 result, 12 rewrite of 11, 13 step/end, 14 step/start 2,
    15-22 call 2 (asks c2 and c3), 23 its message, 24 tool/call c2, then the log ends.
    Surface after 13: [3, 9, 12]; after 24: [3, 9, 12, 23].
    """
    header = {"header": {"config": CONFIG, "system": "be brief", "tools": [
        {"name": "bash", "description": "Run a command.", "parameters": {"type": "object"}}]},
        "reason": "initial"}
    log = [ev(0, "turn/start", {"turn": 1}), ev(1, "request/header", header),
           ev(2, "step/start", {"turn": 1, "step": 1}), user(3, "run it")]
    log += stream(4, 1, [("c1", "bash")])
    log += [assistant(9, 1, [("c1", "bash")], [4, 5, 6, 7, 8]),
            ev(10, "tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"}),
            tool_message(11, "c1", "a very long output", sources=[10]),
            tool_message(12, "c1", "[shortened]", op=replace(11, 11), sources=[11], id_seq=11),
            ev(13, "step/end", {"turn": 1, "step": 1}),
            ev(14, "step/start", {"turn": 1, "step": 2})]
    log += stream(15, 2, [("c2", "bash"), ("c3", "bash")])
    log += [assistant(23, 2, [("c2", "bash"), ("c3", "bash")], list(range(15, 23))),
            ev(24, "tool/call", {"turn": 1, "step": 2, "callId": "c2", "name": "bash", "arguments": "{}"})]
    return log


def parallel_calls():
    """One model call asking for bash (call_1) and write (call_2) at once; both tool/calls
    logged, then a PreToolUse hook for each (matchers bash and write, in that order), an
    approval of the write, and the write's result before the bash's. A second step answers.

    Returns the LogBuilder and the seq of each of those events by name."""
    from dshreplay.testing.samples import LogBuilder
    b = LogBuilder("parallel")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("write a.py and run the tests")
    seqs = {"asked": b.assistant("", calls=[("call_1", "bash", '{"command": "make test"}'),
                                          ("call_2", "write", '{"path": "a.py"}')])}
    seqs["call_1"] = b.tool_call("call_1", "bash", '{"command": "make test"}')
    seqs["call_2"] = b.tool_call("call_2", "write", '{"path": "a.py"}')
    seqs["hook_bash"] = b.hook_invoked("PreToolUse", "cc:PreToolUse:1", matcher="bash")
    seqs["hook_bash_result"] = b.hook_result("PreToolUse", "cc:PreToolUse:1")
    seqs["hook_write"] = b.hook_invoked("PreToolUse", "cc:PreToolUse:2", matcher="write")
    seqs["hook_write_result"] = b.hook_result("PreToolUse", "cc:PreToolUse:2", decision="ask")
    seqs["approval_asked"], seqs["approval_decided"] = b.approval("call_2", "write")
    seqs["result_2"] = b.tool_result("call_2", "wrote a.py", cites=seqs["call_2"])
    seqs["result_1"] = b.tool_result("call_1", "4 passed", cites=seqs["call_1"])
    b.end_step()
    b.start_step()
    b.assistant("a.py is written and the tests pass.")
    b.end_turn()
    return b, seqs


def unstarted_calls(interrupted: bool = False):
    """A model call asking for call_a (bash), call_b (bash) and call_c (read); call_a runs and
    answers, call_b starts and never answers, call_c never starts. Then the turn is aborted
    (a step/end and a turn/end), or with `interrupted` the log ends there.

    Returns the LogBuilder and the seqs by name."""
    from dshreplay.testing.samples import LogBuilder
    b = LogBuilder("unstarted")
    b.start_turn()
    b.start_step()
    b.user("look around")
    seqs = {"asked": b.assistant("", calls=[("call_a", "bash", '{"command": "ls"}'),
                                          ("call_b", "bash", '{"command": "sleep 999"}'),
                                          ("call_c", "read", '{"path": "README"}')])}
    seqs["call_a"] = b.tool_call("call_a", "bash", '{"command": "ls"}')
    seqs["result_a"] = b.tool_result("call_a", "README", cites=seqs["call_a"])
    seqs["call_b"] = b.tool_call("call_b", "bash", '{"command": "sleep 999"}')
    if not interrupted:
        b.end_turn("aborted")
    return b, seqs


def interleaved_calls(broken: bool = False):
    """One model call asking for c1 and c2 (both bash with the same arguments) and c3 (read); their
    tool/calls logged in the order c3, c2, c1; a PreToolUse hook for read invoked; approvals asked
    for c2 then c1, c1's decided, the hook answered, c2's decided; c2's result (an error), c3's; an
    approval for "zz", a call the log never names otherwise; step 1 ends with c1 unanswered and
    step 2 opens with c1's result. With `broken`, a replacement whose start is not in the surface
    comes right after c2's result: the fold stops there.

    Seqs (by hand): 0 turn/start, 1 request/header, 2 step/start, 3 user, 4..26 the model call
    (23 chunks), 27 its message, 28 tool/call c3, 29 c2, 30 c1, 31 hook/invoked, 32 approval/asked
    c2, 33 approval/asked c1, 34 approval/decided c1, 35 hook/result, 36 approval/decided c2,
    37 tool/result c2; then (without `broken`) 38 tool/result c3, 39/40 zz's approval, 41 step/end,
    42 step/start, 43 tool/result c1, 44..51 a model call, 52 its message, 53 step/end, 54 turn/end.
    `broken` puts the bad replacement at 38 and moves everything after it one seq on."""
    from dshreplay.testing.samples import LogBuilder
    b = LogBuilder("interleaved")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("run ls twice and read the README")
    s = {"asked": b.assistant("", calls=[("c1", "bash", '{"command": "ls"}'), ("c2", "bash", '{"command": "ls"}'),
                                        ("c3", "read", '{"path": "README"}')])}
    s["call_3"] = b.tool_call("c3", "read", '{"path": "README"}')
    s["call_2"] = b.tool_call("c2", "bash", '{"command": "ls"}')
    s["call_1"] = b.tool_call("c1", "bash", '{"command": "ls"}')
    s["hook"] = b.hook_invoked("PreToolUse", "h-read", matcher="read")
    s["asked_2"], _ = b.approval("c2", "bash", outcome=None)
    s["asked_1"], s["decided_1"] = b.approval("c1", "bash", outcome="rejected")
    s["hook_result"] = b.hook_result("PreToolUse", "h-read", decision="allow")
    s["decided_2"] = b.add("approval/decided", {"id": b.event(s["asked_2"])["data"]["id"], "outcome": "allowed-once"})
    s["result_2"] = b.tool_result("c2", "ls: cannot open directory", cites=s["call_2"], is_error=True)
    if broken:
        s["bad"] = b.add("user/message", {"role": "user", "content": [{"type": "text", "text": "?"}], "id": "bad"},
                         surfaceOp={"op": "replace", "start": 999, "end": 999}, sourceEventSeqs=[999])
    s["result_3"] = b.tool_result("c3", "# README", cites=s["call_3"])
    s["asked_zz"], s["decided_zz"] = b.approval("zz", "bash")
    b.end_step()
    b.start_step()
    s["result_1"] = b.tool_result("c1", "a.py", cites=s["call_1"])
    b.assistant("done")
    b.end_turn()
    return b, s


def reused_call_id():
    """Turn 1 asks for c1 (read); its tool/call, a PreToolUse hook invoked for it, its result; the
    turn ends with the hook unanswered. Turn 2 asks for c1 again (bash, other arguments) and starts
    it; then the turn-1 hook's result (naming turn 1), a rewrite of the turn-1 result, and the new
    c1's result.

    Seqs (by hand): 0 turn/start, 1 step/start, 2 user, 3..11 chunks, 12 message, 13 tool/call c1
    (read), 14 hook/invoked, 15 tool/result, 16 step/end, 17 turn/end, 18 turn/start, 19 step/start,
    20 user, 21..29 chunks, 30 message, 31 tool/call c1 (bash), 32 hook/result, 33 the rewrite of 15,
    34 tool/result of the bash c1, 35 step/end, 36 turn/end."""
    from dshreplay.testing.samples import LogBuilder
    b = LogBuilder("reused")
    b.start_turn()
    b.start_step()
    b.user("read a")
    b.assistant("", calls=[("c1", "read", '{"path": "a"}')])
    s = {"call_read": b.tool_call("c1", "read", '{"path": "a"}')}
    s["hook"] = b.hook_invoked("PreToolUse", "h1")
    s["result_read"] = b.tool_result("c1", "a long text", cites=s["call_read"])
    b.end_turn()
    b.start_turn()
    b.start_step()
    b.user("list")
    b.assistant("", calls=[("c1", "bash", '{"command": "ls"}')])
    s["call_bash"] = b.tool_call("c1", "bash", '{"command": "ls"}')
    s["hook_result"] = b.hook_result("PreToolUse", "h1", turn=1)
    s["rewrite"] = b.rewrite_tool_result(s["result_read"], "[shortened]")
    s["result_bash"] = b.tool_result("c1", "a", cites=s["call_bash"])
    b.end_turn()
    return b, s


def turn_left_open():
    """Turn 1 (one step, a model call) has no turn/end (nor step/end): turn 2 starts, runs a step
    and ends; turn 3 starts and the log ends inside it.

    Seqs (by hand): 0 turn/start 1, 1 step/start, 2 user, 3..8 chunks, 9 message, 10 turn/start 2,
    11 step/start, 12 user, 13..18 chunks, 19 message, 20 step/end, 21 turn/end, 22 turn/start 3,
    23 step/start, 24 user, 25..30 chunks, 31 message."""
    from dshreplay.testing.samples import LogBuilder
    b = LogBuilder("left-open")
    for turn in (1, 2, 3):
        b.start_turn()
        b.start_step()
        b.user(f"turn {turn}")
        b.assistant("ok")
        if turn == 1:
            b.turn_open = b.step_open = False  # (no step/end, no turn/end)
        elif turn == 2:
            b.end_turn()
    return b


def hook_inside_a_compaction() -> list[dict]:
    """`compactions()` with a PreCompact hook run inside the first bracket, and a checkpoint with no
    bracket (an older dsh's) replacing 9 instead of the prune.

    0 turn/start, 1 step/start, 2-4 users, 5 compaction/start k1, 6 hook/invoked, 7 hook/result,
    8 summary k1, 9 the checkpoint replacing 2..3, 10 compaction/end k1, 11 user, 12 the unbracketed
    checkpoint k0 replacing 11, 13 step/end, 14 turn/end."""
    compact = {"kind": "plugin", "plugin": "compact"}
    hook = {"turn": 1, "point": "PreCompact", "handlerId": "h1", "dialect": "claude-code"}
    return [
        ev(0, "turn/start", {"turn": 1}),
        ev(1, "step/start", {"turn": 1, "step": 1}),
        user(2, "alpha"),
        user(3, "beta"),
        user(4, "gamma"),
        ev(5, "compaction/start", {"compactionId": "k1", "turn": 1}),
        ev(6, "hook/invoked", hook),
        ev(7, "hook/result", {**hook, "decision": "pass", "exitCode": 0, "durationMs": 3}),
        summary(8, "k1", [2, 3], 120),
        user(9, "summary of alpha and beta", replace(2, 3), [5, 8, 2, 3], **compact, compactionId="k1"),
        ev(10, "compaction/end", {"compactionId": "k1", "turn": 1}),
        user(11, "delta"),
        user(12, "summary of delta", replace(11, 11), [11], **compact, compactionId="k0"),
        ev(13, "step/end", {"turn": 1, "step": 1}),
        ev(14, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
    ]
