"""The pass driver: the one loop from a log to answers.

`run_pass` reads a log once through the reader, applies the one surface fold
to every record, and hands each record to pluggable observers: the trackers
of the session model (turns and steps, model calls, replacements, compaction
brackets, tool calls), the validation rules, provenance, stats, the
transcript, event queries, the export writers. A command is a choice of
observers plus a reporter; several commands' observers share one pass.

Each record reaches the observers as one `Record`: the item, the replacement
the fold made of it or the fold error that rejected it, its raw line, and
the turn, step, open compaction and model call in force, which the trackers
keep (one tracker each). The pass reuses one Record: keep its values, not it.

Observers say what they need from each other: a class attribute
`requires = (CallTracker, ...)` names the observers (trackers) it reads; the
pass makes each required one once (unless one was given), orders every
observer after those it requires, and hands them out through `Run.get`.
An observer says which records it reads: `types` (a set of event types, None:
every record) for `observe`, or `handlers` (event type -> the name of its
method for that type), so a record costs only the observers that read it.

What happens when the fold rejects an event is a parameter, `on_fold_error`:

- `STOP`: the pass ends there; the error is in `Run.fold_errors` and the
  fold's state is the one before the rejected event (observers never see it).
- `SKIP`: observers see the record with `record.error` set and the fold goes
  on (`SurfaceFold.resume`): an event the reader placed off its written seq is
  folded at that place (`record.replacement` is what it made), any other is
  skipped for surface purposes (the surface stays as it was; `error.skipped`);
  reading goes on. A record that holds no event where it lies (`item.count`
  0) reaches no observer: its error is in `Run.fold_errors`.

A line that cannot be read (a `LineError`: not JSON, not an object, a
malformed packed row) is where the fold fails too, as in dsh: it is in
`Run.fold_errors` like a rejected event (STOP ends the pass there; SKIP goes
on from the next readable line's seq), and `recover`, when given, hears of
it. `Run.failure` is the first of them: every answer reaches up to the seq
before it (`Run.answered_up_to`). The driver never raises for a defect of an
event or a line; other reading errors (`ReadError`) propagate.

A pass can be resumed: `checkpoint(state)` is handed a `PassState` (the
run, the observers and the record, before any `finish`) when the pass read a
whole log that ended cleanly (no defect, no torn tail, a final newline);
`run_pass(source, resume=state)` then reads only the lines after that prefix
and goes on with those observers, as if it had read the whole log (see
`core.passstate` for keeping a state between processes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, TypeVar

from dshreplay._jsvalues import JSONObject, JSONValue
from dshreplay.core.progress import BYTES, Meter
from dshreplay.core.surface import Replacement, SurfaceFold, SurfaceState, counted_only
from dshreplay.errors import DeriveError, DshReplayError, FoldError, LineError, UsageError, answered_up_to
from dshreplay.io.reader import Item, LogReader, LogSource, TornTail

__all__ = ["run_pass", "Observer", "Record", "Run", "PassState", "SKIP", "STOP", "FoldReport", "fold_report",
           "states_at"]

STOP, SKIP = "stop", "skip"
_O = TypeVar("_O", bound="Observer")


class Record:
    """One record of the pass (an Event, or a PackedRun of chunk events) with
    what is known of it. The driver sets `item`, `previous`, `replacement`
    and `error`; the trackers set the rest (each tracker its own: `turn` and
    `step` by the TurnTracker, `compaction` by the CompactionTracker, `call`
    by the CallTracker), so an observer that reads one requires its tracker."""

    __slots__ = ("item", "previous", "replacement", "error", "turn", "step", "compaction", "call", "_reader",
                 "_then")

    def __init__(self, reader: LogReader | None = None) -> None:
        self.item: Item = None  # type: ignore[assignment]  # (set by the pass before any observer sees the record)
        self.previous: Item | None = None  # the item of the record before (None for the first)
        self.replacement: Replacement | None = None  # the Replacement the fold made of it
        self.error: FoldError | None = None  # the fold error that rejected it (SKIP)
        self.turn: Any = None  # the turn in force (a turn/end still belongs to its turn; the TurnTracker's)
        self.step: Any = None  # the step in force (likewise)
        self.compaction: Any = None  # the compaction bracket open after it (the CompactionTracker's)
        self.call: Any = None  # the main-loop model call in force (the latest one opened; the CallTracker's)
        self._reader = reader
        self._then: list[Callable[[Record], None]] = []

    def then(self, fn: Callable[[Record], None]) -> None:
        """Have `fn(record)` called with the next record, once it is folded and before
        any observer sees it: a tracker closes there what this record ended (a
        turn/end still belongs to its turn), or learns what followed it. (`fn`
        itself registers nothing.)"""
        self._then.append(fn)

    def __getstate__(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__ if name != "_reader"}

    def __setstate__(self, state: dict[str, object]) -> None:
        self._reader = None
        for name, value in state.items():
            setattr(self, name, value)

    @property
    def raw(self) -> bytes | None:
        """Its line as read (a packed row's line for each of its events)."""
        return self._reader.raw if self._reader is not None else None

    @property
    def line(self) -> int:
        """Its (first) line number."""
        return self.item.line


class Observer:
    """Base class of what a pass feeds; every hook is optional.

    requires  observer classes this one reads (made by the pass if not given)
    types     the event types whose records `observe` reads (None: all of them)
    handlers  event type -> name of the method the pass calls with a record of
              that type instead of `observe`
    reads_records  False: `observe` reads nothing of the records (only where the fold
              is: Snapshots), so a pass with only such observers may be handed runs of
              the records the fold only counts as one `Quiet` item each
    """

    requires: ClassVar[tuple[type[Observer], ...]] = ()
    types: frozenset[str] | None = None
    handlers: ClassVar[dict[str, str]] = {}
    reads_records: ClassVar[bool] = True

    def begin(self, run: Run) -> None:
        """The header is read; `run.fold` is the fold the pass applies and
        `run.get(Cls)` the pass's observer of a class this one requires.
        (A pass may be run again with the same observers: start afresh here.)"""

    def observe(self, record: Record) -> None:
        """One record, after the fold took it (or, with SKIP, rejected it: `record.error`)."""

    def finish(self, run: Run) -> None:
        """The pass is over (`run.complete` says whether it read to the end)."""


@dataclass
class Run:
    """What one pass learned about the log itself."""

    path: str
    header: JSONObject
    header_line: int
    encoding: str
    fold: SurfaceFold
    fold_errors: list[FoldError | LineError] = field(default_factory=list)  # FoldErrors and LineErrors, in log order
    complete: bool = False  # read to the end (not stopped early)
    event_count: int | None = None  # set when complete: the seqs read (missing ones, in a gap, included)
    missing: int = 0  # set when complete: seqs below event_count that no line holds
    unreadable_rest: bool = False  # set when complete: a zstd log's rest could not be read (its end is unknown)
    lines: int = 0
    torn_tail: TornTail | None = None
    final_newline: bool = True
    hidden_frame: tuple[int, int] | None = None  # (byte offset, bytes) of the first zstd frame with no log text
    reader: LogReader | None = field(default=None, repr=False)  # its `raw`: the line of the record being observed
    failure_view: SurfaceState | None = field(default=None, repr=False)  # the view before `failure`
    last_item: Item | None = None  # the last record read (set when complete)
    observers: dict[type, Observer] = field(default_factory=dict, repr=False)  # class -> the pass's observer of it

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "reader": None}  # (a reader is an open file: a resumed pass gives its own)

    @property
    def events_held(self) -> int | None:
        """How many events the log holds, once a pass read it whole (else None): the seqs read,
        less those a gap left out."""
        return None if self.event_count is None else self.event_count - self.missing

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
        return answered_up_to(self.fold_error)

    def get(self, cls: type[_O]) -> _O:
        """The pass's observer of class `cls` (one that an observer requires)."""
        try:
            return self.observers[cls]  # type: ignore[return-value]  # (`arrange` keys each class to one of it)
        except KeyError:
            raise LookupError(f"no {cls.__name__} in this pass: require it") from None


