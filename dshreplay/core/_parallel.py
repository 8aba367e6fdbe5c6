"""Run work on several processes, without a second copy of any rule.

Two shapes:

- `run_map(fn, items, options)`: one per-log function over many logs, on a
  local process pool; results in input order. (`core.fleet` does the same on
  a Dask cluster.)
- `map_windows(path, body_offset, fn, options)`: one large log file cut into
  byte windows at line boundaries; each worker process reads its window with
  the one reader (`LogReader(window=...)`) and runs `fn(reader)`, a pure
  per-record function that the sequential path runs too (validate's
  per-record schema checks), and sends back its compact result. The main
  process runs the one pass driver meanwhile. Used only where it pays:
  a file of at least `MIN_WINDOW_BYTES`, and at least two free cores.

Neither costs a log more than a stat and a read of /proc/stat when it does not
pay: deciding must never cost more than the work (a log of a few KB
validates in about a millisecond).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterable, TypeVar

from dshreplay._jsvalues import nesting_room
from dshreplay.core.progress import LOGS
from dshreplay.options import DEFAULT, Options, available_cores

if TYPE_CHECKING:  # (a process pool is imported when one is started: a log read in one process never pays it)
    from concurrent.futures import Future, ProcessPoolExecutor

    from dshreplay.io.reader import LogReader, LogSource

T = TypeVar("T")  # what a per-item function is given
R = TypeVar("R")  # what it returns

MIN_WINDOW_BYTES = 8 * 1024**2  # smaller logs are read in one process: a pool costs more than it saves
WINDOW_BYTES = 4 * 1024**2  # the largest window
MIN_WINDOW = 1 << 20  # the smallest window (but the last)


def start_method() -> str | None:
    """fork, the cheapest, from a single-threaded process; else a fork server
    (a child forked while another thread holds a lock can deadlock, and a Dask
    client or worker runs threads; so does a Go runtime, the secret engine's,
    whose threads Python does not count: a forked child of it hangs)."""
    import multiprocessing
    import threading
    methods = multiprocessing.get_all_start_methods()
    if threading.active_count() == 1 and _os_threads() == 1 and "fork" in methods:
        return "fork"
    return "forkserver" if "forkserver" in methods else None


def _os_threads() -> int:
    """The threads of this process, Python's or not (1 where the system does not say)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


class Shipped(Generic[T]):
    """`fn` run in a worker process, its result sent back already pickled
    (`landed` reads it). pickle recurses once per level of nesting, and a
    result holds log values (ids, headers) nested as deep as the parser
    reads, past Python's default limit: the worker dumps it with the room
    `nesting_room` gives. (Unpickling is iterative.)"""

    def __init__(self, fn: Callable[[T], object]) -> None:
        self.fn = fn

    def __call__(self, item: T) -> bytes:
        import pickle  # (in the worker: a log read in one process never imports it)
        result = self.fn(item)
        with nesting_room():
            return pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)


def landed(shipped: bytes) -> Any:
    """A result a `Shipped` function sent back (what its function returned: the caller knows which)."""
    import pickle
    return pickle.loads(shipped)


