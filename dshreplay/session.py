"""A session log as one object: read it, fold it, index it, ask it questions.

`Session` can read its log as many times as a question needs (standard
input is held in memory once, so it can be re-read too). `Session.index()`
makes one pass that drives the fold, the relation checker, the shadow and
call trackers together; the forensic commands are built on it and on
`states()` (the model's view at several seqs, in one more pass).
"""

from __future__ import annotations

import io
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Iterable, Iterator

from dshreplay.analyses.calls import Call, CallTracker, Request
from dshreplay.errors import DeriveError, DshReplayError, FoldError, UsageError
from dshreplay.analyses.provenance import ShadowRecord, ShadowTracker, ViewDiff, diff_states, origins
from dshreplay.io.reader import Event, LogReader, PackedRun, TornTail, resolve_log_path
from dshreplay.analyses.rules import BracketRecord, Closer, RelationChecker
from dshreplay.core.scan import CALLS, FOLD, expanded, not_holding, run_pass, scannable
from dshreplay.core.surface import SURFACE_TYPES, SurfaceFold, SurfaceState, has_message


@dataclass
class LogIndex:
    """What one pass over a log learns (everything but message payloads)."""

    path: str
    header: dict
    encoding: str
    event_count: int = 0
    lines: int = 0
    torn_tail: TornTail | None = None
    types: list = field(default_factory=list)  # seq -> event type
    sources: dict = field(default_factory=dict)  # seq -> tuple of sourceEventSeqs (surface events)
    ops: dict = field(default_factory=dict)  # seq -> "append" or (start, end), for surface events
    shadows: list[ShadowRecord] = field(default_factory=list)
    brackets: list[BracketRecord] = field(default_factory=list)
    closers: list[Closer] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    auxiliary_calls: list[Call] = field(default_factory=list)
    fold_errors: list[FoldError] = field(default_factory=list)  # events the fold rejected (skipped)
    final: SurfaceState | None = None
    counts: Counter = field(default_factory=Counter)
    turns: int = 0
    steps: int = 0

    @property
    def last_seq(self) -> int | None:
        return self.event_count - 1 if self.event_count else None

    def type_of(self, seq: int):
        return self.types[seq] if 0 <= seq < len(self.types) else None

    def origins(self, seq: int) -> list[tuple[int, object]]:
        return origins(seq, self.sources, self.types)


