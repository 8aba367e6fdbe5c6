"""What report.html and index.html are given to show (report.view), checked row by row
against a log whose every time and seq is known: `samples.incident()` (a failed and retried
model call, a failed tool call, a five-minute approval, an aborted turn, an interrupted one).

Times below are the builder's: CREATED_AT plus the offsets its events are written at."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from dshreplay._jsvalues import utc_time
from dshreplay.analyses.trackers.calls import Call
from dshreplay.analyses.trackers.logindex import build_index
from dshreplay.io.reader import LogSource
from dshreplay.report import _view as rv
from dshreplay.report._waterfall import waterfall
from dshreplay.testing.samples import CREATED_AT, LogBuilder, incident

import scenarios

SPAN = 355_042 - 7  # from turn 1's start to the last event (the unanswered tool/call at seq 74), in ms


def at(offset: int) -> str:
    return utc_time(CREATED_AT + offset)


def index_of(b: LogBuilder, tmp_path, layout: str = "runtime"):
    return build_index(LogSource(str(b.write(tmp_path / "log.jsonl", layout=layout))))


@pytest.fixture
def incident_index(tmp_path):
    return index_of(incident(), tmp_path)


def views(*calls: int) -> list[dict]:
    return [{"call": n} for n in calls]


def test_the_waterfall_lists_turns_and_calls_in_log_order_with_their_outcomes(incident_index):
    wf = waterfall(incident_index, views(1, 2, 3, 4, 5, 6))
    assert wf.axis == "time"
    assert [(b.kind, b.label, b.status, b.note, b.when, b.href) for b in wf.rows.first] == [
        ("turn", "turn 1", "ok", "completed", at(7), None),
        ("model", "call 1", "failed", "error CONTEXT_WINDOW_EXCEEDED", at(28), "#call-1"),  # (from the request)
        ("model", "call 2", "ok", "tool-calls", at(3231), "#call-2"),  # (right after call 1's chunk: no request time)
        ("tool", "bash", "failed", "error", at(3287), "#tool-1"),
        ("model", "call 3", "ok", "tool-calls", at(44308), "#call-3"),
        ("tool", "bash", "ok", "completed", at(44349), "#tool-2"),  # (from its approval's ask)
        ("model", "call 4", "ok", "stop", at(353384), "#call-4"),
        ("turn", "turn 2", "aborted", "aborted by user", at(353436), None),
        ("model", "call 5", "cancelled", "cancelled", at(353450), "#call-5"),
        ("turn", "turn 3", "interrupted", "interrupted", at(354987), None),
        ("model", "call 6", "ok", "tool-calls", at(355001), "#call-6"),
        ("tool", "bash", "open", "outcome unknown", at(355042), "#tool-3"),
    ]
    assert [b.label for b in wf.problems.first] == ["call 1", "bash", "turn 2", "call 5", "turn 3", "bash"]
    assert wf.summary == ("1 failed model call, 1 failed tool call, 1 aborted turn, 1 cancelled model call, "
                          "1 tool call without an outcome, interrupted: the log ends inside turn 3")


def test_bars_lie_on_the_time_axis_and_show_long_waits(incident_index):
    rows = waterfall(incident_index, views(1)).rows.first
    failed, build, install = rows[1], rows[3], rows[5]
    # call 1: asked at +28, its one chunk 1.2 s later: a bar of the narrowest width, all of it waiting
    assert (failed.left, failed.width, failed.wait) == (f"{21 / SPAN * 100:.2f}", "0.40", ("0.00", "100.00"))
    assert failed.title == (f"call 1 (turn 1, step 1, deepseek-official/deepseek-v4-flash): seqs 4-4; requested "
                            f"{at(28)}, first chunk after 1.2 s, streamed 0 ms; error CONTEXT_WINDOW_EXCEEDED")
    # the build: tool/call at +3287, result at +44294 (41 s)
    assert (build.left, build.width, build.wait) == ("0.92", "11.55", None)
    # the install: asked at +44349, approved at +344356 (five minutes), result at +353370
    assert (install.left, install.width) == ("12.49", "87.04")
    assert install.wait == ("0.00", f"{300_007 / (353_370 - 44_349) * 100:.2f}")
    assert install.title.endswith("; 9.0 s; approval allowed-once after 5 min 00 s; completed")
    assert rows[0].title == f"turn 1: seqs 0 to seq 51; {at(7)}, 5 min 53 s; completed"
    assert rows[9].title == f"turn 3: seqs 61 to the end of the log (interrupted); {at(354987)}, -; interrupted"
    # open, so to the end of the log: 55 ms, drawn at the narrowest width, kept inside the track
    assert (rows[9].left, rows[9].width) == ("99.60", "0.40")


def test_a_call_right_after_another_has_no_request_time_and_says_when_its_first_chunk_came(incident_index):
    call_2 = waterfall(incident_index, views(1)).rows.first[2]
    assert call_2.title == (f"call 2 (turn 1, step 1, deepseek-official/deepseek-v4-flash): seqs 5-19; first chunk "
                            f"at {at(3231)}, streamed 42 ms; tool-calls")
    assert call_2.wait is None


def test_a_call_without_a_model_view_in_the_report_links_to_its_row(incident_index):
    rows = waterfall(incident_index, views(1, 2)).rows.first
    assert [b.href for b in rows if b.kind == "model"] == [
        "#call-1", "#call-2", "#call-row-3", "#call-row-4", "#call-row-5", "#call-row-6"]


def test_a_log_without_times_falls_back_to_the_seq_axis_and_says_so(tmp_path):
    wf = waterfall(index_of(incident(), tmp_path, layout="projected"), views(1))
    assert wf.axis == "seq"
    assert wf.caption.startswith("This log has no event times (a projected log): the axis is event seqs")
    assert [t.label for t in wf.ticks] == ["seq 0", "seq 19", "seq 38", "seq 56", "seq 75"]
    rows = wf.rows.first
    assert [(b.label, b.when) for b in rows[1:4]] == [("call 1", "seq 4"), ("call 2", "seq 5"), ("bash", "seq 21")]
    assert (rows[1].left, rows[1].width) == (f"{4 / 75 * 100:.2f}", f"{1 / 75 * 100:.2f}")
    assert (rows[3].left, rows[3].width) == ("28.00", f"{2 / 75 * 100:.2f}")  # (tool/call 21 to its result 22)
    assert rows[1].title == ("call 1 (turn 1, step 1, deepseek-official/deepseek-v4-flash): seqs 4-4; "
                             "error CONTEXT_WINDOW_EXCEEDED")


def test_the_tool_table_gives_each_call_from_the_ledger(incident_index):
    table = rv.tool_rows(incident_index.tool_calls)
    assert table.first == [
        rv.ToolRow("tool-1", "bash", "call_build", "1/1", '{"command": "make build"}', "error", "failed",
                   "-", "-", "41.0 s", "21-22"),
        rv.ToolRow("tool-2", "bash", "call_install", "1/2", '{"command": "pip install requests"}', "completed",
                   "ok", "allowed-once after 5 min 00 s", "-", "9.0 s", "37-38"),
        rv.ToolRow("tool-3", "bash", "call_tests", "3/1", '{"command": "make test"}', "outcome unknown", "open",
                   "-", "-", "-", "74"),
    ]
    assert (table.rest, table.total) == ([], 3)


def test_the_tool_table_names_each_calls_hooks(tmp_path):
    b, s = scenarios.parallel_calls()
    table = rv.tool_rows(index_of(b, tmp_path).tool_calls)
    assert [(r.call_id, r.hooks, r.approval) for r in table.first] == [
        ("call_1", "PreToolUse:pass", "-"), ("call_2", "PreToolUse:ask", "allowed-once after 7 ms")]


def test_an_interrupted_session_and_an_aborted_turn_are_told_in_the_card(incident_index):
    session = {"turnSpans": [{"turn": 1, "ending": "completed"}, {"turn": 2, "ending": "aborted by user"},
                             {"turn": 3, "ending": "interrupted"}], "failedCalls": {"CONTEXT_WINDOW_EXCEEDED": 1}}
    card = {f.label: f for f in rv.facts({"verdict": "ok"}, incident_index, session, "sha256")}
    assert card["turn endings"] == rv.Fact("turn endings", "1: completed, 2: aborted by user, 3: interrupted")
    assert card["failed calls"] == rv.Fact("failed calls", "CONTEXT_WINDOW_EXCEEDED: 1", "bad")
    assert card["torn tail"] == rv.Fact("torn tail", "none")


def test_a_long_list_of_facts_shows_its_first_items_and_the_rest_behind_a_click():
    endings = [f"{n}: completed" for n in range(1, 401)]
    fact = rv.summarised("turn endings", endings)
    assert fact.value == ", ".join(endings[:12]) + ", … (388 more)"
    assert fact.rest == endings[12:]


def test_a_long_table_holds_its_first_rows_then_the_rest_up_to_the_cap():
    calls = [Call(n, "main", 1, n, 10 * n, 10 * n + 5, message_count=n) for n in range(1, rv.MAX_ROWS + 2)]
    rows = rv.call_rows(calls, None)
    assert [r.cells[0] for r in rows.first] == [str(n) for n in range(1, 41)]
    assert (rows.rest[0].cells[0], rows.rest[-1].cells[0], len(rows.rest)) == ("41", "2000", 1960)
    assert (rows.total, rows.dropped) == (2001, 1)
    assert rows.first[0] == rv.CallRow("call-row-1", ["1", "1", "1", "10–15", "null/null", "(open)", "", "", "1"],
                                       "open")


def test_a_replacement_marks_what_it_shadows_once():
    shadow = SimpleNamespace(shadowed_seqs=(3, 19, 21, 32, 37), kind="summary", seq=67, start=3, end=37)
    index = SimpleNamespace(event_count=100, turn_spans=[], brackets=[], shadows=[shadow])
    [turns, brackets, shadowed] = rv.surface_lanes(index)
    assert (turns.marks, brackets.marks) == ([], [])
    assert [m.title for m in shadowed.marks] == ["5 messages of seqs 3-37 shadowed by summary at seq 67",
                                                 "summary at seq 67 replaces 3-37"]


FINDINGS = [
    {"severity": "warning", "code": "DSH-W010", "seq": None, "line": 65, "message": "torn tail: 42 bytes lost"},
    {"severity": "error", "code": "DSH-E005", "seq": 31, "line": 33, "message": "'reason' is a required property"},
    {"severity": "warning", "code": "DSH-W213", "seq": 29, "line": 31, "message": "log ends inside turn 1"},
    {"severity": "notice", "code": "DSH-N011", "seq": None, "line": None, "message": "placeholders"},
]


def test_index_notes_give_the_first_error_and_the_warnings():
    assert rv.session_notes(FINDINGS) == rv.Notes(
        "DSH-E005 at seq 31: 'reason' is a required property",
        ("DSH-W010 at line 65: torn tail: 42 bytes lost", "DSH-W213 at seq 29: log ends inside turn 1"), 0)
    many = [{"severity": "warning", "code": "W", "seq": n, "message": "m"} for n in range(5)]
    assert rv.session_notes(many).more == 2 and len(rv.session_notes(many).warnings) == 3


def test_index_rows_are_not_a_plain_ok_for_a_torn_or_interrupted_session():
    entries = [{"input": "a.jsonl", "header": {"id": "a"}, "verdict": "ok", "events": 63, "folder": "a"},
               {"input": "b.jsonl", "header": {"id": "b"}, "verdict": "ok", "events": 30, "folder": "b"},
               {"input": "c.jsonl", "verdict": "unreadable", "error": "format version 1 not supported"},
               {"input": "d.jsonl", "header": {"id": "d"}, "verdict": "errors", "events": 32, "folder": "d"}]
    notes = [rv.Notes(), rv.Notes(None, ("DSH-W213 at seq 29: log ends inside turn 1",)), rv.Notes(),
             rv.session_notes(FINDINGS)]
    rows = rv.index_rows(entries, notes)
    assert [(r.verdict, r.status, r.reason, r.warnings) for r in rows] == [
        ("ok", "ok", None, ()),
        ("ok", "warn", None, ("DSH-W213 at seq 29: log ends inside turn 1",)),
        ("unreadable", "bad", "format version 1 not supported", ()),
        ("errors", "bad", "DSH-E005 at seq 31: 'reason' is a required property", notes[3].warnings)]
    assert (rows[2].session, rows[2].events, rows[2].folder) == ("-", "-", None)


@pytest.mark.parametrize("ms, text", [(0, "0 ms"), (840, "840 ms"), (12_345, "12.3 s"), (245_000, "4 min 05 s"),
                                      (7_380_000, "2 h 03 min"), (None, "-"), (-5, "-"), (True, "-")])
def test_durations_in_words(ms, text):
    assert rv.duration_text(ms) == text


def test_every_value_a_page_prints_is_escaped_and_its_control_characters_shown_as_escapes():
    from dshreplay.report._html import render_index
    page = render_index([{"input": "\x1b[31m<b>a</b>\x07.jsonl", "header": {"id": {"x": "<i>"}}, "verdict": "ok",
                          "events": 3, "folder": "a"}], "2026-01-01T00:00:00Z")
    assert ('<td class="text"><code>\\x1b[31m&lt;b&gt;a&lt;/b&gt;\\x07.jsonl</code></td>'
            '<td>{&#34;x&#34;:&#34;&lt;i&gt;&#34;}</td>') in page
    assert "\x1b" not in page and "\x07" not in page


def test_a_template_that_prints_an_unknown_name_fails_and_an_if_without_else_prints_nothing():
    # The value filter printed any Undefined as text: a misspelt name as "<StrictUndefined>"
    # (the environment's StrictUndefined never raised) and `{{ 'x' if c }}` as "<Undefined>".
    import jinja2

    from dshreplay.report._html import _environment
    template = _environment().from_string('<i class="a{{ " b" if shadowed }}">{{ text }}</i>')
    assert template.render(shadowed=False, text="<t>") == '<i class="a">&lt;t&gt;</i>'
    assert template.render(shadowed=True, text="t") == '<i class="a b">t</i>'
    with pytest.raises(jinja2.UndefinedError, match="'text' is undefined"):
        template.render(shadowed=False)
