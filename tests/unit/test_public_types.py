"""The library's answers have precise types (#35): a call's outcome and a request's messages
are JSON values, not `object` and `list[Any]`; code written against them type-checks strictly."""

from __future__ import annotations

import pytest

CODE = """
from dshreplay import Session
from dshreplay.analyses.trackers.calls import Outcome
session = Session("log.jsonl")
reveal_type(session.calls()[0].outcome)
reveal_type(session.request(1).messages)
outcome: Outcome = session.calls()[0].outcome
if outcome == "stop" or outcome is None:
    pass
for message in session.request(1).messages:
    if isinstance(message, dict):
        role: object = message.get("role")
"""


def test_a_calls_outcome_and_a_requests_messages_are_typed_json_values():
    api = pytest.importorskip("mypy.api")
    out, err, status = api.run(["--strict", "--no-error-summary", "-c", CODE])
    revealed = [line.split("Revealed type is ", 1)[1] for line in out.splitlines() if "Revealed type" in line]
    json = "None | bool | int | float | str | list[...] | dict[str, ...]"
    inner = f"None | int | float | str | list[{json}] | dict[str, {json}]"  # (bool is an int to mypy)
    assert revealed == [f'"{inner}"', f'"list[{json}]"'], out + err  # (they were "builtins.object" and
    # "builtins.list[Any]")
    assert [line for line in out.splitlines() if "error:" in line] == []
