"""`timeline` and `otel` on bad input: one line and exit 2 for a log that cannot be read (the
other logs of the run still written), values of any JSON type where the format has numbers
and strings, hostile text kept as data, and the inputs never written to."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from harness import HEADER, attack

from dshreplay.testing.samples import LogBuilder

from conftest import SAMPLES


def _log(path: Path, events: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(e) for e in [HEADER, *events]) + "\n")
    return path


def test_a_missing_log_is_one_line_and_exit_2(tmp_path):
    missing = tmp_path / "nope.jsonl"
    outcome = attack("timeline", missing)
    assert outcome.code == 2 and outcome.stdout == ""
    assert outcome.one_line().startswith("dshreplay: read error: ") and "nope.jsonl" in outcome.one_line()
    out = tmp_path / "o.jsonl"
    outcome = attack("otel", missing, SAMPLES / "compaction.jsonl", "--out", out, "-q")
    assert outcome.code == 2
    assert outcome.one_line().startswith("dshreplay: read error: ")
    assert len(out.read_text().splitlines()) == 1  # the readable log's trace is written all the same


def test_values_of_any_type_are_carried_not_crashed_on(tmp_path):
    odd = [{"x": 1}, [1], "two", None, 1.5, True]
    events = [{"type": "turn/start", "seq": 0, "time": 1783352165197, "data": {"turn": odd[0]}},
              {"type": "request/header", "seq": 1, "time": 1783352165198,
               "data": {"header": {"config": {"provider": odd[1], "model": odd[0]}}}},
              {"type": "step/start", "seq": 2, "time": 1783352165199, "data": {"turn": odd[0], "step": odd[2]}},
              {"type": "assistant/chunk", "seq": 3, "time": "soon", "data": {"turn": odd[0], "step": odd[2],
                                                                              "chunk": {"type": "usage",
                                                                                        "usage": odd[2]}}},
              {"type": "assistant/chunk", "seq": 4, "time": 1783352165100, "data": {
                  "turn": odd[0], "step": odd[2],
                  "chunk": {"type": "finish", "reason": {"kind": odd[0], "failure": {"code": odd[1]}}}}},
              {"type": "tool/call", "seq": 5, "time": 1783352165201, "data": {"callId": odd[0], "name": odd[1],
                                                                              "arguments": odd[0]}},
              {"type": "llm/retry", "seq": 6, "time": 1783352165202, "data": {"attempt": odd[3], "failure": odd[2]}},
              {"type": "step/end", "seq": 7, "time": 1783352165203, "data": {"turn": odd[0], "step": odd[2]}},
              {"type": "turn/end", "seq": 8, "time": 1783352165204, "data": {"turn": odd[0],
                                                                             "reason": {"kind": "error",
                                                                                        "error": {"code": odd[0]}}}}]
    log = _log(tmp_path / "odd.jsonl", events)
    outcome = attack("timeline", log)
    assert outcome.code == 0, outcome.stderr
    trace = json.loads(outcome.stdout)
    assert [e["ts"] for e in trace["traceEvents"] if e["ph"] == "X"] == sorted(
        e["ts"] for e in trace["traceEvents"] if e["ph"] == "X")
    out = tmp_path / "odd.otlp.jsonl"
    outcome = attack("otel", log, "--out", out, "--content", "-q")
    assert outcome.code == 0, outcome.stderr
    [request] = [json.loads(line) for line in out.read_text().splitlines()]
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    chat = next(s for s in spans if s["name"].startswith("chat "))
    assert chat["name"] == 'chat {"x":1}' and chat["status"] == {"code": 2, "message": '{"x":1} [1]'}


def test_hostile_text_stays_data(tmp_path):
    escapes = "\x1b[2J\x1b]0;pwned\x07"
    b = LogBuilder("<script>alert(1)</script>" + escapes)
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("hi " + escapes)
    b.tool_round("bash" + escapes, '{"command": "</script>"}', "out" + escapes)
    b.end_step()
    b.end_turn()
    log = b.write(tmp_path / "h.jsonl")
    outcome = attack("otel", log, "--out", tmp_path / "h.otlp", "--content")
    assert outcome.code == 0 and "\x1b" not in outcome.stderr
    text = (tmp_path / "h.otlp").read_text()
    assert "\x1b" not in text and "\\u001b" in text  # (JSON escapes it: it is data, never a terminal's)
    outcome = attack("timeline", log, "--out", tmp_path / "h.json")
    assert outcome.code == 0 and "\x1b" not in (tmp_path / "h.json").read_text()


def test_the_inputs_are_never_written_to(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    for name in ("compaction.jsonl", "fork-child.jsonl", "broken-seq-gap.jsonl"):
        (folder / name).write_bytes((SAMPLES / name).read_bytes())
        os.chmod(folder / name, 0o444)
    os.chmod(folder, 0o555)
    try:
        before = {p.name: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in folder.iterdir()}
        for log in sorted(folder.iterdir()):
            assert attack("timeline", log).code in (0, 1)
        assert attack("otel", folder, "--out", tmp_path / "all.jsonl", "--content").code in (0, 1)
        after = {p.name: (p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest()) for p in folder.iterdir()}
        assert after == before
    finally:
        os.chmod(folder, 0o755)
