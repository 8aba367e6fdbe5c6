"""One consistent command line (#23 item 3): shared option types, global options
after the subcommand, request --bundle, and one exit code for unreadable content."""

from __future__ import annotations

import pytest

from dshreplay.testing.samples import LogBuilder, multi_turn

from conftest import SAMPLES

PRUNE = SAMPLES / "prune.jsonl"


def usage_line(command: str, message: str) -> str:
    return f"dshreplay: usage error: {message} (see 'dshreplay {command} --help')\n"


# -- shared option types: one parser each, one usage line ------------------------------

@pytest.mark.parametrize("args, command, message", [
    (["fold", PRUNE, "--max-bytes", "1Q"], "fold",
     "Invalid value for '--max-bytes': \"1Q\": want a size such as 500M or 4G: ASCII digits and K, M, G, T or P, "
     "from 1 byte to 1P"),
    (["--max-line", "0", "fold", PRUNE], "",
     "Invalid value for '--max-line': \"0\": want a size such as 500M or 4G: ASCII digits and K, M, G, T or P, "
     "from 1 byte to 1P"),
    (["events", PRUNE, "--since", "yesterday"], "events",
     "Invalid value for '--since': \"yesterday\" is not an ISO 8601 time (such as 2026-07-06T15:36:05Z)"),
    (["usage", PRUNE, "--until", "2026-13-01"], "usage",
     "Invalid value for '--until': \"2026-13-01\" is not an ISO 8601 time (such as 2026-07-06T15:36:05Z)"),
    (["validate", PRUNE, "--select", "DSH-X9"], "validate",
     "Invalid value for '--select': DSH-X9 is no finding code or prefix of one (the closest is DSH-N009; all are "
     "in docs/reference/findings.md)"),
    (["validate", PRUNE, "--ignore", " , "], "validate",
     "Invalid value for '--ignore': give one or more codes or prefixes, comma-separated"),
    (["events", PRUNE, "--from", "-3"], "events", "Invalid value for '--from': \"-3\" is not a seq (a whole number "
                                                  "from 0)"),
    (["diff", PRUNE, "--from", "1", "--to", "x"], "diff",
     "Invalid value for '--to': \"x\" is not a seq (a whole number from 0)"),
    (["shadows", PRUNE, "--at", "1.5"], "shadows",
     "Invalid value for '--at': \"1.5\" is not a seq (a whole number from 0)"),
    (["events", PRUNE, "--lines", "4-x"], "events",
     "Invalid value for '--lines': '4-x' is not a line range such as 480-490 (or one line, 482)"),
])
def test_a_bad_value_is_one_usage_line_from_its_type(cli, args, command, message):
    result = cli(*args, expect=2)
    assert result.stderr == usage_line(command, message).replace("dshreplay  --help", "dshreplay --help")
    assert result.stdout == ""


def test_the_types_give_the_values_the_commands_use(cli, tmp_path):
    assert cli("validate", PRUNE, "--select", "dsh-e0, DSH-W", "--json").json()["files"][0]["ok"] is True
    assert cli("events", PRUNE, "--lines", "2-3", "--json").json()[0]["line"] == 2
    assert [e["seq"] for e in cli("events", PRUNE, "--from", "5", "--to", "3", "--json").json()] == [3, 4, 5]
    assert cli("fold", PRUNE, "--at", "19", "--json").json()["seq"] == 19


def test_snapshot_and_at_are_the_same_option_in_every_command():
    from dshreplay.cli import cli as group
    snapshots = {name: next(p for p in cmd.params if p.name == "snapshot") for name, cmd in group.commands.items()
                 if any(p.name == "snapshot" for p in cmd.params)}
    assert sorted(snapshots) == ["export", "validate"]
    assert len({p.help for p in snapshots.values()}) == 1
    ats = {name: next(p for p in cmd.params if p.name == "at") for name, cmd in group.commands.items()
           if any(p.name == "at" for p in cmd.params)}
    assert sorted(ats) == ["events", "fold", "provenance", "request", "shadows"]
    assert len({(p.help, p.metavar, type(p.type).__name__) for p in ats.values()}) == 1


# -- global options after the subcommand ----------------------------------------------

