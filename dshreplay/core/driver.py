"""The pass driver: the one loop from a log to answers.

`run_pass` reads a log once through the reader, applies the one surface fold
to every record, and hands each record, with the replacement the fold made
of it, to pluggable observers: the validation rules, call tracking, shadows,
provenance, turn tracking, stats, the transcript, event queries, the export
writers. A command is a choice of observers plus a reporter; several
commands' observers can share one pass.

What happens when the fold rejects an event is a parameter, `on_fold_error`:

- `STOP`: the pass ends there; the error is in `Run.fold_errors` and the
  fold's state is the one before the rejected event.
- `SKIP`: observers' `rejected` hook hears of it, the event is skipped for
  surface purposes (the surface stays as it was) and reading goes on.

The driver never raises for a defect the fold finds; reading errors
(`ReadError`) propagate unless the caller gives `recover`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from dshreplay.core.surface import SurfaceFold, SurfaceState
from dshreplay.errors import DeriveError, DshReplayError, FoldError, ReadError, UsageError
from dshreplay.io.reader import LogSource, TornTail

STOP, SKIP = "stop", "skip"


class Observer:
    """Base class of what a pass feeds; every hook is optional."""

    def begin(self, run: Run) -> None:
        """The header is read; `run.fold` is the fold the pass applies."""

    def observe(self, item, replacement) -> None:
        """One record (an Event, or a PackedRun of chunk events) after the fold
        took it; `replacement` is the Replacement it made, or None."""

    def rejected(self, item, error: FoldError) -> None:
        """The fold rejected `item` (only with on_fold_error=SKIP; `observe` follows)."""

    def finish(self, run: Run) -> None:
        """The pass is over (`run.complete` says whether it read to the end)."""


@dataclass
class Run:
    """What one pass learned about the log itself."""

    path: str
    header: dict
    header_line: int
    encoding: str
    fold: SurfaceFold
    fold_errors: list[FoldError] = field(default_factory=list)
    complete: bool = False  # read to the end (not stopped early)
    event_count: int | None = None  # set when complete
    lines: int = 0
    torn_tail: TornTail | None = None
    final_newline: bool = True
    reader: object = field(default=None, repr=False)  # its `raw`: the line of the record being observed

    @property
    def last_seq(self) -> int | None:
        """The last seq read (None before any event)."""
        return self.fold.next_seq - 1 if self.fold.next_seq else None

    @property
    def fold_error(self) -> FoldError | None:
        return self.fold_errors[0] if self.fold_errors else None


def run_pass(source: LogSource, observers: Iterable[Observer] = (), *, on_fold_error: str = SKIP,
             until: int | None = None, recover: Callable[[ReadError], None] | None = None,
             record_check: Callable | None = None) -> Run:
    """Read `source` once, fold it, feed `observers` in order.

    until         stop once the event with this seq has been folded
    recover       handed each unreadable line (see LogReader.records); else it raises
    record_check  called with each record and its raw line (None for a packed row) before
                  the fold (validate's per-record checks)
    """
    if on_fold_error not in (STOP, SKIP):
        raise ValueError(f"on_fold_error must be {STOP!r} or {SKIP!r}")
    observers = list(observers)
    with source.reader() as reader:
        run = Run(reader.path, reader.header, reader.header_line, reader.encoding, SurfaceFold(), reader=reader)
        for observer in observers:
            observer.begin(run)
        hooks = [o.observe for o in observers if type(o).observe is not Observer.observe]
        fold = run.fold
        apply = fold.apply
        for item in reader.records(recover):
            if record_check is not None:
                record_check(item, reader.raw)
            try:
                replacement = apply(item)
            except FoldError as error:
                error.path = run.path
                run.fold_errors.append(error)
                if on_fold_error == STOP:
                    break
                fold.skip(item)
                replacement = None
                for observer in observers:
                    observer.rejected(item, error)
            for hook in hooks:
                hook(item, replacement)
            if until is not None and fold.next_seq > until:
                break
        else:
            run.complete = True
            run.event_count = reader.event_count
            run.lines = reader.lines
            run.torn_tail = reader.torn_tail
            run.final_newline = reader.final_newline
        for observer in observers:
            observer.finish(run)
    return run


class Snapshots(Observer):
    """The model's view right after each wanted seq (-1: before any event)."""

    def __init__(self, seqs: Iterable[int]) -> None:
        self.wanted = sorted(set(seqs))
        if self.wanted and self.wanted[0] < -1:
            raise UsageError(f"seq {self.wanted[0]} is negative: seqs count events from 0")
        self.states: dict[int, SurfaceState] = {}
        self._i = 0

    @property
    def last(self) -> int | None:
        """The last seq the pass must read."""
        return self.wanted[-1] if self.wanted else None

    def begin(self, run: Run) -> None:
        self.fold = run.fold
        self._take()

    def observe(self, item, replacement) -> None:
        self._take()

    def _take(self) -> None:
        fold, wanted = self.fold, self.wanted
        while self._i < len(wanted) and wanted[self._i] < fold.next_seq:
            seq = wanted[self._i]
            self.states[seq] = fold.state(seq) if seq >= 0 else SurfaceState(-1, (), (), {})
            self._i += 1

    def missing(self) -> int | None:
        """The first wanted seq the pass did not reach."""
        return self.wanted[self._i] if self._i < len(self.wanted) else None


def states_at(source: LogSource, seqs: Iterable[int], observers: Iterable[Observer] = ()) -> dict[int, SurfaceState]:
    """The model's view right after each seq, in one pass that stops after the last.

    Raises FoldError when the fold breaks at or before a wanted seq, and
    UsageError for a seq beyond the log.
    """
    snapshots = Snapshots(seqs)
    if snapshots.last is None:
        return {}
    run = run_pass(source, [snapshots, *observers], on_fold_error=STOP, until=snapshots.last)
    missing = snapshots.missing()
    if missing is not None:
        if run.fold_error is not None:
            raise run.fold_error
        last = run.last_seq
        end = "it has no events" if last is None else f"its last seq is {last}"
        raise UsageError(f"seq {missing} is beyond the log: {end}", path=run.path)
    return snapshots.states


@dataclass
class FoldReport:
    """The model's view of one log at one seq, or why there is none."""

    path: str
    header: dict
    seq: int | None  # the seq the state is for (None: a log with no events, or a failed fold)
    state: SurfaceState | None
    messages: list | None  # derived messages, parallel to `node_messages`
    node_messages: list | None  # (seq, message or None) per node
    error: DshReplayError | None = None
    torn_tail: TornTail | None = None
    event_count: int | None = None  # None when reading stopped early

    @property
    def ok(self) -> bool:
        return self.error is None



def fold_report(source: LogSource, at: int | None = None, observers: Iterable[Observer] = ()) -> FoldReport:
    """Fold a log, whole or up to and including event `at`, in one pass that
    stops at the first fold error. A fold or derive failure is in the report;
    UsageError for `at` beyond the log (or negative)."""
    if at is not None and at < 0:
        raise UsageError(f"seq {at} is negative: seqs count events from 0")
    run = run_pass(source, observers, on_fold_error=STOP, until=at)
    error = run.fold_error
    if error is None and at is not None and (run.last_seq is None or run.last_seq < at):
        end = "it has no events" if run.last_seq is None else f"its last seq is {run.last_seq}"
        raise UsageError(f"seq {at} is beyond the log: {end}", path=run.path)
    seq = None if error is not None else (at if at is not None else run.last_seq)
    count = run.event_count if at is None else None
    report = FoldReport(run.path, run.header, seq, None, None, None, error, run.torn_tail, count)
    if error is not None:
        return report
    report.state = run.fold.state(seq)
    try:
        report.node_messages = report.state.node_messages()
    except DeriveError as exc:
        exc.path = run.path
        report.error = exc
        return report
    report.messages = [m for _, m in report.node_messages if m is not None]
    return report
