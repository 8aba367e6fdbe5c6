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
- `SKIP`: observers' `rejected` hook hears of it and the fold goes on
  (`SurfaceFold.resume`): an event the reader placed off its written seq is
  folded at that place, any other is skipped for surface purposes (the
  surface stays as it was); reading goes on.

A line that cannot be read (a `LineError`: not JSON, not an object, a
malformed packed row) is where the fold fails too, as in dsh: it is in
`Run.fold_errors` like a rejected event (STOP ends the pass there; SKIP goes
on from the next readable line's seq), and `recover`, when given, hears of
it. `Run.failure` is the first of them: every answer reaches up to the seq
before it (`Run.answered_up_to`). The driver never raises for a defect of an
event or a line; other reading errors (`ReadError`) propagate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from dshreplay.core.surface import SurfaceFold, SurfaceState
from dshreplay.errors import DeriveError, DshReplayError, FoldError, LineError, ReadError, UsageError
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
        """The fold rejected `item` (only with on_fold_error=SKIP; `observe` follows, unless
        the item holds no event where it lies: `item.count` 0). `error.skipped` says
        whether the event is skipped for surface purposes (else the fold takes it where
        the reader placed it)."""

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
    fold_errors: list = field(default_factory=list)  # FoldErrors and LineErrors, in log order
    complete: bool = False  # read to the end (not stopped early)
    event_count: int | None = None  # set when complete
    lines: int = 0
    torn_tail: TornTail | None = None
    final_newline: bool = True
    reader: object = field(default=None, repr=False)  # its `raw`: the line of the record being observed
    failure_view: SurfaceState | None = field(default=None, repr=False)  # the view before `failure`

    @property
    def last_seq(self) -> int | None:
        """The last seq read (None before any event)."""
        return self.fold.next_seq - 1 if self.fold.next_seq else None

    @property
    def fold_error(self) -> FoldError | LineError | None:
        return self.fold_errors[0] if self.fold_errors else None

    failure = fold_error  # where the fold fails (a rejected event or a line that cannot be read)

    @property
    def answered_up_to(self) -> int | None:
        """The last seq an answer of this pass reaches when the fold failed (-1: none), else None."""
        failure = self.fold_error
        return None if failure is None else failure.seq - 1


def run_pass(source: LogSource, observers: Iterable[Observer] = (), *, on_fold_error: str = SKIP,
             until: int | None = None, recover: Callable[[ReadError], None] | None = None,
             record_check: Callable | None = None) -> Run:
    """Read `source` once, fold it, feed `observers` in order.

    until         stop once the event with this seq has been folded
    recover       handed each line that cannot be read (see LogReader.records)
    record_check  called with each record and its raw line (None for a packed row) before
                  the fold (validate's per-record checks)
    """
    if on_fold_error not in (STOP, SKIP):
        raise ValueError(f"on_fold_error must be {STOP!r} or {SKIP!r}")
    observers = list(observers)
    with source.reader() as reader:
        run = Run(reader.path, reader.header, reader.header_line, reader.encoding, SurfaceFold(), reader=reader)
        halt: list = []  # (STOP) a line that cannot be read: the pass ends before the next record

        def damaged(error: LineError) -> None:
            error.path = run.path
            _failed(run, error)
            if on_fold_error == STOP:
                halt.append(error)
            if recover is not None:
                recover(error)

        for observer in observers:
            observer.begin(run)
        hooks = [o.observe for o in observers if type(o).observe is not Observer.observe]
        fold = run.fold
        apply = fold.apply
        for item in reader.records(damaged):
            if halt:
                break
            if record_check is not None and item.count:
                record_check(item, reader.raw)
            try:
                replacement = apply(item)
            except FoldError as error:
                error.path = run.path
                _failed(run, error)
                if on_fold_error == STOP:
                    break
                replacement = _resume(run, item, error, observers)
                if not item.count:  # a line that holds no event where it lies
                    continue
            for hook in hooks:
                hook(item, replacement)
            if until is not None and fold.next_seq > until:
                break
        else:
            if not halt:
                run.complete = True
                run.event_count = reader.event_count
                run.lines = reader.lines
                run.torn_tail = reader.torn_tail
                run.final_newline = reader.final_newline
        if not run.complete and on_fold_error == STOP and run.fold_errors:
            run.lines = max(run.fold_errors[0].line - 1, run.header_line)  # the lines before the failure
        for observer in observers:
            observer.finish(run)
    return run


def _failed(run: Run, error) -> None:
    if not run.fold_errors:  # the view the answers stop at
        run.failure_view = run.fold.state(error.seq - 1) if error.seq else SurfaceState(-1, (), (), {})
    run.fold_errors.append(error)


def _resume(run: Run, item, error: FoldError, observers: list) -> object:
    """SKIP: observers hear of the rejection and the fold goes on past it; an event
    the fold takes where the reader placed it may be rejected for a defect of its own."""
    for observer in observers:
        observer.rejected(item, error)
    try:
        return run.fold.resume(item, error)
    except FoldError as again:
        again.path = run.path
        run.fold_errors.append(again)
        for observer in observers:
            observer.rejected(item, again)
        return run.fold.resume(item, again)


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

    Raises where the fold fails (a FoldError, or the LineError of a line that
    cannot be read) when that is at or before a wanted seq, and UsageError for
    a seq beyond the log.
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
