"""Mutation fuzzing: every command keeps the exit-code contract on damaged logs.

Each example takes a valid log (a bundled sample, or a small conformance-corpus
log when the corpus is present), damages it with one to three mutations
(truncation, byte flips, deleted/duplicated/swapped lines, renumbered seqs,
values of another JSON type, 2 MB strings, arrays nested 10,000 deep, invalid
UTF-8, a BOM, NaN, duplicate keys, CRLF, NUL bytes, control characters...), and
runs fifteen read-only commands on the mutant in-process. For every command:

- the exit code is 0, 1 or 2, no exception escapes and no "Traceback" is printed;
- the command finishes within COMMAND_SECONDS (a SIGALRM stops a hang), and the
  whole example within the Hypothesis deadline;
- no "internal error" (a crash the CLI turned into exit 2);
- exit 0 with --json means stdout is one valid JSON document;
- a log `validate` calls clean (exit 0) folds with exit 0.

The run is derandomized (same examples every time). The default budget keeps the
hardening suite well under 90 s on 2 cores; DSHREPLAY_FUZZ_EXAMPLES=N raises it
(N examples for the samples, N/3 for the corpus logs).
"""

from __future__ import annotations

import io
import json
import os
import signal
import tempfile
import threading
import time
import traceback
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import orjson
import pytest
import zstandard
from click.testing import CliRunner
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from dshreplay.cli import cli as dshreplay_cli
from dshreplay.testing.samples import zstd_frames

