"""The library: one log as a `Session` object, every question as a method.

`dshreplay.open(path)` returns a Session. Each method reads the log through
the one reader, fold and pass driver (`core.driver`), and returns a
documented dataclass; nothing here prints or knows of the command line.
Errors speak of seqs and arguments: `UsageError` for a question that does
not fit the log, `ReadError` for a log that cannot be read, `NoViewError` (a
`FoldError`) for a question that needs the model's view past the point where
the fold fails.

When the fold fails (dsh refuses the log: an event it rejects, or a line that
cannot be read), what each question does is declared once, in
`WHEN_THE_FOLD_FAILS` (docs/guide/damaged-logs.md shows it): answered for the events
before the failure (PREFIX: the answer is complete up to `answered_up_to`, and
`Session.partial` names the failure until the next question), or not at all
(NEEDS_VIEW: NoViewError), or from every line, the fold aside (EVERY_LINE).
A question about a seq before the failure is answered in full either way.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dshreplay._jsvalues import as_text
from dshreplay.core.driver import STOP, FoldReport, Observer, Run, fold_report, run_pass, states_at
from dshreplay.core.surface import SURFACE_TYPES, SurfaceState
from dshreplay.errors import DshReplayError, FoldError, LineError, NoViewError, UsageError
from dshreplay.io.reader import Event, Item, LogSource, TornTail, Transform
from dshreplay.options import DEFAULT, Options
from dshreplay.results.listing import Fold, Rows

if TYPE_CHECKING:  # each question imports its analyses when asked: `fold` starts without the others
    from dshreplay.analyses.query import EventFilter, EventRow, RawLine
    from dshreplay.analyses.spans import SessionTimeline
    from dshreplay.analyses.trackers.calls import Call, Request
    from dshreplay.analyses.trackers.compaction import BracketRecord
    from dshreplay.analyses.trackers.logindex import LogIndex
    from dshreplay.analyses.trackers.provenance import MessageProvenance, ShadowRecord, ViewDiff
    from dshreplay.analyses.trackers.spills import Spill
    from dshreplay.analyses.trackers.toolcalls import ToolCall
    from dshreplay.analyses.transcript import Entry
    from dshreplay.core._mapper import Mapper
    from dshreplay.results.inspection import Inspection
    from dshreplay.results.records import Redaction
    from dshreplay.results.summaries import Lineage, Stats, Validation

__all__ = ["Session", "EventStream", "FoldReport", "Fold", "Rows", "LogIndex", "open_session",
           "WHEN_THE_FOLD_FAILS", "lineage", "PREFIX", "NEEDS_VIEW", "EVERY_LINE"]

Source = str | os.PathLike[str] | bytes  # what a Session reads: a path, a session folder, "-", or the bytes of a log

PREFIX = "prefix"  # answered for the events before the failure; the answer says how far (answeredUpTo)
NEEDS_VIEW = "needs-view"  # needs the model's view past the failure: no answer (NoViewError, exit 1)
EVERY_LINE = "every-line"  # does not rest on the fold: answered from every line

# What each question does when the fold fails: library method (and command), then each
# part of an export bundle. A question about a seq before the failure is answered in
# full whatever its entry says.
WHEN_THE_FOLD_FAILS: dict[str, str] = {
    "fold": NEEDS_VIEW,  # Session.fold, `fold [--at S]`: the view at S (default: the end)
    "states": NEEDS_VIEW,  # Session.states / state, `diff`
    "request": NEEDS_VIEW,  # Session.request, `request --call N | --at S`
    "provenance": NEEDS_VIEW,  # Session.provenance, `provenance`
    "calls": PREFIX,  # Session.calls / call_list, `request --list`
    "shadows": PREFIX,  # `shadows`
    "brackets": PREFIX,  # `brackets` (a bracket open at the failure: status "unknown")
    "spills": PREFIX,  # `spills`
    "tools": PREFIX,  # Session.tools (a call whose result lies past the failure: outcome "unread")
    "transcript": PREFIX,  # `transcript`: ends with a marker where the fold fails
    "query": PREFIX,  # Session.query / to_records, `events`: classified at the last answered seq
    "inspect": PREFIX,  # `inspect`: the turn in force at the failure is unknown, not interrupted
    "stats": PREFIX,  # `stats` (JSON: answeredUpTo and error per session)
    "timeline": PREFIX,  # Session.timeline, `timeline`, `otel`: the spans of the events before the failure
    "validate": EVERY_LINE,  # `validate`: the failure is a finding, checking goes on
    "lines": EVERY_LINE,  # `events --lines A-B`: raw lines, readable or not
    "export findings.json": EVERY_LINE,
    "export events.csv": EVERY_LINE,  # every event; its surface column only up to the failure (then empty)
    "export tools.csv, approvals.csv, session.json, spills.json, brackets.json": EVERY_LINE,
    "export calls.jsonl": NEEDS_VIEW,  # every call listed; after the failure "view": null and the reason
    "export shadows.json": PREFIX,
    "export transcript.md": PREFIX,  # as `transcript`
    "index": EVERY_LINE,  # `index`: every line's rows; the session row says answered_up_to
    "usage": EVERY_LINE,  # `usage`: the calls' tokens and failures are line facts
}


class _Facts(Observer):
    """Notes what every pass learns of the log itself: a torn tail, how many events it
    holds (a pass that reads to the end), where the fold fails."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def finish(self, run: Run) -> None:
        session = self.session
        if run.torn_tail is not None:
            session.torn_tail = run.torn_tail
        if run.complete:
            session.events_read = run.event_count
        if run.failure is not None:
            session.fold_failure = run.failure


