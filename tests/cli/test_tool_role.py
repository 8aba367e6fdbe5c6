"""One display role for a tool result (#35): `tool` in every table and text (fold, request,
diff --text, transcript), said once where it differs from the wire role `user` (the request's
first line); --json keeps the messages exactly as sent."""

from __future__ import annotations

from conftest import SAMPLES


def test_a_tool_result_shows_as_role_tool_everywhere_and_the_request_says_its_wire_role(cli):
    log = SAMPLES / "multi-turn.jsonl"
    request = cli("request", log, "--call", 2).stdout.splitlines()
    assert request[:2] == ["call 2: turn 1, step 2; messages as of seq 23; header from seq 1; role tool: a tool "
                           "result, sent as", "role user"]
    assert request[-2:] == ["3  tool       [result call-0002] README.md main.py util.py", "3 messages"]
    assert cli("request", log, "--call", 2, "--json").json()["messages"][2]["role"] == "user"  # (the wire role)
    assert cli("request", log, "--call", 1).stdout.splitlines()[0] == (
        "call 1: turn 1, step 1; messages as of seq 3; header from seq 1")  # (no tool result: no note)
    fold = cli("fold", log).stdout.splitlines()
    assert fold[4].split()[:3] == ["3", "21", "tool"]
    diff = cli("diff", log, "--from", 10, "--to", 25, "--text").stdout.splitlines()
    assert "+== seq 21 · tool ==" in diff and "+== seq 21 · user ==" not in diff