from conftest import CORPUS, SAMPLES, corpus_available

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
COMMANDS = [
    ("fold", "--json"),
    ("validate", "--json"),
    ("validate", "--snapshot", "--json"),
    ("inspect", "--json"),
    ("shadows", "--json"),
    ("brackets", "--json"),
    ("request", "--list", "--json"),
    ("transcript", "--format", "json"),
    ("events", "--json"),
    ("stats", "--json"),
    ("provenance", "--json"),
    ("usage", "--json"),
    ("lineage", "--json"),
    ("inspect",),  # (the text reporters' tables: a 2 MB type once took 20 s to fit)
    ("events",),
]
COMMAND_SECONDS = 20  # hard bound per command; a sane run takes milliseconds
EXAMPLE_DEADLINE = timedelta(seconds=60)  # the ten commands of one example
_BUDGET = int(os.environ.get("DSHREPLAY_FUZZ_EXAMPLES", "0") or 0)
SAMPLE_EXAMPLES = _BUDGET or 500
CORPUS_EXAMPLES = max(_BUDGET // 3, 1) if _BUDGET else 150
HUGE = 2 * 1024 * 1024  # a 2 MB string
DEEP = 10_000  # arrays nested this deep

# Crash sites of known library bugs, tolerated while a regression test pins each;
# all fixed now, so any internal error fails the fuzzer.
# (exception type, file, function): the innermost dshreplay frame of the traceback.
KNOWN_CRASHES: dict = {}


# -- running a command --------------------------------------------------------

class Hang(BaseException):
    """Raised by SIGALRM inside a command that runs too long (not an Exception, so
    neither the CLI's catch-all nor CliRunner swallows it)."""


@contextmanager
def time_limit(seconds: float, what: str):
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield  # no alarm available: the Hypothesis deadline still bounds the example
        return

    def on_alarm(signum, frame):
        raise Hang(f"{what}: still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def invoke(argv: list[str], env: dict | None = None):
    label = "dshreplay " + " ".join(argv)
    start = time.perf_counter()
    try:
        with time_limit(COMMAND_SECONDS, label):
            result = CliRunner(env=env).invoke(dshreplay_cli, argv, catch_exceptions=True)
    except Hang as hang:
        raise AssertionError(f"hang: {hang}") from None
    return result, time.perf_counter() - start


def crash_site(argv: list[str]) -> tuple[str, str, str] | None:
    """Rerun a command that printed "internal error" with DSHREPLAY_DEBUG=1 and
    name the innermost dshreplay frame of the exception."""
    result, _ = invoke(argv, env={"DSHREPLAY_DEBUG": "1"})
    if result.exc_info is None or isinstance(result.exception, SystemExit):
        return None
    exc_type, exc, tb = result.exc_info
    site = None
    for frame in traceback.extract_tb(tb):
        parts = Path(frame.filename).parts
        if "dshreplay" in parts and not frame.name.startswith("<"):
            site = (exc_type.__name__, parts[-1], frame.name)
    return site


def check_contract(target: Path | str) -> dict[str, int]:
    """Run every command on `target`; assert the contract; return exit codes by command."""
    codes: dict[str, int] = {}
    for command in COMMANDS:
        argv = [command[0], str(target), *command[1:]]
        label = " ".join(command)
        result, seconds = invoke(argv)
        problem = f"dshreplay {label}: exit {result.exit_code}\n--- stderr\n{result.stderr[:2000]}"
        assert result.exit_code in (0, 1, 2), problem
        assert result.exception is None or isinstance(result.exception, SystemExit), \
            f"{problem}\n--- escaped exception {result.exception!r}"
        assert "Traceback" not in result.stderr, problem
        assert seconds < COMMAND_SECONDS, f"{problem}\ntook {seconds:.1f} s"
        if "internal error" in result.stderr:
            site = crash_site(argv)
            assert site in KNOWN_CRASHES, f"{problem}\n--- new crash site {site}"
            note(f"known bug {KNOWN_CRASHES[site]} hit by {label}")
        elif result.exit_code == 0 and ("--json" in command or "json" in command):
            try:
                orjson.loads(result.stdout)
            except orjson.JSONDecodeError as exc:
                raise AssertionError(f"{problem}\nstdout is not one JSON document: {exc}") from None
        codes[label] = result.exit_code
    if codes["validate --json"] == 0:
        assert codes["fold --json"] == 0, f"validate calls the log clean but fold exits {codes['fold --json']}"
    return codes


# -- seeds ---------------------------------------------------------------------

def zstd_text(data: bytes) -> bytes:
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True)
    return reader.read()


SAMPLE_SEEDS = sorted(p.name for p in SAMPLES.iterdir() if p.is_file())


def corpus_seeds() -> list[Path]:
    """Three small plain corpus logs and the smallest zstd one (read in place)."""
    if not corpus_available():
        return []
    logs = sorted((p for p in (CORPUS / "upstream").iterdir()
                   if p.name.endswith((".jsonl", ".jsonl.zstd"))),
                  key=lambda p: (p.stat().st_size, p.name))
    small = [p for p in logs if 1500 <= p.stat().st_size <= 8000]
    plain = [p for p in small if p.name.endswith(".jsonl")][:3]
    packed = [p for p in small if p.name.endswith(".zstd")][:1]
    return plain + packed


CORPUS_SEEDS = corpus_seeds()


# -- mutations -----------------------------------------------------------------
# Each takes the log text and Hypothesis' `draw`, and returns (new text, description).

OTHER_VALUES = [None, True, False, 0, -1, 1.5, -0.0, 2**53 + 1, 10**30, 1e308, "", "x", "{{cwd}}",
                "\u001b[2J\u001b]0;pwned\u0007\r\n", "\u0000", [], [1], [[1]], {}, {"a": 1},
                {"op": "replace", "start": 0, "end": 0}, "append", "../../x"]
INVALID_UTF8 = [b"\x80", b"\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\xe2\x82"]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**64) | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6)


