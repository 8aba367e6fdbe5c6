"""One session summary: `stats` prints it, the export writes it as session.json and the
report's session card shows it."""

from __future__ import annotations

import html
import json

from dshreplay._jsvalues import utc_time
from dshreplay.session import Session

import scenarios


def _export(cli, path, tmp_path):
    cli("export", path, "--out", tmp_path / "b", "--timestamp", "2026-01-01T00:00:00Z", "--no-default-redaction",
        expect=None)
    [folder] = [p for p in (tmp_path / "b").iterdir() if p.is_dir()]
    return folder


def test_session_json_and_the_report_are_the_stats_summary(cli, write_log, tmp_path):
    b, s = scenarios.parallel_calls()
    path = write_log(b)
    folder = _export(cli, path, tmp_path)
    facts = json.loads((folder / "session.json").read_bytes())
    stats = cli("stats", path, "--json").json()["sessions"][0]
    assert facts == {**{k: v for k, v in stats.items() if k not in ("path", "error")}, "foldError": None}
    start, end = b.events[0], b.events[-1]  # turn/start and turn/end
    assert (facts["start"], facts["end"], facts["durationMs"]) == (
        utc_time(start["time"]), utc_time(end["time"]), end["time"] - start["time"])
    assert facts["turnSpans"] == [{"turn": 1, "startSeq": 0, "endSeq": end["seq"], "ending": "completed"}]
    assert facts["models"] == [{"provider": "deepseek-official", "model": "deepseek-v4-flash"}]
    assert facts["tools"] == {"bash": {"calls": 1, "errors": 0}, "write": {"calls": 1, "errors": 0}}
    assert facts["approvals"] == {"asked": 1, "decided": 1, "denied": 0, "undecided": 0}
    assert (facts["turns"], facts["steps"], facts["calls"], facts["answeredUpTo"]) == (1, 2, 2, None)
    page = html.unescape((folder / "report.html").read_text(encoding="utf-8"))
    assert "<td>turn endings</td><td>1: completed</td>" in page
    assert "<td>turns / steps / model calls</td><td>1 / 2 / 2</td>" in page


def test_the_summary_says_how_far_it_reaches_when_the_fold_fails(cli, write_log, tmp_path):
    b, s = scenarios.parallel_calls()
    b.event(s["result_2"])["surfaceOp"] = {"op": "replace", "start": 999, "end": 999}
    path = write_log(b)
    stats = Session(path).stats()  # reading stops at the rejected event
    assert (stats.fold_error.seq, stats.answered_up_to, stats.events) == (s["result_2"], s["result_2"] - 1,
                                                                           s["result_2"])
    facts = json.loads((_export(cli, path, tmp_path) / "session.json").read_bytes())  # the export reads on
    assert (facts["foldError"]["seq"], facts["answeredUpTo"], facts["events"]) == (s["result_2"], None,
                                                                                    len(b.events))


def test_a_turn_the_next_one_starts_without_its_turn_end_is_not_ended_not_interrupted(cli, write_log, tmp_path):
    # by hand (scenarios.turn_left_open): turn 1 (0..9) has no turn/end, turn 2 starts at 10 and ends
    # at 21, the log ends inside turn 3 (22..31): only turn 3 is interrupted
    path = write_log(scenarios.turn_left_open())
    spans = [{"turn": 1, "startSeq": 0, "endSeq": None, "ending": "not ended"},
             {"turn": 2, "startSeq": 10, "endSeq": 21, "ending": "completed"},
             {"turn": 3, "startSeq": 22, "endSeq": None, "ending": "interrupted"}]
    stats = cli("stats", path, "--json", expect=0).json()["sessions"][0]
    assert (stats["turnSpans"], stats["turnEndings"]) == (spans, ["not ended", "completed", "interrupted"])
    health = cli("inspect", path, "--json").json()
    assert (health["turnEndings"], health["lastTurn"]) == (spans, "interrupted")
    facts = json.loads((_export(cli, path, tmp_path) / "session.json").read_bytes())
    assert facts["turnSpans"] == spans
