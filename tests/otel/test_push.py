"""`otel --endpoint`: pushed over OTLP/HTTP to a real Phoenix (`phoenix serve` on 127.0.0.1, in a
temporary working directory) and found through its REST API; a refusing endpoint is one line, exit 2."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import SAMPLES

pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - a loopback URL of the test's own server
        return json.loads(response.read())


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    """A Phoenix server on a free loopback port, stopped after the module's tests."""
    pytest.importorskip("phoenix")
    work = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {**os.environ, "PHOENIX_WORKING_DIR": str(work), "PHOENIX_HOST": "127.0.0.1",
           "PHOENIX_PORT": str(port), "PHOENIX_GRPC_PORT": str(_free_port())}
    log = open(work / "phoenix.log", "wb")
    process = subprocess.Popen([str(Path(sys.executable).parent / "phoenix"), "serve"], env=env, cwd=work,
                               stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):  # (a bounded wait: it starts in well under two minutes here)
            if process.poll() is not None:
                pytest.fail(f"phoenix serve exited {process.returncode}: {(work / 'phoenix.log').read_text()[-2000:]}")
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=2)  # noqa: S310
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("phoenix serve did not answer within 120 s")
        yield base
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def test_pushed_traces_are_in_phoenix(cli, phoenix):
    result = cli("otel", SAMPLES / "compaction.jsonl", SAMPLES / "fork-child.jsonl",
                 "--endpoint", f"{phoenix}/v1/traces", "--header", "X-Test=1")
    assert result.stderr.splitlines() == [
        f"dshreplay: [1/2] {SAMPLES / 'compaction.jsonl'}: 20 spans in 1 trace, pushed to {phoenix}/v1/traces",
        f"dshreplay: [2/2] {SAMPLES / 'fork-child.jsonl'}: 13 spans in 1 trace, pushed to {phoenix}/v1/traces"]
    spans: list[dict] = []
    for _ in range(60):  # (Phoenix writes what it received in the background)
        spans = _get(f"{phoenix}/v1/projects/default/spans?limit=1000")["data"]
        if len(spans) >= 33:
            break
        time.sleep(0.5)
    assert len(spans) == 33
    mine = [s for s in spans if s["attributes"].get("session.id") == "sample-compaction"]
    names = sorted(s["name"] for s in mine)
    assert names.count("chat deepseek-v4-flash") == 6 and names.count("execute_tool bash") == 3
    assert names.count("invoke_agent dsh") == 3 and names.count("compaction") == 1
    by_id = {s["context"]["span_id"]: s for s in mine}
    compaction = next(s for s in mine if s["name"] == "compaction")
    assert by_id[compaction["parent_id"]]["name"] == "invoke_agent dsh"
    assert sum(s["attributes"].get("gen_ai.usage.input_tokens", 0) for s in mine) == 19880  # stats' tokens.input


def test_a_refusing_endpoint_is_one_line_and_exit_2(cli):
    port = _free_port()  # (nothing listens there)
    result = cli("otel", SAMPLES / "compaction.jsonl", "--endpoint", f"http://127.0.0.1:{port}/v1/traces",
                 "--timeout", "1", "-q", expect=2)
    [line] = result.stderr.splitlines()
    assert line.startswith(f"dshreplay: output error: http://127.0.0.1:{port}/v1/traces: the OTLP endpoint "
                           "refused the spans: ")
