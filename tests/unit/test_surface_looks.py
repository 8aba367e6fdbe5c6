"""Successive looks at the surface (`analyses.surfacelooks`): what stayed, what is new, in time
for what changed (export's calls.jsonl asks at every model call)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dshreplay.analyses._surfacelooks import SurfaceLooks
from dshreplay.core.surface import SurfaceFold
from dshreplay.io.reader import Event


def user(seq: int) -> Event:
    return Event(seq, "user/message", {"type": "user/message", "seq": seq, "time": 1783352166000 + seq,
                                       "surfaceOp": "append",
                                       "data": {"content": [{"type": "text", "text": f"m{seq}"}]}}, seq + 1)


def replace(seq: int, start: int, end: int, shadowed: list[int]) -> Event:
    record = {"type": "user/message", "seq": seq, "time": 1783352166000 + seq, "sourceEventSeqs": shadowed,
              "surfaceOp": {"op": "replace", "start": start, "end": end},
              "data": {"content": [{"type": "text", "text": f"r{seq}"}]}}
    return Event(seq, "user/message", record, seq + 1)


def test_a_look_keeps_the_nodes_before_the_first_one_replaced_and_gives_the_rest():
    fold = SurfaceFold()
    looks = SurfaceLooks(fold)
    for seq in range(4):
        fold.apply(user(seq))
    assert looks.look() == (0, [0, 1, 2, 3])
    fold.apply(user(4))
    assert looks.look() == (4, [4])  # (grown only)
    fold.apply(replace(5, 2, 3, [2, 3]))
    fold.apply(user(6))
    assert looks.look() == (2, [5, 4, 6])  # (0 and 1 stand; 5 took the place of 2..3)
    fold.apply(replace(7, 6, 6, [6]))  # (the newest node replaced)
    assert looks.look() == (4, [7])
    assert looks.nodes == fold.nodes == [0, 1, 5, 4, 7]
    looks.forget()
    assert looks.look() == (0, [0, 1, 5, 4, 7])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 10**6), st.integers(0, 3), st.booleans()), max_size=40))
def test_every_look_is_the_surface(steps):
    fold = SurfaceFold()
    looks = SurfaceLooks(fold)
    seq = 0
    for is_replace, at, width, look in steps:
        nodes = fold.nodes
        if is_replace and nodes:
            start = at % len(nodes)
            shadowed = nodes[start:start + width + 1]
            fold.apply(replace(seq, shadowed[0], shadowed[-1], shadowed))
        else:
            fold.apply(user(seq))
        seq += 1
        if look:
            before = list(looks.nodes)
            kept, tail = looks.look()
            assert looks.nodes == fold.nodes == before[:kept] + tail
