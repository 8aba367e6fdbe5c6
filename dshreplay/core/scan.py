"""Read one large log on several cores, for passes that need only part of each record.

The sequential reader (`LogReader.records`) is the reference. A parallel pass
splits the log's text into byte windows at line boundaries (a zstd log is
first decompressed, with every check the reader makes, into an unnamed
temporary file). Worker processes read each window with that same reader, run
the per-record checks a pass asks for (`validate`'s schemas), and send back a
summary:

- a run of consecutive events that the pass need not see one by one becomes
  one `Span`, after the worker has checked that their written seqs follow
  each other: for the fold, events off the surface together with the surface
  events it would simply append (noted in `Span.appended`); for calls, also
  the chunks, summed per call in `Span.segments`; for the relation rules, a
  whole step from step/start to step/end when the worker has checked that
  none of its events breaks a rule (`_StepRun`), else the chunks of one step;
- every other event comes back as an `Event` (off the surface: its whole
  record) or a `ScannedEvent`, whose `head` is the record with its message
  text left out (`slim`). A full surface record is read again from the file
  only when someone asks for it (the messages of a final state).

The main process puts real seqs and lines on the summaries, in order, and
drives the one fold and the one set of rules over them. When a pass cannot
treat a span as a whole exactly as it would treat its members (a break in the
seqs, chunks outside the open step), it calls `Span.expand()`, which reads the
span's bytes again with the sequential reader.

Anything unusual while reading a window (a line that is not JSON, a malformed
packed row, a torn tail, a missing final newline) aborts the parallel pass and
the caller reads the log sequentially: every read defect is reported by the
reference path, with the reference wording.
"""

from __future__ import annotations

import io
import itertools
import marshal
import os
from contextlib import contextmanager
from typing import Callable, Iterator

import orjson

from dshreplay.errors import DeriveError, ReadError
from dshreplay.jsvalues import MISSING
from dshreplay.io.reader import ZSTD_MAGIC, Event, LogReader, resolve_log_path
from dshreplay.analyses.rules import RELATED, TURN_EVENTS
from dshreplay.core.surface import SURFACE_TYPES, derive_message

# Process-wide settings; `--jobs` sets "jobs", tests shrink the sizes.
SCAN = {
    "jobs": os.cpu_count() or 1,
    "min_bytes": 8 * 1024**2,  # smaller logs are read sequentially: a pool costs more than it saves
    "window_bytes": 4 * 1024**2,  # the largest window
}

FOLD, CALLS, RELATIONS = "fold", "calls", "relations"  # what a pass must see one by one


class ScanAborted(Exception):
    """A window could not be summarised: read the log sequentially instead."""


# -- what a pass sees ------------------------------------------------------

class Span:
    """`count` consecutive events a pass takes as one item.

    Like a packed run: `seq`, `count`, `line` (of the first event),
    `end_line` (of the last), `declared_seq` (the first event's written seq,
    the rest following it), and for a run of chunks of one step `type`
    "assistant/chunk" with `row_data` {turn, step}; `type` is None for a run
    of mixed events off the surface; "step" with `row_data` {turn, step} for a
    whole step that keeps the relation rules on its own (see `_StepRun`).
    """

    __slots__ = ("seq", "count", "line", "end_line", "type", "row_data", "declared_seq",
                 "seq_pointer", "offset", "end", "_source", "appended", "segments")
    row = "span"
    index_in_row = 0
    presence = None

    def __init__(self, seq, count, line, end_line, type_, row_data, declared, seq_pointer, offset, end,
                 source, appended=(), segments=()):
        self.seq = seq
        self.count = count
        self.line = line
        self.end_line = end_line
        self.type = type_
        self.row_data = row_data
        self.declared_seq = declared
        self.seq_pointer = seq_pointer
        self.offset = offset
        self.end = end
        self._source = source
        self.appended = appended  # (seq, line, offset, type, presence) of members the fold appends
        # the chunk members, per call, in order of their first chunk: (turn, step, first seq,
        # last seq, chunks, [("usage", usage) and ("finish", reason), in order])
        self.segments = segments

    @property
    def last_seq(self) -> int:
        return self.seq + self.count - 1

    def surface_members(self) -> list:
        """The members the fold appends to the surface, as events."""
        source = self._source
        return [ScannedEvent(seq, kind, None, line, offset, presence, source)
                for seq, line, offset, kind, presence in self.appended]

    def expand(self) -> list:
        """The events (and packed runs) the span stands for, read again sequentially."""
        return self._source.read(self.offset, self.end, self.seq, self.line - 1)

    def __repr__(self) -> str:
        return f"Span(seq={self.seq}, count={self.count}, type={self.type!r}, line={self.line})"


