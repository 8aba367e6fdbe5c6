"""`otel --out`: OTLP/JSON that the official protobuf schema reads, counts equal to `stats`,
parents where they belong, no content unless asked, and no secret with it."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest

from dshreplay.analyses.spans import session_timeline
from dshreplay.io.reader import LogSource
from dshreplay.testing.samples import LogBuilder
from dshreplay.traces._otlp import otel_traces, request_json, span_id_of, trace_id_of

from conftest import CORPUS, SAMPLES, corpus_available

json_format = pytest.importorskip("google.protobuf.json_format")
trace_service = pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")

CONTENT = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")


def parse(request: dict):
    """The request as the protobuf schema reads it (OTLP/JSON writes ids in hex where the
    protobuf JSON mapping has base64: turned into it first, as a collector does)."""
    def b64(hex_id: str) -> str:
        return base64.b64encode(bytes.fromhex(hex_id)).decode()
    text = json.loads(json.dumps(request))
    for rs in text["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = b64(span[key])
                for link in span.get("links", []):
                    link["traceId"], link["spanId"] = b64(link["traceId"]), b64(link["spanId"])
    return json_format.ParseDict(text, trace_service.ExportTraceServiceRequest())


def spans_of(lines: list[dict]) -> list[dict]:
    return [s for r in lines for rs in r["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def attrs(span: dict) -> dict:
    return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}


def _corpus_logs():
    if not corpus_available():
        return [pytest.param(None, id="corpus-absent")]
    index = json.loads((CORPUS / "index.json").read_text())
    return [pytest.param(f, id=f) for e in index["logs"] for f in [f"{e['name']}.jsonl", *e["variants"]]]


@pytest.mark.parametrize("filename", _corpus_logs())
def test_every_corpus_log_parses_with_the_schema_and_counts_equal_stats(corpus_dir, filename):
    timeline = session_timeline(LogSource(corpus_dir / "upstream" / filename))
    requests = [request_json(t) for t in otel_traces(timeline)]
    for request in requests:
        parsed = parse(request)
        assert len(parsed.resource_spans[0].scope_spans[0].spans) == len(request["resourceSpans"][0]["scopeSpans"][0]
                                                                         ["spans"])
    spans = spans_of(requests)
    kinds = [attrs(s)["dshreplay.span.kind"] for s in spans]
    stats = timeline.stats
    assert kinds.count("turn") == stats.turns and kinds.count("step") == stats.steps
    assert kinds.count("call") == stats.calls and kinds.count("auxiliary-call") == stats.auxiliary_calls
    assert kinds.count("tool") == sum(t["calls"] for t in stats.tools.values())
    for name, key in (("input", "gen_ai.usage.input_tokens"), ("output", "gen_ai.usage.output_tokens")):
        assert sum(int(attrs(s).get(key, 0)) for s in spans) == stats.tokens[name]
    ids = {s["spanId"] for s in spans}
    assert len(ids) == len(spans)
    assert all(s.get("parentSpanId", next(iter(ids))) in ids for s in spans)
    assert sum(1 for s in spans if "parentSpanId" not in s) == 1  # one root: the session


def test_the_file_is_deterministic_and_has_no_content_by_default(cli, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    cli("otel", SAMPLES / "audit-demo.jsonl", SAMPLES / "compaction.jsonl", "--out", a)
    cli("otel", SAMPLES / "audit-demo.jsonl", SAMPLES / "compaction.jsonl", "--out", b, "-q")
    assert a.read_bytes() == b.read_bytes()
    lines = [json.loads(line) for line in a.read_text().splitlines()]
    assert len(lines) == 2
    text = a.read_text()
    assert "List the files in the project" not in text and '\\"command\\"' not in text
    assert not any(key in attrs(s) for s in spans_of(lines) for key in CONTENT)


def test_parent_child_on_a_compaction(cli, tmp_path):
    out = tmp_path / "c.jsonl"
    cli("otel", SAMPLES / "compaction.jsonl", "--out", out)
    spans = spans_of([json.loads(line) for line in out.read_text().splitlines()])
    by_id = {s["spanId"]: s for s in spans}
    compaction = next(s for s in spans if s["name"] == "compaction")
    assert by_id[compaction["parentSpanId"]]["name"] == "invoke_agent dsh"
    assert attrs(by_id[compaction["parentSpanId"]])["dshreplay.turn"] == "3"
    [event] = compaction["events"]
    assert event["name"] == "dshreplay.replacement"
    assert attrs(event)["dshreplay.shadowedSeqs"] == "[3,19,21,32,37]"
    call = next(s for s in spans if attrs(s).get("dshreplay.call") == "5")
    assert call["name"] == "chat deepseek-v4-flash"
    assert by_id[call["parentSpanId"]]["name"] == "step 1"
    assert by_id[by_id[call["parentSpanId"]]["parentSpanId"]] is by_id[compaction["parentSpanId"]]


def test_a_fork_links_to_its_parents_root(cli, tmp_path):
    out = tmp_path / "f.jsonl"
    cli("otel", SAMPLES / "multi-turn.jsonl", SAMPLES / "fork-child.jsonl", "--out", out)
    parent, child = (spans_of([json.loads(line)]) for line in out.read_text().splitlines())
    [link] = child[0]["links"]
    assert (link["traceId"], link["spanId"]) == (parent[0]["traceId"], parent[0]["spanId"])
    assert link["traceId"] == trace_id_of("sample-multi-turn").hex()
    assert link["spanId"] == span_id_of("sample-multi-turn", "session").hex()
    assert attrs(link)["dshreplay.seed_length"] == "35"


def test_trace_per_turn(cli, tmp_path):
    out = tmp_path / "t.jsonl"
    cli("otel", SAMPLES / "compaction.jsonl", "--out", out, "--trace-per", "turn")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 4  # the session's trace, and one per turn
    roots = [s for s in spans_of(lines) if "parentSpanId" not in s]
    assert [r["name"] for r in roots] == ["session sample-compaction"] + ["invoke_agent dsh"] * 3
    assert all(r["links"][0]["spanId"] == roots[0]["spanId"] for r in roots[1:])


def test_parallel_tool_calls_share_their_step(corpus_dir, tmp_path, cli):
    out = tmp_path / "p.jsonl"
    cli("otel", corpus_dir / "upstream" / "acp-agent__parallel-tool-calls__session.jsonl", "--out", out)
    spans = spans_of([json.loads(line) for line in out.read_text().splitlines()])
    tools = [s for s in spans if s["name"].startswith("execute_tool")]
    assert len(tools) >= 2 and len({t["parentSpanId"] for t in tools}) == 1
    seqs = sorted((int(attrs(t)["dshreplay.seq.start"]), int(attrs(t)["dshreplay.seq.end"])) for t in tools)
    assert seqs[1][0] <= seqs[0][1]  # they overlap


def test_content_equals_request_and_passes_through_redaction(cli, tmp_path):
    secret = "ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    b = LogBuilder()
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user(f"use the token {secret} and the word zebracorn")
    b.tool_round("bash", json.dumps({"command": f"echo {secret}"}), f"printed {secret}")
    b.end_step()
    b.end_turn()
    log = b.write(tmp_path / "s.jsonl")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"text": ["zebracorn"]}))
    out = tmp_path / "o.jsonl"
    cli("otel", log, "--out", out, "--content", "--redact", rules)
    text = out.read_text()
    for hidden in (secret, "zebracorn"):
        assert hidden not in text
        assert hashlib.sha256(hidden.encode()).hexdigest() not in text
    assert "[REDACTED]" in text
    spans = spans_of([json.loads(line) for line in text.splitlines()])
    tool = next(s for s in spans if s["name"] == "execute_tool bash")
    assert json.loads(attrs(tool)["gen_ai.tool.call.arguments"]) == {"command": "echo [REDACTED]"}
    # without secrets, a call's input messages are exactly `request --call N`'s
    out2 = tmp_path / "a.jsonl"
    cli("otel", SAMPLES / "compaction.jsonl", "--out", out2, "--content")
    calls = sorted((int(attrs(s)["dshreplay.call"]), attrs(s)) for s in spans_of(
        [json.loads(line) for line in out2.read_text().splitlines()]) if "dshreplay.call" in attrs(s))
    assert calls
    for number, a in calls:
        request = cli("request", SAMPLES / "compaction.jsonl", "--call", number, "--json").json()
        assert json.loads(a["gen_ai.input.messages"]) == request["messages"]
        assert json.loads(a["gen_ai.output.messages"])[0]["role"] == "assistant"


def test_usage_errors(cli, tmp_path):
    result = cli("otel", SAMPLES / "compaction.jsonl", expect=2)
    assert result.stderr == "dshreplay: usage error: give --out FILE, --endpoint URL, or both\n"
    result = cli("otel", SAMPLES / "compaction.jsonl", "--out", tmp_path / "x", "--redact", "r.json", expect=2)
    assert result.stderr == "dshreplay: usage error: --redact applies to --content: give --content too\n"


def test_hooks_and_approvals_are_children_of_their_tool_call(corpus_dir, tmp_path, cli):
    out = tmp_path / "h.jsonl"
    upstream = corpus_dir / "upstream"
    cli("otel", upstream / "acp-agent__hook-cc-pretool-ask__session.jsonl",
        upstream / "acp-agent__hook-cc-stop-continue__session.jsonl", "--out", out)
    ask, stop = (spans_of([json.loads(line)]) for line in out.read_text().splitlines())
    by_id = {s["spanId"]: s for s in ask}
    [hook] = [s for s in ask if s["name"].startswith("hook ")]
    [approval] = [s for s in ask if s["name"].startswith("approval ")]
    assert hook["name"] == "hook PreToolUse"
    assert by_id[hook["parentSpanId"]]["name"].startswith("execute_tool ")
    assert by_id[approval["parentSpanId"]] is by_id[hook["parentSpanId"]]
    by_id = {s["spanId"]: s for s in stop}
    hooks = [s for s in stop if s["name"].startswith("hook ")]
    assert [h["name"] for h in hooks] == ["hook Stop", "hook Stop"]  # no tool call: in their turn
    assert {by_id[h["parentSpanId"]]["name"] for h in hooks} <= {"invoke_agent dsh"} | {
        s["name"] for s in stop if s["name"].startswith("step ")}
    events = [json.loads(line) for line in
              (upstream / "acp-agent__hook-cc-stop-continue__session.jsonl").read_text().splitlines()[1:]]
    assert len(hooks) == sum(1 for e in events if e.get("type") == "hook/invoked")


def test_a_log_without_times_gets_one_millisecond_per_seq(cli, tmp_path):
    b = LogBuilder()
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("hello")
    b.assistant("hi")
    b.end_step()
    b.end_turn()
    log = b.write(tmp_path / "projected.jsonl", layout="projected")
    out = tmp_path / "p.jsonl"
    cli("otel", log, "--out", out)
    [request] = [json.loads(line) for line in out.read_text().splitlines()]
    resource = {a["key"]: a["value"] for a in request["resourceSpans"][0]["resource"]["attributes"]}
    assert resource["dshreplay.time_axis"] == {"stringValue": "seq"}
    header = json.loads(log.read_text().splitlines()[0])
    base = header.get("createdAt", 0) if isinstance(header.get("createdAt"), int) else 0
    turn = next(s for s in spans_of([request]) if s["name"] == "invoke_agent dsh")
    end = int(attrs(turn)["dshreplay.seq.end"])
    assert (turn["startTimeUnixNano"], turn["endTimeUnixNano"]) == (str((base + 1) * 1_000_000),
                                                                   str((base + end + 1) * 1_000_000))


def test_text_the_log_quotes_is_left_out_by_default_and_redacted_with_content(cli, tmp_path):
    secret = "ghp_Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    b = LogBuilder()
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("run it")
    b.assistant("", calls=[("call-1", "bash", '{"command": "ls"}')])
    b.approval("call-1", "bash", reason=f"asks with {secret}")
    b.tool_call("call-1", "bash", '{"command": "ls"}')
    b.hook_invoked("PreToolUse", "h1")
    b.add("hook/result", {"turn": b.turn, "point": "PreToolUse", "handlerId": "h1", "decision": "block",
                          "exitCode": 2, "stderrSummary": f"token {secret} rejected"})
    b.add("llm/retry", {"attempt": 1, "failure": {"code": "RATE_LIMITED", "message": f"key {secret} throttled"}})
    b.end_step()
    b.end_turn()
    log = b.write(tmp_path / "t.jsonl")
    plain, content = tmp_path / "plain.jsonl", tmp_path / "content.jsonl"
    cli("otel", log, "--out", plain)
    cli("otel", log, "--out", content, "--content")
    for out in (plain, content):
        text = out.read_text()
        assert secret not in text and hashlib.sha256(secret.encode()).hexdigest() not in text
    assert "rejected" not in plain.read_text() and "throttled" not in plain.read_text()
    assert "token [REDACTED] rejected" in content.read_text() and "asks with [REDACTED]" in content.read_text()
    events = [e for s in spans_of([json.loads(plain.read_text())]) for e in s.get("events", [])]
    failure = next(e for e in events if e["name"] == "dshreplay.failure")
    assert attrs(failure)["dshreplay.code"] == "block" and "dshreplay.message" not in attrs(failure)
