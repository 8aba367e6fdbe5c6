"""Many logs at once: --jobs on a process pool and `fleet` on a Dask LocalCluster
give the same bytes as a sequential run, in input order, and one bad log
never stops the others."""

from __future__ import annotations

import pytest

from dshreplay.testing.samples import LogBuilder, compacted, multi_turn, pruned


def build_root(root, count: int = 50):
    """A store root: <root>/<project>/<session>/session.jsonl[.zstd], 50 sessions."""
    makers = [multi_turn, compacted, pruned]
    for n in range(count):
        builder: LogBuilder = makers[n % 3]()
        builder.header["id"] = f"session-{n:02d}"
        folder = root / f"project-{n % 4}" / f"s{n:02d}"
        folder.mkdir(parents=True)
        name = "session.jsonl.zstd" if n % 5 == 0 else "session.jsonl"
        if n == 7:  # one broken log
            (folder / name).write_bytes(builder.to_bytes()[:-200] + b"\n{broken\n" + b"\n")
        else:
            builder.write(folder / name, pack=n % 2 == 0)
    return root


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_root(tmp_path_factory.mktemp("store"))


def bundle(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_jobs_give_the_same_output_as_one_process(cli, store):
    one = cli("validate", store, "--json", "--jobs", 1, expect=1).stdout
    two = cli("validate", store, "--json", "--jobs", 2, expect=1).stdout
    assert one == two
    files = cli("validate", store, "--json", "--jobs", 2, expect=1).json()["files"]
    paths = [f["path"] for f in files]
    assert len(files) == 50 and paths == sorted(paths)  # discovery order, kept by the pool
    assert [f["path"].split("/")[-2] for f in files if not f["ok"]] == ["s07"]
    assert cli("stats", store, "--json", "-j", 1, expect=2).stdout == \
        cli("stats", store, "--json", "-j", 2, expect=2).stdout


def test_fleet_on_a_local_dask_cluster_equals_local_jobs(cli, store, tmp_path):
    local = cli("validate", store, "--json", "--jobs", 2, expect=1).stdout
    fleet = cli("fleet", "validate", store, "--json", "--workers", 2, expect=1).stdout
    assert fleet == local
    assert cli("fleet", "stats", store, "--json", expect=2).stdout == \
        cli("stats", store, "--json", "-j", 2, expect=2).stdout
    stamp = "2026-01-01T00:00:00Z"
    cli("export", store, "--out", tmp_path / "local", "--timestamp", stamp, "-j", 2, expect=2)
    cli("fleet", "export", store, "--out", tmp_path / "fleet", "--timestamp", stamp, expect=2)
    assert len(list((tmp_path / "fleet").iterdir())) == 2 + 49  # index, manifest, a folder a readable session
    assert bundle(tmp_path / "fleet") == bundle(tmp_path / "local")
    cli("verify-export", tmp_path / "fleet")


def test_progress_bar_only_on_a_terminal(cli, store):
    result = cli("validate", store, "--json", "-j", 2, expect=1)
    assert result.stderr == ""  # CliRunner's stderr is not a terminal
