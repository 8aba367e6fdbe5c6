"""The surface fold: FORMAT.md section 6, rule by rule, plus the at-S property."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshreplay.core.driver import states_at
from dshreplay.core.surface import SurfaceFold, derive_message, fold
from dshreplay.errors import DeriveError, FoldError
from dshreplay.io.reader import Event, LogSource
from dshreplay.testing.samples import LogBuilder


def events_of(records) -> list[Event]:
    return [Event(i, r.get("type"), r, i + 2) for i, r in enumerate(records)]


def user(text="u", **env):
    return {"type": "user/message", "data": {"role": "user", "content": [{"type": "text", "text": text}]},
            **env}


def log_only(type_="turn/start", **env):
    return {"type": type_, "data": {"turn": 1}, **env}


def fold_error(records) -> FoldError:
    with pytest.raises(FoldError) as err:
        fold(events_of(records))
    return err.value


# -- appends and replacements ----------------------------------------------

def test_appends_build_the_surface_in_log_order():
    state = fold(events_of([log_only(), user("a", surfaceOp="append"), log_only("step/start"),
                            user("b", surfaceOp="append")]))
    assert state.nodes == (1, 3)
    assert state.seq == 3
    assert [m["content"][0]["text"] for m in state.messages()] == ["a", "b"]


def test_replace_splices_the_range_and_records_what_it_shadowed():
    recs = [user("a", surfaceOp="append"), user("b", surfaceOp="append"), user("c", surfaceOp="append"),
            user("d", surfaceOp="append"),
            user("sum", surfaceOp={"op": "replace", "start": 1, "end": 2}, sourceEventSeqs=[1, 2])]
    state = fold(events_of(recs))
    assert state.nodes == (0, 4, 3)
    assert [r.to_json() for r in state.replacements] == [
        {"seq": 4, "start": 1, "end": 2, "shadowedSeqs": [1, 2]}]


def test_replace_of_a_replacement_shadows_the_replacement():
    recs = [user(surfaceOp="append"), user(surfaceOp="append"),
            user(surfaceOp={"op": "replace", "start": 0, "end": 1}, sourceEventSeqs=[0, 1]),
            user(surfaceOp="append"),
            user(surfaceOp={"op": "replace", "start": 2, "end": 3}, sourceEventSeqs=[2, 3])]
    state = fold(events_of(recs))
    assert state.nodes == (4,)
    assert [r.shadowed_seqs for r in state.replacements] == [(0, 1), (2, 3)]


def test_replace_range_follows_surface_order_not_seq_order():
    # after seq 3 replaces 0..0 it sits first: a range 3..1 is valid
    recs = [user(surfaceOp="append"), user(surfaceOp="append"), user(surfaceOp="append"),
            user(surfaceOp={"op": "replace", "start": 0, "end": 0}, sourceEventSeqs=[0]),
            user(surfaceOp={"op": "replace", "start": 3, "end": 1}, sourceEventSeqs=[3, 1])]
    assert fold(events_of(recs)).nodes == (4, 2)


def test_float_integers_count_as_integers_like_in_javascript():
    recs = [user(surfaceOp="append"), user(surfaceOp="append", seq=1.0),
            user(surfaceOp={"op": "replace", "start": 0.0, "end": 1}, sourceEventSeqs=[0, 1.0])]
    assert fold(events_of(recs)).nodes == (2,)


# -- rejections, each with its code and seq ---------------------------------

@pytest.mark.parametrize("records,code,seq,text", [
    ([log_only(seq=0), log_only(seq=2)], "DSH-E101", 1, "seq 2 is not contiguous; expected 1"),
    ([log_only(seq="0")], "DSH-E101", 0, 'seq "0" is not contiguous'),
    ([log_only(surfaceOp="append")], "DSH-E102", 0, "cannot carry surfaceOp"),
    ([log_only(sourceEventSeqs=[])], "DSH-E102", 0, "cannot carry sourceEventSeqs"),
    ([log_only(surfaceOp=None)], "DSH-E102", 0, "cannot carry surfaceOp"),
    ([user()], "DSH-E103", 0, "requires a surfaceOp"),
    ([user(surfaceOp="prepend")], "DSH-E104", 0, "invalid surfaceOp"),
    ([user(surfaceOp=None)], "DSH-E104", 0, "invalid surfaceOp"),
    ([user(surfaceOp=[1])], "DSH-E104", 0, "invalid surfaceOp"),
    ([user(surfaceOp="append"), user(surfaceOp={"op": "replace", "start": 0, "end": 0, "x": 1})],
     "DSH-E105", 1, "invalid replace surfaceOp"),
    ([user(surfaceOp="append"), user(surfaceOp={"op": "swap", "start": 0, "end": 0})],
     "DSH-E105", 1, "invalid replace surfaceOp"),
    ([user(surfaceOp="append"), user(surfaceOp={"op": "replace", "start": -1, "end": 0})],
     "DSH-E105", 1, "invalid replace surfaceOp"),
    ([user(surfaceOp="append"), user(surfaceOp={"op": "replace", "start": 0, "end": 0.5})],
     "DSH-E105", 1, "invalid replace surfaceOp"),
    ([user(surfaceOp="append", sourceEventSeqs=5)], "DSH-E106", 0, "must be an array"),
    ([user(surfaceOp="append", sourceEventSeqs=[])], "DSH-E106", 0, "must not be empty"),
    ([log_only(), user(surfaceOp="append", sourceEventSeqs=[True])], "DSH-E106", 1,
     "sourceEventSeqs[0] is true"),
    ([log_only(), log_only(), user(surfaceOp="append", sourceEventSeqs=[0, 0])], "DSH-E106", 2,
     "duplicates"),
    ([log_only(), user(surfaceOp="append", sourceEventSeqs=[0, 1])], "DSH-E106", 1,
     "1 >= current seq 1"),
    ([user(surfaceOp="append"), user(surfaceOp={"op": "replace", "start": 7, "end": 0},
                                     sourceEventSeqs=[0])], "DSH-E107", 1, "start seq 7"),
    ([user(surfaceOp="append"), user(surfaceOp={"op": "replace", "start": 0, "end": 7},
                                     sourceEventSeqs=[0])], "DSH-E108", 1, "end seq 7"),
    ([user(surfaceOp="append"), user(surfaceOp="append"),
      user(surfaceOp={"op": "replace", "start": 1, "end": 0}, sourceEventSeqs=[0, 1])],
     "DSH-E109", 2, "start seq 1 comes after end seq 0 on the surface"),
    ([user(surfaceOp="append"), user(surfaceOp="append"),
      user(surfaceOp={"op": "replace", "start": 0, "end": 1}, sourceEventSeqs=[0])],
     "DSH-E110", 2, "missing 1"),
    ([user(surfaceOp="append"), user(surfaceOp="append"),
      user(surfaceOp={"op": "replace", "start": 0, "end": 1})],
     "DSH-E110", 2, "missing 0, 1"),
])
def test_fold_rejects_with_dsh_meaning_and_the_breaking_seq(records, code, seq, text):
    err = fold_error(records)
    assert (err.code, err.seq, err.line) == (code, seq, seq + 2)
    assert text in err.message


@pytest.mark.parametrize("sources, outcome", [
    ([2, 3], None),  # a run of earlier seqs (the common case)
    ([2, 3.0], None),  # 3.0 is the number 3, as in JavaScript
    ([3, 4, 5], ("4 >= current seq 4", "/sourceEventSeqs/1")),  # a run that reaches this event
    ([5, 6], ("5 >= current seq 4", "/sourceEventSeqs/0")),
    ([1, True], ("sourceEventSeqs[1] is true", "/sourceEventSeqs/1")),  # (1 == True in Python)
    ([2, 3, 3], ("duplicates", "/sourceEventSeqs")),
    ([3, 2], None),  # any order
    ([2, 3, 9], ("9 >= current seq 4", "/sourceEventSeqs/2")),
])
def test_sources_are_judged_the_same_whether_or_not_they_run_consecutively(sources, outcome):
    records = [log_only(), log_only(), log_only(), log_only(), user(surfaceOp="append", sourceEventSeqs=sources)]
    if outcome is None:
        assert fold(events_of(records)).nodes == (4,)
        return
    err = fold_error(records)
    assert (err.code, err.seq, err.pointer) == ("DSH-E106", 4, outcome[1])
    assert outcome[0] in err.message


def test_a_replace_is_judged_by_its_range_before_its_sources_cite_later_events():
    err = fold_error([user(surfaceOp="append"), user(surfaceOp={"op": "replace", "start": 7, "end": 0},
                                                     sourceEventSeqs=[2, 3])])
    assert err.code == "DSH-E107"


def test_empty_sources_are_allowed_on_an_assistant_message():
    rec = {"type": "assistant/message", "data": {"message": {"role": "assistant", "content": []}},
           "surfaceOp": "append", "sourceEventSeqs": []}
    state = fold(events_of([rec]))
    assert state.nodes == (0,)
    assert state.messages() == []  # empty content projects to no message


def test_a_rejected_event_leaves_the_state_untouched():
    f = SurfaceFold()
    good = events_of([user(surfaceOp="append"), user(surfaceOp="append"),
                      user(surfaceOp={"op": "replace", "start": 0, "end": 1}, sourceEventSeqs=[0])])
    f.apply(good[0])
    f.apply(good[1])
    with pytest.raises(FoldError) as rejected:
        f.apply(good[2])
    assert f.nodes == [0, 1] and f.replacements == []
    assert f.resume(good[2], rejected.value) is None
    assert f.next_seq == 3 and f.nodes == [0, 1]


# -- tool/result rewrites ---------------------------------------------------

def tool_log(builder):
    b = builder()
    b.user("read it")
    _, result = b.tool_round("read", "{}", "original output")
    return b, result


def test_tool_result_rewrite_may_change_the_first_result_content(builder):
    b, result = tool_log(builder)
    rewrite = b.rewrite_tool_result(result, "shorter")
    state = fold(events_of(b.events))
    assert state.nodes[-1] == rewrite
    assert state.messages()[-1]["content"][0]["content"] == [{"type": "text", "text": "shorter"}]


def test_tool_result_rewrite_changing_other_fields_is_rejected(builder):
    b, result = tool_log(builder)
    seq = b.rewrite_tool_result(result, "shorter")
    b.events[seq]["data"]["message"]["content"][0]["isError"] = True
    err = fold_error(b.events)
    assert (err.code, err.seq) == ("DSH-E111", seq)
    assert "may change only the first result's content" in err.message


def test_tool_result_rewrite_ignores_blocks_after_the_first_as_dsh_does(builder):
    b, result = tool_log(builder)
    seq = b.rewrite_tool_result(result, "shorter")
    b.events[seq]["data"]["message"]["content"].append({"type": "text", "text": "extra"})
    assert fold(events_of(b.events)).nodes[-1] == seq


def test_tool_result_rewrite_must_target_one_tool_result(builder):
    b, result = tool_log(builder)
    first = b.surface()[0]
    data = copy.deepcopy(b.events[result]["data"])
    seq = b.add("tool/result", data, sourceEventSeqs=[first], surfaceOp={"op": "replace", "start": first,
                                                                        "end": first})
    err = fold_error(b.events)
    assert (err.code, err.seq) == ("DSH-E111", seq)
    assert "must target a tool/result" in err.message
    b.events.pop()
    nodes = b.surface()
    b.add("tool/result", data, sourceEventSeqs=nodes[-2:], surfaceOp={"op": "replace", "start": nodes[-2],
                                                                     "end": nodes[-1]})
    assert "exactly one node, not 2" in fold_error(b.events).message


# -- message projection ------------------------------------------------------

def test_projection_of_each_surface_type():
    u = Event(0, "user/message", {"data": {"role": "user", "content": []}}, 2)
    a = Event(1, "assistant/message", {"data": {"message": {"role": "assistant", "content": "x"}}}, 3)
    t = Event(2, "tool/result", {"data": {"message": {"role": "user", "content": []}}}, 4)
    assert derive_message(u) == (True, {"role": "user", "content": []})
    assert derive_message(a) == (True, {"role": "assistant", "content": "x"})
    assert derive_message(t) == (True, {"role": "user", "content": []})


@pytest.mark.parametrize("record,pointer", [
    ({"type": "assistant/message", "data": {"content": []}}, "/data/message"),
    ({"type": "assistant/message", "data": {"message": {"role": "assistant"}}}, "/data/message/content"),
    ({"type": "tool/result", "data": {"callId": "c", "content": []}}, "/data/message"),
])
def test_projection_fails_where_dsh_would_crash(record, pointer):
    with pytest.raises(DeriveError) as err:
        derive_message(Event(4, record["type"], record, 6))
    assert (err.value.seq, err.value.line, err.value.pointer) == (4, 6, pointer)


# -- state at seq S ------------------------------------------------------------

operations = st.lists(st.tuples(st.sampled_from(["user", "tool", "answer", "compact", "prune", "rewrite"]),
                                st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=14)


def build_random_log(ops) -> LogBuilder:
    b = LogBuilder()
    b.start_turn()
    b.start_step()
    for op, x, y in ops:
        nodes = b.surface()
        if op == "user" or not nodes:
            b.user(f"message {x}")
        elif op == "tool":
            b.tool_round("bash", f'{{"n": {x}}}', "out " * y)
        elif op == "answer":
            b.assistant("answer" if x % 3 else "", reasoning="why" if y % 2 else None)
        elif op in ("compact", "prune"):
            i, j = sorted((x % len(nodes), y % len(nodes)))
            (b.compaction if op == "compact" else b.prune)(nodes[i], nodes[j], f"summary {x}")
        else:
            results = [s for s in nodes if b.events[s]["type"] == "tool/result"]
            if results:
                b.rewrite_tool_result(results[x % len(results)], f"rewritten {y}")
    return b


@settings(max_examples=60, deadline=None)
@given(operations)
def test_state_at_n_equals_the_fold_of_the_first_n_plus_one_events(ops):
    b = build_random_log(ops)
    events = events_of(b.events)
    states = states_at(LogSource(b.to_bytes()), range(len(events)))  # one pass of the driver
    incremental = [states[n] for n in range(len(events))]
    assert len(incremental) == len(events)
    for n, state in enumerate(incremental):
        again = fold(events[:n + 1])
        assert state.seq == again.seq == n
        assert state.nodes == again.nodes
        assert state.replacements == again.replacements
        assert state.messages() == again.messages()
