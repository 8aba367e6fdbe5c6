"""Crafted hostile inputs: each ends with its exit code and one line, within a
ceiling of time and memory.

Every case runs `python -m dshreplay` in a child process under resource
limits (address space and CPU time), so a regression fails fast instead of
filling the machine. Inputs are generated here; none is committed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import orjson
import pytest
import zstandard
from harness import HEADER, Outcome, attack, lines  # noqa: F401 - (other test files import them from here)

from dshreplay.testing.samples import user_record

# -- 1. a record nested as deep as the parser goes ---------------------------------------

@pytest.fixture(scope="module")
def deep_log(tmp_path_factory) -> Path:
    deep: object = {"k": "v"}
    for _ in range(1000):
        deep = {"k": deep, "list": [1]}
    path = tmp_path_factory.mktemp("deep") / "deep.jsonl"
    message = user_record(1, "hi")
    message["data"]["extra"] = deep
    path.write_bytes(lines(HEADER, {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}, message))
    return path


@pytest.mark.parametrize("command", [["fold", "--json"], ["events", "--json"], ["request", "--at", "1", "--json"],
                                     ["transcript", "--format", "json"], ["inspect", "--json"],
                                     ["stats", "--json"], ["lineage", "--json"], ["fold", "--at", "1", "--json"]])
def test_a_record_nested_1000_deep_is_answered_in_json(deep_log, command):
    result = attack(command[0], deep_log, *command[1:])
    assert result.code == 0, result.stderr
    assert '"k":{"k":{"k":' in result.stdout or command[0] in ("inspect", "stats", "lineage")
    orjson.loads(result.stdout)  # it is JSON


def test_a_record_nested_1000_deep_is_validated_and_exported_with_the_other_sessions(deep_log, tmp_path):
    report = attack("validate", deep_log, "--json")
    assert report.code == 1  # the message's unknown "extra" key, nothing worse
    assert {f["code"] for f in orjson.loads(report.stdout)["files"][0]["findings"]} == {"DSH-E005", "DSH-W213"}
    samples = Path(__file__).resolve().parents[2] / "sample_logs"
    result = attack("export", deep_log, samples / "compaction.jsonl", "--out", tmp_path / "b")
    assert result.code == 1, result.stderr  # (the deep log's verdict has an error; both sessions are written)
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["attack", "index.html", "manifest.json",
                                                                  "sample-compaction"]


# -- 2. session ids that are the bundle's own file names ---------------------------------

def test_session_ids_named_like_bundle_files_or_devices_get_folders_of_their_own(tmp_path):
    for n, name in enumerate(["index.html", "manifest.json", "CON", "nul.txt"]):
        (tmp_path / f"{n}.jsonl").write_bytes(lines({**HEADER, "id": name}))
    result = attack("export", tmp_path, "--out", tmp_path / "out")
    assert result.code == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "index.html", "manifest.json", "~0043ON", "~0069ndex.html", "~006Danifest.json", "~006Eul.txt"]
    digest = result.stdout.splitlines()[-1].removeprefix("bundle digest: ")
    assert attack("verify-export", tmp_path / "out", "--digest", digest, "--json").code == 0


# -- 3. file and folder names that are not UTF-8 -----------------------------------------

def test_paths_that_are_not_utf8_are_read_and_printed_escaped(tmp_path):
    folder = os.fsencode(tmp_path) + b"/st/p/s\xff"
    os.makedirs(folder)
    samples = Path(__file__).resolve().parents[2] / "sample_logs"
    with open(folder + b"/session.jsonl", "wb") as fh:
        fh.write((samples / "multi-turn.jsonl").read_bytes())
    root = os.fsencode(tmp_path) + b"/st"
    for command in (["validate", "--json"], ["stats", "--json"], ["lineage", "--json"]):
        result = attack(command[0], root, *command[1:])
        assert result.code == 0, result.stderr
        assert "/st/p/s\\\\xff" in result.stdout  # (JSON text: the backslash escaped)
    assert "/st/p/s\\\\xff" in attack("inspect", folder, "--json").stdout
    exported = attack("export", root, "--out", tmp_path / "b")
    assert exported.code == 0
    digest = exported.stdout.splitlines()[-1].removeprefix("bundle digest: ")
    # (the inputs were given relative to another folder: the digest vouches for the bundle)
    assert attack("verify-export", tmp_path / "b", "--json", "--bundle-only", "--digest", digest).code == 0


# -- 4. a doctored bundle ---------------------------------------------------------------

@pytest.fixture
def bundle(tmp_path) -> Path:
    samples = Path(__file__).resolve().parents[2] / "sample_logs"
    assert attack("export", samples / "prune.jsonl", "--out", tmp_path / "b").code == 0
    return tmp_path / "b"


def test_a_manifest_that_is_a_device_or_a_pipe_is_refused_at_once(bundle):
    manifest = bundle / "manifest.json"
    manifest.unlink()
    manifest.symlink_to("/dev/zero")
    result = attack("verify-export", bundle, mem_mb=300, seconds=10)
    assert result.code == 2 and "not a regular file" in result.one_line()
    manifest.unlink()
    os.mkfifo(manifest)
    result = attack("verify-export", bundle, seconds=10)
    assert result.code == 2 and "is a pipe, not a regular file" in result.one_line()


def test_manifest_entries_of_the_wrong_type_or_length_are_differences(bundle):
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    manifest["sessions"][0]["file"] = 5
    manifest["files"].append({"path": "x" * 5000, "size": 1, "sha256": "0" * 64})
    (bundle / "manifest.json").write_bytes(orjson.dumps(manifest))
    result = attack("verify-export", bundle, "--json")
    assert result.code == 1
    problems = {d["problem"] for d in json.loads(result.stdout)["differences"]}
    assert "the manifest names its file with something not a path" in problems
    assert "listed in the manifest but missing" in problems or any(p.startswith("cannot be read") for p in problems)


# -- 5. file-system errors --------------------------------------------------------------

@pytest.mark.parametrize("out", ["/proc/self/b", "afile/sub"])
def test_an_out_folder_that_cannot_be_made_is_one_line_and_exit_2(tmp_path, out):
    (tmp_path / "afile").write_text("not a folder")
    samples = Path(__file__).resolve().parents[2] / "sample_logs"
    result = attack("export", samples / "prune.jsonl", "--out", out, cwd=tmp_path)
    assert result.code == 2
    assert result.one_line().startswith("dshreplay: ")


# -- 6. --force never deletes an input ---------------------------------------------------

def test_force_refuses_an_out_folder_holding_an_input(tmp_path):
    samples = Path(__file__).resolve().parents[2] / "sample_logs"
    bundle = tmp_path / "b"
    assert attack("export", samples / "prune.jsonl", "--out", bundle).code == 0
    evidence = bundle / "evidence.jsonl"
    evidence.write_bytes((samples / "prune.jsonl").read_bytes())
    result = attack("export", evidence, "--out", bundle, "--force")
    assert result.code == 2 and "holds the input" in result.one_line()
    assert evidence.read_bytes() == (samples / "prune.jsonl").read_bytes()


# -- 8. endless inputs --------------------------------------------------------------------

def test_redaction_rules_from_a_device_are_refused_at_once(tmp_path):
    samples = Path(__file__).resolve().parents[2] / "sample_logs"
    result = attack("export", samples / "prune.jsonl", "--out", tmp_path / "b", "--redact", "/dev/zero",
                    mem_mb=300, seconds=10)
    assert result.code == 2 and "not a regular file" in result.one_line()


def test_a_device_a_pipe_with_no_end_and_a_line_with_no_end_stop_with_exit_2(tmp_path):
    assert "is a device or socket, not a regular file" in attack("fold", "/dev/zero", seconds=10).one_line()
    with open("/dev/zero", "rb") as zeros:
        result = attack("--max-bytes", "8M", "fold", "-", stdin=zeros, mem_mb=300, seconds=10)
    assert result.code == 2 and "more than 8388608 bytes" in result.one_line()
    endless = tmp_path / "endless.jsonl"
    endless.write_bytes(lines(HEADER) + b"7" * (40 << 20))
    result = attack("--max-line", "16M", "fold", endless, mem_mb=300, seconds=10)
    assert result.code == 2 and "line 2: a line longer than 16777216 bytes" in result.one_line()


# -- 9 and 10. zstd ---------------------------------------------------------------------

def test_zstd_frames_of_zeros_with_no_newline_stop_at_the_line_ceiling_quickly(tmp_path):
    cctx = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True)
    frame = cctx.compress(b"\0" * (1 << 20))
    log = tmp_path / "zeros.jsonl.zstd"
    log.write_bytes(cctx.compress(lines(HEADER)) + frame * 200)
    assert log.stat().st_size < 100_000
    result = attack("--max-line", "32M", "fold", log, mem_mb=400, seconds=10)
    assert result.code == 2 and "a line longer than 33554432 bytes" in result.one_line()


def test_no_command_leaves_a_temporary_file(tmp_path):
    samples = Path(__file__).resolve().parents[2] / "sample_logs"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    for command in (["validate"], ["fold"], ["request", "--list"], ["stats"]):
        attack(command[0], samples / "multi-turn.runtime.jsonl.zstd", *command[1:], env={"TMPDIR": str(scratch)})
    assert list(scratch.iterdir()) == []


# -- 11. blank and tiny lines ------------------------------------------------------------

def test_whitespace_only_lines_count_against_the_blank_line_guard(tmp_path):
    log = tmp_path / "blank.jsonl"
    log.write_bytes(lines(HEADER) + b" \n\t\n" * 50_001)
    result = attack("fold", log, seconds=10, mem_mb=300)
    assert result.code == 2 and "more than 100000 blank lines in a row" in result.one_line()


def test_a_zstd_frame_of_tiny_lines_is_split_in_bounded_blocks(tmp_path):
    cctx = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True)
    log = tmp_path / "tiny.jsonl.zstd"
    # (of a known type: a record with none is where the fold fails, FORMAT.md §3)
    log.write_bytes(cctx.compress(lines(HEADER)) + cctx.compress(b'{"type":"plan/mode"}\n' * (8 << 20 // 3)))
    result = attack("fold", log, "--json", mem_mb=300, seconds=30)
    assert result.code == 0 and json.loads(result.stdout)["nodes"] == []


# -- 12 to 15. costs that grew faster than the input ------------------------------------

def test_twenty_thousand_single_node_replacements_fold_in_seconds(tmp_path):
    n = 20_000
    log = tmp_path / "replacements.jsonl"
    replace = [user_record(n + k, f"r{k}", {"op": "replace", "start": k, "end": k}, [k]) for k in range(n)]
    log.write_bytes(lines(HEADER, *(user_record(s, f"m{s}") for s in range(n)), *replace))
    result = attack("fold", log, "--json", seconds=10)
    assert result.code == 0
    assert json.loads(result.stdout)["nodes"] == [{"seq": s, "message": s - n + 1} for s in range(n, 2 * n)]


def test_an_export_of_twenty_thousand_calls_on_a_growing_surface_builds_each_request_from_the_last(tmp_path):
    # each call's request is the one before plus the message it answered: looking at the whole
    # surface for each call made this 40 s of CPU (quadratic); it is a few seconds
    from dshreplay.testing.samples import LogBuilder

    b = LogBuilder()
    b.start_turn()
    b.start_step()
    b.user("go")
    for _ in range(20_000):
        b.assistant("ok", finish="stop", pieces=1)
    b.end_step()
    b.end_turn()
    log = b.write(tmp_path / "calls.jsonl")
    result = attack("export", log, "--out", tmp_path / "b", "--evidence-key", tmp_path / "k", "--json",
                    mem_mb=600, seconds=25)
    assert result.code == 0, result.stderr
    [folder] = [p for p in (tmp_path / "b").iterdir() if p.is_dir()]
    calls = [json.loads(line) for line in (folder / "calls.jsonl").read_bytes().splitlines()]
    last = calls[-1]
    assert (len(calls), last["call"], last["messageCount"], last["messagesFrom"]) == \
        (20_000, 20_000, 20_000, {"call": 19_999, "first": 19_999})  # (the user's message and 19,999 answers)
    # every 100th record builds on an earlier one (format 4): 18.7 MB of call records, where listing
    # every 100th request whole wrote 146 MB (N²/200 message ids)
    assert (folder / "calls.jsonl").stat().st_size < 25 << 20
    assert calls[12_800]["messagesFrom"] == {"call": 1, "first": 1}  # (call 12,801: checkpoint 128 builds on call 1)


def test_a_citation_chain_is_followed_once_per_message_asked(tmp_path):
    n = 5_000
    chain = [{"type": "assistant/message", "seq": s, "time": 1783352166000 + s,
              "data": {"turn": 1, "step": 1, "message": {"role": "assistant",
                                                         "content": [{"type": "text", "text": f"a{s}"}]}},
              "surfaceOp": "append", "sourceEventSeqs": [s - 1]} for s in range(1, n + 1)]
    log = tmp_path / "chain.jsonl"
    log.write_bytes(lines(HEADER, user_record(0, "start"), *chain))
    result = attack("provenance", log, "--seq", n, "--json", mem_mb=300, seconds=10)
    assert result.code == 0
    [row] = json.loads(result.stdout)
    assert len(row["origins"]) == n
    assert attack("provenance", log, "--message", 1, "--json", mem_mb=300, seconds=10).code == 0


def test_one_line_of_fifty_megabytes_is_read_once(tmp_path):
    log = tmp_path / "long.jsonl"
    log.write_bytes(lines(HEADER, user_record(0, "x" * (50 << 20))))
    result = attack("fold", log, mem_mb=1024, seconds=10)
    assert result.code == 0 and "1 node," in result.stdout


def test_many_records_with_findings_are_counted_past_a_cap(tmp_path):
    log = tmp_path / "braces.jsonl"
    log.write_bytes(lines(HEADER) + b"{}\n" * 200_000)
    result = attack("validate", log, mem_mb=300, seconds=20)
    assert result.code == 1
    assert "... and 199000 more DSH-E006 findings (--all-findings lists them)" in result.stdout
    assert "... and 199000 more records failing their schema" in result.stdout
    result = attack("export", log, "--out", tmp_path / "b", mem_mb=400, seconds=60)
    assert result.code == 1, result.stderr  # (written; its verdict has errors)


# -- low severity -----------------------------------------------------------------------

def test_c1_controls_are_escaped_in_json(tmp_path):
    log = tmp_path / "c1.jsonl"
    log.write_bytes(lines(HEADER, user_record(0, "before\u009bafter")))
    result = attack("events", log, "--json")
    assert "\u009b" not in result.stdout and "before\\u009bafter" in result.stdout


def test_a_timestamp_outside_utc_years_is_a_usage_error(tmp_path):
    samples = Path(__file__).resolve().parents[2] / "sample_logs"
    result = attack("export", samples / "prune.jsonl", "--out", tmp_path / "b",
                    "--timestamp", "0001-01-01T00:00:00+23:59")
    assert result.code == 2 and "outside the years 1 to 9999" in result.one_line()


def test_an_unreadable_input_says_why_on_stderr_too(tmp_path):
    result = attack("validate", tmp_path / "absent.jsonl")
    assert result.code == 2 and "cannot open" in result.one_line()


# -- 5 and 7. folders that cannot be listed (root can list anything: the refusal is simulated) --

def test_a_store_folder_that_cannot_be_listed_is_an_unreadable_result_not_a_skip(cli, tmp_path, monkeypatch):
    samples = Path(__file__).resolve().parents[2] / "sample_logs"
    for name in ("ok", "locked"):
        (tmp_path / "p" / name / "s").mkdir(parents=True)
        (tmp_path / "p" / name / "s" / "session.jsonl").write_bytes((samples / "prune.jsonl").read_bytes())
    locked = str(tmp_path / "p" / "locked")
    real_scandir, real_listdir = os.scandir, os.listdir

    def scandir(path="."):
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real_scandir(path)

    def listdir(path="."):
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return real_listdir(path)
    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "listdir", listdir)
    result = cli("validate", tmp_path, "--jobs", 1, expect=2)  # (in this process, where the refusal is)
    assert result.stderr == f"dshreplay: read error: {locked}: cannot list the folder: Permission denied\n"
    assert "2 files: 1 ok, 0 with errors, 1 unreadable" in result.stdout