class ScannedEvent(Event):
    """An event from a parallel pass: `head` is its slimmed record (None for a
    surface event appended inside a span: then its full record), `record` the
    full one (read again from the log on first use), `presence` what
    `derive_message` said in the worker (True, False or (message, pointer))."""

    __slots__ = ("_head", "presence", "_source", "_full")

    def __init__(self, seq, type_, head, line, offset, presence, source):
        self.seq = seq
        self.type = type_
        self._head = head
        self.line = line
        self.row = None
        self.offset = offset
        self.presence = presence
        self._source = source
        self._full = None

    @property
    def head(self) -> dict:
        return self._head if self._head is not None else self.record

    @property
    def time(self):
        return self.head.get("time", 0)

    @property
    def record(self) -> dict:
        if self._full is None:
            self._full = self._source.record_at(self.offset)
        return self._full


def slim(kind, record: dict) -> dict:
    """The record as the fold, the relation rules and the call tracker read it:
    message text left out, ids, numbers and every envelope field kept."""
    if kind not in SURFACE_TYPES:
        return record
    data = record.get("data")
    if type(data) is not dict:
        return record
    if kind == "user/message":
        data = {k: v for k, v in data.items() if k != "content"}
    else:
        message = data.get("message")
        if type(message) is not dict:
            return record
        content = message.get("content")
        if kind == "assistant/message":
            kept = [{"type": "tool-call", "id": b["id"]} for b in content
                    if type(b) is dict and b.get("type") == "tool-call" and "id" in b] \
                if type(content) is list else None
        else:  # tool/result: the rules read only the first block's isError
            first = content[0] if type(content) is list and content else None
            kept = [{"isError": first["isError"]} if "isError" in first else {}] \
                if type(first) is dict else None
        data = {**data, "message": {**message, "content": kept}}
    return {**record, "data": data}


# -- which events a pass takes in runs ---------------------------------------
# Per window, SPAN_KEYS[pass](notes, check) makes the key function for
# `LogReader.records(collapse=...)`: (seq, line, offset, tag, record, run) ->
# the run the record may join, or None to see it one by one. It first hands
# the record to `check` (validate's per-record checks) when there is one, and
# appends to `notes` what the main process needs of members inside runs.

def _chunk_key(rec, run):
    if run is not None:
        data = run.row_data
    else:
        if "surfaceOp" in rec or "sourceEventSeqs" in rec:
            return None
        data = rec.get("data")
        if type(data) is not dict:
            return None
    turn, step = data.get("turn"), data.get("step")
    if type(turn) is int and type(step) is int:
        return (turn, step)
    return None


_INT = frozenset({int})
_CALL_EVENTS = frozenset({"request/header", "compaction/summary", "session/title-llm-request",
                          "web/deepseek-search-llm-request"})


