"""Many logs at once: --jobs on a process pool and `fleet` on a Dask LocalCluster
give the same bytes as a sequential run, in input order, and one bad log
never stops the others."""

from __future__ import annotations

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