class Session:
    """One dsh session log. `source`: a path, a session directory, or "-"."""

    def __init__(self, source, *, max_bytes: int | None = None, transform=None) -> None:
        self.max_bytes = max_bytes
        self.transform = transform  # applied to every parsed line (see LogReader)
        self._data: bytes | None = None
        if isinstance(source, (str, os.PathLike)) and str(source) == "-":
            self.path = "<stdin>"
            self._data = sys.stdin.buffer.read()
        elif isinstance(source, (bytes, bytearray)):
            self.path = "<bytes>"
            self._data = bytes(source)
        else:
            self._file = resolve_log_path(source)
            self.path = str(self._file)
        self._index: LogIndex | None = None
        self._header: dict | None = None
        self._readers: list[LogReader] = []  # readers not yet closed, for `torn_tail`
        self._torn_tail: TornTail | None = None

    def reader(self) -> LogReader:
        """A fresh reader positioned at the start of the log."""
        if self._data is not None:
            reader = LogReader(io.BufferedReader(io.BytesIO(self._data)), name=self.path,
                               max_bytes=self.max_bytes, transform=self.transform)
        else:
            reader = LogReader(self._file, name=self.path, max_bytes=self.max_bytes, transform=self.transform)
        self._readers = [r for r in self._readers if not self._harvest(r)]
        self._readers.append(reader)
        return reader

    @property
    def torn_tail(self) -> TornTail | None:
        """The torn tail found by a pass that read to the end of the log, if
        any did: the questions answered so far are about the lines before it."""
        self._readers = [r for r in self._readers if not self._harvest(r)]
        return self._torn_tail

    def _harvest(self, reader: LogReader) -> bool:
        """Note the reader's torn tail; True once it is closed (then it can go)."""
        if self._torn_tail is None:
            self._torn_tail = reader.torn_tail
        return reader.closed

    def run_pass(self, profile: str, consume, **options):
        """consume(pass) over the whole log (see `scan.run_pass`): on several
        processes when the log is a large file, else with the sequential reader."""
        return run_pass(self.reader, profile, consume,
                        path=scannable(self._file if self._data is None else None, self.transform), **options)

    @property
    def header(self) -> dict:
        if self._header is None:
            with self.reader() as reader:
                self._header = reader.header
        return self._header

    def records(self) -> Iterator[Event | PackedRun]:
        """Stored records in order (packed rows as runs); a new pass each call."""
        with self.reader() as reader:
            yield from reader.records()

    @property
    def events(self) -> "EventStream":
        """Every event in seq order, lazily: each iteration is a new pass over the log."""
        return EventStream(self)

    def to_records(self, at: int | None = None) -> list[dict]:
        """One flat dict per event, ready for pandas or DuckDB:
        seq, line, time (UTC ISO), type, turn, step, surface, op, text."""
        from dshreplay.analyses.query import EventFilter, query_events
        nodes = frozenset(self.state(at).nodes)
        rows = query_events(self.events, nodes, EventFilter(), last=at)
        return [{k: v for k, v in row.to_json().items() if k != "record"} for row in rows]

    # -- the fold ----------------------------------------------------------
    def states(self, seqs: Iterable[int]) -> dict[int, SurfaceState]:
        """The model's view right after each seq, in one pass (-1: before any event).

        Raises UsageError for a seq beyond the log, FoldError when the fold
        breaks at or before a wanted seq.
        """
        wanted = sorted(set(seqs))
        out: dict[int, SurfaceState] = {}
        if wanted and wanted[0] < -1:
            raise UsageError(f"seq {wanted[0]} is negative: seqs count events from 0", path=self.path)
        if wanted and wanted[0] == -1:
            out[-1] = SurfaceState(-1, (), (), {})
            wanted = wanted[1:]
        if not wanted:
            return out
        return self.run_pass(FOLD, lambda p: self._states(p, wanted, out))

    def _states(self, p, wanted: list[int], given: dict) -> dict[int, SurfaceState]:
        out = dict(given)
        fold = SurfaceFold()
        i = 0
        for item in expanded(p.items, not_holding(wanted)):
            try:
                fold.apply(item)
            except FoldError as exc:
                exc.path = self.path
                raise
            while i < len(wanted) and wanted[i] < fold.next_seq:
                out[wanted[i]] = fold.state(wanted[i])
                i += 1
            if i == len(wanted):
                return out
        last = p.event_count - 1
        end = "it has no events" if last < 0 else f"its last seq is {last}"
        raise UsageError(f"seq {wanted[i]} is beyond the log: {end}", path=self.path)

    def state(self, at: int | None = None) -> SurfaceState:
        """The model's view after `at` (default: after the last event)."""
        if at is None:
            index = self.index()
            if index.fold_errors:
                raise index.fold_errors[0]
            return index.final
        return self.states([at])[at]

    def fold(self, at: int | None = None):
        from dshreplay.api import fold_log
        return fold_log(self, at=at)

    # -- the index -----------------------------------------------------------
    def index(self) -> LogIndex:
        """One pass: types, provenance links, shadows, brackets, calls, closers (cached)."""
        if self._index is None:
            self._index = self._build_index()
        return self._index

    def _build_index(self) -> LogIndex:
        with self.reader() as reader:
            index = LogIndex(self.path, reader.header, reader.encoding)
            fold = SurfaceFold()
            rules = RelationChecker(reader.header)
            shadows = ShadowTracker()
            calls = CallTracker(MessageCount(fold))
            types = index.types
            for item in reader.records():
                if item.row is not None:
                    types.extend(repeat("assistant/chunk", item.count))
                    index.counts["assistant/chunk"] += item.count
                else:
                    kind = item.type
                    types.append(kind)
                    index.counts[kind if kind is not None else "(type not a string)"] += 1
                    if kind in SURFACE_TYPES:
                        rec = item.record
                        sources = rec.get("sourceEventSeqs")
                        if type(sources) is list:
                            index.sources[item.seq] = tuple(s for s in sources if type(s) is int)
                        op = rec.get("surfaceOp")
                        index.ops[item.seq] = (op.get("start"), op.get("end")) if type(op) is dict else op
                    elif kind == "turn/start":
                        index.turns += 1
                    elif kind == "step/start":
                        index.steps += 1
                replacement = None
                try:
                    replacement = fold.apply(item)
                except FoldError as exc:
                    exc.path = self.path
                    index.fold_errors.append(exc)
                    fold.skip(item)
                shadows.observe(item, replacement)
                rules.check(item, replacement)
                calls.observe(item)
            index.event_count = reader.event_count
            index.lines = reader.lines
            index.torn_tail = reader.torn_tail
        rules.finish(index.last_seq)
        index.shadows = shadows.shadows
        index.brackets = list(rules.brackets.values())
        index.closers = rules.closers()
        index.calls = calls.calls
        index.auxiliary_calls = calls.auxiliary
        index.final = fold.state()
        return index

    # -- questions -------------------------------------------------------------
    def calls(self, include_auxiliary: bool = False) -> list[Call]:
        """The model calls (from the index when it exists, else one light pass)."""
        return self.call_list(include_auxiliary)[0]

    def call_list(self, include_auxiliary: bool = False) -> tuple[list[Call], list[FoldError]]:
        """The model calls, and the events the fold rejected on the way (skipped,
        so the message counts after them leave them out)."""
        if self._index is not None:
            main, auxiliary, rejected = self._index.calls, self._index.auxiliary_calls, self._index.fold_errors
        else:
            main, auxiliary, rejected = self.run_pass(CALLS, _track_calls)
        if include_auxiliary:
            return sorted(main + auxiliary, key=lambda c: c.first_chunk_seq), rejected
        return list(main), rejected

    def request(self, call: int | None = None, *, at: int | None = None) -> Request:
        """The exact request of main-loop call `call`, or the one built at seq `at`."""
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
        """The model's view at `a` against `b` (one pass)."""
        states = self.states([a, b])
        return diff_states(states[a], states[b])

    def validate(self, **options):
        """Validate the log (see `dshreplay.analyses.validate`); options as ValidateOptions."""
        from dshreplay.analyses.validate import ValidateOptions, validate_log
        source = self._file if self._data is None else io.BufferedReader(io.BytesIO(self._data))
        return validate_log(source, ValidateOptions(**options), name=self.path, max_bytes=self.max_bytes)


