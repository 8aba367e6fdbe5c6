"""Shared fixtures: the corpus location, a log writer, and a CLI runner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from dshreplay.testing.samples import LogBuilder

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("DSHREPLAY_CORPUS", ROOT.parent / "shared" / "corpus"))
SAMPLES = ROOT / "sample_logs"


def corpus_available() -> bool:
    return (CORPUS / "index.json").is_file()


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    if not corpus_available():
        pytest.skip(f"conformance corpus not found at {CORPUS}")
    return CORPUS


def read_in_windows(monkeypatch, window_bytes: int = 200) -> None:
    """Make every plain log file a large one whose per-record checks run in
    worker processes over windows of about `window_bytes` (see dshreplay.core._parallel)."""
    from dshreplay.core import _parallel as parallel
    monkeypatch.setattr(parallel, "MIN_WINDOW_BYTES", 0)
    monkeypatch.setattr(parallel, "WINDOW_BYTES", window_bytes)
    monkeypatch.setattr(parallel, "MIN_WINDOW", 1)
    monkeypatch.setattr(parallel, "free_cores", lambda options: 2)


@pytest.fixture(params=["sequential", "windows"])
def read_mode(request, monkeypatch):
    """Run a test twice: every record checked in this process; and each log
    file's per-record checks run by worker processes over windows of a couple
    of lines, as for a large log (the one pass runs here either way)."""
    if request.param == "windows":
        read_in_windows(monkeypatch)
    return request.param


@pytest.fixture
def builder():
    """A fresh LogBuilder with a turn and a step already open."""
    def make(**kwargs) -> LogBuilder:
        b = LogBuilder(**kwargs)
        b.start_turn()
        b.request_header()
        b.start_step()
        return b
    return make


@pytest.fixture
def clean(builder):
    """A valid two-step turn with a tool round; the turn is still open."""
    b = builder()
    b.user("list files")
    b.tool_round("bash", '{"command":"ls"}', "a\nb\n")
    b.end_step()
    b.start_step()
    b.assistant("two files")
    return b


@pytest.fixture
def write_log(tmp_path):
    """Write a LogBuilder, raw bytes, or a list of records/lines to a file; return its path."""
    counter = iter(range(10_000))

    def write(content, name: str | None = None, **options) -> Path:
        name = name or f"log{next(counter)}.jsonl"
        path = tmp_path / name
        if isinstance(content, LogBuilder):
            content.write(path, **options)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            lines = [c if isinstance(c, (bytes, str)) else json.dumps(c) for c in content]
            path.write_bytes(b"".join((x.encode() if isinstance(x, str) else x) + b"\n" for x in lines))
        return path
    return write


class CliResult:
    def __init__(self, result):
        self.result = result
        self.exit_code = result.exit_code
        self.stdout = result.stdout
        self.stderr = result.stderr

    def json(self):
        return json.loads(self.stdout)


@pytest.fixture
def cli():
    """Run the CLI in-process; a wrong exit code fails with stdout and stderr shown."""
    from dshreplay.cli import cli as command

    def run(*args, expect: int | None = 0, input: bytes | None = None, columns: int = 100) -> CliResult:
        runner = CliRunner(env={"COLUMNS": str(columns)})  # (tables fit the terminal: the tests pin 100 columns)
        result = runner.invoke(command, [str(a) for a in args], input=input, catch_exceptions=True)
        if expect is not None and result.exit_code != expect:
            raise AssertionError(
                f"dshreplay {' '.join(map(str, args))}: exit {result.exit_code}, wanted {expect}\n"
                f"--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}\n"
                f"--- exception\n{result.exc_info and result.exc_info[1]!r}")
        assert "Traceback" not in result.stderr
        return CliResult(result)
    return run


# -- corpus accounting for .ci/run ---------------------------------------

_corpus_outcomes: dict[str, list[str]] = {"passed": [], "skipped": [], "failed": []}
# .ci/run fails when any of these skipped
GUARDED = ("tests/corpus/", "tests/browser/", "tests/fleet/", "tests/signing/", "tests/cli/test_sql_index.py",
           "tests/cli/test_usage.py", "tests/cli/test_timeline.py", "tests/otel/",
           "test_event_types.py::test_the_format_spec_lists_the_registry_s_types",
           "tests/hardening/test_damaged_stores.py", "tests/unit/test_reader_lean.py::test_every_corpus_log",
           "tests/cli/test_readme_runs.py")


def pytest_runtest_logreport(report):
    if not any(part in report.nodeid.replace(os.sep, "/") for part in GUARDED):
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _corpus_outcomes[report.outcome].append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    target = os.environ.get("DSHREPLAY_CORPUS_REPORT")
    if target:
        Path(target).write_text(json.dumps(_corpus_outcomes, indent=1))


# -- the evidence key ------------------------------------------------------

@pytest.fixture(scope="session")
def evidence_key_file(tmp_path_factory) -> Path:
    """The evidence key file of the test run (made by the first export that redacts)."""
    return tmp_path_factory.mktemp("evidence") / "evidence.key"


@pytest.fixture(scope="session", autouse=True)
def _evidence_key(evidence_key_file):
    """Every export that redacts needs an evidence key: the tests name one as a user would
    once for all, in DSHREPLAY_EVIDENCE_KEY (child processes inherit it; set for the whole
    session, so module fixtures that export have it too). A test of what happens without
    one removes it with monkeypatch."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DSHREPLAY_EVIDENCE_KEY", str(evidence_key_file))
        yield