def arrange(observers: Iterable[Observer]) -> tuple[list[Observer], dict[type, Observer]]:
    """The observers in pass order, each after those it requires (made once
    here when not given), and the class -> observer map `Run.get` answers from.

    A class required by one observer and a subclass of it required by another
    (a tracker, and the same tracker keeping its history: `TurnTracker` and
    `TurnSpans`) are one observer, of the subclass: what the pass keeps is
    what some observer asked for, and a pass that asks for less keeps less."""
    given = list(observers)
    by_class: dict[type, Observer] = {}
    for observer in given:
        by_class.setdefault(type(observer), observer)
    wanted: set[type[Observer]] = set()  # every class some observer requires, directly or not
    stack = [type(o) for o in given]
    while stack:
        for cls in stack.pop().requires:
            if cls not in wanted:
                wanted.add(cls)
                stack.append(cls)
    ordered: list[Observer] = []
    placed: dict[int, bool] = {}  # id -> True once placed, False while its requirements are placed

    def provider(cls: type) -> Observer:
        found = by_class.get(cls)
        if found is None:
            found = next((o for o in given if isinstance(o, cls)), None)
            if found is None:
                kind = _most_derived(cls, wanted)
                found = by_class.get(kind) or kind()
                by_class[kind] = found
            by_class[cls] = found
        return found

    def place(observer: Observer) -> None:
        state = placed.get(id(observer))
        if state:
            return
        if state is False:
            raise ValueError(f"{type(observer).__name__} requires itself (through {type(observer).requires})")
        placed[id(observer)] = False
        for cls in type(observer).requires:
            place(provider(cls))
        placed[id(observer)] = True
        ordered.append(observer)

    for observer in given:
        place(observer)
    return ordered, by_class


