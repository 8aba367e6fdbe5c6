"""A model call is one stream of chunks of a turn/step: chunks whose turn or step is an
array or an object belong to the call of the same JSON value, never to one whose value
is a string of that text; plain values key as themselves (1 and 1.0 are one number)."""

from __future__ import annotations

from dshreplay.session import Session


def _log(keys: list[tuple[object, object]]) -> list[dict]:
    records: list[dict] = [{"type": "session", "version": 0, "id": "s"}]
    for turn, step in keys:
        records.append({"type": "assistant/chunk", "seq": len(records) - 1, "time": 1000 + len(records),
                        "data": {"turn": turn, "step": step, "chunk": {"type": "text-delta", "text": "x"}}})
    return records


def _calls(write_log, keys: list[tuple[object, object]]) -> list[tuple[int, int, int]]:
    calls, _ = Session(write_log(_log(keys))).call_list()
    return [(c.call, c.first_chunk_seq, c.last_chunk_seq) for c in calls]


def test_chunks_of_an_array_or_object_turn_join_the_call_of_the_same_json(write_log):
    keys = [([1], {"a": 1}), ("[1]", {"a": 1}), ([1], {"a": 1}), ([1], '{"a":1}'), ("[1]", {"a": 1})]
    assert _calls(write_log, keys) == [(1, 0, 2), (2, 1, 4), (3, 3, 3)]


def test_equal_numbers_are_one_stream_and_null_is_its_own(write_log):
    keys = [(1, 2), (1.0, 2.0), (None, 2), (1, 2), (None, None)]
    assert _calls(write_log, keys) == [(1, 0, 3), (2, 2, 2), (3, 4, 4)]