def _plain_append(seq, line, offset, tag, rec, notes, presence: bool = True) -> bool:
    """Whether the fold would simply append this surface event (given that its
    written seq is its position, which the fold checks for the whole run);
    if so, note what the main process needs of it."""
    declared = rec.get("seq")
    if rec.get("surfaceOp") != "append" or declared.__class__ is not int:
        return False
    raw = rec.get("sourceEventSeqs", MISSING)
    if raw is not MISSING:
        if raw.__class__ is not list:
            return False
        if raw:
            if set(map(type, raw)) != _INT:
                return False
            first, last = raw[0], raw[-1]
            if last - first == len(raw) - 1 and raw == list(range(first, last + 1)):  # a run, the usual
                if first < 0 or last >= declared:
                    return False
            elif min(raw) < 0 or max(raw) >= declared or len(set(raw)) != len(raw):
                return False
        elif tag != "assistant/message":
            return False
    notes.append((seq, line, offset, tag, _presence(Event(seq, tag, rec, line)) if presence else None))
    return True


def _presence(event):
    """What `derive_message` says of a surface event: True, False or (message, pointer)."""
    try:
        return derive_message(event)[0]
    except DeriveError as exc:
        return (exc.message, exc.pointer)


def _fold_keys(notes, segments, check):
    """The FOLD key function for one window: events off the surface and surface
    appends run together (the appends are noted)."""
    surface = SURFACE_TYPES

    def key(seq, line, offset, tag, rec, run):
        if check is not None:
            check(seq, line, tag, rec, run)
        if run is not None:
            return "x"
        if tag in surface:
            # the fold derives messages from full records: no presence needed
            return "x" if _plain_append(seq, line, offset, tag, rec, notes, False) else None
        if "surfaceOp" in rec or "sourceEventSeqs" in rec:
            return None
        return "x"
    return key


def _calls_keys(notes, segments, check):
    """The CALLS key function for one window: like the fold's, with the chunks
    in the runs too, summed per call into `segments` (call key -> [turn, step,
    first seq, last seq, events, marks]); the call key (turn, step, finish
    chunks before) changes after a finish chunk. The worker hands the
    segments to the run they were summed in."""
    finished: dict = {}  # (turn, step) -> finish chunks seen in this window
    last = [None, None]  # the segment the previous chunk went to, and its call key
    surface, call_events, _dict, _int = SURFACE_TYPES, _CALL_EVENTS, dict, int

    def key(seq, line, offset, tag, rec, run):
        if check is not None:
            check(seq, line, tag, rec, run)
        mark = value = None
        if run is not None:
            data, n = run.row_data, run.count
        elif tag == "assistant/chunk":
            if "surfaceOp" in rec or "sourceEventSeqs" in rec:
                return None
            data, n = rec.get("data"), 1
            if data.__class__ is not _dict:
                return None
            chunk = data.get("chunk")
            if chunk.__class__ is not _dict:
                return None
            kind = chunk.get("type")
            if kind == "usage":
                mark, value = kind, chunk.get("usage")
            elif kind == "finish":
                mark, value = kind, chunk.get("reason")
        elif tag in surface:
            return "x" if _plain_append(seq, line, offset, tag, rec, notes) else None
        elif tag not in call_events and "surfaceOp" not in rec and "sourceEventSeqs" not in rec:
            return "x"
        else:
            return None
        turn, step = data.get("turn"), data.get("step")
        if turn.__class__ is not _int or step.__class__ is not _int:
            return None
        segment = last[0]
        if segment is None or segment[0] != turn or segment[1] != step:
            call = last[1] = (turn, step, finished.get((turn, step), 0))
            segment = segments.get(call)
            if segment is None:
                segment = segments[call] = [turn, step, seq, seq, 0, []]
            last[0] = segment
        segment[3] = seq + n - 1
        segment[4] += n
        if mark is not None:
            segment[5].append((mark, value))
            if mark == "finish":
                finished[(turn, step)] = last[1][2] + 1
                last[0] = None
        return "x"

    def take() -> list:
        """The segments summed since the last call, for the run just read."""
        summed = list(segments.values())
        segments.clear()
        last[0] = None
        return summed
    key.take = take
    return key