def _most_derived(cls: type, wanted: set[type[Observer]]) -> type[Observer]:
    """The one class of `wanted` that is `cls` or derives from it and from which no other derives."""
    kinds = [k for k in wanted if issubclass(k, cls)]
    last = [k for k in kinds if not any(o is not k and issubclass(o, k) for o in kinds)]
    if len(last) != 1:
        raise ValueError(f"{cls.__name__} is required as " + " and as ".join(sorted(k.__name__ for k in last))
                         + ": one observer cannot be both")
    return last[0]


@dataclass
class PassState:
    """A pass that read a whole clean log, as it stood before `finish`: resumable on the
    lines appended since (`run_pass(resume=...)`). `extra` is what the caller keeps with it."""

    run: Run
    ordered: list[Observer]
    record: Record
    extra: object = None

    def get(self, cls: type[_O]) -> _O:
        """The state's observer of class `cls`."""
        return self.run.get(cls)


def run_pass(source: LogSource, observers: Iterable[Observer] = (), *, on_fold_error: str = SKIP,
             until: int | None = None, recover: Callable[[LineError], None] | None = None,
             record_check: Callable[[Item, bytes | None], None] | None = None, resume: PassState | None = None,
             checkpoint: Callable[[PassState], None] | None = None) -> Run:
    """Read `source` once, fold it, feed `observers` (and what they require).

    until         stop once the event with this seq has been folded
    recover       handed each line that cannot be read (see LogReader.records)
    record_check  called with each record and its raw line (None for a packed row) before
                  the fold (validate's per-record checks)
    resume        go on from this state (its observers, not `observers`), reading only the
                  lines after the ones it read (the caller proved them unchanged)
    checkpoint    handed the state of a pass that read a whole clean log, before `finish`
    """
    if on_fold_error not in (STOP, SKIP):
        raise ValueError(f"on_fold_error must be {STOP!r} or {SKIP!r}")
    with source.reader() as reader:
        run, ordered, record = _start(reader, observers, resume)
        halt: list[LineError] = []  # (STOP) a line that cannot be read: the pass ends before the next record

        def damaged(error: LineError) -> None:
            error.path = run.path
            _failed(run, error)
            if on_fold_error == STOP:
                halt.append(error)
            if recover is not None:
                recover(error)

        if resume is None:
            for observer in ordered:
                observer.begin(run)
        dispatch = _Dispatch(o for o in ordered if o.handlers or type(o).observe is not Observer.observe)
        readers = dispatch.readers
        quiet = counted_only if on_fold_error == STOP and record_check is None and resume is None \
            and checkpoint is None and not any(o.reads_records for o in readers) else None

        fold = run.fold
        apply = fold.apply
        then = record._then
        meter = _meter(source, reader)
        ticks = 0
        for item in reader.records(damaged, quiet):
            if halt:
                break
            if meter is not None:
                ticks += 1
                if ticks == TICK:  # (how far, in bytes of the log's text: every few thousand records)
                    ticks = 0
                    if item.offset is not None:
                        meter.advance(item.offset, BYTES)
            if record_check is not None and item.count:
                record_check(item, reader.raw)
            try:
                replacement = apply(item)
                error = None
            except FoldError as exc:
                exc.path = run.path
                exc.__traceback__ = None  # (kept for its facts: a SKIP pass may keep one per record)
                _failed(run, exc)
                if on_fold_error == STOP:
                    break
                error, replacement = _resume(run, item, exc)
                if not item.count:  # a line that holds no event where it lies
                    continue
            if readers:
                record.previous = record.item
                record.item = item
                hooks = dispatch[item.type]
                if hooks or then:
                    record.replacement = replacement
                    record.error = error
                    if then:
                        for fn in then:
                            fn(record)
                        then.clear()
                    for hook in hooks:
                        hook(record)
            if until is not None and fold.next_seq > until:
                break
        else:
            if not halt:
                _complete(run, reader, record.item if readers else None)
                if checkpoint is not None and not run.fold_errors and run.torn_tail is None \
                        and run.final_newline and until is None:
                    checkpoint(PassState(run, ordered, record))
        if meter is not None:
            meter.finish(BYTES)
        if not run.complete and on_fold_error == STOP and run.fold_errors:
            failed_at = run.fold_errors[0].line  # (a fold error and a line error always name their line)
            run.lines = max(failed_at - 1, run.header_line) if failed_at is not None else run.lines
        for observer in ordered:
            observer.finish(run)
    return run


