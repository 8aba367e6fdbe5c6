"""Errors by kind: unreadable input and bad usage exit 2; a bug of ours exits 70 with one line."""

from __future__ import annotations

from click.testing import CliRunner

from dshreplay.cli import cli as command

from conftest import SAMPLES


def crash(*args, **kwargs):
    raise RuntimeError("a bug")


def test_a_bug_exits_70_with_one_line_and_no_traceback(cli, monkeypatch):
    import dshreplay.core.driver as driver
    monkeypatch.setattr(driver, "fold_report", crash)
    monkeypatch.setattr("dshreplay.session.fold_report", crash)
    result = cli("fold", SAMPLES / "compaction.jsonl", expect=70)
    assert result.stderr == ("dshreplay: internal error: RuntimeError: a bug (please report it; --debug or "
                             "DSHREPLAY_DEBUG=1 shows the traceback)\n")
    assert result.stdout == ""


def test_debug_shows_the_traceback_of_a_bug(monkeypatch):
    monkeypatch.setattr("dshreplay.session.fold_report", crash)
    result = CliRunner().invoke(command, ["--debug", "fold", str(SAMPLES / "compaction.jsonl")])
    assert result.exit_code == 70
    assert "Traceback (most recent call last)" in result.stderr and 'raise RuntimeError("a bug")' in result.stderr


def test_unreadable_input_and_bad_usage_exit_2(cli, tmp_path):
    assert "cannot open" in cli("fold", tmp_path / "absent.jsonl", expect=2).stderr
    assert cli("fold", expect=2).stderr == ("dshreplay: usage error: Missing argument 'LOG'. A log on standard "
                                            "input is read when LOG is -: dshreplay fold - < LOG. "
                                            "(see 'dshreplay fold --help')\n")  # one line, as every error
    # (the test's standard input is no terminal: a log may be piped in, so the hint is given)


def test_a_usage_error_click_finds_is_one_line_naming_the_help(cli):
    assert cli("fold", SAMPLES / "prune.jsonl", "--at", "abc", expect=2).stderr == (
        "dshreplay: usage error: Invalid value for '--at': \"abc\" is not a seq (a whole number from 0) "
        "(see 'dshreplay fold --help')\n")
    assert cli("nosuch", expect=2).stderr == ("dshreplay: usage error: No such command 'nosuch'. "
                                              "(see 'dshreplay --help')\n")


def test_a_failed_fold_exits_1(cli):
    result = cli("fold", SAMPLES / "broken-replace-start-not-found.jsonl", expect=1)
    assert "no answer: the model's view at the end of the log: the fold fails at seq 67" in result.stderr
    result = cli("fold", SAMPLES / "broken-bad-json-line.jsonl", expect=1)  # (a bad line inside the log)
    assert "the fold fails at seq 4 (DSH-E001, line 6: line is not valid JSON" in result.stderr


def test_max_bytes_is_an_option_of_one_run_not_of_the_process(cli, tmp_path):
    from dshreplay.options import DEFAULT, DEFAULT_MAX_BYTES
    from dshreplay.testing.samples import multi_turn
    log = tmp_path / "s.jsonl.zstd"
    multi_turn().write(log)
    assert "1024-byte ceiling" in cli("--max-bytes", "1K", "fold", log, expect=2).stderr
    assert DEFAULT.max_bytes == DEFAULT_MAX_BYTES
    cli("fold", log)  # the next run has the default again


def test_a_reader_that_closes_early_ends_the_command_quietly_with_0(tmp_path):
    import subprocess
    import sys

    from dshreplay.testing.samples import LogBuilder
    b = LogBuilder("long")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("go")
    for n in range(400):  # far more output than a pipe holds
        b.tool_round("bash", '{"command": "true"}', f"output {n}")
    b.end_turn()
    log = b.write(tmp_path / "long.jsonl")
    for args in (["events", str(log)], ["events", str(log), "--json"], ["transcript", str(log)]):
        proc = subprocess.Popen([sys.executable, "-m", "dshreplay", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        first = proc.stdout.readline()  # `| head -1`
        proc.stdout.close()
        stderr = proc.stderr.read()
        assert first and proc.wait(timeout=60) == 0 and stderr == b"", (args, stderr)


def test_error_lines_name_each_file_as_given(cli):
    logs = [SAMPLES / "broken-seq-gap.jsonl", SAMPLES / "broken-replace-start-not-found.jsonl"]
    result = cli("stats", *logs, expect=1)
    lines = result.stderr.splitlines()
    assert [line.split(": ")[1] for line in lines] == [str(p) for p in logs], lines


def test_stats_and_export_warn_once_of_a_torn_tail_and_say_it_in_json(cli, tmp_path):
    log = SAMPLES / "torn-tail.jsonl"
    warning = f"dshreplay: warning: {log}: line 65: torn tail: last line has no newline and does not parse; " \
              "42 bytes lost at byte offset 11341\n"
    result = cli("stats", log, "--json")
    assert result.stderr == warning
    assert result.json()["sessions"][0]["tornTail"] == {"line": 65, "offset": 11341, "bytes": 42}
    result = cli("export", log, "--out", tmp_path / "b", "--json")
    assert result.stderr == warning[:-1] + " (not exported)\n"  # (one text for a torn tail)
    assert result.json()["sessions"][0]["tornTail"] == {"line": 65, "offset": 11341, "bytes": 42}
