"""core.parallel's window jobs: per window of a large log, in file order, the events and
lines it read and what the per-window function returned; None as soon as one window
held what only the sequential reader may report (here: no final newline)."""

from __future__ import annotations

import json

from dshreplay.core._parallel import WindowJobs, windows
from dshreplay.io.reader import LogReader

import scenarios


def seqs(reader: LogReader) -> list[int]:
    """The per-window function: the seqs the window's reader gives (numbered from 0 in each window)."""
    return [item.seq for item in reader.records()]


def two_window_log(tmp_path, final_newline: bool = True):
    """A log of four 400 KB user messages: cut at 1 MB, its body is two windows (3 events, then 1)."""
    records = [scenarios.HEADER] + [scenarios.user(seq, "x" * 400_000) for seq in range(4)]
    path = tmp_path / "large.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + ("\n" if final_newline else ""))
    with LogReader(path) as reader:
        reader.header  # noqa: B018 - read it: the body starts after it
        offset = reader.body_offset
    assert offset is not None
    assert len(windows(str(path), offset, path.stat().st_size, 1 << 20)) == 2
    return str(path), offset


def test_each_window_gives_its_events_lines_and_result_in_file_order(tmp_path):
    path, offset = two_window_log(tmp_path)
    assert WindowJobs(path, offset, seqs, 2).results() == [(3, 3, [0, 1, 2]), (1, 1, [0])]


def test_one_window_the_sequential_reader_must_report_gives_none_for_all(tmp_path):
    path, offset = two_window_log(tmp_path, final_newline=False)  # (the first window is clean, the last is not)
    assert WindowJobs(path, offset, seqs, 2).results() is None


def made_file_mode(path: str) -> int:
    """Create a file at `path` (in a worker process); its permission bits."""
    import os
    import stat
    with open(path, "w"):
        pass
    return stat.S_IMODE(os.stat(path).st_mode)


def test_worker_processes_create_files_with_the_umask_the_caller_has_now(tmp_path, monkeypatch):
    # a fork server keeps the umask it started with: an export whose sessions workers wrote, run
    # under umask 077 after any earlier parallel run under 022 (a fork server is used once a
    # thread runs, as DuckDB's do), made its folders and files 0755 and 0644
    import os

    from dshreplay.core import _parallel as parallel
    from dshreplay.options import Options
    monkeypatch.setattr(parallel, "start_method", lambda: "forkserver")
    previous = os.umask(0o022)
    try:
        parallel.run_map(made_file_mode, [str(tmp_path / "a"), str(tmp_path / "b")], Options(jobs=2))
        os.umask(0o077)
        modes = parallel.run_map(made_file_mode, [str(tmp_path / "c"), str(tmp_path / "d")], Options(jobs=2))
    finally:
        os.umask(previous)
    assert modes == [0o600, 0o600]
