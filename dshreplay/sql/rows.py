"""Rows of the SQL index: one pass over a log gives its rows in every table.

`index_log` reads one log once (`validate_log` with the trackers as
observers: the findings are validate's, the facts the trackers'), and
returns one row per session, turn, model call, tool call, approval,
replacement, compaction bracket and finding (and, when asked, per message).
Every row names its log (the key of the session), the session id, and the
seq and line it stands for, so that it can be traced back to the log with
`dshreplay events LOG --lines N`.

Rows are built from what the trackers computed; nothing of the log format is
decided here. Text written from the log goes through the export's redaction
rules (`Redactor`): text and key rules on every string and JSON value
written, findings as the export redacts them. (Pointer rules name places in a
record; the index writes values, not records: `index` refuses them.)

Memory is bounded per session: a worker holds one session's trackers and
rows at a time, never the store's.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dshreplay._jsvalues import as_text, epoch_ms, is_safe_int, is_time, json_bytes, parse_time
from dshreplay.analyses._render import message_text, role_of
from dshreplay.analyses.findings import ERROR, NOTICE, WARNING
from dshreplay.analyses.stats import SessionSummary
from dshreplay.analyses.trackers.calls import CallTracker, retries
from dshreplay.analyses.trackers.compaction import CompactionTracker
from dshreplay.analyses.trackers.logindex import Indexer
from dshreplay.analyses.trackers.provenance import ShadowTracker
from dshreplay.analyses.trackers.toolcalls import ToolLedger
from dshreplay.analyses.trackers.turns import TurnSpans
from dshreplay.analyses.validate import validate_log
from dshreplay.core._passstate import StateError, dump_state, load_state, state_ceiling, state_key
from dshreplay.core.driver import Observer, Run
from dshreplay.core.surface import SURFACE_TYPES, derive_message
from dshreplay.errors import DeriveError, DshReplayError
from dshreplay.integrity._chain import TurnEndLines, line_chain
from dshreplay.integrity._evidence import PLAIN_HASH, InputHash
from dshreplay.io.reader import Event, LogSource, PackedRun, resolve_log_path, seed_length, shown_path
from dshreplay.options import DEFAULT, Options
from dshreplay.redaction.redactor import Redactor
from dshreplay.results._tables import (
    SQL_COLUMNS,
    SQL_TYPES,
    Fact,
    approval_facts,
    model_call_facts,
    spilled_bytes,
    tool_call_facts,
    turn_facts,
)

if TYPE_CHECKING:
    from dshreplay.analyses.validate import FileReport
    from dshreplay.core.driver import PassState, Record

__all__ = ["TABLES", "Column", "Indexed", "Row", "index_log", "log_key", "log_path"]

Row = tuple[Any, ...]  # one row of a table, its cells in TABLES' column order (DuckDB values)

INDEX_FORMAT = 2  # the tables' shape: an index of another format is refused (index into a new --db), never mixed
# (2: a log's key is its path as redacted as the bundle's names, with a keyed hash of the real path)


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # the DuckDB type
    doc: str


def _cols(*spec: tuple[str, str, str]) -> tuple[Column, ...]:
    return tuple(Column(*c) for c in spec)


def _of(facts: tuple[Fact, ...]) -> tuple[Column, ...]:
    """The columns of facts defined in `results.tables` (their name, kind's type and doc)."""
    return tuple(Column(f.name, SQL_TYPES[f.kind], f.doc) for f in facts)


KEY = _cols(
    ("log", "VARCHAR", "The log file, as an absolute path redacted as the bundle's names are; where the rules "
                       "mask part of it, followed by `#` and 16 hex digits of its keyed hash (two paths masked "
                       "alike stay two keys): the key of the session in every table."),
    ("session_id", "VARCHAR", "The session id of the log's header."),
    ("seq", "BIGINT", "The seq of the event the row stands for (`dshreplay events LOG --start SEQ --end SEQ`)."),
    ("line", "BIGINT", "Its physical line in the log, from 1 (the header is line 1; `events LOG --lines N`)."),
)

TABLES: dict[str, tuple[Column, ...]] = {
    "sessions": KEY + _cols(
        ("status", "VARCHAR", "`indexed`; `unreadable` (the log cannot be read: `error` says why); `vanished` "
                              "(the log is gone since it was indexed: its rows are kept as they were)."),
        ("error", "VARCHAR", "Why the log cannot be read (redacted), else NULL."),
        ("encoding", "VARCHAR", "`jsonl` or `zstd`."),
        ("size", "BIGINT", "The log file's size in bytes when indexed."),
        ("lines", "BIGINT", "Physical lines indexed (the header included)."),
        ("events", "BIGINT", "Events read: every event the log holds, those past a fold failure too, as this "
                             "row's other counts are (`stats` and `inspect` answer only up to answered_up_to)."),
        ("verdict", "VARCHAR", "`ok` or `errors`: validate's verdict (`unreadable`: the log cannot be read)."),
        ("errors", "BIGINT", "Findings of severity error (validate's count, those past the listing cap included)."),
        ("warnings", "BIGINT", "Findings of severity warning."),
        ("notices", "BIGINT", "Findings of severity notice."),
        ("created_at", "TIMESTAMP", "The header's createdAt (UTC)."),
        ("started_at", "TIMESTAMP", "The first turn's start (else createdAt), UTC: as `stats` gives it."),
        ("ended_at", "TIMESTAMP", "The last turn's end (or start), UTC."),
        ("day", "DATE", "The UTC day of started_at: the partition of the session's rows in Parquet."),
        ("duration_ms", "DOUBLE", "ended_at - started_at in milliseconds."),
        ("cwd", "VARCHAR", "The header's cwd."),
        ("origin", "VARCHAR", "The header's origin (`subagent` for a spawned child, ...)."),
        ("delegation_depth", "BIGINT", "The header's delegationDepth."),
        ("parent_session", "VARCHAR", "The header's parentSession: the session this one was forked or spawned from."),
        ("seed_length", "BIGINT", "The header's seedLength: how many leading events repeat the parent's (a fork's "
                                  "seed); NULL when none or not a non-negative safe integer."),
        ("turns", "BIGINT", "Turns started (the counts, like `stats`'s, include a fork's seed)."),
        ("steps", "BIGINT", "Steps started."),
        ("model_calls", "BIGINT", "Main-loop model calls."),
        ("auxiliary_calls", "BIGINT", "Auxiliary model calls (compaction summaries, titles, web search)."),
        ("failed_calls", "BIGINT", "Main-loop calls whose finish says they failed."),
        ("cancelled_calls", "BIGINT", "Main-loop calls an abort cut short."),
        ("retries", "BIGINT", "Calls issued again in their step after a failed call."),
        ("tool_calls", "BIGINT", "Tool calls (rows of `tool_calls`)."),
        ("approvals_asked", "BIGINT", "approval/asked events."),
        ("approvals_denied", "BIGINT", "Approvals decided rejected, cancelled or unavailable."),
        ("compactions", "BIGINT", "Compaction brackets (rows of `compactions`)."),
        ("prunes", "BIGINT", "compaction/prune events."),
        ("input_tokens", "BIGINT", "Input tokens of every model call (main and auxiliary), from their usage."),
        ("output_tokens", "BIGINT", "Output tokens."),
        ("cache_read_tokens", "BIGINT", "Cache-read input tokens (disjoint from input_tokens)."),
        ("reasoning_tokens", "BIGINT", "Reasoning tokens."),
        ("torn_tail", "BOOLEAN", "The log ends in a half-written line (left out of every row)."),
        ("answered_up_to", "BIGINT", "Where the fold fails: the fold's answers (`stats`, the model's view) stop "
                                     "at this seq; the rows hold every line, past it too, as logged "
                                     "(docs/guide/damaged-logs.md). NULL: the fold reads the whole log."),
    ),
    "turns": KEY + _of(SQL_COLUMNS["turns"]),
    "model_calls": KEY + _of(SQL_COLUMNS["model_calls"]),
    "tool_calls": KEY + _of(SQL_COLUMNS["tool_calls"]),
    "approvals": KEY + _of(SQL_COLUMNS["approvals"]),
    "replacements": KEY + _cols(
        ("kind", "VARCHAR", "`summary` (a compaction), `prune`, `tool-result-rewrite` or `other` (seq and line: "
                            "the replacing event)."),
        ("start_seq", "BIGINT", "The first surface node it replaced."),
        ("end_seq", "BIGINT", "The last surface node it replaced."),
        ("shadowed_seqs", "BIGINT[]", "Every surface node it took out of the model's view "
                                      "(join `messages` on `seq` to read them)."),
        ("shadowed_count", "BIGINT", "len(shadowed_seqs)."),
        ("meter_seq", "BIGINT", "The compaction/summary or compaction/prune that priced it."),
        ("tokens", "BIGINT", "The meter's shadowedTokenCount."),
        ("compaction_id", "VARCHAR", "The compaction it belongs to."),
    ),
    "compactions": KEY + _cols(
        ("compaction_id", "VARCHAR", "The compactionId (seq and line: its compaction/start, else its first "
                                     "mention)."),
        ("status", "VARCHAR", "`closed`, `failed`, `open`, `abandoned`, or `unbracketed` (a checkpoint with no "
                              "bracket)."),
        ("turn", "BIGINT", "The turn it ran in (NULL: standalone)."),
        ("start_seq", "BIGINT", "Its compaction/start."),
        ("end_seq", "BIGINT", "Its compaction/end."),
        ("started_at", "TIMESTAMP", "compaction/start's time (UTC)."),
        ("summary_seq", "BIGINT", "Its compaction/summary."),
        ("replacement_seq", "BIGINT", "The replacement (checkpoint) it made: join `replacements` on `seq`."),
        ("error", "VARCHAR", "The error its compaction/end carries (JSON text)."),
        ("anomalies", "VARCHAR", "What is wrong with the bracket, `; `-separated."),
        ("inherited", "BOOLEAN", "In a fork's seed (seq < the session's seed_length): the parent's, repeated here, "
                                 "not this session's own (leave it out of counts and costs)."),
    ),
    "findings": KEY + _cols(
        ("code", "VARCHAR", "The finding code (docs/reference/findings.md); seq and line: where it is "
                            "(NULL: file-wide)."),
        ("severity", "VARCHAR", "`error`, `warning` or `notice`."),
        ("pointer", "VARCHAR", "The JSON pointer into the record (redacted)."),
        ("message", "VARCHAR", "What is wrong (redacted)."),
        ("caused_by", "BIGINT", "The seq of the finding this one follows from."),
    ),
    "messages": KEY + _cols(
        ("role", "VARCHAR", "`user`, `assistant` or `tool` (seq and line: the surface event)."),
        ("type", "VARCHAR", "The event type: user/message, assistant/message, tool/result."),
        ("op", "VARCHAR", "`append`, or `replace START..END` for a replacement."),
        ("text", "VARCHAR", "The message's text as `transcript` shows it (redacted)."),
        ("visible_from", "BIGINT", "The seq it joined the model's view at (its own)."),
        ("visible_until", "BIGINT", "The seq of the replacement that took it out of the view (NULL: still in "
                                    "view at the end of the log)."),
    ),
}
OPTIONAL = frozenset({"messages"})  # written only with --messages


@dataclass
class Indexed:
    """What indexing one log gave: its facts (for the next run's growth check) and its rows."""

    log: str  # the key: the log file's absolute path, redacted (`log_key`)
    status: str  # "indexed", "unreadable"
    facts: dict[str, Any] = field(default_factory=dict)  # size, sha256, encoding, chain (as the export records them:
    # keyed hashes when the index redacts, under the member names the export's manifest uses)
    tables: dict[str, list[Row]] = field(default_factory=dict)  # table -> list of row tuples (in TABLES' column order)
    error: str | None = None
    state: bytes | None = None  # the pass kept where the log ended (None: it did not end cleanly)
    resumed: bool = False  # read on from a kept state (only the lines appended since were parsed)

    @property
    def answered_up_to(self) -> int | None:
        """Where the fold fails, as its sessions row says (None: it reads the whole log, or cannot be read)."""
        sessions = self.tables.get("sessions")
        if not sessions:
            return None
        value: int | None = sessions[0][_ANSWERED]
        return value


_ANSWERED = [c.name for c in TABLES["sessions"]].index("answered_up_to")


def log_path(path: str | os.PathLike[str]) -> str:
    """The absolute path of a log's file (a session folder's log file)."""
    try:
        return os.path.abspath(resolve_log_path(path))
    except DshReplayError:
        return os.path.abspath(path)


def log_key(path: str | os.PathLike[str], redactor: Redactor | None = None, hasher: InputHash = PLAIN_HASH) -> str:
    """The key of a log in the index: the absolute path of its file as the bundle names an input
    (`redactor.text`: a token in a folder or file name is masked); where that masks anything, followed
    by `#` and the first 16 hex digits of `hasher`'s hash of the real path (keyed when the index
    redacts), so that two paths masked alike stay two keys and a file has the same key every run."""
    real = log_path(path)
    shown = shown_path(real)
    if redactor is None:
        return shown
    masked = redactor.text(shown)
    return shown if masked == shown else f"{masked}#{hasher.hex(os.fsencode(real))[:16]}"


def input_facts(source: LogSource, prefix: int | None = None, *, seal: bool = True,
                hasher: InputHash = PLAIN_HASH) -> tuple[dict[str, Any], bytes | None, bytes | None]:
    """The size and hash (`hasher`'s: keyed when the index redacts) of a log file, read as every
    input is (`open_regular`), and (with `seal`) the keys that seal the state of a pass over the
    whole file and over its first `prefix` bytes (`passstate.state_key`, keyed as `hasher` is: never
    stored; None when the file is shorter)."""
    digest, sealing, size, prefix_key = hasher.new(), state_key(hasher.key) if seal else None, 0, None
    assert source.file is not None or source.container is not None  # (standard input is not indexed)
    with source.open() as fh:  # (the source's fixed extent: the pass and the line chain read the same bytes)
        for block in iter(lambda: fh.read(1 << 20), b""):
            if sealing is None:
                pass
            elif prefix is not None and prefix_key is None and size + len(block) >= prefix:
                sealing.update(block[:prefix - size])
                prefix_key = sealing.digest()
                sealing.update(block[prefix - size:])
            else:
                sealing.update(block)
            digest.update(block)
            size += len(block)
    return {"size": size, "sha256": digest.hexdigest()}, None if sealing is None else sealing.digest(), prefix_key


def index_log(path: str | os.PathLike[str], options: Options = DEFAULT, redactor: Redactor | None = None,
              messages: bool = False, resume: tuple[int, bytes, int] | None = None, keep: bool = False,
              hasher: InputHash = PLAIN_HASH) -> Indexed:
    """One log's rows, in one pass (validate's, with the trackers as observers), and its facts.

    keep    also return the pass's state where the log ends (`Indexed.state`, sealed with a key of
            the log's bytes), when it ends cleanly
    resume  (bytes, state, lines): such a state of the log's first `bytes` bytes, its first `lines`
            lines proved unchanged by the caller: only the lines after them are read (StateError when
            it does not open, or read other lines)
    hasher  the hash of input bytes of the facts (the file's and the line chain's)
    """
    redactor = redactor or Redactor()
    key = log_key(path, redactor, hasher)
    kept: list[bytes] = []

    def checkpoint(state: PassState) -> None:
        assert sealing is not None  # (a kept state is sealed: `keep` asks input_facts for its key)
        kept[:] = [dump_state(state, sealing)]

    try:
        source = LogSource(path, options)
        facts, sealing, opening = input_facts(source, None if resume is None else resume[0],
                                              seal=keep or resume is not None, hasher=hasher)
        if resume is not None:
            if opening is None:
                raise StateError("the log is shorter than the bytes its kept state was made of")
            state = load_state(resume[1], opening, ceiling=state_ceiling(resume[0]), needs=(IndexRows, TurnEndLines))
            if state.run.lines != resume[2]:  # (the log grew while it was indexed: read it whole)
                raise StateError(f"the kept state read {state.run.lines} lines, the chain proves {resume[2]}")
            rows, ends = state.get(IndexRows), state.get(TurnEndLines)
        else:
            state, rows, ends = None, IndexRows(messages), TurnEndLines()
        report = validate_log(source, options, observers=[rows, ends], resume=state,
                              checkpoint=checkpoint if keep else None)
        if report.unreadable is not None:
            raise report.unreadable
        facts["encoding"] = rows.encoding
        facts["chain"] = line_chain(source, ends.lines, hasher=hasher)
    except (DshReplayError, OSError) as exc:
        why = exc.within() if isinstance(exc, DshReplayError) else (exc.strerror or str(exc))
        return Indexed(key, "unreadable", error=redactor.text(why))
    redactor.counting = True  # (values masked whole are then masked in the findings too)
    try:
        tables = RowWriter(key, rows, redactor).tables(report, facts)
    finally:
        redactor.counting = False
    return Indexed(key, "indexed", facts, tables, state=kept[0] if kept else None, resumed=resume is not None)


def unreadable_row(key: str, error: str, facts: dict[str, Any] | None = None) -> Row:
    """The sessions row of a log that cannot be read."""
    row = dict.fromkeys(c.name for c in TABLES["sessions"])
    row.update(log=key, status="unreadable", error=error, verdict="unreadable")
    if facts:
        row.update(size=facts.get("size"), encoding=facts.get("encoding"))
    return tuple(row.values())


class LineMap:
    """Which physical line each seq is on: one entry per record (a packed row's members share its line)."""

    __slots__ = ("seqs", "lines")

    def __init__(self) -> None:
        self.seqs = array("q")
        self.lines = array("q")

    def add(self, seq: int, line: int) -> None:
        self.seqs.append(seq)
        self.lines.append(line)

    def __call__(self, seq: object) -> int | None:
        if type(seq) is not int or not self.seqs:
            return None
        n = bisect_right(self.seqs, seq) - 1
        return self.lines[n] if n >= 0 else None


class IndexRows(Observer):
    """What the rows need beyond the trackers: each seq's line, and (with `messages`)
    each surface node's role and text."""

    requires = (SessionSummary, Indexer, CallTracker, TurnSpans, ToolLedger, ShadowTracker, CompactionTracker)

    def __init__(self, messages: bool = False) -> None:
        self.messages = messages

    def begin(self, run: Run) -> None:
        self.run: Run | None = None
        self.header = run.header
        self.header_line = run.header_line
        self.encoding = run.encoding
        self.line_of = LineMap()
        self.nodes: list[tuple[int, int, str, str, object, Any]] = []  # (seq, line, role, type, op, message)

    def observe(self, record: Record) -> None:
        # (Record.item is annotated None until core/driver.py is typed: it holds an Event or a PackedRun)
        item: Event | PackedRun = record.item  # type: ignore[assignment]
        self.line_of.add(item.seq, item.line)
        if self.messages and isinstance(item, Event) and item.type in SURFACE_TYPES and record.error is None:
            op = item.record.get("surfaceOp")
            op = f"replace {as_text(op.get('start'))}..{as_text(op.get('end'))}" if type(op) is dict else op
            try:
                has, message = derive_message(item)
            except DeriveError:
                has, message = False, None
            self.nodes.append((item.seq, item.line, role_of(item.type, message), item.type, op,
                               message if has else None))

    def finish(self, run: Run) -> None:
        self.run = run


def _int(value: Any) -> int | None:  # (value: a JSON value of the log)
    """A log value as a BIGINT cell: a safe integer (5.0 is 5), else NULL."""
    if type(value) is int:
        return value if is_safe_int(value) else None
    return int(value) if is_safe_int(value) else None


def _ms(duration: int | float | None) -> float | None:
    """A duration (`Span.duration_ms`, `ToolCall.duration_ms`) as a DOUBLE cell."""
    return None if duration is None else float(duration)


def _time(value: Any) -> int | None:
    """An event time as a TIMESTAMP cell: epoch milliseconds (the writer makes them times), else NULL."""
    return int(value) if is_time(value) else None


def _iso_ms(text: str | None) -> int | None:
    """A UTC time as SessionStats gives it, back in epoch milliseconds."""
    return None if text is None else epoch_ms(parse_time(text))


class RowWriter:
    """A session's rows, from the pass's trackers, with the redaction rules applied to what they hold of the log."""

    def __init__(self, key: str, rows: IndexRows, redactor: Redactor) -> None:
        self.key = key
        self.rows = rows
        assert rows.run is not None  # (the rows of a pass that ended)
        self.run: Run = rows.run
        self.redactor = redactor
        self.session_id = self.text(rows.header.get("id"))
        self.line_of = rows.line_of
        self.seed = seed_length(rows.header) or 0

    def inherited(self, seq: object) -> bool:
        """Whether the event at `seq` is in a fork's seed (the parent's, repeated)."""
        return type(seq) is int and seq < self.seed

    def text(self, value: Any) -> str | None:
        """A log value as a VARCHAR cell: a string redacted (a JSON one read, redacted, written back),
        anything else as redacted JSON text; None stays NULL."""
        if value is None:
            return None
        if type(value) is str:
            return self.redactor.string(value)
        return json_bytes(self.redactor.value(value)).decode()

    def json(self, value: Any) -> str | None:
        """A log value as JSON text (a VARCHAR cell), redacted; None stays NULL."""
        return None if value is None else json_bytes(self.redactor.value(value)).decode()

    def keyed(self, seq: int | None, *rest: object) -> Row:
        return (self.key, self.session_id, seq, self.line_of(seq), *rest)

    def tables(self, report: FileReport, facts: dict[str, Any]) -> dict[str, list[Row]]:
        out = {"sessions": [self.session(report, facts)], "turns": self.turns(), "model_calls": self.calls(),
               "tool_calls": self.tools(), "approvals": self.approvals(), "replacements": self.replacements(),
               "compactions": self.compactions(), "findings": self.findings(report)}
        if self.rows.messages:
            out["messages"] = self.messages()
        return out

    def session(self, report: FileReport, facts: dict[str, Any]) -> Row:
        stats = self.run.get(SessionSummary).stats
        assert stats is not None  # (the summary is made when the pass ends, before the rows)
        header = self.rows.header
        index = self.run.get(Indexer).index
        start, end = _iso_ms(stats.start), _iso_ms(stats.end)
        tools = self.run.get(ToolLedger)
        tokens = stats.tokens
        return (self.key, self.session_id, None, self.rows.header_line, "indexed", None, self.rows.encoding,
                facts.get("size"), facts["chain"]["lines"], stats.events, "ok" if report.ok else "errors",
                report.count(ERROR), report.count(WARNING), report.count(NOTICE),
                _time(header.get("createdAt")), start, end, None if start is None else start // 86_400_000,
                stats.duration_ms, self.text(header.get("cwd")), self.text(header.get("origin")),
                _int(header.get("delegationDepth")), self.text(header.get("parentSession")), seed_length(header),
                stats.turns, stats.steps, stats.calls, stats.auxiliary_calls, sum(stats.failed_calls.values()),
                stats.cancelled_calls, stats.retries, len(tools.calls), stats.approvals["asked"],
                stats.approvals["denied"], len(index.brackets), stats.compactions["prunes"],
                _int(tokens["input"]), _int(tokens["output"]), _int(tokens["cacheRead"]), _int(tokens["reasoning"]),
                stats.torn_tail is not None, stats.answered_up_to if stats.answered_up_to is not None else
                (None if stats.fold_error is None or stats.fold_error.seq is None else stats.fold_error.seq - 1))

    def cells(self, table: str, facts: dict[str, Any]) -> tuple[Any, ...]:
        """A table's cells of a thing's facts (`results.tables`), each as its kind is written in the index:
        log text and JSON redacted, times as TIMESTAMPs, log integers NULL when they are not safe ones."""
        out = []
        for fact in SQL_COLUMNS[table]:
            value, kind = facts[fact.name], fact.kind
            out.append(self.text(value) if kind == "text" else self.json(value) if kind == "json" else
                       _int(value) if kind == "int" else _time(value) if kind == "time" else
                       _ms(value) if kind == "ms" else value)
        return tuple(out)

    def turns(self) -> list[Row]:
        spans = self.run.get(TurnSpans)
        stats = self.run.get(SessionSummary).stats
        assert stats is not None  # (the summary is made when the pass ends, before the rows)
        step_starts = [s.start for s in spans.steps]  # (in log order)
        out = []
        for span, ending in zip(spans.turns, stats.turn_endings):
            last = span.last if span.last is not None else (1 << 62)
            steps = bisect_right(step_starts, last) - bisect_right(step_starts, span.start)
            facts = turn_facts(span, ending, steps, self.line_of(span.end))
            out.append(self.keyed(span.start, *self.cells("turns", facts)))
        return out

    def calls(self) -> list[Row]:
        tracker = self.run.get(CallTracker)
        retried = {id(c) for c in retries(tracker.calls)}
        out = []
        for call in sorted(tracker.calls + tracker.auxiliary, key=lambda c: c.first_chunk_seq or 0):
            facts = model_call_facts(call, id(call) in retried, self.inherited(call.first_chunk_seq))
            out.append(self.keyed(call.first_chunk_seq, *self.cells("model_calls", facts)))
        return out

    def tools(self) -> list[Row]:
        index = self.run.get(Indexer).index
        out = []
        for call in self.run.get(ToolLedger).calls:
            facts = tool_call_facts(call, spilled_bytes(index, call.result_seq))
            facts["inherited"] = self.inherited(facts["first_seq"])
            out.append(self.keyed(facts["first_seq"], *self.cells("tool_calls", facts)))
        return out

    def approvals(self) -> list[Row]:
        out = []
        for a in self.run.get(ToolLedger).approvals:
            facts = approval_facts(a)
            facts["inherited"] = self.inherited(facts["first_seq"])
            out.append(self.keyed(facts["first_seq"], *self.cells("approvals", facts)))
        return out

    def replacements(self) -> list[Row]:
        return [self.keyed(r.seq, r.kind, r.start, r.end, list(r.shadowed_seqs), len(r.shadowed_seqs), r.meter_seq,
                           _int(r.tokens), self.text(r.compaction_id))
                for r in self.run.get(ShadowTracker).shadows]

    def compactions(self) -> list[Row]:
        out = []
        for b in self.run.get(CompactionTracker).brackets.values():
            first = next((s for s in (b.start, b.summary_seq, b.replacement_seq, b.end) if s is not None), None)
            out.append(self.keyed(first, self.text(b.compaction_id), b.status, _int(b.turn), b.start, b.end,
                                  _time(b.start_time), b.summary_seq, b.replacement_seq, self.json(b.error),
                                  self.text("; ".join(b.anomalies)) if b.anomalies else None, self.inherited(first)))
        return out

    def findings(self, report: FileReport) -> list[Row]:
        out = []
        for f in report.findings:
            shown = self.redactor.finding(f.to_json())
            out.append((self.key, self.session_id, f.seq, f.line, f.code, f.severity, shown["pointer"],
                        shown["message"], f.caused_by))
        return out

    def messages(self) -> list[Row]:
        until: dict[int, int] = {}
        for r in self.run.get(ShadowTracker).shadows:
            for seq in r.shadowed_seqs:
                until.setdefault(seq, r.seq)
        return [(self.key, self.session_id, seq, line, role, kind, op,
                 "" if message is None else message_text(self.redactor.value(message)), seq, until.get(seq))
                for seq, line, role, kind, op, message in self.rows.nodes]



