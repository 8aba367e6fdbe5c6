"""A parallel scan answers exactly what the sequential reader answers, on every corpus log.

Each log is read in windows shrunk to a few hundred bytes (runs end at
window edges) and in one window (runs as long as the log allows, meeting
compactions, crashes and broken seqs). Validation findings (codes, seqs, lines, pointers, messages
and their order), folds, calls and the views at chosen seqs must be equal.
"""

from __future__ import annotations

import json

import pytest

from dshreplay import scan
from dshreplay.api import fold_log
from dshreplay.errors import DshReplayError
from dshreplay.session import Session
from dshreplay.analyses.validate import ValidateOptions, validate_log

from conftest import CORPUS, corpus_available


def _files():
    if not corpus_available():
        return [pytest.param(None, id="corpus-absent")]
    index = json.loads((CORPUS / "index.json").read_text())
    return [pytest.param(name, id=name) for entry in index["logs"]
            for name in [f"{entry['name']}.jsonl", *entry["variants"]]]


def _answers(path) -> dict:
    session = Session(path)
    out = {"validate": validate_log(path, ValidateOptions(snapshot=True)).to_json()}
    report = fold_log(path)
    out["fold"] = (report.seq, report.state and report.state.nodes, report.messages, report.event_count,
                   str(report.error) if report.error else None,
                   report.error and (report.error.seq, report.error.line, report.error.pointer))
    try:
        out["calls"] = [c.to_json() for c in session.calls(include_auxiliary=True)]
    except DshReplayError as exc:
        out["calls"] = str(exc)
    last = out["validate"]["events"] - 1
    try:
        states = session.states([-1, 0, last // 3, last // 2, last])
        out["states"] = {k: (v.nodes, v.replacements, v.messages()) for k, v in states.items()}
    except DshReplayError as exc:
        out["states"] = (type(exc).__name__, str(exc))
    return out


@pytest.fixture(params=[300, 1 << 20], ids=["windows", "one-window"])
def parallel_spy(request, monkeypatch):
    """Force the parallel scan on small files, in windows of 300 bytes or in one
    window (the longest runs); note each parallel pass and whether it aborted."""
    done = []
    items = scan._items

    def counted(p, results, source, header_line):
        aborted = {"aborted": False}
        done.append(aborted)
        try:
            yield from items(p, results, source, header_line)
        except scan.ScanAborted:
            aborted["aborted"] = True
            raise

    monkeypatch.setitem(scan.SCAN, "jobs", 2)
    monkeypatch.setitem(scan.SCAN, "min_bytes", 0)
    monkeypatch.setitem(scan.SCAN, "window_bytes", request.param)
    monkeypatch.setattr(scan, "_items", counted)
    return done


@pytest.mark.parametrize("filename", _files())
def test_parallel_scan_answers_as_the_sequential_reader(corpus_dir, filename, monkeypatch, parallel_spy):
    path = corpus_dir / "upstream" / filename
    with monkeypatch.context() as m:
        m.setitem(scan.SCAN, "jobs", 1)
        expected = _answers(path)
    assert parallel_spy == []
    assert _answers(path) == expected
    # every pass really ran in parallel unless the reader had something to report
    readable = not any(f["code"] in ("DSH-E001", "DSH-E002", "DSH-W010", "DSH-W012")
                       for f in expected["validate"]["findings"])
    assert len(parallel_spy) == 4
    if readable:
        assert not any(p["aborted"] for p in parallel_spy)