def test_global_options_work_after_the_subcommand_too(cli, tmp_path):
    log = tmp_path / "s.jsonl.zstd"
    multi_turn().write(log)
    before = cli("--max-bytes", "1K", "fold", log, expect=2)
    after = cli("fold", log, "--max-bytes", "1K", expect=2)
    assert before.stderr == after.stderr == (
        f"dshreplay: read error: {log}: line 2: decompressed text exceeds the 1024-byte ceiling (a decompression "
        "bomb, or a log that needs a larger --max-bytes)\n")
    assert cli("validate", PRUNE, "--debug", "--max-line", "1M").stdout.startswith(f"{PRUNE}: ok: 31 events")


def test_a_global_option_given_twice_the_one_after_the_subcommand_wins(cli, tmp_path):
    log = tmp_path / "s.jsonl.zstd"
    multi_turn().write(log)
    assert cli("--max-bytes", "1K", "fold", log, "--max-bytes", "1M").stdout.endswith(" at seq 62\n")
    assert "1024-byte ceiling" in cli("--max-bytes", "1M", "fold", log, "--max-bytes", "1K", expect=2).stderr


def test_debug_after_the_subcommand_shows_the_traceback_of_a_bug(monkeypatch):
    from click.testing import CliRunner

    from dshreplay.cli import cli as group

    def crash(*args, **kwargs):
        raise RuntimeError("a bug")
    monkeypatch.setattr("dshreplay.session.fold_report", crash)
    result = CliRunner().invoke(group, ["fold", str(SAMPLES / "compaction.jsonl"), "--debug"])
    assert result.exit_code == 70
    assert "Traceback (most recent call last)" in result.stderr


def test_help_says_the_global_options_go_either_side(cli):
    assert "go before the command or after it (given in both places, the one after the command wins)" in \
        " ".join(cli("--help").stdout.split())
    fold_help = " ".join(cli("fold", "--help").stdout.split())
    for option in ("--max-bytes SIZE", "--max-line SIZE", "--debug"):
        assert option in fold_help
    assert "Global: before or after the command (after wins)." in fold_help


# -- request --bundle ------------------------------------------------------------------

@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """A bundle of one session (compaction.jsonl) and one of two."""
    from click.testing import CliRunner

    from dshreplay.cli import cli as group
    root = tmp_path_factory.mktemp("bundles")
    for name, logs in (("one", ["compaction.jsonl"]), ("two", ["multi-turn.jsonl", "compaction.jsonl"])):
        result = CliRunner().invoke(group, ["export", *(str(SAMPLES / log) for log in logs), "--out",
                                            str(root / name)])
        assert result.exit_code == 0, result.stderr
    return root


def test_request_bundle_takes_a_bundle_of_one_session_and_prints_tables(cli, bundles):
    log = SAMPLES / "compaction.jsonl"
    listed = cli("request", "--bundle", bundles / "one", "--list").stdout
    assert listed == cli("request", log, "--list").stdout
    assert listed.splitlines()[0].split() == ["call", "turn", "step", "chunks", "model", "outcome", "in", "out",
                                             "msgs"]
    assert listed.splitlines()[3].split() == ["2", "1", "2", "24..31", "deepseek-official/deepseek-v4-flash", "stop",
                                             "2400", "36", "3"]
    assert listed.endswith("\n6 model calls\n")
    text = cli("request", "--bundle", bundles / "one", "--call", 2).stdout
    assert text == cli("request", log, "--call", 2).stdout
    assert text.splitlines()[:3] == ["call 2: turn 1, step 2; messages as of seq 23; header from seq 1; role tool: a "
                                     "tool result, sent as", "role user",
                                     "outcome: stop; chunks 24..31; usage in 2400 out 36"]
    assert cli("request", "--bundle", bundles / "one", "--call", 2, "--json").stdout == \
        cli("request", log, "--call", 2, "--json").stdout
    assert [c["call"] for c in cli("request", "--bundle", bundles / "one", "--list", "--json").json()] == \
        [1, 2, 3, 4, 5, 6]


def test_request_bundle_with_several_sessions_lists_them(cli, bundles):
    two = bundles / "two"
    assert cli("request", "--bundle", two, "--list", expect=2).stderr == (
        f"dshreplay: usage error: the bundle {two} holds 2 sessions: give one of its session folders, "
        f"{two / 'sample-multi-turn'}, {two / 'sample-compaction'}\n")
    assert cli("request", "--bundle", two / "sample-multi-turn", "--call", 1).stdout.startswith("call 1: turn 1")
    assert cli("request", "--bundle", two.parent, "--call", 1, expect=2).stderr == (
        f"dshreplay: usage error: {two.parent} is neither an export bundle (no manifest.json) nor a session "
        "folder of one (no calls.jsonl)\n")


