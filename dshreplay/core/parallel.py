"""Run one per-log function over many logs: in this process, on a local
process pool (`--jobs N`), or on a Dask cluster (`dshreplay fleet`).

Results always come back in input order, and each call is isolated: a log
that cannot be read becomes a report saying so, never a stopped run.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Callable, Iterable


def default_jobs() -> int:
    return os.cpu_count() or 1


class Progress:
    """A one-line progress bar on stderr, shown only on a terminal."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.done = 0
        self.enabled = enabled and total > 1 and sys.stderr.isatty()

    def step(self) -> None:
        self.done += 1
        if self.enabled:
            width = 30
            filled = width * self.done // self.total
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}")
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


class OneProcessPerLog:
    """fn, run where logs are already spread over processes: each log is read
    by the sequential reader there, not by a pool of its own (see `scan`)."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn

    def __call__(self, item):
        from dshreplay.core.scan import SCAN
        SCAN["jobs"] = 1
        return self.fn(item)


def run_map(fn: Callable, items: Iterable, *, jobs: int | None = None, progress: bool = False) -> list:
    """[fn(item) for item in items], on `jobs` processes, in input order."""
    items = list(items)
    jobs = default_jobs() if jobs is None else jobs
    bar = Progress(len(items), progress)
    if jobs <= 1 or len(items) <= 1:
        out = []
        for item in items:
            out.append(fn(item))
            bar.step()
        return out
    from dshreplay.core.scan import start_method
    with ProcessPoolExecutor(max_workers=min(jobs, len(items)), mp_context=get_context(start_method())) as pool:
        out = []
        for result in pool.map(OneProcessPerLog(fn), items):
            out.append(result)
            bar.step()
        return out
