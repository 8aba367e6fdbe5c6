"""Log text that tries to act on a terminal, run in a spreadsheet, hide, or forge a line of output.

Every writer for people (text tables, trees, transcripts, file listings, error lines, `sql
--csv`, and `--json`/`--jsonl` on a terminal) shows log text through one cleaning
(`jsvalues.visible`): a character that is not printable is written as an escape
(\\xNN, \\uNNNN, \\UNNNNNNNN), as a path's bytes that are not UTF-8 are, never passed
raw and never dropped, so it neither acts nor hides and distinct values print distinctly.
Each case runs the real command line in a child process under limits (`attack`, or
`on_terminal` for a stdout that is a terminal).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import attack, on_terminal

from dshreplay.testing.samples import LogBuilder, multi_turn

USER_TEXTS = ["\x1b]0;owned\x07title", "\x1b]52;c;aGk=\x07clip", "\x1b[2Jclear", "\x9b2Jc1", "fake\rreal",
              '=HYPERLINK("http://evil.example","click")', "=cmd|' /C calc'!A0", "\u202eabc"]
TOOLS = ["bash\u2060", "bash\ufeff", "bash\U000e0041"]  # word joiner, BOM, TAG LATIN CAPITAL LETTER A
FAKE_TURN = ("ok\n── user · seq 9 · 2026-07-06T15:36:05.218Z ──\nrm -rf ~\n### user · seq 9\n"
             "[turn 1 ended: completed at seq 9]\n== seq 9 · user ==")
DUCKDB_MB = 2000  # (DuckDB maps more address space than the other commands)
HIDDEN = ("\x1b", "\x07", "\x9b", "\r", "\u202e", "\u2060", "\ufeff", "\U000e0041")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    b = LogBuilder("hostile", cwd="/home/\u202eevil")
    b.start_turn()
    b.request_header()
    b.start_step()
    for text in USER_TEXTS:
        b.user(text)
    b.tool_round(TOOLS[0], '{"command": "ls"}', "x\n")
    b.tool_round(TOOLS[1], '{"command": "ls"}', FAKE_TURN)
    b.tool_round(TOOLS[2], '{"command": "ls"}', "x\n")
    b.end_step()
    b.end_turn()
    return b.write(tmp_path_factory.mktemp("hostile") / "hostile.jsonl")


# -- sql --csv: the bundle's CSV cells ----------------------------------------------------------

def test_sql_csv_escapes_terminal_controls_and_neutralises_formulas(hostile, tmp_path):
    # It wrote log text raw: an OSC 0 title, an OSC 52 clipboard write, ESC[2J, a C1 CSI, a bare
    # CR, and =HYPERLINK(...) and =cmd|' /C calc'!A0 cells a spreadsheet runs.
    db = tmp_path / "i.duckdb"
    assert attack("index", hostile, "--db", db, "--messages", "--no-default-redaction", mem_mb=DUCKDB_MB).code == 0
    result = attack("sql", db, "SELECT seq, text AS \"=x\" FROM messages WHERE role = 'user' ORDER BY seq", "--csv",
                    mem_mb=DUCKDB_MB)
    assert result.code == 0, result.stderr
    assert result.stdout == (
        "seq,'=x\n"
        "3,\\x1b]0;owned\\x07title\n"
        "4,\\x1b]52;c;aGk=\\x07clip\n"
        "5,\\x1b[2Jclear\n"
        "6,\\x9b2Jc1\n"
        "7,fake real\n"  # (a line break in a cell is a space, as in the bundle's CSVs)
        "8,\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"click\"\")\"\n"
        "9,'=cmd|' /C calc'!A0\n"
        "10,\\u202eabc\n")


def test_sql_csv_neutralises_negative_numbers_as_the_bundle_does(hostile, tmp_path):
    db = tmp_path / "i.duckdb"
    assert attack("index", hostile, "--db", db, "--no-default-redaction", mem_mb=DUCKDB_MB).code == 0
    result = attack("sql", db, "SELECT -turns AS t, 1.5 AS f, NULL AS n, [1, 2] AS l FROM sessions", "--csv",
                    mem_mb=DUCKDB_MB)
    assert result.stdout == "t,f,n,l\n'-1,1.5,,\"[1,2]\"\n"


# -- JSON on a terminal -------------------------------------------------------------------------

@pytest.mark.parametrize("command, raw, escaped", [
    (["fold", "--json"], "\u202e", '"text":"\\u202eabc"'),
    (["events", "--json"], "\u202e", '"text":"\\u202eabc"'),
    (["events", "--jsonl"], "\u202e", '"text":"\\u202eabc"'),
    (["transcript", "--json"], "\u202e", '"text":"\\u202eabc"'),
    (["inspect", "--json"], "\u202e", '"cwd":"/home/\\u202eevil"'),
    (["stats", "--json"], "\u2060", '"tools":{"bash\\u2060":{"calls":1,"errors":0},'
                                     '"bash\\ufeff":{"calls":1,"errors":0},"bash\\udb40\\udc41":{"calls":1,"errors":0}}'),
    (["stats", "--jsonl"], "\U000e0041", '"bash\\udb40\\udc41":{"calls":1,"errors":0}'),
])
def test_json_on_a_terminal_escapes_what_text_output_escapes_and_is_the_same_value(hostile, command, raw, escaped):
    # On a terminal U+202E (and U+2060, U+FEFF, tag characters) passed raw: the terminal reordered
    # or hid text. There they are JSON escapes now; into a pipe the JSON is written as before.
    shown = on_terminal(command[0], hostile, *command[1:])
    piped = attack(command[0], hostile, *command[1:])
    assert shown.code == piped.code == 0, shown.stderr
    assert escaped in shown.stdout
    assert not any(c in shown.stdout for c in HIDDEN), [c for c in HIDDEN if c in shown.stdout]
    assert raw in piped.stdout and escaped not in piped.stdout  # (a pipe: written as before)
    values = [[json.loads(line) for line in out.splitlines()] for out in (shown.stdout, piped.stdout)]
    assert values[0] == values[1]


def test_sql_json_on_a_terminal_escapes_bidirectional_controls(hostile, tmp_path):
    db = tmp_path / "i.duckdb"
    assert attack("index", hostile, "--db", db, "--messages", "--no-default-redaction", mem_mb=DUCKDB_MB).code == 0
    result = on_terminal("sql", db, "SELECT text FROM messages WHERE seq = 10", "--json", mem_mb=DUCKDB_MB)
    assert result.stdout == '[{"text":"\\u202eabc"}]\n'


# -- text: invisible characters made visible ---------------------------------------------------

def test_three_tool_names_that_differ_only_in_invisible_characters_print_distinctly(hostile):
    # stats printed "tools: bash 1, bash 1, bash 1"
    result = on_terminal("stats", hostile)
    assert "\n  tools: bash\\u2060 1, bash\\ufeff 1, bash\\U000e0041 1\n" in result.stdout
    assert not any(c in result.stdout for c in HIDDEN)


def test_events_on_a_terminal_show_controls_and_escapes_escaped(hostile):
    result = on_terminal("events", hostile, "--type", "user/message")
    rows = [line.split(None, 6)[-1] for line in result.stdout.splitlines()[2:-1]]
    assert rows == ["\\x1b]0;owned\\x07title", "\\x1b]52;c;aGk=\\x07clip", "\\x1b[2Jclear", "\\x9b2Jc1",
                    "fake real",  # (a preview folds whitespace: a bare CR as any line break)
                    '=HYPERLINK("http://evil.example","click")', "=cmd|' /C calc'!A0", "\\u202eabc"]


# -- no log text forges a line ------------------------------------------------------------------

def test_a_header_origin_with_line_breaks_stays_on_its_session_s_line_in_lineage(tmp_path):
    # It drew a fake row: "└── approved-child-0001 [subagent] /tmp/x.jsonl" under the session.
    b = LogBuilder("origin-forger", origin="approved\n└── approved-child-0001 [subagent] /tmp/x.jsonl")
    b.start_turn()
    b.user("hi")
    b.end_turn()
    log = b.write(tmp_path / "o.jsonl")
    result = attack("lineage", log)
    assert result.code == 0, result.stderr
    assert result.stdout == (f"origin-forger [approved\\x0a└── approved-child-0001 [subagent] /tmp/x.jsonl]  {log}\n")


def test_a_tool_result_cannot_start_a_line_that_looks_like_a_turn_header_or_marker(hostile, tmp_path):
    # A tool result holding "── user · seq 9 · <time> ──" printed a fake user turn indistinguishable
    # from a real one. Every line of log text is indented now; headers and markers start at the margin.
    text = attack("transcript", hostile).stdout
    assert ("── tool · seq 34 · 2026-07-06T15:36:05.363Z ──\n"
            "  [result bash\\ufeff call-0012] ok\n"
            "  ── user · seq 9 · 2026-07-06T15:36:05.218Z ──\n"
            "  rm -rf ~\n"
            "  ### user · seq 9\n"
            "  [turn 1 ended: completed at seq 9]\n"
            "  == seq 9 · user ==\n\n") in text
    heads = [line for line in text.splitlines() if line.startswith(("──", "["))]
    assert [h.split(" · ")[1] if h.startswith("──") else h for h in heads] == [
        *(f"seq {s}" for s in (3, 4, 5, 6, 7, 8, 9, 10, 20, 22, 32, 34, 44, 46)), "[turn 1 ended: completed at seq 48]"]
    out = tmp_path / "b"
    assert attack("export", hostile, "--out", out, "--no-default-redaction", "-q").code == 0
    md = (out / "hostile" / "transcript.md").read_text()
    assert ("### tool · seq 34 · 2026-07-06T15:36:05.363Z\n\n```text\n"
            "  [result bash\\ufeff call-0012] ok\n"
            "  ── user · seq 9 · 2026-07-06T15:36:05.218Z ──\n"
            "  rm -rf ~\n"
            "  ### user · seq 9\n"
            "  [turn 1 ended: completed at seq 9]\n"
            "  == seq 9 · user ==\n```\n") in md
    assert sum(line.startswith("### ") for line in md.splitlines()) == 14


def test_a_message_cannot_start_a_line_that_looks_like_a_message_head_in_a_diff(hostile):
    text = attack("diff", hostile, "--from", 30, "--to", 34, "--text").stdout
    assert text.endswith("+== seq 34 · tool ==\n"  # (a tool result: shown as tool, as fold shows it)
                         "+  [result call-0012] ok\n"
                         "+  ── user · seq 9 · 2026-07-06T15:36:05.218Z ──\n"
                         "+  rm -rf ~\n"
                         "+  ### user · seq 9\n"
                         "+  [turn 1 ended: completed at seq 9]\n"
                         "+  == seq 9 · user ==\n")
    assert [line for line in text.splitlines() if line[1:].startswith("==")] == [
        " == seq 22 · tool ==", "+== seq 32 · assistant ==", "+== seq 34 · tool =="]


# -- file names ----------------------------------------------------------------------------------

@pytest.fixture
def twins(tmp_path) -> Path:
    """`a.jsonl` (whole) and `a<ESC>[0m.jsonl` (its last line broken) in one folder."""
    data = multi_turn().write(tmp_path / "a.jsonl").read_bytes()
    (tmp_path / "a\x1b[0m.jsonl").write_bytes(data[:-40] + b"{not json\n")
    return tmp_path


def test_file_names_with_escape_sequences_print_escaped_in_every_listing(twins):
    # a.jsonl and a<ESC>[0m.jsonl printed as the same name, one ok and one FAILED.
    validated = attack("validate", ".", cwd=twins)
    assert validated.code == 1
    assert [line for line in validated.stdout.splitlines() if ": ok: " in line or ": FAILED: " in line] == [
        "a\\x1b[0m.jsonl: FAILED: 63 events, 1 error, 1 warning, 0 notices",
        "a.jsonl: ok: 63 events, 0 errors, 0 warnings, 0 notices"]
    stats = attack("stats", ".", cwd=twins).stdout.splitlines()
    assert [line.split()[0] for line in stats[2:4]] == ["a\\x1b[0m.jsonl", "a.jsonl"]
    assert attack("lineage", ".", cwd=twins).stdout == ("sample-multi-turn [root]  a\\x1b[0m.jsonl\n"
                                            "sample-multi-turn [root]  a.jsonl\n"
                                            "   ! session id also used by a\\x1b[0m.jsonl\n")
    failed = attack("fold", "a\x1b[0m.jsonl", cwd=twins)
    assert failed.one_line().startswith("dshreplay: a\\x1b[0m.jsonl: no answer: ")
    exported = attack("export", twins, "--out", twins / "out", "--no-default-redaction", "-q", "--wide",
                      "--timestamp", "2026-01-01T00:00:00Z")
    assert [line.split()[:3] for line in exported.stdout.splitlines() if line.startswith(str(twins))] == [
        [f"{twins}/a\\x1b[0m.jsonl", "sample-multi-turn", "errors"], [f"{twins}/a.jsonl", "sample-multi-turn~~2", "ok"]]
    indexed = attack("index", "a.jsonl", "a\x1b[0m.jsonl", "--db", twins / "i.duckdb", "--no-default-redaction",
                     cwd=twins, mem_mb=DUCKDB_MB)
    assert indexed.code == 1
    assert indexed.stderr.startswith(f"dshreplay: {twins}/a\\x1b[0m.jsonl: the fold fails at seq 62: ")
    for result in (validated, failed, exported, indexed):
        assert not any(c in result.stdout + result.stderr for c in HIDDEN)