def test_request_bundle_for_an_unknown_call_says_which_calls_there_are(cli, bundles):
    folder = bundles / "one" / "sample-compaction"
    assert cli("request", "--bundle", bundles / "one", "--call", 9, expect=2).stderr == (
        f"dshreplay: usage error: there is no call 9 in {folder}: it holds calls 1..6\n")
    failed = cli("request", "--bundle", bundles / "one", "--call", 9, "--json", expect=2)
    assert failed.json()["error"]["message"] == f"there is no call 9 in {folder}: it holds calls 1..6"


# -- one exit code for unreadable content -----------------------------------------------

UNREADABLE = {
    "bad header": (b'{"type":"user/message","seq":0}\n', "x.jsonl",
                   'line 1: first record must be the session header (type "session"), got type "user/message"'),
    "not JSON": (b"hello world\nnot json\n", "x.jsonl",
                 "line 1: header line is not valid JSON: unexpected character, expected a JSON value"),
    "corrupt zstd": (b"\x28\xb5\x2f\xfd\x00\x58garbagegarbage", "x.jsonl.zstd",
                     "line 1: corrupt zstd data in the frame at byte offset 0: zstd decompressor error: Data "
                     "corruption detected"),
}


@pytest.mark.parametrize("kind", sorted(UNREADABLE))
@pytest.mark.parametrize("command", ["fold", "validate", "inspect", "events", "stats"])
def test_unreadable_content_exits_2_in_every_command(cli, tmp_path, kind, command):
    content, name, why = UNREADABLE[kind]
    log = tmp_path / name
    log.write_bytes(content)
    result = cli(command, log, expect=2)
    assert result.stderr.splitlines()[-1].endswith(f"{log}: {why}")


@pytest.mark.parametrize("kind", sorted(UNREADABLE))
def test_unreadable_content_exits_2_in_export(cli, tmp_path, kind):
    content, name, why = UNREADABLE[kind]
    log = tmp_path / name
    log.write_bytes(content)
    result = cli("export", log, PRUNE, "--out", tmp_path / "b", expect=2)
    assert f"dshreplay: unreadable: {log}: " in result.stderr
    [said] = [line for line in result.stderr.splitlines() if line.startswith("dshreplay: unreadable: ")]
    assert said == f"dshreplay: unreadable: {log}: {why}"  # (the file named once, its line, why: as every command)
    assert (tmp_path / "b" / "sample-prune" / "events.csv").is_file()  # (the others are exported)


ZSTD_CUT = SAMPLES / "broken-zstd-checksum.jsonl.zstd"  # (a corrupt frame after 56 events)


CUT_WHY = ("the fold fails at seq 56 (DSH-E013, line 58: the rest of the log cannot be read: corrupt zstd data in "
           "the frame at byte offset 3568: zstd decompressor error: Restored data doesn't match checksum)")


@pytest.mark.parametrize("command", ["inspect", "events", "stats", "transcript", "shadows", "brackets"])
def test_a_corrupt_zstd_frame_is_answered_as_far_as_the_log_can_be_read(cli, command):
    # one policy for unreadable bytes, as for a line that is not JSON: the readable prefix, how far it
    # reaches, exit 1 (it was exit 2 and no answer, and fold --at / diff answered without a word)
    result = cli(command, ZSTD_CUT, expect=1)
    assert result.stderr.splitlines()[-1] == f"dshreplay: {ZSTD_CUT}: answered for seqs 0..55 only: {CUT_WHY}"


def test_a_corrupt_zstd_frame_leaves_no_view_of_the_whole_log_and_the_views_before_it_whole(cli):
    result = cli("fold", ZSTD_CUT, "--json", expect=1)
    assert result.json()["answeredUpTo"] is None and result.json()["error"]["code"] == "DSH-E013"
    assert result.stderr == (f"dshreplay: {ZSTD_CUT}: no answer: the model's view at the end of the log: "
                             f"{CUT_WHY}\n")
    assert cli("fold", ZSTD_CUT, "--at", 50, "--json").json()["seq"] == 50
    assert cli("request", ZSTD_CUT, "--call", 1, "--json").json()["call"] == 1
    assert cli("diff", ZSTD_CUT, "--from", 10, "--to", 50, "--json").stderr == ""