class _StepRun:
    """One step read in a RELATIONS window, from its step/start: whether it keeps,
    on its own, every rule the relation checker applies inside a step (then the
    main process takes it whole: see `RelationChecker.takes_whole`)."""

    __slots__ = ("id", "turn", "step", "start", "base", "chunks", "pending", "ok", "end")

    def __init__(self, seq: int, turn: int, step: int, declared: int) -> None:
        self.id = 0  # its key
        self.turn, self.step = turn, step
        self.start = seq  # the window's seq of its step/start
        self.base = declared - seq  # written seq minus window seq (the run's seqs follow each other)
        self.chunks: set[int] = set()  # window seqs of its chunks so far
        self.pending: set[str] = set()  # callIds asked and not yet answered
        self.ok = True
        self.end = None  # the window seq of its step/end

    @staticmethod
    def opens(seq: int, rec: dict):
        """The run a step/start record opens, or None if it is not plainly one."""
        data, declared = rec.get("data"), rec.get("seq")
        if data.__class__ is not dict or declared.__class__ is not int or "surfaceOp" in rec \
                or "sourceEventSeqs" in rec:
            return None
        turn, step = data.get("turn"), data.get("step")
        if turn.__class__ is not int or step.__class__ is not int:
            return None
        return _StepRun(seq, turn, step, declared)

    def _names_step(self, data) -> bool:
        if data.__class__ is not dict:
            return False
        turn, step = data.get("turn"), data.get("step")
        return turn.__class__ is int and step.__class__ is int and turn == self.turn and step == self.step

    def add(self, seq, line, offset, tag, rec, run, notes) -> bool:
        """Take one more record of the step; False when it breaks the run
        (the run ends there and is read event by event)."""
        if run is not None:
            if not self._names_step(run.row_data):
                return False
            self.chunks.update(range(seq, seq + run.count))
            return True
        if tag == "assistant/chunk":  # the commonest, first
            if "surfaceOp" in rec or "sourceEventSeqs" in rec or not self._names_step(rec.get("data")):
                return False
            self.chunks.add(seq)
            return True
        if tag in SURFACE_TYPES:
            n = len(notes)
            if not _plain_append(seq, line, offset, tag, rec, notes) or notes[-1][4] is not True:
                del notes[n:]
                return False
            if tag == "user/message":
                return True
            data = rec["data"]
            if not self._names_step(data):
                return False
            if tag == "assistant/message":
                sources = rec.get("sourceEventSeqs")
                if sources.__class__ is list:  # ints, checked by _plain_append
                    base = self.base
                    return self.chunks.issuperset([s - base for s in sources])
                return True
            message = data.get("message")  # a tool/result: it must answer a call of this step
            source = message.get("source") if message.__class__ is dict else None
            call_id = source.get("callId") if source.__class__ is dict else None
            if call_id.__class__ is not str or call_id not in self.pending:
                return False
            self.pending.discard(call_id)
            return True
        if tag.__class__ is not str or "surfaceOp" in rec or "sourceEventSeqs" in rec:
            return False
        if tag == "tool/call":
            data = rec.get("data")
            call_id = data.get("callId") if data.__class__ is dict else None
            if not self._names_step(data) or call_id.__class__ is not str or call_id in self.pending:
                return False
            self.pending.add(call_id)
            return True
        if tag == "step/end":
            if not self._names_step(rec.get("data")) or self.pending:
                return False
            self.end = seq
            return True
        # an event the rules look at only outside a step (in an open turn, which
        # this is), or not at all
        return tag in TURN_EVENTS or tag not in RELATED


def _relations_keys(notes, segments, check):
    """The RELATIONS key function for one window: a step that keeps the rules
    on its own (a `_StepRun`, keyed by an int) runs together, from step/start
    to step/end; otherwise the chunks of one step run together. The worker
    asks `key.step_run(key)` for a run's verdict."""
    runs: dict = {}  # int key -> _StepRun, until the worker asks for it
    current = [None]
    ids = itertools.count()

    def key(seq, line, offset, tag, rec, run):
        if check is not None:
            check(seq, line, tag, rec, run)
        step = current[0]
        if step is None:
            if tag == "step/start" and run is None:
                step = _StepRun.opens(seq, rec)
                if step is not None:
                    step.id = next(ids)
                    runs[step.id] = current[0] = step
                    return step.id
            return _chunk_key(rec, run) if run is not None or tag == "assistant/chunk" else None
        if not step.add(seq, line, offset, tag, rec, run, notes):
            step.ok = False
            current[0] = None
        elif step.end is not None:
            current[0] = None
        return step.id
    key.step_run = runs.pop
    return key


