"""Hostile inputs, one named test per case.

The attacker owns every byte of a log. These tests pin what dshreplay promises
against such a log: damaged zstd is refused or reported in one line, a
decompression bomb stops with bounded memory, `export` never writes outside
`--out`, no command writes to its input, and no log text is run as a formula,
HTML or a terminal escape sequence. Each test was first written against a bug it found
starts with "BUG:".
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import zstandard
from click.testing import CliRunner

from dshreplay.cli import cli as dshreplay_cli
from dshreplay.errors import ReadError
from dshreplay.io.reader import LogReader
from dshreplay.testing.samples import LogBuilder, multi_turn

from conftest import SAMPLES

STAMP = "2026-01-01T00:00:00Z"
ESCAPES = "\x1b[2J\x1b]0;pwned\x07"
TERMINAL_BAD = ("\x1b", "\x07", "\r", "\x9b")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def run(*args, input: bytes | None = None):
    """The CLI in-process; asserts the exit-code contract (0, 1 or 2, no traceback)."""
    result = CliRunner().invoke(dshreplay_cli, [str(a) for a in args], input=input, catch_exceptions=True)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in (0, 1, 2), (args, result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr
    assert "internal error" not in result.stderr, result.stderr
    return result


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if not line.startswith("dshreplay: warning:")]
    assert len(errors) == 1, stderr
    assert errors[0].startswith("dshreplay: ") and any(
        said in errors[0] for said in (" error: ", ": no answer: ", ": answered for ")), errors[0]  # (a failed fold)
    return errors[0]


# -- zstd ------------------------------------------------------------------------

def frames_of(builder: LogBuilder, batch: int = 7) -> list[bytes]:
    """dsh's layout (header alone, then `batch` lines per frame), one frame per item."""
    cctx = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True)
    lines = builder.to_bytes().splitlines(keepends=True)
    return [cctx.compress(lines[0])] + [cctx.compress(b"".join(lines[k:k + batch]))
                                        for k in range(1, len(lines), batch)]


def test_zstd_bad_checksum_fold_exits_1_and_validate_reports_e013():
    log = SAMPLES / "broken-zstd-checksum.jsonl.zstd"
    fold = run("fold", log)
    assert fold.exit_code == 1  # (no view of the whole log: the fold fails where the rest cannot be read)
    assert "checksum" in one_error_line(fold.stderr)
    validate = run("validate", "--json", log)
    assert validate.exit_code == 1  # (a finding: the readable part is checked, the rest named)
    findings = validate.stdout and json.loads(validate.stdout)["files"][0]["findings"]
    assert [(f["code"], f["severity"]) for f in findings if f["code"] == "DSH-E013"] == [("DSH-E013", "error")]


def test_zstd_bad_checksum_validate_counts_the_events_it_checked():
    validate = run("validate", "--json", SAMPLES / "broken-zstd-checksum.jsonl.zstd")
    assert json.loads(validate.stdout)["files"][0]["events"] > 0


def test_zstd_garbage_between_frames_ends_the_readable_part_in_one_line(tmp_path):
    frames = frames_of(multi_turn())
    log = tmp_path / "garbage.jsonl.zstd"
    log.write_bytes(b"".join(frames[:3]) + b"\x00garbage between frames\xff" + b"".join(frames[3:]))
    fold = run("fold", log)
    assert fold.exit_code == 1
    assert "zstd" in one_error_line(fold.stderr)
    validate = run("validate", "--json", log)
    assert validate.exit_code == 1
    codes = [f["code"] for f in json.loads(validate.stdout)["files"][0]["findings"]]
    assert "DSH-E013" in codes