def test_validate_lists_what_it_read_before_the_corrupt_frame_and_says_nothing_of_the_logs_end(cli):
    report = cli("validate", ZSTD_CUT, "--json", expect=1).json()["files"][0]
    assert (report["events"], [(f["code"], f["seq"], f["line"]) for f in report["findings"]]) == \
        (56, [("DSH-E013", 56, 58)])  # (no DSH-W213: the log does not end inside turn 2, its rest is unread)
    assert report["findings"][0]["message"] == ("the rest of the log cannot be read: corrupt zstd data in the "
                                                "frame at byte offset 3568: zstd decompressor error: Restored "
                                                "data doesn't match checksum")


@pytest.mark.parametrize("command", ["fold", "validate", "inspect", "events", "stats"])
def test_a_line_that_is_not_json_inside_a_readable_log_is_a_finding_exit_1(cli, command):
    cli(command, SAMPLES / "broken-bad-json-line.jsonl", expect=1)


# -- --snapshot suggested when placeholders are seen ---------------------------------------

@pytest.fixture
def snapshot_log(builder, write_log):
    """A dsh test snapshot: the header's tools are the placeholder "{{tools}}" where an array belongs."""
    b = builder()
    b.user("hi")
    b.end_step()
    b.end_turn()
    b.events[1]["data"]["header"]["tools"] = "{{tools}}"
    return write_log(b)


def test_placeholders_seen_without_snapshot_suggest_it_once(cli, snapshot_log, read_mode):
    result = cli("validate", snapshot_log, snapshot_log, expect=1)
    assert result.stdout.count("'{{tools}}' is not of type 'array'") == 2
    assert result.stderr == ('dshreplay: hint: 2 schema errors are values such as "{{tools}}", the placeholders of '
                             "dsh's test snapshots: validate them with --snapshot\n")
    hint = cli("validate", snapshot_log, "--json", expect=1).stderr
    assert hint.startswith('dshreplay: hint: 1 schema error is a value such as "{{tools}}", the placeholders of ')
    accepted = cli("validate", snapshot_log, "--snapshot")
    assert (accepted.stderr, accepted.stdout.splitlines()[0]) == (
        "", f"{snapshot_log}: ok: {accepted.stdout.split(': ok: ')[1].split(' events')[0]} events, 0 errors, 0 "
            "warnings, 1 notice")


def test_no_hint_when_the_errors_are_not_placeholders(cli, builder, write_log):
    b = builder()
    b.user("hi")
    b.events[1]["data"]["header"]["tools"] = "tools"  # (a plain string: wrong, and no placeholder)
    result = cli("validate", write_log(b), expect=1)
    assert "is not of type 'array'" in result.stdout
    assert result.stderr == ""


# -- files and folders follow the umask ----------------------------------------------------

@pytest.fixture
def umask():
    """Run with a umask, the one before restored after."""
    import os
    previous = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(previous)


def modes(root):
    """{path relative to root: permission bits} of root and everything under it."""
    import os
    import stat
    found = {".": stat.S_IMODE(os.stat(root).st_mode)}
    for path in root.rglob("*"):
        found[str(path.relative_to(root))] = stat.S_IMODE(path.stat().st_mode)
    return found


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002], ids=oct)
def test_export_creates_its_folders_and_files_with_the_umask(cli, tmp_path, umask, mask):
    umask(mask)
    key = tmp_path / "evidence.key"
    cli("export", PRUNE, SAMPLES / "compaction.jsonl", "--out", tmp_path / "b", "--evidence-key", key)
    found = modes(tmp_path / "b")
    folders = {p for p in found if (tmp_path / "b" / p).is_dir()}
    assert folders == {".", "sample-prune", "sample-compaction"}
    assert {found[p] for p in folders} == {0o777 & ~mask}  # (the top folder was 0700 whatever the umask)
    assert {mode for p, mode in found.items() if p not in folders} == {0o666 & ~mask}
    assert len(found) > 20
    import os
    assert os.stat(key).st_mode & 0o777 == 0o600  # (a secret: 0600 whatever the umask)