def dump(value) -> bytes:
    """Compact JSON; integers beyond 64 bits (which orjson refuses) go through json."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return json.dumps(value, separators=(",", ":")).encode()


def _lines(text: bytes) -> list[bytes]:
    return text.splitlines(keepends=True) or [b""]


def _pick_line(text: bytes, draw) -> tuple[list[bytes], int]:
    lines = _lines(text)
    return lines, draw(st.integers(0, len(lines) - 1))


def _records(lines: list[bytes]) -> list[int]:
    """Indexes of lines that parse as JSON objects."""
    out = []
    for i, line in enumerate(lines):
        try:
            if type(orjson.loads(line)) is dict:
                out.append(i)
        except orjson.JSONDecodeError:
            pass
    return out


def _paths(value, prefix=()):
    yield prefix
    if type(value) is dict:
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif type(value) is list:
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


def _set(value, path, new):
    if not path:
        return new
    value[path[0]] = _set(value[path[0]], path[1:], new)
    return value


def _edit_record(text: bytes, draw, make, *, scalars_only=False, strings_only=False):
    """Replace one value of one record; `make(old)` gives the new value, or raw JSON
    bytes (spliced in through a placeholder)."""
    lines = _lines(text)
    candidates = _records(lines)
    if not candidates:
        return text, "no record to edit"
    i = draw(st.sampled_from(candidates))
    record = orjson.loads(lines[i])
    paths = list(_paths(record))
    if strings_only:
        paths = [p for p in paths if type(_get(record, p)) is str] or paths
    elif scalars_only:
        paths = [p for p in paths if type(_get(record, p)) not in (dict, list)] or paths
    path = draw(st.sampled_from(paths))
    new = make(_get(record, path))
    if type(new) is bytes:
        marker = "\u2063placeholder\u2063"
        record = _set(record, path, marker)
        body = dump(record).replace(dump(marker), new, 1)
    else:
        body = dump(_set(record, path, new))
    ending = lines[i][len(lines[i].rstrip(b"\r\n")):]
    lines[i] = body + ending
    return b"".join(lines), f"line {i + 1} at {'/'.join(map(str, path)) or '(whole record)'}"


def _get(value, path):
    for k in path:
        value = value[k]
    return value


def truncate(text, draw):
    at = draw(st.integers(0, len(text)))
    return text[:at], f"truncate at byte {at}"


def flip_bytes(text, draw):
    if not text:
        return text, "nothing to flip"
    out = bytearray(text)
    spots = draw(st.lists(st.integers(0, len(text) - 1), min_size=1, max_size=8))
    for k in spots:
        out[k] ^= draw(st.integers(1, 255))
    return bytes(out), f"flip bytes at {spots}"


def delete_line(text, draw):
    lines, i = _pick_line(text, draw)
    del lines[i]
    return b"".join(lines), f"delete line {i + 1}"


def duplicate_line(text, draw):
    lines, i = _pick_line(text, draw)
    lines.insert(i, lines[i] if lines[i].endswith(b"\n") else lines[i] + b"\n")
    return b"".join(lines), f"duplicate line {i + 1}"


def swap_lines(text, draw):
    lines, i = _pick_line(text, draw)
    j = draw(st.integers(0, len(lines) - 1))
    lines[i], lines[j] = lines[j], lines[i]
    return b"".join(lines), f"swap lines {i + 1} and {j + 1}"


def renumber_seqs(text, draw):
    lines = _lines(text)
    numbered = [i for i in _records(lines) if {"seq", "seq0"} & orjson.loads(lines[i]).keys()]
    if not numbered:
        return _edit_record(text, draw, lambda old: draw(st.integers(-5, 10**6)))
    mode = draw(st.sampled_from(["shift-all", "one", "drop", "reverse"]))
    if mode == "shift-all":
        delta = draw(st.sampled_from([-3, -2, -1, 1, 2, 3]))
        targets = numbered
    else:
        targets = [draw(st.sampled_from(numbered))]
        delta = 0
    if mode == "reverse" and len(numbered) > 1:
        targets = numbered
    seqs = []
    for i in targets:
        record = orjson.loads(lines[i])
        key = "seq0" if "seq0" in record else "seq"
        seqs.append(record[key])
    if mode == "reverse":
        seqs.reverse()
    for k, i in enumerate(targets):
        record = orjson.loads(lines[i])
        key = "seq0" if "seq0" in record else "seq"
        written = record[key] if type(record[key]) is int else 0  # an earlier mutation may have hit it
        if mode == "drop":
            del record[key]
        elif mode == "one":
            record[key] = draw(st.sampled_from([-1, 0, written + 1, written - 1, 2**53, 10**20, 1.0, "7", None]))
        elif mode == "reverse":
            record[key] = seqs[k]
        else:
            record[key] = written + delta
        lines[i] = dump(record) + b"\n"
    return b"".join(lines), f"renumber seqs ({mode})"


def other_type(text, draw):
    use_strategy = draw(st.booleans())
    return _edit_record(text, draw, lambda old: draw(JSON_VALUES) if use_strategy
                        else draw(st.sampled_from(OTHER_VALUES)))


def huge_string(text, draw):
    return _edit_record(text, draw, lambda old: "A" * HUGE, strings_only=True)


def deep_nesting(text, draw):
    return _edit_record(text, draw, lambda old: b"[" * DEEP + b"]" * DEEP)


def nan_value(text, draw):
    token = draw(st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"1e999"]))
    return _edit_record(text, draw, lambda old: token, scalars_only=True)


def invalid_utf8(text, draw):
    bad = draw(st.sampled_from(INVALID_UTF8))
    quotes = [k + 1 for k in range(len(text)) if text[k:k + 1] == b'"'] or [0]
    at = draw(st.sampled_from(quotes))  # right after a quote: inside a string or a key
    return text[:at] + bad + text[at:], f"invalid UTF-8 {bad!r} at byte {at}"


def lone_surrogate(text, draw):
    return _edit_record(text, draw, lambda old: b'"\\ud800 \\udfff"', strings_only=True)


def bom(text, draw):
    lines, i = _pick_line(text, draw)
    if draw(st.booleans()):
        i = 0
    lines[i] = b"\xef\xbb\xbf" + lines[i]
    return b"".join(lines), f"BOM before line {i + 1}"


def duplicate_key(text, draw):
    lines = _lines(text)
    candidates = _records(lines)
    if not candidates:
        return text, "no record"
    i = draw(st.sampled_from(candidates))
    record = orjson.loads(lines[i])
    key = draw(st.sampled_from(sorted(record) or ["type"]))
    value = dump(draw(st.sampled_from(OTHER_VALUES)))
    pair = dump(key) + b":" + value
    body = lines[i].rstrip(b"\r\n")
    if draw(st.booleans()):
        body = b"{" + pair + (b"," if len(body) > 2 else b"") + body[1:]
    else:
        body = body[:-1] + (b"," if len(body) > 2 else b"") + pair + b"}"
    lines[i] = body + b"\n"
    return b"".join(lines), f"duplicate key {key!r} on line {i + 1}"


def crlf(text, draw):
    if draw(st.booleans()):
        return text.replace(b"\n", b"\r\n"), "CRLF everywhere"
    lines, i = _pick_line(text, draw)
    lines[i] = lines[i].replace(b"\n", b"\r\n")
    return b"".join(lines), f"CRLF on line {i + 1}"


def nul_bytes(text, draw):
    at = draw(st.integers(0, len(text)))
    run = b"\x00" * draw(st.sampled_from([1, 4, 4096]))
    if draw(st.booleans()):
        run += b"\n"
    return text[:at] + run + text[at:], f"{len(run)} NUL bytes at {at}"


def control_text(text, draw):
    return _edit_record(text, draw, lambda old: "\u001b[2J\u001b]0;pwned\u0007\r\n\u0000\u202e" + old,
                        strings_only=True)


MUTATIONS = [truncate, flip_bytes, delete_line, duplicate_line, swap_lines, renumber_seqs, other_type,
             other_type, huge_string, deep_nesting, nan_value, invalid_utf8, lone_surrogate, bom,
             duplicate_key, crlf, nul_bytes, control_text]


def mutate_text(text: bytes, draw) -> bytes:
    for _ in range(draw(st.integers(1, 3))):
        mutation = draw(st.sampled_from(MUTATIONS))
        text, what = mutation(text, draw)
        note(f"{mutation.__name__}: {what}")
    return text


def mutate_zstd(data: bytes, draw) -> bytes:
    """Damage the compressed bytes themselves, or mutate the text and recompress."""
    mode = draw(st.sampled_from(["text", "truncate", "flip", "garbage", "repeat"]))
    note(f"zstd mode {mode}")
    if mode == "text":
        try:
            text = zstd_text(data)
        except zstandard.ZstdError:  # an already broken seed: damage its bytes instead
            return flip_bytes(data, draw)[0]
        return zstd_frames(mutate_text(text, draw), batch=draw(st.integers(1, 10)))
    if mode == "truncate":
        return truncate(data, draw)[0]
    if mode == "flip":
        return flip_bytes(data, draw)[0]
    at = draw(st.integers(0, len(data)))
    if mode == "garbage":
        return data[:at] + draw(st.binary(min_size=1, max_size=64)) + data[at:]
    return data[:at] + data[at:] + data[at:]  # a run of frames (or frame bytes) stored twice


def mutant(seed: bytes, draw) -> bytes:
    if seed.startswith(ZSTD_MAGIC):
        return mutate_zstd(seed, draw)
    return mutate_text(seed, draw)


def write_mutant(target: Path, seeds: list[Path], data) -> Path:
    """A mutant of one of `seeds` (drawn) written to `target`."""
    seed = data.draw(st.sampled_from(seeds), label="seed")
    target.write_bytes(mutant(seed.read_bytes(), data.draw))
    return target


FUZZ = dict(derandomize=True, database=None, deadline=EXAMPLE_DEADLINE, print_blob=True,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                   HealthCheck.filter_too_much, HealthCheck.large_base_example])


@pytest.fixture(scope="module")
def scratch():
    with tempfile.TemporaryDirectory(prefix="dshreplay-fuzz-") as path:
        yield Path(path)


# -- the fuzz targets ----------------------------------------------------------

def test_seeds_are_well_formed_before_mutation():
    """Sanity: every good sample and corpus seed is read without a crash, and clean ones fold."""
    assert "multi-turn.runtime.jsonl.zstd" in SAMPLE_SEEDS
    for name in SAMPLE_SEEDS:
        codes = check_contract(SAMPLES / name)
        if not name.startswith(("broken-", "torn-")):
            assert codes["validate --json"] == 0, name
    for path in CORPUS_SEEDS:
        check_contract(path)


@settings(max_examples=SAMPLE_EXAMPLES, **FUZZ)
@given(data=st.data())
def test_mutated_sample_logs_keep_the_contract(scratch, data):
    check_contract(write_mutant(scratch / "mutant.jsonl", [SAMPLES / n for n in SAMPLE_SEEDS], data))


@pytest.mark.skipif(not corpus_available(), reason=f"conformance corpus not found at {CORPUS}")
@settings(max_examples=CORPUS_EXAMPLES, **FUZZ)
@given(data=st.data())
def test_mutated_corpus_logs_keep_the_contract(scratch, data):
    check_contract(write_mutant(scratch / "corpus-mutant.jsonl", CORPUS_SEEDS, data))


# -- validate's per-record checks in worker windows answer as in one process ------------

WINDOW_EXAMPLES = max(_BUDGET // 5, 10) if _BUDGET else 30


@settings(max_examples=WINDOW_EXAMPLES, **FUZZ)
@given(data=st.data())
def test_mutants_checked_in_windows_answer_as_checked_in_one_process(scratch, data):
    from conftest import read_in_windows
    target = write_mutant(scratch / "window-mutant.jsonl", [SAMPLES / n for n in SAMPLE_SEEDS], data)
    window = data.draw(st.sampled_from([150, 1 << 20]), label="window bytes")
    argv = ["validate", str(target), "--snapshot", "--json"]
    sequential, _ = invoke(argv)
    with pytest.MonkeyPatch.context() as m:
        read_in_windows(m, window)
        windows, _ = invoke(argv)
    assert (windows.exit_code, windows.stdout, windows.stderr) == \
        (sequential.exit_code, sequential.stdout, sequential.stderr)


# -- every mutation kind, a few times each ------------------------------------------

PER_MUTATION_EXAMPLES = max(_BUDGET // 20, 4) if _BUDGET else 4


@pytest.mark.parametrize("mutation", list(dict.fromkeys(MUTATIONS)), ids=lambda m: m.__name__)
@settings(max_examples=PER_MUTATION_EXAMPLES, **FUZZ)
@given(data=st.data())
def test_each_mutation_kind_keeps_the_contract(scratch, mutation, data):
    """The main targets pick mutations at random; this runs each kind alone on a few
    samples so none is left out of the default budget."""
    name = data.draw(st.sampled_from(["multi-turn.runtime.jsonl", "compaction.jsonl", "audit-demo.jsonl",
                                      "fork-child.jsonl"]), label="seed")
    text, what = mutation((SAMPLES / name).read_bytes(), data.draw)
    note(what)
    target = scratch / f"{mutation.__name__}.jsonl"
    target.write_bytes(text)
    check_contract(target)


# -- fixed hostile shapes -------------------------------------------------------

HEADER = b'{"type":"session","version":0,"id":"h","createdAt":1}'


@pytest.mark.parametrize("content, readable", [
    (b"", False),
    (b"\n\n\n", False),
    (b"\xef\xbb\xbf", False),
    (b"\x00" * 64, False),
    (HEADER, True),
    (HEADER + b"\n", True),
    (HEADER + b"\r\n", True),
    (b"\xef\xbb\xbf" + HEADER + b"\n", None),
    (HEADER + b"\n" + b"\n" * 1000, True),
    (b"[" * DEEP + b"]" * DEEP + b"\n", False),
    (b"NaN\n", False),
    (zstd_frames(b""), False),
    (zstd_frames(HEADER + b"\n"), True),
    (ZSTD_MAGIC, False),
], ids=["empty", "newlines-only", "bom-only", "nul-only", "header-no-newline", "header-only",
        "header-crlf", "bom-header", "header-blank-lines", "deep-array", "nan", "zstd-empty",
        "zstd-header-only", "zstd-magic-only"])
def test_degenerate_files(scratch, content, readable):
    target = scratch / "degenerate.jsonl"
    target.write_bytes(content)
    codes = check_contract(target)
    if readable is True:
        assert codes["fold --json"] == 0 and codes["validate --json"] in (0, 1)
    elif readable is False:
        assert set(codes.values()) == {2}, codes


def test_directory_with_both_plain_and_zstd_logs_is_refused(tmp_path):
    session = tmp_path / "session-dir"
    session.mkdir()
    (session / "session.jsonl").write_bytes((SAMPLES / "multi-turn.runtime.jsonl").read_bytes())
    (session / "session.jsonl.zstd").write_bytes((SAMPLES / "multi-turn.runtime.jsonl.zstd").read_bytes())
    codes = check_contract(session)
    assert set(codes.values()) == {2}, codes
    result, _ = invoke(["fold", str(session)])
    assert "both" in result.stderr and len(result.stderr.strip().splitlines()) == 1


SINGLE_LOG_COMMANDS = [c for c in COMMANDS if c[0] not in ("validate", "stats", "usage", "lineage")]


def test_directory_without_a_log_is_refused_by_single_log_commands(tmp_path):
    for command in SINGLE_LOG_COMMANDS:
        result, _ = invoke([command[0], str(tmp_path), *command[1:]])
        assert result.exit_code == 2, (command, result.exit_code, result.stderr)
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_bug_validate_and_stats_call_a_directory_without_logs_clean(tmp_path):
    for command in (("validate", "--json"), ("stats", "--json")):
        result, _ = invoke([command[0], str(tmp_path), *command[1:]])
        assert result.exit_code == 2, (command, result.exit_code, result.stdout)


# -- regression tests for the library bugs the fuzzer found ---------------------------

def _write_variant(tmp_path: Path, edit) -> Path:
    lines = (SAMPLES / "multi-turn.runtime.jsonl").read_bytes().splitlines()
    records = [orjson.loads(line) for line in lines]
    edit(records)
    path = tmp_path / "variant.jsonl"
    path.write_bytes(b"".join(dump(r) + b"\n" for r in records))
    return path


def _first(records, kind):
    return next(r for r in records if r.get("type") == kind)


def _assert_no_crash(path: Path, *commands):
    for command in commands:
        argv = [command[0], str(path), *command[1:]]
        result, _ = invoke(argv)
        assert "internal error" not in result.stderr, f"dshreplay {' '.join(argv)}: {result.stderr}"
        assert result.exit_code in (0, 1), f"dshreplay {' '.join(argv)}: exit {result.exit_code}"


def test_bug_inspect_json_with_a_non_string_event_type(tmp_path):
    path = _write_variant(tmp_path, lambda r: _first(r, "step/end").__setitem__("type", 5))
    _assert_no_crash(path, ("inspect", "--json"), ("inspect",))


def test_bug_unhashable_source_seq_crashes_every_reader(tmp_path):
    def edit(records):
        _first(records, "assistant/message")["sourceEventSeqs"][0] = [1]
    path = _write_variant(tmp_path, edit)
    _assert_no_crash(path, ("validate", "--json"), ("inspect", "--json"), ("brackets", "--json"),
                     ("events", "--json"), ("stats", "--json"))


@pytest.mark.parametrize("edit", [
    lambda r: _first(r, "tool/call")["data"].__setitem__("callId", [1]),
    lambda r: _first(r, "turn/start")["data"].__setitem__("turn", {"a": 1}),
], ids=["callId-list", "turn-object"])
def test_bug_stats_with_unhashable_ids(tmp_path, edit):
    path = _write_variant(tmp_path, edit)
    _assert_no_crash(path, ("stats", "--json"), ("stats",))


def test_bug_meter_followed_by_a_packed_row(tmp_path):
    lines = (SAMPLES / "audit-demo.jsonl").read_bytes().splitlines(keepends=True)
    kinds = [orjson.loads(line).get("type") for line in lines]
    meter = kinds.index("compaction/summary")
    row = next(k for k in range(meter + 1, len(lines)) if kinds[k] in ("text-chunks", "reasoning-chunks"))
    lines.insert(row - 1, lines.pop(meter))  # the meter now sits right before the packed row
    path = tmp_path / "meter-before-row.jsonl"
    path.write_bytes(b"".join(lines))
    _assert_no_crash(path, ("validate", "--json"), ("inspect", "--json"), ("shadows", "--json"),
                     ("events", "--json"), ("stats", "--json"))