def test_zstd_last_frame_cut_short_is_a_torn_tail_and_still_folds(tmp_path):
    builder = multi_turn()
    frames = frames_of(builder)
    log = tmp_path / "torn.jsonl.zstd"
    log.write_bytes(b"".join(frames[:-1]) + frames[-1][:len(frames[-1]) // 2])
    fold = run("fold", "--json", log)
    assert fold.exit_code == 0
    assert "torn tail" in fold.stderr and "warning" in fold.stderr
    assert fold.stderr.count("\n") == 1
    lost = len(builder.to_bytes().splitlines()[1 + 7 * (len(frames) - 2):])
    assert json.loads(fold.stdout)["seq"] == len(builder.events) - lost - 1
    validate = run("validate", "--json", log)
    assert validate.exit_code == 0
    codes = {f["code"]: f["severity"] for f in json.loads(validate.stdout)["files"][0]["findings"]}
    assert codes.get("DSH-W010") == "warning"
    assert run("validate", "--strict", log).exit_code == 1


# -- decompression bombs ------------------------------------------------------------
# Frames are written by hand from RLE blocks (3-byte header + 1 byte each, 128 KiB of
# output per block), so a 1 GiB bomb is ~32 KB and never exists in memory here.

BLOCK = 128 * 1024
BOMB_HEADER = b'{"type":"session","version":0,"id":"bomb","createdAt":1}\n'


def rle_frame(total: int, byte: bytes = b"\n") -> bytes:
    frame = bytearray(b"\x28\xb5\x2f\xfd" + bytes([0x00, 0x38]))  # no size, no checksum; 128 KiB window
    blocks = -(-total // BLOCK)
    for k in range(blocks):
        size = min(BLOCK, total - k * BLOCK)
        last = 1 if k == blocks - 1 else 0
        frame += ((size << 3) | (1 << 1) | last).to_bytes(3, "little") + byte
    return bytes(frame)


def bomb(path: Path, frame_bytes: int, frames: int) -> Path:
    path.write_bytes(zstandard.ZstdCompressor().compress(BOMB_HEADER) + rle_frame(frame_bytes) * frames)
    return path


def test_bomb_builder_expands_as_claimed(tmp_path):
    data = bomb(tmp_path / "b.zst", 3 * BLOCK + 5, 2).read_bytes()
    text = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True).read()
    assert text == BOMB_HEADER + b"\n" * (2 * (3 * BLOCK + 5))


_MEASURE = """
import json, resource, subprocess, sys, time
start = time.monotonic()
try:
    done = subprocess.run(sys.argv[2:], capture_output=True, timeout=float(sys.argv[1]))
    out = {"rc": done.returncode, "stderr": done.stderr.decode("utf-8", "replace"), "timeout": False}
except subprocess.TimeoutExpired as exc:
    out = {"rc": None, "stderr": (exc.stderr or b"").decode("utf-8", "replace"), "timeout": True}
out["seconds"] = time.monotonic() - start
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps(out))
"""


def measured(argv: list[str], timeout: float) -> dict:
    """Run a command in a child process; its exit code, stderr, time and peak RSS."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(timeout), *argv], capture_output=True,
                          timeout=timeout + 60, check=True)
    return json.loads(done.stdout)


def dshreplay_argv(*args) -> list[str]:
    return [sys.executable, "-m", "dshreplay", *map(str, args)]


def test_bomb_in_one_frame_is_refused_by_default_with_bounded_memory(tmp_path):
    log = bomb(tmp_path / "bomb.jsonl.zstd", 1024**3, 1)  # 1 GiB of newlines in one frame
    assert log.stat().st_size < 40_000
    out = measured(dshreplay_argv("fold", log), timeout=60)
    assert not out["timeout"] and out["rc"] == 2, out
    assert "bomb" in one_error_line(out["stderr"]), out
    assert out["peak_rss_mb"] < 400, out  # far below the 1 GiB the frame expands to
    assert out["seconds"] < 30, out


def test_bomb_stops_at_cli_max_bytes_with_bounded_memory(tmp_path):
    log = bomb(tmp_path / "bomb.jsonl.zstd", 1024**2, 1024)  # 1 GiB in 1 MiB frames
    out = measured(dshreplay_argv("--max-bytes", "1M", "validate", log), timeout=60)
    assert not out["timeout"] and out["rc"] in (1, 2), out
    out = measured(dshreplay_argv("--max-bytes", "1M", "fold", log), timeout=60)
    assert not out["timeout"] and out["rc"] == 2, out
    assert "ceiling" in one_error_line(out["stderr"]), out
    assert out["peak_rss_mb"] < 400, out
    assert out["seconds"] < 30, out


def test_max_bytes_option_is_documented_in_help():
    assert "--max-bytes" in run("--help").stdout


def test_bomb_library_reader_max_bytes_raises_one_line_read_error(tmp_path):
    log = bomb(tmp_path / "bomb.jsonl.zstd", 1024**2, 1024)
    with pytest.raises(ReadError) as caught:
        with LogReader(log, max_bytes=1024**2) as reader:
            for _ in reader.events():
                pass
    message = str(caught.value)
    assert "\n" not in message and "ceiling" in message


def test_bomb_of_many_frames_is_stopped_quickly_by_default(tmp_path):
    log = bomb(tmp_path / "bomb.jsonl.zstd", 32 * 1024**2, 32)
    assert log.stat().st_size < 40_000
    out = measured(dshreplay_argv("fold", log), timeout=10)
    assert not out["timeout"], out
    assert out["rc"] == 2 and one_error_line(out["stderr"]), out


# -- export output safety -----------------------------------------------------------

HOSTILE_IDS = ["../../x", "/abs", "/etc/passwd", "a\x00b", "x" * 300, "y" * 300, ".", "..", "", "a/b\\c",
               "~007E", "<script>alert(1)</script>", "..\\..\\win", "\u202enaughty", "CON", "dup", "dup"]


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_export_hostile_session_ids_stay_inside_out(tmp_path):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    paths = []
    for k, session_id in enumerate(HOSTILE_IDS):
        b = multi_turn()
        b.header["id"] = session_id
        paths.append(b.write(inputs / f"in{k:02d}.jsonl"))
    work = tmp_path / "work"
    work.mkdir()
    out = work / "bundle"
    before = tree(tmp_path)
    result = run("export", *paths, "--out", out, "--timestamp", STAMP)
    assert result.exit_code == 0, result.stderr
    created = tree(tmp_path) - before
    assert all(p == "work/bundle" or p.startswith("work/bundle/") for p in created), created
    root = out.resolve()
    folders = []
    for dirpath, dirnames, filenames in os.walk(out, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            assert not path.is_symlink(), path
            assert path.resolve().is_relative_to(root), path
            assert "\x00" not in name and len(name.encode()) <= 255, name
        if Path(dirpath) == out:
            folders = dirnames
    assert len(folders) == len(HOSTILE_IDS), sorted(folders)  # one folder per session: injective
    manifest = json.loads((out / "manifest.json").read_text())
    for entry in manifest["files"]:
        assert (out / entry["path"]).resolve().is_relative_to(root), entry
    digest = result.stdout.splitlines()[-1].removeprefix("bundle digest: ")
    assert run("verify-export", out, "--digest", digest).exit_code == 0


def test_export_refuses_non_empty_out_without_force(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    log = SAMPLES / "multi-turn.jsonl"
    assert run("export", log, "--out", out).exit_code == 2
    assert run("export", log, "--out", out, "--force").exit_code == 2  # --force replaces only a bundle
    assert tree(out) == {"keep.txt"} and (out / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging left behind


def test_export_refuses_an_out_that_is_a_symlink(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "out"
    link.symlink_to(elsewhere, target_is_directory=True)
    log = SAMPLES / "multi-turn.jsonl"
    for extra in ([], ["--force"]):
        result = run("export", log, "--out", link, *extra)
        assert result.exit_code == 2
        assert "symbolic link" in one_error_line(result.stderr)
    assert list(elsewhere.iterdir()) == []
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere", target_is_directory=True)
    assert run("export", log, "--out", dangling).exit_code == 2
    assert not (tmp_path / "nowhere").exists()


def test_export_force_does_not_follow_a_symlink_planted_in_the_old_bundle(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    out = tmp_path / "out"
    log = SAMPLES / "multi-turn.jsonl"
    assert run("export", log, "--out", out, "--timestamp", STAMP).exit_code == 0
    session = next(p for p in out.iterdir() if p.is_dir())
    (out / "evil").symlink_to(victim, target_is_directory=True)
    (session / "calls").symlink_to(victim, target_is_directory=True)  # (a folder name of a format 2 bundle)
    before = tree(out)
    result = run("export", log, "--out", out, "--force", "--timestamp", STAMP)
    assert result.exit_code == 2  # (links are no file of a bundle: --force replaces only a bundle of ours)
    assert "is not in its bundle's manifest" in one_error_line(result.stderr)
    assert (victim / "precious.txt").read_text() == "keep me" and tree(victim) == {"precious.txt"}
    assert tree(out) == before and (out / "evil").is_symlink()  # nothing deleted, nothing followed


# -- read-only guarantee ------------------------------------------------------------

def fingerprint(path: Path) -> tuple:
    info = path.stat()
    return info.st_size, info.st_mtime_ns, stat.S_IMODE(info.st_mode), \
        hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def read_only_samples(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    for sample in sorted(SAMPLES.iterdir()):
        shutil.copy2(sample, folder / sample.name)
        os.chmod(folder / sample.name, 0o444)
    os.chmod(folder, 0o555)
    yield folder
    os.chmod(folder, 0o755)
    for path in folder.iterdir():
        os.chmod(path, 0o644)


def test_no_command_writes_to_its_input(read_only_samples, tmp_path):
    logs = sorted(read_only_samples.iterdir())
    before = {p.name: fingerprint(p) for p in logs}
    listing = sorted(os.listdir(read_only_samples))
    for k, log in enumerate(logs):
        for args in (["fold"], ["fold", "--json"], ["validate"], ["validate", "--snapshot", "--json"],
                     ["shadows"], ["brackets"], ["provenance"], ["diff", "--from", "0", "--to", "1"],
                     ["request", "--list"], ["transcript"], ["transcript", "--format", "markdown"],
                     ["events"], ["inspect"], ["stats"], ["lineage"]):
            run(args[0], log, *args[1:])
        run("export", log, "--out", tmp_path / f"bundle{k}", "--timestamp", STAMP)
    run("lineage", read_only_samples)
    run("stats", *logs)
    run("validate", *logs)
    assert sorted(os.listdir(read_only_samples)) == listing
    assert {p.name: fingerprint(p) for p in logs} == before


# -- nothing in a log runs ----------------------------------------------------------

def hostile_log(path: Path) -> Path:
    """A valid-shaped log whose every free-text field tries formula, HTML and terminal tricks."""
    b = LogBuilder("hostile-session")
    b.start_turn()
    b.request_header(system="=SYSTEM()" + ESCAPES)
    b.start_step()
    b.user("hello " + ESCAPES + "\r<script>alert(1)</script><img src=x onerror=alert(2)>"
           " [x](javascript:alert(3)) ![y](http://evil.example/t.png)")
    call_id = "=cmd|' /C calc'!A0"
    b.assistant("=1+1 " + ESCAPES, calls=[(call_id, "@SUM(A1)", '{"command": "-2+3"}')])
    approval = "@approval"
    b.add("approval/asked", {"id": approval, "toolName": "=HYPERLINK(\"http://evil.example\")",
                             "callId": call_id, "reason": "+cmd" + ESCAPES})
    b.add("approval/decided", {"id": approval, "outcome": "-allowed"})
    seq = b.tool_call(call_id, "@SUM(A1)", '{"command": "-2+3"}')
    b.tool_result(call_id, "</code>```\n<script>alert(4)</script>\n" + ESCAPES, cites=seq)
    b.end_step()
    b.start_step()
    b.assistant("\t=tab-led " + ESCAPES + "</textarea><script>alert(5)</script>")
    b.end_turn()
    return b.write(path)


def test_csv_cells_never_start_a_formula(tmp_path):
    log = hostile_log(tmp_path / "hostile.jsonl")
    out = tmp_path / "bundle"
    assert run("export", log, "--out", out, "--timestamp", STAMP, "--no-default-redaction").exit_code == 1  # (errors)
    sheets = list(out.glob("*/events.csv")) + list(out.glob("*/approvals.csv"))
    assert len(sheets) == 2
    seen = ""
    for sheet in sheets:
        with open(sheet, newline="", encoding="utf-8") as fh:
            for row in csv.reader(fh):
                for cell in row:
                    assert not cell.startswith(FORMULA_START), (sheet.name, cell)
                    seen += cell + "\n"
    for payload in ("'=HYPERLINK", "'=cmd", "'+cmd", "'-allowed", "'@approval"):
        assert payload in seen  # the hostile cells are there, neutralised


def markdown_outside_code(text: str) -> str:
    """The Markdown text that is not inside a fenced code block or a code span."""
    outside, fence = [], None
    for line in text.splitlines():
        match = re.match(r"^(`{3,}|~{3,})", line)
        if fence is None and match:
            fence = match.group(1)
        elif fence is not None and line.startswith(fence) and set(line.strip()) == {fence[0]}:
            fence = None
        elif fence is None:
            outside.append(line)
    return re.sub(r"(`+) .*? \1", "", "\n".join(outside))


def test_markdown_transcript_escapes_html(tmp_path):
    log = hostile_log(tmp_path / "hostile.jsonl")
    result = run("transcript", log, "--format", "markdown")
    assert result.exit_code == 0
    prose = markdown_outside_code(result.stdout)
    assert "alert(1)" in result.stdout and "&lt;" not in result.stdout  # the user's text is there, verbatim...
    assert "<script" not in prose and "<img" not in prose and "</textarea" not in prose  # ...inert
    assert "](javascript:" not in prose and "![y](" not in prose
    assert not any(ch in result.stdout for ch in TERMINAL_BAD)


def test_markdown_transcript_escapes_a_hostile_role(tmp_path):
    b = LogBuilder("role")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.add("user/message", {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"},
                           "role": "<img src=x onerror=alert(1)>", "id": "m1"}, surfaceOp="append")
    b.end_turn()
    result = run("transcript", b.write(tmp_path / "role.jsonl"), "--format", "markdown")
    assert "<img" not in markdown_outside_code(result.stdout)


def test_exported_transcript_md_escapes_the_session_id(tmp_path):
    b = multi_turn()
    b.header["id"] = "<script>alert(1)</script>"
    out = tmp_path / "bundle"
    assert run("export", b.write(tmp_path / "id.jsonl"), "--out", out, "--timestamp", STAMP).exit_code == 0
    (transcript,) = out.glob("*/transcript.md")
    assert "<script" not in markdown_outside_code(transcript.read_text(encoding="utf-8"))


def test_report_html_escapes_log_text_and_forbids_scripts(tmp_path):
    log = hostile_log(tmp_path / "hostile.jsonl")
    out = tmp_path / "bundle"
    assert run("export", log, "--out", out, "--timestamp", STAMP).exit_code == 1  # (errors; written)
    pages = list(out.glob("*/report.html")) + [out / "index.html"]
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert "<script" not in html.lower() and "<img" not in html.lower() and "</textarea" not in html
        assert "\x1b" not in html and "\x07" not in html
        csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)"', html)
        assert csp, page
        policy = {d.split()[0]: d.split()[1:] for d in csp.group(1).split(";") if d.strip()}
        assert policy.get("default-src") == ["'none'"] and "script-src" not in policy, csp.group(1)
    report = (next(out.glob("*/report.html"))).read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in report  # shown, as text


TEXT_COMMANDS = [["fold"], ["events"], ["transcript"], ["transcript", "--reasoning"], ["provenance"],
                 ["request", "--list"], ["request", "--call", "1"],
                 ["diff", "--from", "3", "--to", "30", "--text"], ["shadows"], ["brackets"], ["validate"],
                 ["stats"], ["inspect"]]


@pytest.mark.parametrize("args", TEXT_COMMANDS, ids=lambda a: "-".join(a).replace("--", ""))
def test_terminal_output_strips_escapes_and_control_characters(tmp_path, args):
    log = hostile_log(tmp_path / "hostile.jsonl")
    result = run(args[0], log, *args[1:])
    assert result.exit_code in (0, 1), result.stderr
    for stream in (result.stdout, result.stderr):
        assert not any(ch in stream for ch in TERMINAL_BAD), repr(stream[:2000])
    if args[0] in ("fold", "events", "transcript"):
        assert "hello" in result.stdout  # the message is shown, only its escapes are gone


def test_export_summary_shows_escapes_and_newlines_of_the_out_path_escaped(tmp_path, monkeypatch):
    # "wrote N files to OUT; ...; open OUT/index.html" printed --out as given: its escapes
    # reached the terminal and a newline in it split the line. (Then they were stripped, so
    # two different folders could print as one name: now each shows as an escape.)
    monkeypatch.chdir(tmp_path)
    result = run("export", SAMPLES / "multi-turn.jsonl", "--out", "b" + ESCAPES + "\nx", "--no-default-redaction",
                 "-q", "--timestamp", "2026-01-01T00:00:00Z")
    assert result.exit_code == 0, result.stderr
    assert not any(ch in result.stdout for ch in TERMINAL_BAD), repr(result.stdout)
    out = "b\\x1b[2J\\x1b]0;pwned\\x07\\x0ax"
    assert result.stdout.splitlines()[-3:-1] == [f"wrote 15 files to {out}; 0 redactions; open {out}/", "index.html"]


def test_inspect_strips_escapes_from_header_fields(tmp_path):
    b = multi_turn()
    b.header.update(origin=ESCAPES + "origin", parentSession=ESCAPES + "parent", seedLength=ESCAPES + "seed")
    result = run("inspect", b.write(tmp_path / "header.jsonl"))
    assert not any(ch in result.stdout for ch in TERMINAL_BAD), repr(result.stdout)


def test_error_lines_strip_escapes_from_log_values(tmp_path):
    records = [orjson.loads(line) for line in (SAMPLES / "multi-turn.runtime.jsonl").read_bytes().splitlines()]
    message = next(r for r in records if r.get("type") == "user/message")
    message["type"] = ESCAPES + "\nuser/message"
    log = tmp_path / "type.jsonl"
    log.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in records))
    for args in (["fold"], ["events"], ["provenance"]):
        result = run(args[0], log, *args[1:])
        assert result.exit_code == 1
        assert not any(ch in result.stderr for ch in TERMINAL_BAD), repr(result.stderr)
        one_error_line(result.stderr)


def test_transcript_markers_quoting_hostile_codes_stay_inert(tmp_path):
    b = LogBuilder("markers")
    b.start_turn()
    b.user("hi")
    b.add("turn/end", {"turn": b.turn, "reason": {"kind": "error", "error": {
        "code": "](javascript:alert(1)) <img src=x onerror=alert(1)> \x1b]0;owned\x07", "message": "x"}}})
    log = b.write(tmp_path / "markers.jsonl")
    md = run("transcript", log, "--format", "markdown").stdout
    assert "<img" not in markdown_outside_code(md) and "](javascript" not in markdown_outside_code(md)
    assert "> ` [turn 1 ended: error ](javascript:alert(1)) <img src=x onerror=alert(1)>" in md
    text = run("transcript", log).stdout
    assert "\x1b" not in text and "\x07" not in text and "[turn 1 ended: error ](javascript" in text
