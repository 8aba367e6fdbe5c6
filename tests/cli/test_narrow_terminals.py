"""Narrow terminals keep what the README promises never to cut (#35): numbers, seq lists and
kind words wrap (a seq list at its commas, a type at its "/", notes at words) instead of being
cut in the middle; only ids and paths are cut."""

from __future__ import annotations

from dshreplay.testing.samples import LogBuilder


def two_compactions(rounds: int) -> LogBuilder:
    """`rounds` questions and answers, then a compaction, then a failed one that replaces its summary."""
    b = LogBuilder("narrow")
    b.start_turn()
    b.request_header()
    b.start_step()
    for k in range(rounds):
        b.user(f"question {k}")
        b.assistant(f"answer {k}")
    b.end_step()
    b.start_step()
    first = b.user("please list the files")
    b.tool_round("read_file", '{"path":"main.py"}', "print('hi')")
    second = b.assistant("The entry point is main.py", usage={"inputTokens": 1234, "outputTokens": 56})
    b.end_step()
    summary = b.compaction(first, second, "summary of the start")
    b.start_step()
    b.user("and the tests?")
    last = b.assistant("tests/ holds them", usage={"inputTokens": 1300, "outputTokens": 20})
    b.end_step()
    b.compaction(summary, last, "summary of the summary and the tests", error="the summarizer timed out")
    return b


def test_provenance_at_100_columns_wraps_its_sources_at_commas(cli, write_log):
    log = write_log(two_compactions(130))
    lines = cli("provenance", log, "--message", 261, columns=100).stdout.splitlines()
    assert lines[:4] == [
        "#    seq   type          op                  sources                   origins               spilled",
        "---  ----  ------------  ------------------  ------------------------  --------------------  -------",
        "261  1256  user/message  replace 1240..1252  1254, 1255, 1240, 1243,   user/message: 1215,   -",
        "                                             1252                      1240, 1243;"]  # (was 1254, 1…1240)


def test_shadows_at_80_columns_keeps_the_kind_whole(cli, write_log):
    log = write_log(two_compactions(130))
    assert cli("shadows", log, columns=80).stdout.splitlines() == [
        "                                                               compaction",
        "seq   kind     range       shadowed             meter  tokens  Id          chain",
        "----  -------  ----------  -------------------  -----  ------  ----------  -----",
        "1240  summary  1215..1236  1215, 1225, 1227,    1239   900     com…n-0266  -",  # (was s…mary)
        "                           1236",
        "1256  summary  1240..1252  1240, 1243, 1252     1255   900     com…n-0270  1240",
        "2 replacements"]


def test_brackets_at_60_columns_wraps_its_notes_at_words(cli, write_log):
    log = write_log(two_compactions(0))
    lines = cli("brackets", log, columns=60).stdout.splitlines()
    # (the table would leave the notes 5 columns, "error" / ": the" / "summa" / "rizer": each row is a record)
    assert lines[9:] == [
        "compactionId  compaction-0010",
        "start         44",
        "end           47",
        "status        failed",
        "turn          1",
        "summary       45",
        "replacement   46",
        "notes         error: the summarizer timed out",
        "2 compactions"]


def test_events_at_60_columns_wraps_a_type_at_its_slash(cli, write_log):
    log = write_log(two_compactions(130))
    assert cli("events", log, "--from", 1238, "--to", 1242, columns=60).stdout.splitlines()[2:] == [
        "1238  15:36:09.995  compaction/  1     -     log-only  comp…",
        "                    start",
        "1239  15:36:10.002  compaction/  1     -     log-only  shad…",
        "                    summary",
        "1240  15:36:10.009  user/        1     -     shadowed  <com…",  # (was u…sage)
        "                    message",
        "1241  15:36:10.016  compaction/  1     -     log-only  comp…",
        "                    end",
        "1242  15:36:10.023  step/start   1     3     log-only  turn…",
        "5 events"]


