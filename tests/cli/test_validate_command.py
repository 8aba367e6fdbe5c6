"""`dshreplay validate`: exit codes, the JSON shape, tables, filters."""

from __future__ import annotations

from conftest import SAMPLES

GOOD = [SAMPLES / n for n in ("multi-turn.jsonl", "multi-turn.runtime.jsonl.zstd", "packed-rows.jsonl",
                             "compaction.jsonl", "prune.jsonl", "fork-child.jsonl")]


def test_clean_samples_exit_0(cli):
    result = cli("validate", *GOOD)
    assert result.stdout.splitlines()[-1] == \
        f"{len(GOOD)} files: {len(GOOD)} ok, 0 with errors, 0 unreadable; 0 errors, 0 warnings, 0 notices"


def test_json_shape(cli):
    out = cli("validate", "--json", SAMPLES / "broken-seq-gap.jsonl", SAMPLES / "multi-turn.jsonl",
              expect=1).json()
    assert list(out) == ["files"]
    first, second = out["files"]
    assert list(first) == ["path", "ok", "events", "findings"]
    assert (first["ok"], first["events"]) == (False, 63)
    assert first["findings"] == [{"code": "DSH-E101", "severity": "error", "seq": 5, "line": 7,
                                  "pointer": "/seq", "message": "seq 8 is not contiguous; expected 5: the "
                                  "line's seq is wrong (the line after it has seq 6) (taken as seq 5)"}]
    assert (second["ok"], second["findings"]) == (True, [])


def test_warnings_pass_unless_strict(cli):
    cli("validate", SAMPLES / "torn-tail.jsonl")
    result = cli("validate", "--strict", SAMPLES / "torn-tail.jsonl", expect=1)
    assert "DSH-W010" in result.stdout


def test_an_unreadable_file_exits_2_and_the_others_are_still_checked(cli, tmp_path):
    result = cli("validate", "--json", tmp_path / "missing.jsonl", SAMPLES / "broken-version-1.jsonl",
                 SAMPLES / "broken-seq-gap.jsonl", expect=2)
    files = result.json()["files"]
    assert [f["findings"][0]["code"] for f in files] == ["DSH-E000", "DSH-E000", "DSH-E101"]
    assert "format version 1 not supported" in files[1]["findings"][0]["message"]


def test_select_and_ignore(cli):
    path = SAMPLES / "torn-tail.jsonl"
    assert cli("validate", "--json", "--select", "dsh-e", path).json()["files"][0]["findings"] == []
    assert cli("validate", "--json", "--ignore", "DSH-W010", "--strict", path).json()["files"][0]["ok"]
    result = cli("validate", "--select", ",", path, expect=2)
    assert "Invalid value for '--select'" in result.stderr


def test_table_rows_fit_100_columns(cli):
    result = cli("validate", SAMPLES / "broken-replace-start-not-found.jsonl", expect=1)
    lines = result.stdout.splitlines()
    assert lines[0].endswith("FAILED: 95 events, 1 error, 0 warnings, 0 notices")
    assert lines[1].split() == ["severity", "code", "seq", "line", "pointer", "message"]
    assert lines[3].split()[:5] == ["error", "DSH-E107", "67", "69", "/surfaceOp/start"]
    assert lines[0].startswith(str(SAMPLES / "broken-replace-start-not-found.jsonl"))  # the file name whole
    assert all(len(line) <= 100 for line in lines[1:])


def test_log_text_cannot_reach_the_terminal_raw(cli, builder, write_log):
    b = builder()
    b.add("custom/\x1b[31mred", {})
    result = cli("validate", write_log(b), expect=1)
    assert "\x1b" not in result.stdout
