"""A fork child's seedLength is read by one rule (reader.seed_length), and every check of the
seed (validate's DSH-E014, spills' inheritance, lineage's comparison) gives the same answer."""

from __future__ import annotations

import pytest

import dshreplay
from dshreplay.io.reader import seed_length
from dshreplay.testing.samples import LogBuilder, fork

NOTE = "(Omitted {n} bytes. Full formatted result stored at: /tmp/spills/{name}.txt. Read it with the read tool.)"


@pytest.mark.parametrize(("value", "length"), [
    (0, 0), (5, 5), (5.0, 5), (2**53 - 1, 2**53 - 1),
    (5.5, None), (-1, None), (-1.0, None), ("5", None), (True, None), (False, None), (None, None),
    ([5], None), (2**53, None)])
def test_seed_length_is_a_non_negative_safe_integer_as_javascript_reads_it(value, length):
    got = seed_length({"seedLength": value})
    assert got == length and type(got) is type(length)


def test_a_header_without_seed_length_has_none():
    assert seed_length({"type": "session"}) is None


def _family(tmp_path, seed):
    """A parent with a spilled tool result in its first turn, and a fork child that inherits
    that turn (seqs 0..17, the spill at 15: seedLength 18, session/end-seed at 18) and spills
    once more itself (its result at seq 34)."""
    parent = LogBuilder("parent")
    parent.start_turn()
    parent.request_header()
    parent.start_step()
    parent.user("read the log")
    parent.tool_round("bash", '{"command": "cat big.log"}', "head\n" + NOTE.format(n=5000, name="a"))
    parent.end_turn()
    assert len(parent.events) == 18
    child = fork(parent, "child", 17, origin="subagent")
    child.start_turn()
    child.request_header(reason="resume")
    child.start_step()
    child.user("and the other one")
    child.tool_round("bash", '{"command": "cat other.log"}', "head\n" + NOTE.format(n=7000, name="b"))
    child.end_turn()
    assert child.header["seedLength"] == 18 and child.events[18]["type"] == "session/end-seed"
    child.header["seedLength"] = seed
    return parent.write(tmp_path / "parent.jsonl"), child.write(tmp_path / "child.jsonl")


@pytest.mark.parametrize("seed", [18, 18.0])
def test_validate_spills_and_lineage_read_a_whole_seed_length_alike(tmp_path, seed):
    parent, child = _family(tmp_path, seed)
    session = dshreplay.open(child)
    assert session.validate().findings == []
    assert [(s.seq, s.omitted, s.inherited) for s in session.spills()] == [(15, 5000, True), (34, 7000, False)]
    roots, problems = dshreplay.lineage([parent, child])
    node = roots[0].children[0]
    assert (problems, node.session_id, node.seed_length, node.seed_checked, node.problems) == \
        ([], "child", 18, True, [])
    assert type(node.seed_length) is int and node.to_json()["seedLength"] == 18


@pytest.mark.parametrize("seed", [18.5, -1, "18", True])
def test_no_check_reads_a_seed_length_that_is_no_such_number(tmp_path, seed):
    parent, child = _family(tmp_path, seed)
    session = dshreplay.open(child)
    codes = [(f.code, f.pointer) for f in session.validate().findings]
    assert codes == [("DSH-E003", "/seedLength")] and not any(c == "DSH-E014" for c, _ in codes)
    assert [s.inherited for s in session.spills()] == [False, False]
    roots, problems = dshreplay.lineage([parent, child])
    node = roots[0].children[0]
    assert (node.seed_length, node.seed_checked) == (None, None)
    assert node.problems == [f"header seedLength {dshreplay._jsvalues.shown(seed)} is not a non-negative safe "
                             "integer: the seed is not checked"]


def test_a_seed_length_past_the_end_seed_is_one_finding_and_a_seed_that_differs(tmp_path):
    parent, child = _family(tmp_path, 19.0)
    session = dshreplay.open(child)
    assert [(f.code, f.seq, f.message) for f in session.validate().findings] == [
        ("DSH-E014", 19, "header seedLength 19 points at turn/start, not session/end-seed")]
    assert [s.inherited for s in session.spills()] == [True, False]
    roots, _ = dshreplay.lineage([parent, child])
    node = roots[0].children[0]
    assert (node.seed_length, node.seed_checked, node.problems) == \
        (19, False, ["the parent has only 18 events; the seed needs 19"])