def _pool(workers: int) -> ProcessPoolExecutor:
    """Worker processes with this process's umask: a forked child inherits it, but a fork server
    (after the secret engine's threads started) keeps the umask it was started with."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context
    mask = os.umask(0o022)  # (read it: os.umask only sets; put back at once)
    os.umask(mask)
    return ProcessPoolExecutor(max_workers=workers, mp_context=get_context(start_method()),
                               initializer=os.umask, initargs=(mask,))


def run_map(fn: Callable[[T], R], items: Iterable[T], options: Options = DEFAULT) -> list[R]:
    """[fn(item) for item in items], on `options.processes` processes, in input order.

    Each log is read by one process: `fn` gets no pool of its own there
    (a worker process cannot start one)."""
    items = list(items)
    jobs = options.processes
    meter = options.progress if len(items) > 1 else None  # (one log: its pass tells its own bytes)
    out: list[R] = []
    if meter is not None:
        meter.start(len(items), LOGS, "logs")
    try:
        if jobs <= 1 or len(items) <= 1 or start_method() is None:
            for item in items:
                out.append(fn(item))
                if meter is not None:
                    meter.advance(len(out), LOGS)
            return out
        workers = min(jobs, len(items))
        pool = _pool(workers)
        try:
            for result in pool.map(Shipped(fn), items, chunksize=_chunk(len(items), workers)):
                out.append(landed(result))
                if meter is not None:
                    meter.advance(len(out), LOGS)
        finally:  # (on an error or a signal, the items not started are dropped, not run)
            pool.shutdown(wait=True, cancel_futures=True)
        return out
    finally:
        if meter is not None:
            meter.finish(LOGS)


def _chunk(items: int, workers: int) -> int:
    """Items handed to a worker at a time: a round trip to a worker costs about as
    much as validating a small log, so many logs go in batches (up to 32), while a
    few (large ones, each worth a worker) go one by one, about 8 batches a worker."""
    return max(1, min(32, items // (8 * workers)))


def free_cores(options: Options) -> int:
    """Cores a parallel read of one log may use now: at most `options.jobs`, less
    the processes that are running elsewhere at this moment; 1 inside a worker
    process (of `run_map`, a window job or a Dask worker: the logs are already
    spread over processes there).

    Decided without waiting: a reading of the run queue costs microseconds,
    where sampling idle time would cost its sampling period on every log.
    """
    import multiprocessing
    if multiprocessing.parent_process() is not None or start_method() is None:
        return 1
    cores = min(options.processes, available_cores())
    if cores <= 1:
        return 1
    running = _running_elsewhere()
    return cores if running is None else max(1, min(cores, (os.cpu_count() or 1) - running))


def _running_elsewhere() -> int | None:
    """How many threads other than this one are runnable now, system-wide (Linux
    /proc/stat's procs_running, which counts this one; None elsewhere)."""
    try:
        with open("/proc/stat", "rb") as fh:
            for line in fh:
                if line.startswith(b"procs_running "):
                    return max(int(line.split()[1]) - 1, 0)
    except (OSError, ValueError):
        return None
    return None


def windows(path: str, start: int, size: int, want: int) -> list[tuple[int, int]]:
    """Split bytes start..size of a file into about `want`-byte windows ending at newlines."""
    cuts = [start]
    with open(path, "rb") as fh:
        pos = start + want
        while pos < size:
            fh.seek(pos)
            fh.readline()
            pos = fh.tell()
            if pos >= size:
                break
            cuts.append(pos)
            pos += want
    cuts.append(size)
    return list(zip(cuts, cuts[1:]))


class WindowJobs(Generic[R]):
    """`fn(reader)` over the windows of one log file, on worker processes.

    Start it before the main process's own pass; `results()` then gives, per
    window in order, `(events, lines, fn's result)`, or None when any window
    held something unusual for the reader (a bad line, a torn tail, no final
    newline): the caller then does the work in its own process, where the
    sequential reader reports the defect.
    """

    def __init__(self, path: str, body_offset: int, fn: Callable[[LogReader], R], workers: int,
                 size: int | None = None) -> None:
        size = os.path.getsize(path) if size is None else size
        want = min(WINDOW_BYTES, max(size // (4 * workers), MIN_WINDOW))
        from concurrent.futures.process import BrokenProcessPool
        self._pool = _pool(workers)
        self._futures: list[Future[tuple[int, int, R] | None]] | None = []
        try:
            for a, b in windows(path, body_offset, size, want):
                self._futures.append(self._pool.submit(_window_job, path, a, b, fn))
        except BrokenProcessPool:  # a worker died (killed, out of memory): this process does the work
            self._futures = None

    def results(self) -> list[tuple[int, int, R]] | None:
        from concurrent.futures.process import BrokenProcessPool
        try:
            out = [future.result() for future in self._futures] if self._futures is not None else [None]
        except BrokenProcessPool:
            out = [None]
        finally:
            self.close()
        done = [r for r in out if r is not None]
        return done if len(done) == len(out) else None

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _window_job(path: str, start: int, end: int, fn: Callable[[LogReader], R]) -> tuple[int, int, R] | None:
    from dshreplay.errors import ReadError
    from dshreplay.io.reader import LogReader
    try:
        with LogReader(path, window=(start, end, 0, 0)) as reader:
            result = fn(reader)
            if reader.torn_tail is not None or not reader.final_newline:
                return None
            return reader.event_count, reader.lines, result
    except ReadError:
        return None


def window_jobs(source: LogSource, fn: Callable[[LogReader], R], options: Options) -> WindowJobs[R] | None:
    """WindowJobs for a plain log file large enough to pay, when two or more
    cores are free (one stays with the main process); else None."""
    path = getattr(source, "file", None)
    if path is None or getattr(source, "transform", None) is not None:
        return None
    try:  # (the source's extent when it is fixed: the windows hold the bytes its pass reads, no more)
        size = getattr(source, "size", None) or os.path.getsize(path)
        if size < MIN_WINDOW_BYTES:  # (first: the cheapest question, and most logs stop here)
            return None
    except OSError:
        return None  # the pass itself says why the log cannot be read
    workers = free_cores(options) - 1
    if workers < 1:
        return None
    from dshreplay.errors import ReadError
    from dshreplay.io.reader import LogReader
    try:
        with LogReader(path) as reader:
            if reader.encoding != "jsonl":
                return None
            reader.header  # noqa: B018 - read it: the body starts after it
            offset = reader.body_offset
    except (OSError, ReadError):
        return None  # the pass itself says why the log cannot be read
    assert offset is not None, "reading the header sets the body's offset"
    return WindowJobs(str(path), offset, fn, workers, size)
