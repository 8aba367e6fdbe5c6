"""report.html stays a page a browser opens: the calls table and each timeline lane are
bounded, and the data files hold the rest."""

from __future__ import annotations

from types import SimpleNamespace

from dshreplay.analyses.calls import Call
from dshreplay.output.htmlreport import MAX_CALL_ROWS, _calls, _timeline


def test_the_calls_table_lists_the_first_calls_and_says_where_the_rest_are():
    calls = [Call(n, "main", 1, n, 10 * n, 10 * n + 5, message_count=n) for n in range(1, MAX_CALL_ROWS + 2)]
    html = _calls({"calls": [], "failure": None}, SimpleNamespace(calls=calls))
    assert html.count("<tr>") == MAX_CALL_ROWS + 1  # (and the header row)
    assert f"<td>{MAX_CALL_ROWS}</td>" in html and f"<td>{MAX_CALL_ROWS + 1}</td>" not in html
    assert "The first 2,000 of 2,001 calls are listed; calls.jsonl has every one." in html


def test_a_replacement_marks_what_it_shadows_once():
    shadow = SimpleNamespace(shadowed_seqs=(3, 19, 21, 32, 37), kind="summary", seq=67, start=3, end=37)
    index = SimpleNamespace(event_count=100, calls=[], brackets=[], shadows=[shadow])
    svg = _timeline(index, {"turns": [], "steps": []})
    assert svg.count("shadowed by") == 1
    assert "<title>5 messages of seqs 3-37 shadowed by summary at seq 67</title>" in svg