def _chunk_runs(notes, segments, check):
    """Only the chunks of one step run together: how a step run that broke a
    rule is read again."""
    def key(seq, line, offset, tag, rec, run):
        return _chunk_key(rec, run) if run is not None or tag == "assistant/chunk" else None
    return key


SPAN_KEYS = {FOLD: _fold_keys, CALLS: _calls_keys, RELATIONS: _relations_keys}


def _envelope(kind, record: dict) -> dict:
    """A surface event as the fold reads it: everything but `data`."""
    if kind in SURFACE_TYPES:
        return {k: v for k, v in record.items() if k != "data"}
    return record


HEADS = {FOLD: _envelope, CALLS: _envelope, RELATIONS: slim}


# -- the source: where records are read again --------------------------------

class _Source:
    """The plain text a parallel pass reads: the log itself, or a decompressed copy."""

    def __init__(self, path: str, name: str, keep=None) -> None:
        self.path = path
        self.name = name
        self._keep = keep  # the temporary text (_TemporaryText), removed when the last reference goes

    def read(self, start: int, end: int, seq: int, line: int) -> list:
        with open(self.path, "rb") as fh:
            reader = LogReader(fh, name=self.name, window=(start, end, seq, line))
            return list(reader.records())

    def record_at(self, offset: int) -> dict:
        with open(self.path, "rb") as fh:
            fh.seek(offset)
            return orjson.loads(fh.readline())


def _windows(path: str, start: int, size: int, want: int) -> list[tuple[int, int]]:
    """Split bytes start..size into about `want`-byte windows ending at newlines."""
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


# -- the worker ------------------------------------------------------------

def _scan_window(job):
    """Summarise one window; None when something in it needs the sequential reader."""
    path, name, start, end, profile, checker_factory = job
    notes: list = []  # (seq, line, offset, type, presence) of surface appends inside runs
    segments: dict = {}  # the calls' chunks summed since the last run was handed out
    checker = checker_factory() if checker_factory is not None else None
    key_of = SPAN_KEYS[profile](notes, segments, checker.check if checker is not None else None)
    head_of = HEADS[profile]
    take = getattr(key_of, "take", None)
    step_run = getattr(key_of, "step_run", None)
    out = []
    append = out.append
    taken = 0  # notes handed out so far

    def summarise(items):
        nonlocal taken
        for item in items:
            if item.__class__ is tuple:  # a collapsed run; MISSING does not survive pickling
                seq, count = item[0], item[1]
                members = []
                while taken < len(notes) and notes[taken][0] < seq + count:
                    if notes[taken][0] >= seq:  # (a note of an event read one by one is dropped)
                        members.append(notes[taken])
                    taken += 1
                declared = None if item[5] is MISSING else item[5]
                if item[4].__class__ is int:  # a step run (RELATIONS)
                    run = step_run(item[4], None)
                    if run is not None and run.ok and run.start == seq and run.end == seq + count - 1:
                        append((3, *item[:4], run.turn, run.step, declared, *item[6:], members))
                    else:  # it broke a rule (or a window's edge, or a seq break): event by event
                        with open(path, "rb") as again:
                            reader = LogReader(again, name=name, window=(item[7], item[8], seq, item[2] - 1))
                            summarise(reader.records(collapse=_chunk_runs(None, None, None)))
                    continue
                summed = take() if take is not None else []
                if any(g[2] < seq or g[3] >= seq + count for g in summed):
                    raise ScanAborted()  # chunks summed across a run's edge (a seq break)
                append((0, *item[:5], declared, *item[6:], members, summed))
            elif item.row is not None:
                append((2, item.seq, item.line, item.offset))  # read again in the main process
            else:
                kind = item.type
                surface = kind in SURFACE_TYPES
                presence = _presence(item) if surface and profile != FOLD else None
                head = head_of(kind, item.record)
                sources = head.get("sourceEventSeqs") if surface else None
                if sources.__class__ is list and len(sources) > 2 and sources[0].__class__ is int \
                        and sources == list(range(sources[0], sources[0] + len(sources))):
                    head["sourceEventSeqs"] = (sources[0], sources[0] + len(sources))  # a run of seqs
                append((1, item.seq, item.line, kind, head, item.offset, presence))

    try:
        with open(path, "rb") as fh:
            reader = LogReader(fh, name=name, window=(start, end, 0, 0))
            summarise(reader.records(collapse=key_of))
    except (ReadError, ScanAborted):
        return None
    if reader.torn_tail is not None or not reader.final_newline:
        return None
    # marshal: the cheapest wire format for these plain values (half pickle's load time)
    return reader.event_count, reader.lines, marshal.dumps(out), checker


