"""stats figures and the lineage tree, on sample, scenario and corpus logs."""

from __future__ import annotations

import orjson

from dshreplay.analyses.lineage import lineage
from dshreplay.analyses.stats import totals
from dshreplay.session import Session
from dshreplay.testing.samples import fork_child, multi_turn

import scenarios
from conftest import SAMPLES


def usage_sums(path) -> dict:
    """Token totals by a plain scan of usage chunks (independent of dshreplay's call tracker)."""
    sums = {"inputTokens": 0, "outputTokens": 0}
    for event in Session(path).events:
        data = event.record.get("data")
        chunk = data.get("chunk") if type(data) is dict else None
        if type(chunk) is dict and chunk.get("type") == "usage":
            for key in sums:
                sums[key] += chunk["usage"].get(key, 0)
    return sums


def test_stats_of_the_audit_demo():
    path = SAMPLES / "audit-demo.jsonl"
    s = Session(path).stats().to_json()["sessions"][0]  # (as `stats LOG --json`: one session)
    assert (s["turns"], s["steps"], s["calls"], s["retries"]) == (4, 8, 8, 0)
    assert s["tools"] == {"bash": {"calls": 4, "errors": 0}}
    assert s["approvals"] == {"asked": 1, "decided": 1, "denied": 0, "undecided": 0}
    assert s["compactions"] == {"summaries": 1, "prunes": 0, "failed": 0, "open": 0}
    # 16 appended messages (4 a turn); the compaction took 5 of them off the surface
    assert s["surface"] == {"now": 12, "appended": 16, "forgotten": 5}
    sums = usage_sums(path)
    assert (s["tokens"]["input"], s["tokens"]["output"]) == (sums["inputTokens"], sums["outputTokens"])
    assert s["times"]["turns"]["count"] == 4 and s["times"]["tools"]["count"] == 4


def test_stats_of_scenarios_and_totals(write_log):
    compactions = Session(write_log([scenarios.HEADER, *scenarios.compactions()])).stats()
    crashed = Session(write_log([scenarios.HEADER, *scenarios.rewrite_then_crash()])).stats()
    assert compactions.compactions == {"summaries": 2, "prunes": 1, "failed": 0, "open": 0}
    assert (compactions.appended, compactions.forgotten, compactions.surface_now) == (4, 4, 2)
    assert crashed.tools == {"bash": {"calls": 2, "errors": 0}}
    assert crashed.tokens["input"] == 300 and crashed.calls == 2
    total = totals([compactions, crashed])
    assert (total.turns, total.calls, total.tokens["input"]) == (2, 2, 300)
    assert total.compactions["summaries"] == 2


def test_stats_on_a_corpus_subagent_log(corpus_dir):
    s = Session(corpus_dir / "upstream" / "acp-agent__subagent-mixed__session.2.jsonl").stats()
    assert s.calls >= 1 and s.turns >= 1 and s.forgotten == 0


def test_lineage_verifies_corpus_fork_seeds(corpus_dir):
    names = ["acp-agent__subagent-fork-in-process__session.jsonl",
             "acp-agent__subagent-fork-in-process__session.1.jsonl",
             "acp-agent__subagent-mixed__session.jsonl", "acp-agent__subagent-mixed__session.1.jsonl",
             "acp-agent__subagent-mixed__session.2.jsonl"]
    roots, problems = lineage([corpus_dir / "upstream" / n for n in names])
    assert problems == []
    fork, mixed = roots
    assert [(c.path.endswith("session.1.jsonl"), c.seed_checked, c.problems) for c in fork.children] == [
        (True, True, [])]
    assert [(c.seed_length, c.seed_checked) for c in mixed.children] == [(None, None), (36, True)]
    assert mixed.children[1].origin == "subagent" and mixed.children[1].depth == 1


def test_lineage_reports_the_first_seed_difference(tmp_path):
    parent = multi_turn()
    parent.write(tmp_path / "parent.jsonl")
    child = fork_child()
    child.events[3]["data"]["content"][0]["text"] = "not what the parent said"
    child.write(tmp_path / "child.jsonl")
    roots, _ = lineage([tmp_path / "parent.jsonl", tmp_path / "child.jsonl"])
    [node] = roots[0].children
    assert node.seed_checked is False
    assert node.problems == ["seed event 3 (user/message) differs from the parent's (user/message)"]


def test_lineage_flags_missing_parents_and_cycles(tmp_path):
    header = {"type": "session", "version": 0, "createdAt": 1, "delegationDepth": 1}
    for name, own, parent in (("a", "A", "B"), ("b", "B", "A"), ("c", "C", "ghost")):
        (tmp_path / f"{name}.jsonl").write_bytes(orjson.dumps({**header, "id": own, "parentSession": parent})
                                                 + b"\n")
    roots, problems = lineage(sorted(tmp_path.glob("*.jsonl")))
    found = {r.session_id: r.problems for r in roots}
    assert found["C"] == ['parent session "ghost" not found']
    assert any("cycle" in p for p in found.get("A", []) + found.get("B", []))


def test_lineage_discovers_a_store_root(tmp_path):
    for project, session in (("proj-a", "s1"), ("proj-b", "s2")):
        folder = tmp_path / project / session
        folder.mkdir(parents=True)
        multi_turn().write(folder / ("session.jsonl.zstd" if session == "s2" else "session.jsonl"))
    roots, problems = lineage([tmp_path])
    assert len(roots) == 2 and problems == []
    assert roots[1].problems == [f"session id also used by {tmp_path / 'proj-a' / 's1' / 'session.jsonl'}"]