def _track_calls(p) -> tuple[list[Call], list[Call], list[FoldError]]:
    fold = SurfaceFold()
    tracker = CallTracker(MessageCount(fold))
    rejected = []
    # a scan's run the fold would reject is read member by member, as the
    # sequential reader gives it: each member is then rejected (or not) on its own
    for event in expanded(p.items, fold.takes_whole):
        try:
            fold.apply(event)
        except FoldError as exc:
            exc.path = p.path
            rejected.append(exc)
            fold.skip(event)
        tracker.observe(event)
    return tracker.calls, tracker.auxiliary, rejected


class MessageCount:
    """How many model messages the fold's current surface yields, kept up to
    date cheaply: nodes appended since the last call are added; after a
    replacement the surface is counted again. Call it for the count."""

    def __init__(self, fold: SurfaceFold) -> None:
        self.fold = fold
        self.replacements = 0  # replacements the count has seen
        self.counted = 0  # leading nodes counted
        self.total = 0

    def __call__(self) -> int:
        fold = self.fold
        if len(fold.replacements) != self.replacements:
            self.replacements, self.counted, self.total = len(fold.replacements), 0, 0
        nodes, events = fold.nodes, fold.events
        for seq in nodes[self.counted:]:
            try:
                self.total += has_message(events[seq])
            except DeriveError:
                pass
        self.counted = len(nodes)
        return self.total


class EventStream:
    """`Session.events`: iterable any number of times, each time a new streaming pass."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def __iter__(self) -> Iterator[Event]:
        with self.session.reader() as reader:
            yield from reader.events()


def open_session(source, **options) -> Session:
    """Open a log for questions: `dshreplay.open("session.jsonl.zstd")`."""
    return Session(source, **options)


__all__ = ["Session", "LogIndex", "open_session", "DshReplayError", "Path"]
