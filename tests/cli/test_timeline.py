"""`timeline`: a session's spans as Chrome Trace Event JSON (Perfetto, chrome://tracing) and as rows.

The structure is checked over every corpus log (phases, nesting of complete events on a
track, async pairs balanced, timestamps monotonic per track, counts equal to `stats`); one
sample's figures are worked out by hand from its lines.
"""

from __future__ import annotations

import json

import pytest

from dshreplay.analyses.spans import session_timeline
from dshreplay.io.reader import LogSource
from dshreplay.testing.samples import LogBuilder
from dshreplay.traces._chrome import chrome_trace

from conftest import CORPUS, SAMPLES, corpus_available

PHASES = {"M", "X", "b", "e", "i", "C"}


def _corpus_logs():
    if not corpus_available():
        return [pytest.param(None, id="corpus-absent")]
    index = json.loads((CORPUS / "index.json").read_text())
    return [pytest.param(f, id=f) for e in index["logs"] for f in [f"{e['name']}.jsonl", *e["variants"]]]


def check_structure(trace: dict, stats) -> None:
    """The checks a trace viewer relies on (see the module)."""
    events = trace["traceEvents"]
    assert {e["ph"] for e in events} <= PHASES
    last: dict[object, float] = {}
    stacks: dict[int, list[tuple[float, float]]] = {}
    open_async: dict[tuple[str, str], float] = {}
    for e in events:
        if e["ph"] == "M":
            continue
        track = ("async", e["id"]) if e["ph"] in "be" else ("counter", e["name"]) if e["ph"] == "C" else e["tid"]
        assert e["ts"] >= last.get(track, 0.0), f"time goes back on {track}: {e}"
        last[track] = e["ts"]
        if e["ph"] == "X":
            assert e["dur"] >= 0
            stack = stacks.setdefault(e["tid"], [])
            while stack and stack[-1][1] < e["ts"] + e["dur"] and stack[-1][1] <= e["ts"]:
                stack.pop()
            if stack:  # nested: wholly inside the event it starts in
                assert stack[-1][0] <= e["ts"] and e["ts"] + e["dur"] <= stack[-1][1], f"{e} overlaps {stack[-1]}"
            stack.append((e["ts"], e["ts"] + e["dur"]))
        elif e["ph"] == "b":
            assert (e["cat"], e["id"]) not in open_async
            open_async[(e["cat"], e["id"])] = e["ts"]
        elif e["ph"] == "e":
            assert open_async.pop((e["cat"], e["id"])) <= e["ts"]
    assert open_async == {}
    complete = [e["cat"] for e in events if e["ph"] == "X"]
    assert complete.count("turn") == stats.turns
    assert complete.count("step") == stats.steps
    assert complete.count("call") == stats.calls
    tools = sum(1 for e in events if e["ph"] == "b" and e["cat"] == "tool")
    assert tools == sum(t["calls"] for t in stats.tools.values())
    assert sum(1 for e in events if e["ph"] == "i" and e["cat"] == "failure") == len(stats.failures)


@pytest.mark.parametrize("filename", _corpus_logs())
def test_every_corpus_log_gives_a_well_formed_trace(corpus_dir, filename):
    timeline = session_timeline(LogSource(corpus_dir / "upstream" / filename))
    trace = chrome_trace(timeline)
    check_structure(trace, timeline.stats)
    assert trace["metadata"]["axis"] == ("time" if timeline.timed else "seq")


def test_a_sample_by_hand(cli):
    trace = cli("timeline", SAMPLES / "compaction.jsonl").json()
    # createdAt 1783352165190; turn/start seq 0 at ...197, its turn/end seq 34 at ...343; call 1: chunks
    # seq 4 (...221) to 18 (...263); the compaction bracket seq 65 (...492) to 68 (...513), its checkpoint
    # seq 67 (...506)
    first = {e["name"]: e for e in reversed(trace["traceEvents"]) if e["ph"] == "X"}
    assert (first["turn 1"]["ts"], first["turn 1"]["dur"]) == (7000, 146000)
    assert (first["call 1"]["ts"], first["call 1"]["dur"]) == (31000, 42000)
    assert first["call 1"]["args"]["usage"] == {"inputTokens": 1880, "outputTokens": 30, "cacheReadTokens": 0,
                                                "reasoningTokens": 8}
    assert (first["compaction"]["ts"], first["compaction"]["dur"], first["compaction"]["tid"]) == (302000, 21000, 2)
    replacement = [e for e in trace["traceEvents"] if e["cat" if "cat" in e else "ph"] == "replacement"]
    assert [(e["ts"], e["args"]["shadowedSeqs"]) for e in replacement] == [(316000, [3, 19, 21, 32, 37])]
    assert trace["metadata"]["axis"] == "time" and trace["metadata"]["sessionId"] == "sample-compaction"
    tools = [(e["ph"], e["ts"]) for e in trace["traceEvents"] if e.get("cat") == "tool"]
    assert tools[:2] == [("b", 87000), ("e", 94000)]