def expanded(items, whole: Callable) -> Iterator:
    """The items, each span that `whole(span)` refuses read member by member.

    `whole` is asked as each span comes, so it may look at the state the
    consumer has built from the items before it."""
    for item in items:
        if item.row == "span" and not whole(item):
            yield from item.expand()
        else:
            yield item


def not_holding(wanted: list[int]) -> Callable:
    """For `expanded`: a span may be taken whole unless it appends to the surface
    and holds a wanted seq before its last (the view right after that seq must
    not hold the span's later appends). `wanted` ascending; spans come in order."""
    i = 0

    def whole(span) -> bool:
        nonlocal i
        if not span.appended:
            return True
        while i < len(wanted) and wanted[i] < span.seq:
            i += 1
        return not (i < len(wanted) and wanted[i] < span.seq + span.count - 1)
    return whole


# -- the pass, as its callers see it -------------------------------------------

class Pass:
    """One read of a log: `header`, then `items` (an iterator, once); after
    it, `event_count`, `lines`, `torn_tail`, `final_newline`, and `checkers`
    (the per-record checker state, one per window, with the seq and line
    offsets to put on what it found)."""

    def __init__(self, path: str, header: dict, header_line: int, encoding: str) -> None:
        self.path = path
        self.header = header
        self.header_line = header_line
        self.encoding = encoding
        self.items: Iterator = iter(())
        self.event_count = 0
        self.lines = 0
        self.torn_tail = None
        self.final_newline = True
        self.checkers: list[tuple[object, int, int]] = []


def parallel_possible(size: int) -> bool:
    if SCAN["jobs"] <= 1 or size < SCAN["min_bytes"]:
        return False
    import multiprocessing  # here, not at start-up: small logs never need it
    return not multiprocessing.current_process().daemon and start_method() is not None


def start_method() -> str | None:
    """fork, the cheapest, from a single-threaded process; else a fork server
    (a child forked while another thread holds a lock can deadlock, and a Dask
    client or worker runs threads)."""
    import multiprocessing
    import threading
    methods = multiprocessing.get_all_start_methods()
    if threading.active_count() == 1 and "fork" in methods:
        return "fork"
    return "forkserver" if "forkserver" in methods else None


def _text_size(path: str) -> int:
    """The log's size as text (a zstd log's guessed at five times the file)."""
    try:
        with open(path, "rb") as fh:
            zstd = fh.read(4) == ZSTD_MAGIC
        return os.path.getsize(path) * (5 if zstd else 1)
    except OSError:
        return 0  # the reader says why it cannot be read