def test_export_with_force_keeps_following_the_umask(cli, tmp_path, umask):
    cli("export", PRUNE, "--out", tmp_path / "b")
    umask(0o027)
    cli("export", PRUNE, "--out", tmp_path / "b", "--force")
    assert set(modes(tmp_path / "b").values()) == {0o750, 0o640}


def test_index_creates_its_database_and_parquet_files_with_the_umask(cli, tmp_path, umask):
    pytest.importorskip("duckdb", reason="the sql extra (duckdb) is not installed")
    umask(0o027)
    cli("index", PRUNE, "--db", tmp_path / "i.duckdb", "--parquet", tmp_path / "pq")
    assert modes(tmp_path / "i.duckdb") == {".": 0o640}
    found = modes(tmp_path / "pq")
    assert {mode for p, mode in found.items() if (tmp_path / "pq" / p).is_dir()} == {0o750}
    assert {mode for p, mode in found.items() if p.endswith(".parquet")} == {0o640}


# -- filters that can match nothing: the library's usage error, one line, exit 2 ---------

def test_a_usage_error_the_library_raises_is_one_line_exit_2(cli, monkeypatch):
    from dshreplay.errors import UsageError

    class NoMatch(UsageError):  # (the library's error for a filter that can match nothing is one of these)
        pass

    def refuse(self, flt, at=None, sink=None):
        raise NoMatch("turn 9: the log has 3 turns")
    monkeypatch.setattr("dshreplay.session.Session.query", refuse)
    result = cli("events", SAMPLES / "compaction.jsonl", "--turn", 9, expect=2)
    assert (result.stdout, result.stderr) == ("", "dshreplay: usage error: turn 9: the log has 3 turns\n")
    result = cli("events", SAMPLES / "compaction.jsonl", "--turn", 9, "--json", expect=2)
    assert result.json() == {"error": {"stage": "usage", "seq": None, "line": None, "pointer": None,
                                       "message": "turn 9: the log has 3 turns"},
                             "answeredUpTo": None, "answer": None}
    assert result.stderr == "dshreplay: usage error: turn 9: the log has 3 turns\n"


def _library_checks_filters() -> bool:
    import dshreplay.errors
    return hasattr(dshreplay.errors, "FilterError")  # (branch h28l: EventFilter refuses what can match nothing)


needs_h28l = pytest.mark.skipif(not _library_checks_filters(), reason="the library's filter checks (branch h28l)")


@needs_h28l
@pytest.mark.parametrize("args, says", [
    (["--type", "usr/"], 'no event type family "usr/"; families: '),
    (["--turn", "9"], "turn 9: the log has 3 turns"),
])
def test_a_filter_that_can_match_nothing_is_a_usage_error_naming_the_fix(cli, args, says):
    result = cli("events", SAMPLES / "compaction.jsonl", *args, expect=2)
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert result.stderr.startswith("dshreplay: usage error: ") and says in result.stderr


@pytest.mark.parametrize("args", [["--from", "50"], ["--from", "50", "--to", "60"], ["--from", "60", "--to", "50"]])
def test_events_from_a_seq_past_the_last_is_a_usage_error_as_at_is(cli, builder, write_log, args):
    b = builder()
    b.user("hello")
    last = b.assistant("hi")
    log = write_log(b)
    result = cli("events", log, *args, expect=2)
    assert (result.stdout, result.stderr) == (
        "", f"dshreplay: usage error: {log}: seq 50 is beyond the log: its last seq is {last}\n")
    assert cli("events", log, "--at", 50, expect=2).stderr == \
        f"dshreplay: usage error: {log}: seq 50 is beyond the log: its last seq is {last}\n"
    assert cli("events", log, "--from", last, "--json").json()[0]["seq"] == last


@needs_h28l
@pytest.mark.parametrize("option", ["--since", "--until"])
def test_a_time_filter_on_a_log_without_times_is_a_usage_error(cli, option):
    result = cli("events", SAMPLES / "multi-turn.jsonl", option, "2026-07-06T15:36:05Z", expect=2)
    assert result.stdout == "" and result.stderr.count("\n") == 1
    assert "on a log without times" in result.stderr