class Session:
    """One dsh session log. `source`: a path, a session folder, "-" (standard
    input, held in memory) or bytes; `options`: how to read it.

    `partial` is set by a question answered only up to the point where the fold
    fails (a PREFIX question of `WHEN_THE_FOLD_FAILS`): that point's error
    (`answered_for(session.partial)` says it in words); None after a complete answer."""

    def __init__(self, source: Source, options: Options = DEFAULT, *,
                 transform: Transform | None = None) -> None:
        self.options = options
        self.source = LogSource(source, options, transform=transform)
        self.path = self.source.path
        self.torn_tail: TornTail | None = None  # set by any pass that read up to a torn tail
        self.partial: DshReplayError | None = None  # the failure the last answer stops at (PREFIX)
        self.events_read: int | None = None  # how many events the log holds, once a pass read it whole
        self.fold_failure: DshReplayError | None = None  # where the fold fails, once a pass got there
        self._index: LogIndex | None = None
        self._header: dict[str, Any] | None = None

    def __repr__(self) -> str:
        """The path, and what the questions asked so far learned (a repr reads nothing)."""
        failure = self.fold_failure
        if failure is not None:
            fold = f"fold fails at seq {failure.seq} (answered up to seq {(failure.seq or 0) - 1})"
        else:
            fold = "fold ok" if self.events_read is not None else "not read yet"
        events = "" if self.events_read is None else f"{self.events_read} events, "
        return f"<Session {self.path!r}: {events}{fold}>"

    def _pass(self, observers: Iterable[Observer] = (), **kwargs: Any) -> Run:
        return run_pass(self.source, [*observers, _Facts(self)], **kwargs)

    def _answered(self, question: str, failure: DshReplayError | None, at: int | None = None,
                  what: str | None = None) -> None:
        """Apply `WHEN_THE_FOLD_FAILS[question]` to an answer whose pass met `failure` (or
        None): a question about `at` before the failure is answered in full; else a PREFIX
        answer notes the failure in `partial` and a NEEDS_VIEW one raises NoViewError."""
        self.partial = None
        if failure is None or (at is not None and failure.seq is not None and at < failure.seq):
            return
        if WHEN_THE_FOLD_FAILS[question] == NEEDS_VIEW:
            where = "at the end of the log" if at is None else f"at seq {at}"
            raise NoViewError(what or f"the model's view {where}", failure, path=self.path)
        self.partial = failure

    @property
    def header(self) -> dict[str, Any]:
        if self._header is None:
            with self.source.reader() as reader:
                self._header = reader.header
        return self._header

    def records(self) -> Iterator[Item]:
        """Stored records in order (packed rows as runs); a new read each call."""
        with self.source.reader() as reader:
            yield from reader.records()

    @property
    def events(self) -> EventStream:
        """Every event in seq order, lazily: each iteration is a new read of the log."""
        return EventStream(self.source)

    # -- the fold ----------------------------------------------------------
    def fold(self, at: int | None = None) -> Fold:
        """The model's view after event `at` (default: the last event): a `FoldReport`
        whose `to_json()` is `fold --json`'s.

        A failure is returned in the report, not raised: a NoViewError when the fold
        fails at or before `at` (a derive failure as it is); UsageError for `at`
        beyond the log.
        """
        report = fold_report(self.source, at, [_Facts(self)])
        if isinstance(report.error, (FoldError, LineError)):
            try:
                self._answered("fold", report.error, at)
            except NoViewError as exc:
                report.error = exc
        return Fold.of(report)

    def states(self, seqs: Iterable[int]) -> dict[int, SurfaceState]:
        """The model's view right after each seq, in one read (-1: before any event).

        Raises UsageError for a seq beyond the log, NoViewError when the fold
        fails at or before a wanted seq.
        """
        return self._states(seqs)

    def _states(self, seqs: Iterable[int], observers: Iterable[Observer] = ()) -> dict[int, SurfaceState]:
        seqs = list(seqs)
        try:
            states = states_at(self.source, seqs, [*observers, _Facts(self)])
        except (FoldError, LineError) as failure:
            self._answered("states", failure, max(seqs))
            raise
        self.partial = None
        return states

    def state(self, at: int | None = None) -> SurfaceState:
        """The model's view after `at` (default: after the last event); raises NoViewError
        when the fold fails at or before it."""
        if at is None:
            index = self.index()
            self._answered("states", _failure(index))
            assert index.final is not None  # (a fold that holds to the end has its final view)
            return index.final
        return self.states([at])[at]

    # -- the index -----------------------------------------------------------
    def index(self) -> LogIndex:
        """One pass: types, provenance links, shadows, brackets, calls, closers (cached).
        When the fold fails, the index of the events before the failure (its
        `fold_errors[0]` is the failure)."""
        if self._index is None:
            from dshreplay.analyses.trackers.logindex import build_index
            self._index = build_index(self.source, [_Facts(self)])
        return self._index

    # -- questions -------------------------------------------------------------
    def calls(self, include_auxiliary: bool = False) -> Rows[Call]:
        """The model calls, numbered from 1 (auxiliary calls, unnumbered, with `include_auxiliary`);
        `to_json()` as `request --list --json` (`--all`)."""
        return Rows(self.call_list(include_auxiliary)[0], "calls", self.partial)

    def call_list(self, include_auxiliary: bool = False) -> tuple[list[Call], list[FoldError | LineError]]:
        """The model calls, and the failure the list stops at (empty: none)."""
        if self._index is not None:
            main, auxiliary = self._index.calls, self._index.auxiliary_calls
            rejected = self._index.fold_errors
        else:  # a lighter pass than the index: the calls alone
            from dshreplay.analyses.trackers.calls import CallTracker
            tracker = CallTracker()
            run = self._pass([tracker], on_fold_error=STOP)
            main, auxiliary, rejected = tracker.calls, tracker.auxiliary, run.fold_errors
        self._answered("calls", rejected[0] if rejected else None)
        if include_auxiliary:
            return sorted(main + auxiliary, key=_first_chunk), list(rejected)
        return list(main), list(rejected)

    def request(self, call: int | None = None, *, at: int | None = None) -> Request:
        """The exact request of main-loop call `call` (from 1), with its outcome; or the one
        built right after seq `at`, with the turn and step in force there."""
        from dshreplay.analyses._render import counted
        from dshreplay.analyses.trackers.calls import Request
        from dshreplay.analyses.trackers.turns import TurnTracker
        if call is not None:
            calls, stopped = self.call_list()
            if not 1 <= call <= len(calls):
                if stopped:
                    after = calls[-1].first_chunk_seq if calls else None
                    self._answered("request", stopped[0], what=f"there is no call {call} before the failure: "
                                   f"{counted(len(calls), 'model call')} before it" + ("" if after is None else
                                                                       f" (the last starts at seq {after})"))
                raise UsageError(f"there is no call {call}: the log has {counted(len(calls), 'model call')}",
                                 path=self.path)
            c = calls[call - 1]
            at_seq, header_seq = _first_chunk(c) - 1, c.header_seq
            messages = self.states([at_seq])[at_seq].messages()
            return Request.of_call(c, self._header_at(header_seq), messages, self._torn_tail_json())
        index = self.index()
        if at is None:
            self._answered("request", _failure(index), what="the request at the end of the log")
            at = index.last_seq if index.last_seq is not None else -1
        header_seq = max((s for s, t in enumerate(index.types[:at + 1]) if t == "request/header"), default=None)
        turns = TurnTracker()
        messages = self._states([at], [turns])[at].messages()
        turn, step = turns.in_force_after()
        return Request(None, turn, step, None, at, header_seq, self._header_at(header_seq), messages,
                       torn_tail=self._torn_tail_json())

    def _torn_tail_json(self) -> dict[str, int] | None:
        """The torn tail the passes of an answer read up to (the one the warning tells), as JSON."""
        return None if self.torn_tail is None else self.torn_tail.to_json()

    def _header_at(self, seq: int | None) -> Any:
        """The header the request/header event at `seq` logs (None: no such event)."""
        if seq is not None:
            for item in self.records():
                if item.seq == seq and isinstance(item, Event):
                    data = item.record.get("data")
                    return data.get("header") if type(data) is dict else None
        return None

    def diff(self, a: int, b: int) -> ViewDiff:
        """The model's view at `a` against `b` (one read)."""
        from dshreplay.analyses.trackers.provenance import diff_states
        states = self.states([a, b])
        return diff_states(states[a], states[b])

    def shadows(self, at: int | None = None) -> Rows[ShadowRecord]:
        """Every replacement up to `at` (default: all), in log order."""
        index = self.index()
        failure = _failure(index)
        if at is not None and (failure is None or at < (failure.seq or 0)):
            self.states([at])  # checks that `at` is inside the log
        rows = [r for r in index.shadows if at is None or r.seq <= at]
        self._answered("shadows", failure, at)
        return Rows(rows, "replacements", self.partial)

    def brackets(self) -> Rows[BracketRecord]:
        """One record per compaction id (one still open where the fold fails: status "unknown")."""
        index = self.index()
        failure = _failure(index)
        records = list(index.brackets)
        if failure is not None:
            records = [replace(b, status="unknown") if b.status == "open" else b for b in records]
        self._answered("brackets", failure)
        return Rows(records, "brackets", self.partial)

    def provenance(self, at: int | None = None, *, message: int | None = None,
                   seq: int | None = None) -> Rows[MessageProvenance]:
        """Where each model message at `at` came from; `message` (from 1) or
        `seq` picks one message."""
        if message is not None and seq is not None:
            raise UsageError("give message or seq, not both")
        from dshreplay.analyses.trackers.provenance import message_provenance
        state = self.state(at)
        node_messages = state.node_messages()
        index = self.index()
        rows = message_provenance(node_messages, index, message=message, seq=seq)
        self.partial = None
        if message is not None and not rows:
            count = sum(1 for _, body in node_messages if body is not None)
            raise UsageError(f"message {message} is not in the view: it has {count} messages (1..{count})")
        if seq is not None and not rows:
            raise UsageError(_not_in_view(seq, state.seq, index))
        return Rows(rows, "messages")

    def tools(self) -> Rows[ToolCall]:
        """Every tool call the model asked for (or the log started or answered), in order of first
        mention, with its result, approval, hooks and outcome attached by call id (up to where
        the fold fails: a call whose result lies past it has outcome "unread")."""
        index = self.index()
        self._answered("tools", _failure(index))
        return Rows(list(index.tool_calls), "tool calls", self.partial)

    def spills(self, root: str | Path | None = None) -> Rows[Spill]:
        """Every tool result dsh moved out of the model's view (see `analyses.spills`);
        with `root`, whether each stored file is there."""
        from dshreplay.analyses.trackers.spills import Spills, look_up
        observer = Spills()
        run = self._pass([observer], on_fold_error=STOP)
        look_up(observer.spills, Path(root) if root is not None else None)
        self._answered("spills", run.failure)
        return Rows(observer.spills, "spills", self.partial)

    def transcript(self, reasoning: bool = False) -> Rows[Entry]:
        """The conversation as it happened: append-origin messages and replacement markers
        (and a last marker where the fold fails); the model's reasoning only with `reasoning`."""
        from dshreplay.analyses.transcript import transcript
        entries, failure = transcript(self.source, [_Facts(self)], reasoning)
        self._answered("transcript", failure if isinstance(failure, DshReplayError) else None)
        return Rows(entries, "entries", self.partial)

    def query(self, flt: EventFilter | None = None, at: int | None = None, *,
              sink: Callable[[EventRow], None] | None = None, **filters: Any) -> Rows[EventRow]:
        """The events that pass `flt` (default: all), or the filter given as keywords
        (`s.query(type="tool/", since="2026-06-02T07:09:00Z")`: see `EventFilter`), each
        classified against the view at `at` (default: the end); `to_json()` as `events --json`.
        With `sink`, each row is handed to it as it is found and none is kept (a long log's
        rows hold records). When the fold fails at or before `at`, the events before the
        failure, classified against the view before it. A filter that can match nothing
        (an unknown type family, a turn past the last...) is a FilterError naming the fix."""
        return self._query(self.source, flt, at, sink, filters)

    def _query(self, source: LogSource, flt: EventFilter | None, at: int | None,
               sink: Callable[[EventRow], None] | None, filters: dict[str, Any]) -> Rows[EventRow]:
        from dshreplay.analyses.query import EventFilter, query_events
        if flt is not None and filters:
            raise UsageError("give an EventFilter or filters as keywords, not both")
        flt = flt if flt is not None else EventFilter.of(**filters)
        failure: FoldError | LineError | None = None
        try:
            state = self.state(at)
        except NoViewError:
            index = self.index()
            failure = _failure(index)
            assert failure is not None and index.final is not None  # (the fold failed: the view before it)
            state, at = index.final, (failure.seq or 0) - 1
        self._answered("query", failure)  # (known before the first row reaches `sink`)
        rows = query_events(source, frozenset(state.nodes), flt, last=at, observers=[_Facts(self)], sink=sink)
        return Rows(rows, "events", self.partial)

    def lines(self, first: int, last: int) -> Rows[RawLine]:
        """Physical lines `first`..`last` (from 1, the header is line 1), as stored,
        readable or not."""
        from dshreplay.analyses.query import raw_lines
        lines = raw_lines(self.source, first, last)
        self.partial = None
        return Rows(lines, "lines")

    def inspect(self) -> Inspection:
        """The health summary: header facts, counts, torn tail, an interrupted last turn
        (unknown when the fold fails before the log ends); `to_json()` as `inspect --json`."""
        index = self.index()
        self._answered("inspect", _failure(index))
        from dshreplay.results.inspection import Inspection
        return Inspection(index)

    def stats(self) -> Stats:
        """Turns, steps, calls, tools, approvals, compactions, tokens, times: a `SessionStats`
        whose `to_json()` is `stats LOG --json`'s."""
        from dshreplay.analyses.stats import session_stats
        from dshreplay.results.summaries import Stats
        figures = session_stats(self.source)
        self._answered("stats", figures.error)
        return Stats.of(figures)

    def timeline(self) -> SessionTimeline:
        """The session's spans: turns, steps, model calls, tool calls with their approvals and
        hooks, compactions, failures (`analyses.spans`): what `timeline` draws and `otel` ships."""
        from dshreplay.analyses.spans import session_timeline
        spans = session_timeline(self.source)
        self._answered("timeline", spans.stats.error)
        return spans

    def validate(self) -> Validation:
        """Every finding of `validate` (with this session's options): a `FileReport` whose
        `to_json()` is `validate LOG --json`'s."""
        from dshreplay.analyses.validate import validate_log
        from dshreplay.results.summaries import Validation
        report = validate_log(self.source, self.options)
        self.partial = None
        return Validation.of(report)

    def to_records(self, at: int | None = None, *, redact: Redaction = None,
                   **filters: Any) -> list[dict[str, Any]]:
        """One flat dict per event (of those `filters` keep: see `query`), ready for pandas or
        DuckDB: seq, line, time (UTC ISO), type, turn, step, surface, op, callId, tool,
        arguments (the tool call's, as JSON text), compactionId, text. `redact` applies an
        export's redaction rules to what the records show: True (the default rules), a rules
        file (`export --redact FILE`: its rules and the defaults) or a `Redactor`."""
        from dshreplay.results.records import redacting
        rows = self._query(redacting(self.source, redact), None, at, None, filters)
        return [row.to_record() for row in rows]

    def to_arrow(self, at: int | None = None, *, redact: Redaction = None, **filters: Any) -> Any:
        """`to_records` as a `pyarrow.Table` (the `sql` extra installs pyarrow; UsageError
        naming it otherwise): `.to_pandas()` is a DataFrame, DuckDB queries it by name."""
        from dshreplay.results.records import records_table
        return records_table(self.to_records(at, redact=redact, **filters))