def test_the_sample_logs_too(cli):
    for log in ("audit-demo.jsonl", "compaction.jsonl", "fork-child.jsonl", "multi-turn.jsonl", "prune.jsonl",
                "packed-rows.jsonl", "tool-result-rewrite.jsonl"):
        timeline = session_timeline(LogSource(SAMPLES / log))
        check_structure(chrome_trace(timeline), timeline.stats)


def test_a_log_without_times_is_drawn_on_seqs(cli, tmp_path):
    b = LogBuilder()
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("hello")
    b.assistant("hi")
    b.end_step()
    b.end_turn()
    log = b.write(tmp_path / "projected.jsonl", layout="projected")
    trace = cli("timeline", log).json()
    assert trace["metadata"]["axis"] == "seq" and trace["metadata"]["unit"] == "one microsecond per seq"
    turn = next(e for e in trace["traceEvents"] if e.get("cat") == "turn")
    assert (turn["ts"], turn["dur"]) == (0, turn["args"]["endSeq"])


def test_json_rows_hold_the_same_spans(cli):
    rows = cli("timeline", SAMPLES / "compaction.jsonl", "--format", "json").json()
    assert [s["kind"] for s in rows["spans"]].count("call") == 6
    assert rows["spans"][0] == {"kind": "session", "key": "session", "name": "session", "parent": None,
                                "startSeq": 0, "endSeq": 94, "startTime": 1783352165197,
                                "endTime": 1783352165627, "attributes": {"sessionId": "sample-compaction"}}
    assert rows["view"][0] == {"seq": 3, "time": 1783352165218, "messages": 1, "bytes": rows["view"][0]["bytes"]}


def test_a_fold_failure_stops_the_spans_and_exits_1(cli):
    result = cli("timeline", SAMPLES / "broken-replace-start-not-found.jsonl", expect=1)
    assert result.json()["metadata"]["answeredUpTo"] is not None


def test_the_library_answers_up_to_the_failure_and_names_it(tmp_path):
    from dshreplay.session import Session
    from dshreplay.testing.samples import compacted, damaged
    log = tmp_path / "damaged.jsonl"
    log.write_bytes(damaged(compacted(), "missing", 20))
    session = Session(log)
    spans = session.timeline()
    assert spans.stats.answered_up_to == 19 and (session.partial.code, session.partial.seq) == ("DSH-E101", 20)
    assert max(s.end_seq for s in spans.spans) == 19
    assert session.calls() and session.partial is not None
    session.lines(1, 2)
    assert session.partial is None


def test_every_other_event_is_an_instant_on_the_log_track(cli):
    trace = cli("timeline", SAMPLES / "audit-demo.jsonl").json()
    log = [(e["name"], e["args"]["seq"]) for e in trace["traceEvents"] if e.get("tid") == 4 and e["ph"] == "i"]
    lines = [json.loads(line) for line in (SAMPLES / "audit-demo.jsonl").read_text().splitlines()[1:]]
    drawn = {"user/message", "assistant/message", "tool/result", "assistant/chunk", "reasoning-chunks",
             "text-chunks", "tool-call-chunks", "turn/start", "turn/end", "step/start", "step/end", "tool/call",
             "approval/asked", "approval/decided", "hook/invoked", "hook/result", "compaction/start",
             "compaction/end", "compaction/prune", "compaction/summary", "llm/retry", "session/title-llm-request",
             "web/deepseek-search-llm-request"}
    assert log == [(e["type"], e["seq"]) for e in lines if e["type"] not in drawn]
    assert ("request/header", 1) in log
