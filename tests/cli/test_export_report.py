"""report.html and index.html as an export writes them: failures first, a waterfall whose failed
bars are red and lead to the call's model view, a tool-call table, empty sections left out, long
lists cut with the rest one click away, and an index that says why a session is not plain ok."""

from __future__ import annotations

import html
import re

from dshreplay.testing.samples import LogBuilder, incident

from conftest import SAMPLES


def export(cli, tmp_path, *logs, expect=0) -> str:
    out = tmp_path / "bundle"
    cli("export", *logs, "--out", out, "--timestamp", "2026-01-01T00:00:00Z", expect=expect)
    return out


def page(path) -> str:
    return path.read_text(encoding="utf-8")


def test_the_report_opens_on_the_failed_calls_and_their_bars_lead_to_the_model_view(cli, tmp_path):
    out = export(cli, tmp_path, incident().write(tmp_path / "incident.jsonl"))
    report = page(out / "incident-demo" / "report.html")
    assert report.index('id="failures"') < report.index('id="waterfall"') < report.index('id="facts"')
    header = re.search(r"<header>.*?</header>", report, re.S).group(0)
    assert html.unescape(header).endswith(
        '<p><span class="warn">ok</span>: 1 failed model call, 1 failed tool call, 1 aborted turn, 1 cancelled '
        'model call, 1 tool call without an outcome, interrupted: the log ends inside turn 3</p></header>')
    failures = re.search(r'<table id="failure-list">.*?</table>', report, re.S).group(0)
    linked = re.findall(r'<tr class="st-(\w+)"><td><a href="(#[\w-]+)"[^>]*>([^<]*)</a></td>'
                        r'<td class="note \w+ text">([^<]*)</td>', failures)
    assert linked == [("failed", "#call-1", "call 1", "error CONTEXT_WINDOW_EXCEEDED"),
                      ("failed", "#tool-1", "bash", "error"), ("cancelled", "#call-5", "call 5", "cancelled"),
                      ("open", "#tool-3", "bash", "outcome unknown")]
    assert '<tr class="st-aborted"><td>turn 2</td><td class="note aborted text">aborted by user</td>' in failures
    assert '<tr class="st-interrupted"><td>turn 3</td><td class="note interrupted text">interrupted</td>' in failures
    bar = re.search(r'<a class="bar failed" href="#call-1" title="([^"]*)"', report)
    assert html.unescape(bar.group(1)).endswith("; error CONTEXT_WINDOW_EXCEEDED")
    assert '<details id="call-1"><summary>Call 1 (turn 1, step 1): ' in report
    assert '<a class="bar failed" href="#tool-1"' in report and '<tr id="tool-1" class="st-failed">' in report


def test_the_tool_call_table_holds_the_arguments_as_the_bundle_does(cli, tmp_path):
    b = LogBuilder("secret-args")
    b.start_turn()
    b.start_step()
    b.user("deploy")
    b.tool_round("bash", '{"command": "deploy --token sk-stag1ng0123456789abcdef"}', "ok")
    b.end_turn()
    out = export(cli, tmp_path, b.write(tmp_path / "s.jsonl"))
    report = page(out / "secret-args" / "report.html")
    tools = (out / "secret-args" / "tools.csv").read_text()
    [row] = re.findall(r'<tr id="tool-1" class="st-ok">(.*?)</tr>', report)
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
    # (its tool/call at seq 13, its result 7 ms later)
    assert cells[0] == "bash" and cells[4:] == ["completed", "-", "-", "7 ms", "13-14"]
    arguments = re.sub(r"</?code>", "", cells[3])
    assert "sk-stag1ng" not in report and arguments.startswith('{"command": "deploy --token [REDACTED')
    assert arguments.replace('"', '""') in tools  # (what tools.csv holds, nothing more)


def test_empty_sections_are_left_out(cli, tmp_path):
    out = export(cli, tmp_path, incident().write(tmp_path / "incident.jsonl"))
    report = page(out / "incident-demo" / "report.html")
    for section in ("shadows", "brackets", "timeline"):  # (no replacement, no compaction)
        assert f'id="{section}"' not in report
    assert 'id="closers"' in report and 'id="tools"' in report and 'id="approvals"' in report
    assert "Replacements" not in report and "Compactions" not in report