def _first_chunk(call: Call) -> int:
    """The seq of a call's first chunk (every call has one: it starts with it)."""
    seq = call.first_chunk_seq
    assert seq is not None
    return seq


def _not_in_view(seq: int, point: int | None, index: LogIndex) -> str:
    """Why the event at `seq` has no provenance in the model's view at `point`."""
    kind = index.type_of(seq)
    if kind is None:
        last = index.last_seq
        return f"seq {seq} is no event of the log: " + ("it has none" if last is None else f"its seqs run 0..{last}")
    if point is not None and seq > point:
        return f"seq {seq} comes after the view asked for (at seq {point}): ask for a view at or after it"
    if kind not in SURFACE_TYPES:
        return (f"seq {seq} is an event of type {as_text(kind)[:60]}: only user/message, assistant/message "
                "and tool/result events are messages of the model's view")
    return f"seq {seq} is not a message of the model's view at seq {point}"


def _failure(index: LogIndex) -> FoldError | LineError | None:
    """Where the fold fails in an index's pass (None: it does not)."""
    return index.fold_errors[0] if index.fold_errors else None


class EventStream:
    """`Session.events`: iterable any number of times, each time a new streaming read."""

    def __init__(self, source: LogSource) -> None:
        self.source = source

    def __iter__(self) -> Iterator[Event]:
        with self.source.reader() as reader:
            yield from reader.events()


def open_session(source: Source, options: Options = DEFAULT) -> Session:
    """Open a log for questions: `dshreplay.open("session.jsonl.zstd")`."""
    return Session(source, options)


def lineage(inputs: Iterable[str | os.PathLike[str]], options: Options = DEFAULT,
            mapper: Mapper | None = None) -> Lineage:
    """`dshreplay.lineage`: the tree of parent and child sessions of `inputs` (logs, session
    folders or store roots), each fork's seed checked; unpack it as `roots, problems`, print
    it as `lineage --json` with `to_json()`. `mapper(fn, items)` reads the headers (default:
    in this process)."""
    from dshreplay.analyses.lineage import lineage as build
    from dshreplay.results.summaries import Lineage
    return Lineage(*build(inputs, options, mapper))


def __getattr__(name: str) -> Any:
    """`dshreplay.session.LogIndex`, imported when first asked for (as every analysis here)."""
    if name == "LogIndex":
        from dshreplay.analyses.trackers.logindex import LogIndex
        return LogIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")



