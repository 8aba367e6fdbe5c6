"""view.html's change list is the fold's own: applied up to any seq it gives exactly the nodes
`fold --at S --json` gives (`Session.fold(S).to_json()`), on every sample log and every shape of
`dshreplay.testing.shapes`, whole or damaged, at every seq (and it stops where the fold fails)."""

from __future__ import annotations

import json

import pytest

from dshreplay.session import Session
from dshreplay.testing import shapes
from dshreplay.viewer._model import build_view, runs, view_at

from conftest import SAMPLES

SAMPLE_LOGS = sorted(p.name for p in SAMPLES.iterdir() if p.name.endswith((".jsonl", ".zstd"))
                     and p.name != "broken-version-1.jsonl")  # (no header it reads: see test_view_command)


def _folded(session: Session, seq: int) -> list[int]:
    """The nodes `fold --at seq --json` gives (`Session.fold(seq).to_json()`, what it prints)."""
    return [node["seq"] for node in session.fold(seq).to_json()["nodes"]]


def _check_every_seq(path) -> dict:
    session = Session(path)
    page = build_view(session.source, "t")
    data = page.to_json()
    report = session.fold()
    if page.failure is None:
        for seq in range(page.last + 1):
            assert view_at(data["ops"], seq) == _folded(session, seq), (path, seq)
        assert report.error is None or report.error.kind == "derive"
    else:
        failed = page.failure.seq
        assert data["last"] == failed and data["failure"]["seq"] == failed
        for seq in range(failed):
            assert view_at(data["ops"], seq) == _folded(session, seq), (path, seq)
        assert max((op[0] for op in data["ops"]), default=-1) < failed  # (nothing past the failure)
        assert report.error is not None and report.error.seq == failed
    return data


@pytest.mark.parametrize("name", SAMPLE_LOGS)
def test_the_change_list_gives_the_fold_at_every_seq_of_every_sample_log(name, cli):
    data = _check_every_seq(SAMPLES / name)
    if name == "compaction.jsonl":  # (the one replacement: seq 67 replaces nodes 3..37, five of them)
        assert [op for op in data["ops"] if len(op) > 1] == [[67, 3, 5]]
        folded = cli("fold", SAMPLES / name, "--at", 70, "--json").json()
        assert view_at(data["ops"], 70) == [node["seq"] for node in folded["nodes"]] == [67, 47, 49, 60, 69]


@pytest.mark.parametrize("shape", sorted(shapes.SHAPES))
def test_the_change_list_gives_the_fold_at_every_seq_of_every_shape(shape, tmp_path):
    path = tmp_path / ("log.jsonl.zstd" if shapes.SHAPES[shape]().zstd else "log.jsonl")
    path.write_bytes(shapes.write(shapes.SHAPES[shape]()))
    _check_every_seq(path)


@pytest.mark.parametrize("damage", [d for d in shapes.DAMAGES if d != "none"])
def test_a_damaged_log_gives_the_fold_up_to_where_it_fails(damage, tmp_path):
    shape = shapes.SHAPES["compaction-chain"]()
    path = tmp_path / "log.jsonl"
    path.write_bytes(shapes.write(shape, damage, at=9))
    _check_every_seq(path)


def test_nodes_carry_their_replacement_pairing_and_provenance():
    page = build_view(Session(SAMPLES / "compaction.jsonl").source, "t").to_json()
    types = page["types"]
    nodes = {n[0]: n for n in page["nodes"]}
    seq, kind, role, blocks, prov, pairs = nodes[67]
    assert (types[kind], role, blocks[0][0]) == ("user/message", "user", "text")
    # its sourceEventSeqs as written (the bracket's start and summary, then the five it replaced), in runs;
    # its origins (those and everything they cite: chunks, the tool call) the page follows from the nodes
    assert prov == {"kind": "summary", "cid": "compaction-0011", "hid": [3, 19, 21, 32, 37],
                    "src": [[65, 66], [3, 3], [19, 19], [21, 21], [32, 32], [37, 37]]}
    assert _origins_as_the_page_follows_them(nodes, 67) == [[3, 21], [24, 32], [37, 37], [65, 66]]
    assert nodes[3][4] == {"by": 67}  # (a node the summary took off the view names it)
    assert nodes[47][3][0][:2] == ["call", "call-0007"] and nodes[47][5] == {"call-0007": [47, 49]}
    assert nodes[47][4] == {"src": [[38, 46]]}  # (its chunks, one run)
    assert nodes[49][3][0][0] == "result" and nodes[49][5] == {"call-0007": [47, 49]}
    assert json.dumps(page["compactions"]) == '[[65, 68, "compaction compaction-0011", "closed"]]'
    assert page["calls"][4] == [70, 78, 5, "tool-calls", False]
    assert page["steps"][:2] == [[2, 22, "1", "1"], [23, 33, "1", "2"]]


def _origins_as_the_page_follows_them(nodes: dict, seq: int) -> list[list[int]]:
    """view.html's originsOf, step for step: the closure of the nodes' whole source runs."""
    seen: set[int] = set()
    stack: list[int] = []

    def push(n: int) -> None:
        for first, last in nodes[n][4].get("src", []) if n in nodes else []:
            stack.extend(range(first, last + 1))
    push(seq)
    while stack:
        s = stack.pop()
        if s not in seen:
            seen.add(s)
            push(s)
    return runs(sorted(seen))


@pytest.mark.parametrize("name", ["compaction.jsonl", "prune.jsonl", "tool-result-rewrite.jsonl", "audit-demo.jsonl"])
def test_the_page_has_what_it_needs_for_every_replacement_s_origins(name):
    session = Session(SAMPLES / name)
    page = build_view(session.source, "t")
    nodes = {n[0]: n for n in page.to_json()["nodes"]}
    replacements = [r.seq for r in page.index.shadows]
    assert replacements
    for seq in replacements:
        assert _origins_as_the_page_follows_them(nodes, seq) == runs(s for s, _ in page.index.origins(seq)), seq