def _start(reader: LogReader, observers: Iterable[Observer], resume: PassState | None) \
        -> tuple[Run, list[Observer], Record]:
    """The run a pass feeds, its observers in order and the record it hands them: new ones, or
    those of the state it resumes from (the reader told where that state stopped reading)."""
    if resume is None:
        ordered, by_class = arrange(observers)
        run = Run(reader.path, reader.header, reader.header_line, reader.encoding, SurfaceFold(), reader=reader,
                  observers=by_class)
        return run, ordered, Record(reader)
    run, ordered, record = resume.run, resume.ordered, resume.record
    reader.resume(run.header, run.header_line, run.lines, run.fold.next_seq)
    run.path, run.reader, run.complete, record._reader = reader.path, reader, False, reader
    return run, ordered, record


def _complete(run: Run, reader: LogReader, last_item: Item | None) -> None:
    """A pass read its whole log: the run takes what the reader learnt of it."""
    run.complete = True
    run.last_item = last_item
    run.event_count = reader.event_count
    run.missing = reader.missing
    run.unreadable_rest = reader.unreadable_rest is not None
    run.lines = reader.lines
    run.torn_tail = reader.torn_tail
    run.hidden_frame = reader.textless_frame
    run.final_newline = reader.final_newline


TICK = 4096  # records between two reports to a progress meter


def _meter(source: LogSource, reader: LogReader) -> Meter | None:
    """The source's progress meter (Options.progress), started on this pass: the size is the
    file's (or standard input's) for a plain log, unknown for a zstd one (offsets count its text)."""
    options = getattr(source, "options", None)
    meter: Meter | None = getattr(options, "progress", None)
    if meter is None:
        return None
    total = None
    if reader.encoding != "zstd":
        total = len(source.data) if source.data is not None else _size(source.file)
    meter.start(total, BYTES, reader.path)
    return meter


def _size(path: Path | None) -> int | None:
    if path is None:
        return None
    try:
        return path.stat().st_size
    except OSError:
        return None


def _failed(run: Run, error: FoldError | LineError) -> None:
    if not run.fold_errors:  # the view the answers stop at
        run.failure_view = run.fold.state(error.seq - 1) if error.seq else SurfaceState(-1, (), (), {})
    run.fold_errors.append(error)


def _resume(run: Run, item: Item, error: FoldError) -> tuple[FoldError, Replacement | None]:
    """SKIP: the fold goes on past `error`; an event the fold takes where the reader
    placed it may be rejected for a defect of its own. (the error the record carries,
    the replacement the fold made of it)"""
    try:
        return error, run.fold.resume(item, error)
    except FoldError as again:
        again.path = run.path
        run.fold_errors.append(again)
        return again, run.fold.resume(item, again)


class _Dispatch(dict[Any, list[Callable[[Record], None]]]):
    """Event type -> the observe hooks of the observers that read it, in pass order."""

    def __init__(self, readers: Iterable[Observer]) -> None:
        super().__init__()
        self.readers = list(readers)

    def __missing__(self, kind: Any) -> list[Callable[[Record], None]]:  # (a type as written: any JSON value)
        hooks: list[Callable[[Record], None]] = []
        self[kind] = hooks
        for o in self.readers:
            name = o.handlers.get(kind)
            if name is not None:
                hooks.append(getattr(o, name))
            elif type(o).observe is not Observer.observe and (o.types is None or kind in o.types):
                hooks.append(o.observe)
        return hooks

class Snapshots(Observer):
    """The model's view right after each wanted seq (-1: before any event)."""

    reads_records = False  # (the fold's state after each record is all it takes)

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

    def observe(self, record: Record) -> None:
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
    header: JSONObject
    seq: int | None  # the seq the state is for (None: a log with no events, or a failed fold)
    state: SurfaceState | None
    messages: list[JSONValue] | None  # derived messages, parallel to `node_messages`
    node_messages: list[tuple[int, JSONValue]] | None  # (seq, message or None) per node
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
