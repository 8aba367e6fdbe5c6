"""The library: one log as a `Session` object, every question as a method.

`dshreplay.open(path)` returns a Session. Each method reads the log through
the one reader, fold and pass driver (`core.driver`), and returns a
documented dataclass; nothing here prints or knows of the command line.
Errors speak of seqs and arguments: `UsageError` for a question that does
not fit the log, `ReadError` for a log that cannot be read, `FoldError` for
a fold that breaks before the seq asked about.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from dshreplay.analyses.calls import Call, CallTracker, Request
from dshreplay.analyses.compaction import BracketRecord
from dshreplay.analyses.health import Health
from dshreplay.analyses.index import LogIndex, build_index
from dshreplay.analyses.provenance import MessageProvenance, ShadowRecord, ViewDiff, diff_states, message_provenance
from dshreplay.analyses.query import EventFilter, EventRow, query_events
from dshreplay.analyses.spills import Spill, Spills, look_up
from dshreplay.analyses.stats import SessionStats, session_stats
from dshreplay.analyses.tools import ToolCall
from dshreplay.analyses.transcript import Entry, transcript
from dshreplay.analyses.validate import FileReport, validate_log
from dshreplay.core.driver import STOP, FoldReport, Observer, Run, fold_report, run_pass, states_at
from dshreplay.core.surface import SurfaceState
from dshreplay.errors import FoldError, UsageError
from dshreplay.io.reader import Event, LogSource, PackedRun, TornTail
from dshreplay.options import DEFAULT, Options


class _Torn(Observer):
    """Notes the torn tail of every pass that reads to the end."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def finish(self, run: Run) -> None:
        if run.torn_tail is not None:
            self.session.torn_tail = run.torn_tail


