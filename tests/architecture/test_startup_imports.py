"""A command imports only what it uses.

A script that runs dshreplay over 10,000 small logs pays the start-up 10,000
times, so `fold` of a plain log starts without the validator and its schemas,
the export machinery (bundle, redaction and RE2, HTML report, signing), the
process pool, zstandard, Dask or cryptography; zstandard comes only with a
zstd log. Nor does it pay for what a table of ASCII text does not need (wcwidth,
20 ms; shutil, with zlib, bz2 and lzma; hashlib), for the other commands'
modules (each family of commands is imported when one of them runs), or for a
fast JSON decoder meant for large logs (msgspec, simdjson: imported once a log
is large, if ever). Checked on the real command in a child process, by the
modules `python -X importtime` says it imported (what it costs: bench/startup.py).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from dshreplay.testing.samples import zstd_frames

HEAVY = frozenset({
    "jsonschema", "jsonschema_rs", "referencing", "dask", "distributed", "cryptography", "zstandard",
    "re2", "_re2", "concurrent.futures", "multiprocessing", "dshreplay.analyses.validate",
    "dshreplay.analyses._schemas", "dshreplay.analyses.rules", "dshreplay.bundle.export", "dshreplay.bundle._layout",
    "dshreplay.output.redact", "dshreplay.report._html", "dshreplay.integrity._signing",
    "dshreplay.integrity._chain", "dshreplay.core._parallel", "jinja2", "markupsafe", "dshreplay.report._view",
    "dshreplay.report._waterfall",
    "msgspec", "simdjson", "betterleaks",
    "dshreplay.redaction.redactor", "dshreplay.redaction._engine", "dshreplay.redaction._rules",
})
# the other families of commands (a reading command imports its own: dshreplay.cli._view or .history)
OTHER_COMMANDS = frozenset({"dshreplay.cli._checks", "dshreplay.cli._export", "dshreplay.cli._aggregate",
                            "dshreplay.cli._database", "dshreplay.cli._fleet"})
# what a table of ASCII text cut with "…" does without (wrapping a column, as `request --list` does, takes wcwidth)
NOT_FOR_A_FOLD = frozenset({"wcwidth", "shutil", "zlib", "hashlib", "textwrap", "dshreplay.cli._history"})


def run_importing(*args) -> tuple[subprocess.CompletedProcess, set[str]]:
    """The command run as a user runs it, and every module it imported."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "dshreplay", *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    modules = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
               if line.startswith("import time:")}
    return proc, modules


@pytest.fixture
def small_log(clean, write_log):
    """A clean log of about ten events: a user message, a tool round, an answer."""
    clean.end_step()
    clean.end_turn()
    return write_log(clean)


@pytest.mark.parametrize("command", [["fold"], ["fold", "--json"], ["request", "--list"],
                                     ["diff", "--from", "0", "--to", "3"], ["events"]])
def test_reading_a_plain_log_imports_none_of_the_heavy_machinery(small_log, command):
    proc, modules = run_importing(command[0], small_log, *command[1:])
    assert proc.returncode == 0, proc.stderr
    assert "dshreplay.core.driver" in modules  # (it did run the one pass)
    assert modules & (HEAVY | OTHER_COMMANDS) == set()


@pytest.mark.parametrize("json", [[], ["--json"]])
def test_fold_of_an_ascii_log_imports_no_wcwidth_shutil_or_other_command(clean, write_log, json):
    clean.end_step()
    clean.user("please " * 40)  # (wider than its column: cut with "…")
    proc, modules = run_importing("fold", write_log(clean), *json)
    assert proc.returncode == 0, proc.stderr
    cut = [line for line in proc.stdout.splitlines() if "please please" in line and line.endswith("…")]
    assert len(cut) == (0 if json else 1)
    assert "dshreplay.cli._view" in modules
    assert modules & NOT_FOR_A_FOLD == set()


def test_a_zstd_log_brings_zstandard_and_nothing_else_heavy(clean, write_log):
    path = write_log(zstd_frames(clean.to_bytes()), "session.jsonl.zstd")
    proc, modules = run_importing("fold", path, "--json")
    assert proc.returncode == 0, proc.stderr
    assert modules & HEAVY == {"zstandard"}


def test_validate_imports_its_schemas_but_no_export_dask_or_zstandard(small_log):
    proc, modules = run_importing("validate", small_log)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {"dshreplay.analyses.validate", "jsonschema_rs"} <= modules
    assert modules & HEAVY <= {"dshreplay.analyses.validate", "dshreplay.analyses._schemas",
                               "dshreplay.analyses.rules", "jsonschema_rs", "dshreplay.core._parallel"}
    # (nor pickle, for the pool it does not start, nor wcwidth, for the summary line that fits as it is)
    assert modules & (OTHER_COMMANDS | {"pickle", "wcwidth"}) == {"dshreplay.cli._checks"}


def test_export_without_a_key_imports_neither_dask_cryptography_nor_zstandard(small_log, tmp_path):
    proc, modules = run_importing("export", small_log, "--out", tmp_path / "bundle",
                                  "--timestamp", "2026-01-01T00:00:00Z")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {"dshreplay.bundle.export", "re2"} <= modules
    # (multiprocessing comes with detect-secrets, the source of export's default rules, which imports it)
    assert modules & {"dask", "distributed", "cryptography", "zstandard"} == set()


def test_every_command_is_where_the_table_says_and_none_is_imported_before_it_runs():
    from dshreplay.cli import COMMANDS, cli
    proc, modules = run_importing("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("dshreplay, version ")
    assert {m for m in modules if m.startswith("dshreplay.cli.")} == {"dshreplay.cli._flags", "dshreplay.cli._params"}
    assert {name: cli.commands[name].name for name in COMMANDS} == {name: name for name in COMMANDS}
    assert len(COMMANDS) == 22 and sorted(cli.commands["fleet"].commands) == ["export", "index", "stats", "validate"]


def test_view_imports_jinja2_but_no_redaction_engine_unless_asked(small_log, tmp_path):
    proc, modules = run_importing("view", small_log, "--out", tmp_path / "v.html")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert {"dshreplay.viewer._model", "dshreplay.viewer._html", "jinja2"} <= modules
    # (the page is a template; no export, no redaction: re2 and detect-secrets come only with --redacted)
    assert modules & HEAVY == {"jinja2", "markupsafe"}
    assert modules & OTHER_COMMANDS == set()