def test_long_lists_show_their_first_rows_and_the_rest_behind_a_click(cli, tmp_path):
    b = LogBuilder("many-turns")
    for n in range(30):
        b.start_turn()
        b.start_step()
        b.user(f"question {n}")
        b.assistant(f"answer {n}")
        b.end_turn()
    out = export(cli, tmp_path, b.write(tmp_path / "many.jsonl"))
    report = page(out / "many-turns" / "report.html")
    endings = ", ".join(f"{n}: completed" for n in range(1, 13))
    assert f"<td>turn endings</td><td>{endings}, … (18 more)<details><summary>all 30</summary>" in report
    waterfall = re.search(r'<section id="waterfall">.*?</section>', report, re.S).group(0)
    assert waterfall.count('<div class="trk turn">') + waterfall.count('<div class="trk model">') == 60
    assert "<details><summary>20 more rows</summary>" in waterfall
    assert 'id="failures"' not in report  # (nothing failed: no section)
    assert '<p><span class="ok">ok</span></p></header>' in report


def test_index_html_gives_each_verdict_its_reason_and_warnings(cli, tmp_path):
    out = export(cli, tmp_path, SAMPLES / "multi-turn.jsonl", SAMPLES / "torn-tail.jsonl",
                 incident().write(tmp_path / "incident.jsonl"), SAMPLES / "broken-version-1.jsonl",
                 SAMPLES / "broken-bad-json-line.jsonl", expect=2)
    index = html.unescape(page(out / "index.html"))
    rows = re.findall(r'<tr class="st-(\w+)"><td class="text"><code>([^<]*)</code></td><td>[^<]*</td>'
                      r'<td><span class="\w+">'
                      r"([^<]*)</span></td>\n<td>(.*?)</td>", index, re.S)
    assert [(status, name.rsplit("/", 1)[-1], verdict) for status, name, verdict, _ in rows] == [
        ("ok", "multi-turn.jsonl", "ok"), ("warn", "torn-tail.jsonl", "ok (with warnings)"),
        ("warn", "incident.jsonl", "ok (with warnings)"), ("bad", "broken-version-1.jsonl", "unreadable"),
        ("bad", "broken-bad-json-line.jsonl", "errors")]
    why = [text for *_, text in rows]
    assert why[0] == "-"
    assert why[1] == ('<ul class="notes"><li class="warn">DSH-W010 at line 65: torn tail: last line has no newline '
                      "and does not parse; 42 bytes lost at byte offset 11341</li></ul>")
    assert why[2].startswith('<ul class="notes"><li class="warn">DSH-W213 at seq 74: log ends inside turn 3; ')
    assert why[3] == '<span class="bad">line 1: format version 1 not supported: dshreplay reads format version 0</span>'
    assert why[4].startswith('<span class="bad">DSH-E001 at seq 4: line is not valid JSON')


def test_a_megabyte_tool_name_is_cut_in_the_report_not_repeated(cli, tmp_path):
    name = "t" * 1_000_000
    b = LogBuilder("long-names")
    b.start_turn()
    b.start_step()
    b.user("go")
    for _ in range(10):
        b.tool_round(name, "{}", "ok")
    b.end_turn()
    out = export(cli, tmp_path, b.write(tmp_path / "long.jsonl"), expect=None)
    report = page(out / "long-names" / "report.html")
    assert (out / "long-names" / "tools.csv").stat().st_size > 10_000_000  # (the data file has every name whole)
    assert len(report) < 400_000 and "t" * 80 + "<" not in report
    assert f'<div class="lbl tool">{"t" * 77}... <span' in report and f' title="{"t" * 77}... ' in report


def test_a_report_whose_fold_fails_leads_with_the_failure_and_draws_what_stats_answers(cli, tmp_path):
    # the header led with 'errors: 2 failed model calls' and the fold failure was a grey line under
    # Findings; the waterfall drew every turn and call of the log, stats only those before the failure
    log = SAMPLES / "broken-replace-start-not-found.jsonl"
    stats = cli("stats", log, "--json", expect=1).json()["sessions"][0]
    out = tmp_path / "b"
    cli("export", log, "--out", out, "--no-default-redaction", "--timestamp", "2026-01-01T00:00:00Z", expect=1)
    [report_file] = out.rglob("report.html")
    report = page(report_file)
    header = html.unescape(re.search(r"<header>.*?</header>", report, re.S).group(0))
    assert header.endswith(f'<p><span class="bad">errors</span>: the fold fails at seq {stats["answeredUpTo"] + 1} '
                           '(DSH-E107): nothing past it is answered</p></header>')
    waterfall = re.search(r'<section id="waterfall">.*?</section>', report, re.S).group(0)
    labels = re.findall(r'class="lbl (turn|model)">', waterfall)
    assert (labels.count("turn"), labels.count("model")) == (stats["turns"], stats["calls"]) == (3, 4)
