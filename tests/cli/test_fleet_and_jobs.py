"""Many logs at once: --jobs on a process pool and `fleet` on a Dask LocalCluster
give the same bytes as a sequential run, in input order, and one bad log
never stops the others."""

from __future__ import annotations

import json

import pytest

from stores import build_root


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_root(tmp_path_factory.mktemp("store"))


def test_jobs_give_the_same_output_as_one_process(cli, store):
    one = cli("validate", store, "--json", "--jobs", 1, expect=1).stdout
    two = cli("validate", store, "--json", "--jobs", 2, expect=1).stdout
    assert one == two
    files = cli("validate", store, "--json", "--jobs", 2, expect=1).json()["files"]
    paths = [f["path"] for f in files]
    assert len(files) == 50 and paths == sorted(paths)  # discovery order, kept by the pool
    assert [f["path"].split("/")[-2] for f in files if not f["ok"]] == ["s07"]
    # (s07 is answered up to its bad line: exit 1)
    assert cli("stats", store, "--json", "-j", 1, expect=1).stdout == \
        cli("stats", store, "--json", "-j", 2, expect=1).stdout


def test_progress_bar_only_on_a_terminal(cli, store):
    result = cli("validate", store, "--json", "-j", 2, expect=1)
    assert result.stderr == ""  # CliRunner's stderr is not a terminal


# -- standard input among many logs ------------------------------------------

def test_standard_input_among_other_logs_is_read_whatever_the_jobs(cli, store):
    # a worker process's standard input is empty: with - among the logs, every log is read in this
    # process (it said "<stdin>: empty log: no session header" with --jobs 2 and by default)
    logs = sorted(p for p in store.rglob("session.jsonl"))[:2]
    data = logs[0].read_bytes()
    one = cli("validate", logs[0], logs[1], "--json", "-j", 1).json()["files"]
    for jobs in (2, None):
        args = ["validate", "-", logs[1], "--json"] + (["-j", jobs] if jobs else [])
        files = cli(*args, input=data).json()["files"]
        assert [f["path"] for f in files] == ["<stdin>", str(logs[1])]
        assert [f["ok"] for f in files] == [True, True]
        assert {k: v for k, v in files[0].items() if k != "path"} == {k: v for k, v in one[0].items() if k != "path"}
    piped = cli("stats", "-", logs[1], "--json", "-j", 2, input=data).stdout
    assert piped == cli("stats", logs[0], logs[1], "--json", "-j", 1).stdout.replace(
        json.dumps(str(logs[0]))[1:-1], "<stdin>")


def test_standard_input_given_twice_is_a_usage_error(cli, store):
    data = sorted(store.rglob("session.jsonl"))[0].read_bytes()
    result = cli("validate", "-", "-", input=data, expect=2)
    assert result.stderr == ("dshreplay: usage error: standard input (-) is given twice: it holds one log, "
                             "read once\n")


def test_lineage_refuses_standard_input_in_one_line(cli, store):
    # lineage reads a parent's log twice (its header, then the seed): piped, the second read found it
    # empty, and the command ended "<stdin>: empty log: no session header" with no tree drawn
    data = sorted(store.rglob("session.jsonl"))[0].read_bytes()
    result = cli("lineage", "-", input=data, expect=2)
    assert result.stderr == ("dshreplay: usage error: lineage reads log files, not standard input (-): a parent's "
                             "log is read again for the seed its children repeat; save it to a file and give its "
                             "path\n")
