"""`fleet` on a Dask LocalCluster: the same bytes as local --jobs, and the same settings.

Dask is in the `fleet` extra: without it these tests skip, and .ci/run
(which installs it) fails when they did.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("dask.distributed")

from dshreplay.testing.samples import multi_turn  # noqa: E402

from stores import build_root, bundle  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_root(tmp_path_factory.mktemp("store"))


def test_fleet_on_a_local_dask_cluster_equals_local_jobs(cli, store, tmp_path):
    local = cli("validate", store, "--json", "--jobs", 2, expect=1).stdout
    fleet = cli("fleet", "validate", store, "--json", "--workers", 2, expect=1).stdout
    assert fleet == local
    assert cli("fleet", "stats", store, "--json", expect=1).stdout == \
        cli("stats", store, "--json", "-j", 2, expect=1).stdout  # (s07: answered up to its bad line)
    stamp = "2026-01-01T00:00:00Z"
    cli("export", store, "--out", tmp_path / "local", "--timestamp", stamp, "-j", 2, expect=1)
    exported = cli("fleet", "export", store, "--out", tmp_path / "fleet", "--timestamp", stamp, expect=1)
    assert len(list((tmp_path / "fleet").iterdir())) == 2 + 50  # index, manifest, a folder a session
    assert bundle(tmp_path / "fleet") == bundle(tmp_path / "local")
    cli("verify-export", tmp_path / "fleet", "--digest", exported.stdout.splitlines()[-1].split()[-1])



def test_max_bytes_holds_on_fleet_workers_as_it_does_locally(cli, tmp_path):
    root = tmp_path / "root"
    folder = root / "project" / "s1"
    folder.mkdir(parents=True)
    multi_turn().write(folder / "session.jsonl.zstd")  # about 6 KB of text
    local = cli("--max-bytes", "1K", "validate", root, "--json", expect=2).json()  # (reading stopped: exit 2)
    fleet = cli("--max-bytes", "1K", "fleet", "validate", root, "--json", "--workers", 1, expect=2).json()
    assert fleet == local
    [finding] = [f for f in local["files"][0]["findings"] if f["code"] == "DSH-E013"]
    assert "exceeds the 1024-byte ceiling" in finding["message"]
    assert cli("fleet", "validate", root, "--json", "--workers", 1).json()["files"][0]["ok"]


def test_a_scheduler_address_that_is_not_one_is_a_usage_error(cli, tmp_path):
    result = cli("fleet", "validate", tmp_path, "--scheduler", "not a url", expect=2)
    assert result.stderr.startswith("dshreplay: usage error: cannot reach the Dask scheduler at 'not a url'")
    assert result.stderr.count("\n") == 1


def _fleet(*args, env=None):
    """`dshreplay fleet ARGS` in a child (a hang fails the test instead of stopping the run)."""
    argv = [sys.executable, "-m", "dshreplay", "fleet", *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})


def test_fleet_leaves_no_scratch_space_in_tmpdir(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    result = _fleet("validate", SAMPLES / "prune.jsonl", "--workers", 1, env={"TMPDIR": str(scratch)})
    assert result.returncode == 0, result.stderr
    assert list(scratch.iterdir()) == []  # (dask-scratch-space/global.lock and purge.lock were left)


def test_fleet_says_nothing_of_dask_even_when_its_dashboard_port_is_taken(tmp_path):
    import socket
    taken = socket.socket()
    try:
        taken.bind(("0.0.0.0", 8787))  # (else someone holds it already: the same case)
        taken.listen()
    except OSError:
        pass
    try:
        quiet = _fleet("validate", SAMPLES / "prune.jsonl", "--workers", 1, "-q")
        shown = _fleet("stats", SAMPLES / "prune.jsonl", "--workers", 1)
    finally:
        taken.close()
    assert (quiet.returncode, quiet.stderr) == (0, "")  # (was: "Port 8787 is already in use", a UserWarning)
    assert quiet.stdout.startswith(f"{SAMPLES / 'prune.jsonl'}: ok: 31 events")
    assert (shown.returncode, shown.stderr) == (0, "")


def test_fleet_export_refuses_a_pipe_given_by_name_at_once(tmp_path):
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    result = _fleet("export", fifo, SAMPLES / "prune.jsonl", "--out", tmp_path / "b", "--workers", 1)
    assert result.returncode == 2
    assert result.stderr == (f"dshreplay: unreadable: {fifo}: is a pipe, not a regular file "
                             "(use - to read standard input)\n")
    assert (tmp_path / "b" / "sample-prune" / "events.csv").is_file()


def test_fleet_index_gives_the_tables_of_a_local_index(cli, store, tmp_path):
    duckdb = pytest.importorskip("duckdb", reason="the sql extra (duckdb) is not installed")
    broken = str(store / "project-3" / "s07" / "session.jsonl")  # (its fold fails: exit 1, named on stderr)
    cli("index", store, "--db", tmp_path / "local.duckdb", "-j", 2, expect=1)
    fleet = cli("fleet", "index", store, "--db", tmp_path / "fleet.duckdb", "--workers", 2, expect=1)
    assert fleet.stderr.startswith(f"dshreplay: {broken}: the fold fails at seq 92: indexed whole") \
        and fleet.stderr.count("\n") == 1

    def tables(db) -> dict:
        con = duckdb.connect(str(db), read_only=True)
        names = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()]
        return {n: sorted(con.execute(f"SELECT * FROM {n}").fetchall(), key=repr) for n in names}
    local = tables(tmp_path / "local.duckdb")
    assert tables(tmp_path / "fleet.duckdb") == local
    assert len(local["sessions"]) == 50
    assert [r[0] for r in local["sessions"] if r[10] == "errors"] == [broken]  # (verdict)


def test_fleet_refuses_standard_input_in_one_line(cli):
    # a Dask worker cannot read this process's input: it read nothing ("<stdin>: empty log"), exit 0
    data = multi_turn().to_bytes()
    result = cli("fleet", "validate", "-", SAMPLES / "compaction.jsonl", input=data, expect=2)
    assert result.stderr == ("dshreplay: usage error: fleet reads log files, not standard input (-): a worker "
                             "cannot read this process's input; save it to a file and give its path\n")