class Session:
    """One dsh session log. `source`: a path, a session folder, "-" (standard
    input, held in memory) or bytes; `options`: how to read it."""

    def __init__(self, source, options: Options = DEFAULT, *, transform=None) -> None:
        self.options = options
        self.source = LogSource(source, options, transform=transform)
        self.path = self.source.path
        self.torn_tail: TornTail | None = None  # set by any pass that read up to a torn tail
        self._index: LogIndex | None = None
        self._header: dict | None = None

    def _pass(self, observers=(), **kwargs) -> Run:
        return run_pass(self.source, [*observers, _Torn(self)], **kwargs)

    @property
    def header(self) -> dict:
        if self._header is None:
            with self.source.reader() as reader:
                self._header = reader.header
        return self._header

    def records(self) -> Iterator[Event | PackedRun]:
        """Stored records in order (packed rows as runs); a new read each call."""
        with self.source.reader() as reader:
            yield from reader.records()

    @property
    def events(self) -> EventStream:
        """Every event in seq order, lazily: each iteration is a new read of the log."""
        return EventStream(self.source)

    # -- the fold ----------------------------------------------------------
    def fold(self, at: int | None = None) -> FoldReport:
        """The model's view after event `at` (default: the last event).

        A fold or derive failure is returned in the report, not raised;
        UsageError for `at` beyond the log.
        """
        return fold_report(self.source, at, [_Torn(self)])

    def states(self, seqs: Iterable[int]) -> dict[int, SurfaceState]:
        """The model's view right after each seq, in one read (-1: before any event).

        Raises UsageError for a seq beyond the log, FoldError when the fold
        breaks at or before a wanted seq.
        """
        return states_at(self.source, seqs, [_Torn(self)])

    def state(self, at: int | None = None) -> SurfaceState:
        """The model's view after `at` (default: after the last event); raises FoldError."""
        if at is None:
            index = self.index()
            if index.fold_errors:
                raise index.fold_errors[0]
            return index.final
        return self.states([at])[at]

    # -- the index -----------------------------------------------------------
    def index(self) -> LogIndex:
        """One pass: types, provenance links, shadows, brackets, calls, closers (cached)."""
        if self._index is None:
            self._index = build_index(self.source, [_Torn(self)])
        return self._index

    # -- questions -------------------------------------------------------------
    def calls(self, include_auxiliary: bool = False) -> list[Call]:
        """The model calls, numbered from 1 (auxiliary calls, unnumbered, with `include_auxiliary`)."""
        return self.call_list(include_auxiliary)[0]

    def call_list(self, include_auxiliary: bool = False) -> tuple[list[Call], list[FoldError]]:
        """The model calls, and the events the fold rejected on the way (skipped,
        so the message counts after them leave them out)."""
        if self._index is not None:
            main, auxiliary = self._index.calls, self._index.auxiliary_calls
            rejected = self._index.fold_errors
        else:  # a lighter pass than the index: the calls alone
            tracker = CallTracker()
            run = self._pass([tracker], on_fold_error=STOP)
            main, auxiliary, rejected = tracker.calls, tracker.auxiliary, run.fold_errors
        if include_auxiliary:
            return sorted(main + auxiliary, key=lambda c: c.first_chunk_seq), list(rejected)
        return list(main), list(rejected)

    def request(self, call: int | None = None, *, at: int | None = None) -> Request:
        """The exact request of main-loop call `call` (from 1), or the one built at seq `at`."""
        if call is not None:
            calls = self.calls()
            if not 1 <= call <= len(calls):
                raise UsageError(f"there is no call {call}: the log has {len(calls)} model calls",
                                 path=self.path)
            c = calls[call - 1]
            at_seq, header_seq = c.first_chunk_seq - 1, c.header_seq
            turn, step, first = c.turn, c.step, c.first_chunk_seq
        else:
            index = self.index()
            if at is None:
                at = index.last_seq if index.last_seq is not None else -1
            at_seq = at
            header_seq = max((s for s, t in enumerate(index.types[:at + 1]) if t == "request/header"),
                             default=None)
            turn = step = first = None
        state = self.states([at_seq])[at_seq]
        messages = state.messages()
        header = None
        if header_seq is not None:
            for item in self.records():
                if item.seq == header_seq:
                    data = item.record.get("data")
                    header = data.get("header") if type(data) is dict else None
                    break
        return Request(call, turn, step, first, at_seq, header_seq, header, messages)

    def diff(self, a: int, b: int) -> ViewDiff:
        """The model's view at `a` against `b` (one read)."""
        states = self.states([a, b])
        return diff_states(states[a], states[b])

    def shadows(self, at: int | None = None) -> list[ShadowRecord]:
        """Every replacement up to `at` (default: all), in log order."""
        if at is not None:
            self.states([at])  # checks that `at` is inside the log
        return [r for r in self.index().shadows if at is None or r.seq <= at]

    def brackets(self) -> list[BracketRecord]:
        """One record per compaction id."""
        return list(self.index().brackets)

    def provenance(self, at: int | None = None, *, message: int | None = None,
                   seq: int | None = None) -> list[MessageProvenance]:
        """Where each model message at `at` came from; `message` (from 1) or
        `seq` picks one message."""
        if message is not None and seq is not None:
            raise UsageError("give message or seq, not both")
        node_messages = self.state(at).node_messages()
        rows = message_provenance(node_messages, self.index(), message=message, seq=seq)
        if message is not None and not rows:
            count = sum(1 for _, body in node_messages if body is not None)
            raise UsageError(f"message {message} is not in the view: it has {count} messages (1..{count})")
        if seq is not None and not rows:
            raise UsageError(f"seq {seq} is not a message of the model's view at that point")
        return rows

    def tools(self) -> list[ToolCall]:
        """Every tool call the model asked for (or the log started or answered), in order of first
        mention, with its result, approval, hooks and outcome attached by call id."""
        return list(self.index().tool_calls)

    def spills(self, root=None) -> list[Spill]:
        """Every tool result dsh moved out of the model's view (see `analyses.spills`);
        with `root`, whether each stored file is there."""
        observer = Spills()
        self._pass([observer], on_fold_error=STOP)
        look_up(observer.spills, Path(root) if root is not None else None)
        return observer.spills

    def transcript(self) -> list[Entry]:
        """The conversation as it happened: append-origin messages and replacement markers."""
        return transcript(self.source, [_Torn(self)])

    def query(self, flt: EventFilter | None = None, at: int | None = None, *, sink=None) -> list[EventRow]:
        """The events that pass `flt` (default: all), each classified against
        the view at `at` (default: the end). With `sink`, each row is handed
        to it as it is found and none is kept (a long log's rows hold records)."""
        flt = flt if flt is not None else EventFilter()
        nodes = frozenset(self.state(at).nodes)
        return query_events(self.source, nodes, flt, last=at, observers=[_Torn(self)], sink=sink)

    def inspect(self) -> Health:
        """The health summary: header facts, counts, torn tail, an interrupted last turn."""
        return Health(self.index())

    def stats(self) -> SessionStats:
        """Turns, steps, calls, tools, approvals, compactions, tokens, times."""
        return session_stats(self.source)

    def validate(self) -> FileReport:
        """Every finding of `validate` (with this session's options)."""
        return validate_log(self.source, self.options)

    def to_records(self, at: int | None = None) -> list[dict]:
        """One flat dict per event, ready for pandas or DuckDB:
        seq, line, time (UTC ISO), type, turn, step, surface, op, callId, tool, text."""
        rows = self.query(EventFilter(), at)
        return [{k: v for k, v in row.to_json().items() if k != "record"} for row in rows]


class EventStream:
    """`Session.events`: iterable any number of times, each time a new streaming read."""

    def __init__(self, source: LogSource) -> None:
        self.source = source

    def __iter__(self) -> Iterator[Event]:
        with self.source.reader() as reader:
            yield from reader.events()


def open_session(source, options: Options = DEFAULT) -> Session:
    """Open a log for questions: `dshreplay.open("session.jsonl.zstd")`."""
    return Session(source, options)


__all__ = ["Session", "FoldReport", "LogIndex", "open_session", "Path"]