@contextmanager
def sequential_pass(reader: LogReader, checker=None, recover: Callable | None = None):
    """The reference pass: every record from the reader, checked in order."""
    with reader:
        p = Pass(reader.path, reader.header, reader.header_line, reader.encoding)
        if checker is not None:
            p.checkers.append((checker, 0, 0))

        def items():
            for item in reader.records(recover):
                if checker is not None:
                    if item.row is None:
                        checker.check(item.seq, item.line, item.type, item.record, None)
                    else:
                        checker.check(item.seq, item.line, item.row, item.row_record, item)
                yield item
            p.event_count, p.lines = reader.event_count, reader.lines
            p.torn_tail, p.final_newline = reader.torn_tail, reader.final_newline

        p.items = items()
        yield p


@contextmanager
def parallel_pass(reader: LogReader, path: str, profile: str, checker_factory=None):
    """A pass over the log file `path` on several processes (see the module
    docstring). Raises ScanAborted (from `items`, or at once for a zstd log
    whose text cannot be read) when the sequential reader must take over."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    # an executor, not multiprocessing.Pool: a worker that dies breaks the
    # pass (and the log is read sequentially) instead of hanging it
    context = get_context(start_method())
    if context.get_start_method() == "forkserver":
        context.set_forkserver_preload(["dshreplay.analyses.validate"])
    pool = ProcessPoolExecutor(SCAN["jobs"], mp_context=context)
    keep = None
    try:
        with reader:
            name, encoding = reader.path, reader.encoding
            if encoding == "zstd":
                # decompress into a temporary plain copy; windows go to the
                # workers as soon as their text is written
                keep, futures, start = _decompress(reader, pool, name, profile, checker_factory)
                path = keep.name
                try:
                    with LogReader(path) as text:
                        header, header_line = text.header, text.header_line
                except ReadError:
                    raise ScanAborted() from None  # the sequential reader says it, naming the log
                if text.body_offset != start:
                    raise ScanAborted()
            else:
                header, header_line = reader.header, reader.header_line
                size = os.path.getsize(path)
                futures = [pool.submit(_scan_window, (path, name, a, b, profile, checker_factory))
                           for a, b in _windows(path, reader.body_offset, size, _window_bytes(size))]
        p = Pass(name, header, header_line, encoding)
        p.items = _items(p, _results(futures), _Source(path, name, keep), header_line)
        yield p
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _window_bytes(size: int) -> int:
    """About four windows per process (so that none waits long for the last), 1 to 4 MiB each."""
    return min(SCAN["window_bytes"], max(size // (4 * SCAN["jobs"]), 1 << 20))


def _decompress(reader: LogReader, pool, name: str, profile: str, checker_factory):
    """Write a zstd log's checked text to a temporary file, handing each
    window (after the header line) to the pool as it fills. A defect in the
    log, or a temporary file that cannot be written (no space left), aborts:
    the sequential reader needs no disk."""
    try:
        tmp = _TemporaryText()
    except OSError:
        raise ScanAborted() from None
    futures = []
    start = pos = body = None  # the window being filled; None until the header line is written
    head = b""
    want = _window_bytes(os.path.getsize(reader._fh.name) * 5)  # text is about 5 times the zstd
    try:
        for text in reader.zstd_text(count_lines=False):  # a defect aborts: the reader reports it
            tmp.write(text)
            if start is None:  # the body starts after the first line that is not blank
                head += text
                offset = 0
                for line in io.BytesIO(head).readlines():
                    offset += len(line)
                    if line.strip() and line.endswith(b"\n"):
                        start = body = offset
                        break
                pos = len(head)
                if start is None:
                    continue
            else:
                pos += len(text)
            if pos - start >= want:
                tmp.flush()
                futures.append(pool.submit(_scan_window, (tmp.name, name, start, pos, profile, checker_factory)))
                start = pos
        tmp.flush()
    except (ReadError, OSError):
        tmp.remove()
        raise ScanAborted() from None
    if reader.torn_tail is not None or start is None:
        tmp.remove()
        raise ScanAborted()
    if pos > start or not futures:
        futures.append(pool.submit(_scan_window, (tmp.name, name, start, pos, profile, checker_factory)))
    return tmp, futures, body


def _results(futures) -> Iterator:
    from concurrent.futures.process import BrokenProcessPool
    try:
        for future in futures:
            yield future.result()
    except BrokenProcessPool:
        raise ScanAborted() from None


def _items(p: Pass, results, source: _Source, header_line: int) -> Iterator:
    seq, line = 0, header_line
    for result in results:
        if result is None:
            raise ScanAborted()
        count, lines, out, checker = result
        out = marshal.loads(out)
        if checker is not None:
            p.checkers.append((checker, seq, line))
        for t in out:
            if t[0] == 0:
                _, s, n, first, last, key, declared, pointer, offset, end, members, segments = t
                declared = MISSING if declared is None else declared
                if key.__class__ is tuple:  # the chunks of one step
                    yield Span(seq + s, n, line + first, line + last, "assistant/chunk",
                               {"turn": key[0], "step": key[1]}, declared, pointer, offset, end, source)
                else:  # events off the surface, surface appends, chunks
                    yield Span(seq + s, n, line + first, line + last, None, None, declared, pointer, offset,
                               end, source, [(seq + m[0], line + m[1], *m[2:]) for m in members],
                               [(*g[:2], seq + g[2], seq + g[3], *g[4:]) for g in segments])
            elif t[0] == 3:  # a step, keeping the rules on its own
                _, s, n, first, last, turn, step, declared, pointer, offset, end, members = t
                yield Span(seq + s, n, line + first, line + last, "step", {"turn": turn, "step": step},
                           MISSING if declared is None else declared, pointer, offset, end, source,
                           [(seq + m[0], line + m[1], *m[2:]) for m in members])
            elif t[0] == 1:
                _, s, ln, kind, head, offset, presence = t
                if kind not in SURFACE_TYPES:  # sent whole
                    yield Event(seq + s, kind, head, line + ln, None, offset)
                    continue
                sources = head.get("sourceEventSeqs")
                if sources.__class__ is tuple:  # never a JSON value: a run of seqs, sent short
                    head["sourceEventSeqs"] = list(range(*sources))
                yield ScannedEvent(seq + s, kind, head, line + ln, offset, presence, source)
            else:
                _, s, ln, offset = t
                yield from source.read(offset, offset + 1, seq + s, line + ln - 1)
        seq += count
        line = line + lines if lines else line
    p.event_count = seq
    p.lines = line


class _TemporaryText:
    """A zstd log's text, written to a temporary file that the process which
    made it removes when the last reference goes (or at exit). Forked workers
    inherit this object; they never remove the file."""

    def __init__(self) -> None:
        import tempfile
        import weakref
        fd, self.name = tempfile.mkstemp(prefix="dshreplay-", suffix=".jsonl")
        self._file = os.fdopen(fd, "wb")
        self.write = self._file.write
        self._finalizer = weakref.finalize(self, _remove, self.name, os.getpid())

    def flush(self) -> None:
        self._file.flush()

    def remove(self) -> None:
        try:
            self._file.close()  # (flushes what is left, which may fail again)
        except OSError:
            pass
        self._finalizer()


def _remove(path: str, owner: int) -> None:
    if os.getpid() == owner:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def scannable(source, transform=None) -> str | None:
    """The file a pass may read in windows: a log named by a path (not standard
    input) and read without a transform; else None."""
    if transform is not None or not isinstance(source, (str, os.PathLike)) or str(source) == "-":
        return None
    return str(resolve_log_path(source))


def run_pass(reader_factory: Callable[[], LogReader], profile: str, consume: Callable, *,
             checker_factory=None, recover=None, path: str | None = None):
    """consume(pass) on a parallel pass when it pays, else (or when it aborts) on the reference one.

    `path`: the log file, when the log is a file that may be read in windows.
    `consume` must start from scratch each time it is called.
    """
    if path is not None and parallel_possible(_text_size(path)):
        try:
            with parallel_pass(reader_factory(), path, profile, checker_factory) as p:
                return consume(p)
        except ScanAborted:
            pass
    checker = checker_factory() if checker_factory is not None else None
    with sequential_pass(reader_factory(), checker, recover) as p:
        return consume(p)