def test_request_bundle_refuses_a_manifest_naming_a_folder_outside_the_bundle(cli, tmp_path):
    import json
    cli("export", PRUNE, "--out", tmp_path / "b")
    manifest = tmp_path / "b" / "manifest.json"
    body = json.loads(manifest.read_text())
    body["sessions"][0]["folder"] = "../elsewhere"
    manifest.write_text(json.dumps(body))
    assert cli("request", "--bundle", tmp_path / "b", "--list", expect=2).stderr == (
        f'dshreplay: read error: {manifest}: the manifest names the session folder "../elsewhere", which is no '
        "folder of the bundle (the bundle is damaged)\n")


def test_a_table_with_a_text_column_fits_a_narrow_terminal_by_display_width(cli, write_log):
    from wcwidth import wcswidth
    b = LogBuilder("会话-🚀-セッション")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("请列出项目中的文件 🚀🚀 日本語のメッセージ")
    b.tool_round("読み取り_🔧", '{"路径":"主程序.py"}', "内容：打印（'你好'）🎉" * 3)
    b.end_step()
    b.start_step()
    b.assistant("入口点是 主程序.py 🎯", usage={"inputTokens": 123456789, "outputTokens": 98765})
    log = write_log(b)
    for args, columns in [(["fold"], 50), (["events"], 60), (["provenance"], 60)]:
        lines = cli(*args, log, columns=columns).stdout.splitlines()
        assert [line for line in lines if wcswidth(line) > columns] == [], (args, columns)
    events = cli("events", log, columns=60).stdout.splitlines()
    assert events[0].split() == ["seq", "time", "type", "turn", "step", "surface", "text"]
    assert events[-1] == f"{b.next_seq} events"  # (counts are whole)
    # (a type wraps at its "/" onto a line of its own, the seq column blank there)
    assert [line.split()[0] for line in events[2:-1] if not line.startswith(" ")] == [str(n) for n in range(b.next_seq)]


def test_a_column_held_wide_by_its_header_breaks_it_to_fit_a_narrow_terminal(cli, builder, write_log):
    b = builder()
    first = b.user("一")
    second = b.user("二 🚀")
    b.compaction(first, second, "摘要 🗜️")
    log = write_log(b)
    lines = cli("brackets", log, columns=60).stdout.splitlines()
    assert lines[:3] == ["compaction                                     repla-",
                         "Id          start  end  status  turn  summary  cement  notes",
                         "----------  -----  ---  ------  ----  -------  ------  -----"]
    assert max(map(len, lines)) <= 60


def test_request_and_diff_summary_lines_wrap_to_a_narrow_terminal_and_keep_numbers_whole(cli, builder, write_log):
    b = builder()
    ask = b.user("一 🚀")
    said = b.assistant("二", usage={"inputTokens": 123456789, "outputTokens": 98765})
    log = write_log(b)
    call = cli("request", log, "--call", 1, columns=40).stdout.splitlines()
    assert call[:4] == ["call 1: turn 1, step 1; messages as of", f"seq {ask}; header from seq 1",
                        f"outcome: stop; chunks {ask + 1}..{said - 1}; usage in", "123456789 out 98765"]
    assert (ask, said) == (3, 9)  # (so the lines below break where they do)
    diff = cli("diff", log, "--from", ask, "--to", said, columns=40).stdout.splitlines()
    assert diff[:2] == ["model view at seq 3 -> seq 9: 1 kept, 0", "removed, 1 added"]


def test_stats_usage_fold_and_lineage_fit_40_columns_with_numbers_and_paths_whole(cli, builder, write_log):
    from wcwidth import wcswidth
    b = builder()
    b.user("hello")
    b.assistant("hi", usage={"inputTokens": 123456789, "outputTokens": 98765})
    log = write_log(b)
    for args in (["stats"], ["usage", "--by", "session"], ["fold"], ["lineage"]):
        lines = cli(*args, log, columns=40).stdout.splitlines()
        # (a line that names the log whole may pass the width: a file name is never cut)
        assert [line for line in lines if wcswidth(line) > 40 and str(log) not in line] == [], args
    records = cli("stats", log, columns=40).stdout.splitlines()  # (ten columns of counts: a record)
    assert records[1:10] == ["turns       1", "steps       1", "call/fail   1/0", "retry       0", "tool/err    0/0",
                             "ask/deny    0/0", "sum/prn     0/0", "tok in/out  123456789/98765", "surface     2/2/0"]
    assert records[0].startswith("session     ") and "…" in records[0]
