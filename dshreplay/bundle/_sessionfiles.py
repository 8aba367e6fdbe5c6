"""The files of one session's folder written in its one pass over the (redacted) log: events.csv,
tools.csv, approvals.csv, transcript.md, calls.jsonl, messages.jsonl and session.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dshreplay._jsvalues import (
    as_text,
    utc_time,
)
from dshreplay.analyses._eventtypes import event_text
from dshreplay.analyses._render import message_text, one_line
from dshreplay.analyses.query import CURRENT, LOG_ONLY, SHADOWED
from dshreplay.analyses.stats import SessionSummary
from dshreplay.analyses.trackers.compaction import CompactionTracker, compaction_of
from dshreplay.analyses.trackers.logindex import Indexer
from dshreplay.analyses.trackers.toolcalls import ToolLedger
from dshreplay.analyses.trackers.turns import TurnSpans
from dshreplay.analyses.transcript import TranscriptBuilder
from dshreplay.bundle._calls import MESSAGES, PREVIEW, CallRecords, MessageStore
from dshreplay.bundle._csvfile import CsvFile, write_csv
from dshreplay.bundle._layout import dumps
from dshreplay.bundle._outfolder import create, write_file
from dshreplay.console._csvcells import csv_cell
from dshreplay.console._markdown import markdown_label
from dshreplay.console._text import TextReporter
from dshreplay.core.driver import SKIP, Observer, Record, Run, run_pass
from dshreplay.core.surface import SURFACE_TYPES, derive_message
from dshreplay.errors import (
    DeriveError,
)
from dshreplay.integrity._evidence import PLAIN_HASH, InputHash
from dshreplay.io.reader import LogSource
from dshreplay.report._html import MAX_TRANSCRIPT
from dshreplay.results._tables import (
    APPROVALS_CSV,
    TOOLS_CSV,
    approval_facts,
    csv_header,
    csv_row,
    spilled_bytes,
    tool_call_facts,
)

TRANSCRIPT_QUOTE = 1000  # characters of a tool result transcript.md quotes; its whole message is in messages.jsonl


class _TranscriptFile(TranscriptBuilder):
    """transcript.md written entry by entry; the report keeps only its first entries.

    A tool result longer than TRANSCRIPT_QUOTE characters is quoted that far, with a note
    naming its message in messages.jsonl (stored there if no call sent it): the bundle
    holds each message once, and tool output is most of a session's bytes."""

    def __init__(self, path: Path, title: str, store: MessageStore) -> None:
        super().__init__()
        self.path, self.title, self.store = path, title, store

    def begin(self, run: Run) -> None:
        super().begin(run)
        self.fh = create(self.path, text=True)
        self.fh.write(f"# Transcript of {markdown_label(self.title)}\n\n")
        self.reporter = TextReporter(self.fh)
        self.kept: list[Any] = []  # (the transcript's entries)

    def observe(self, record: Record) -> None:
        super().observe(record)
        if self.entries:
            self._flush()

    def finish(self, run: Run) -> None:
        super().finish(run)
        self._flush()
        self.fh.close()

    def _flush(self) -> None:
        for entry in self.entries:
            self.reporter.transcript([entry], markdown=True, quote=self._quote)
            if len(self.kept) < MAX_TRANSCRIPT:
                self.kept.append(entry)
        self.entries.clear()

    def _quote(self, entry: Any, text: str) -> tuple[str, str | None]:
        if entry.type != "tool/result" or len(text) <= TRANSCRIPT_QUOTE:
            return text, None
        key = self.store.put(entry.message)  # (a tool result has no reasoning: the message a request sends)
        return text[:TRANSCRIPT_QUOTE], (f"[{len(text) - TRANSCRIPT_QUOTE:,} more characters: the whole tool result "
                                         f"is the message {key} of messages.jsonl]")


class _EventRows(Observer):
    """events.csv, one row per event (packed rows expanded). Each row is written as one
    string of its cells' CSV texts (`CsvFile.text`): a million rows make no lists or tuples
    for the garbage collector to walk."""

    HEADER = ["seq", "line", "time", "type", "turn", "step", "surface", "op", "callId", "tool", "compactionId",
              "preview", "rawSha256"]
    requires = (TurnSpans, ToolLedger, CompactionTracker)

    def __init__(self, path: Path, final_nodes: frozenset[int], unknown_from: int | None,
                 hasher: InputHash = PLAIN_HASH) -> None:
        self.path = path
        self.line_hash = hasher.hex  # the raw line's hash: plain, or keyed when the export redacts
        self.final_nodes = final_nodes
        self.unknown_from = unknown_from  # where the fold fails: no surface status from there on

    def begin(self, run: Run) -> None:
        self.csv = CsvFile(self.path, self.HEADER)
        self.write = self.csv.fh.write
        self.text, self.texts = self.csv.text, self.csv.texts  # (bound once: looked up for every cell of every row)
        self.call_at = run.get(ToolLedger).call_at
        self.compactions = run.get(CompactionTracker)
        self.hashed = None  # the line whose hash was written
        self.turn_step: tuple[Any, Any, str] = (None, None, ",")  # the last turn and step, and their cells' text

    def observe(self, record: Record) -> None:
        item: Any = record.item  # (an Event or a PackedRun; the driver's Item on h28f)
        raw = record.raw
        # the line's hash is on the row of its first event (`sed -n LINEp LOG | sha256sum`, or with
        # the evidence key `| openssl dgst -sha256 -mac HMAC -macopt hexkey:$(cat KEY)`)
        raw_sha256 = self.line_hash(raw) if raw is not None and item.line != self.hashed else ""
        self.hashed = item.line
        turn, step = record.turn, record.step
        last = self.turn_step
        if turn is not last[0] or step is not last[1]:  # (a step's records share their cells' text)
            last = self.turn_step = (turn, step, f"{self.text(turn)},{self.text(step)}")
        if item.row is not None:
            self._packed(item, raw_sha256, last[2])
        else:
            self._row(item, raw_sha256, last[2])

    def _packed(self, run: Any, raw_sha256: str, turn_step: str) -> None:  # (a PackedRun)
        """The events of a packed row: chunks, alike but for their seq and time (no surface op,
        no call, no preview; the compaction open around them, if any)."""
        seq, count, line, times = run.seq, run.count, run.line, run.times
        unknown_from = self.unknown_from if self.unknown_from is not None else seq + count
        shared = f"{self.text(run.type)},{turn_step}"
        cid = compaction_of(None, self.compactions.open)
        cid_text = "" if cid is None else self.text(cid)
        self.write("".join([f"{seq + k},{line},{utc_time(times[k]) or ''},{shared},"
                            f"{LOG_ONLY if seq + k < unknown_from else ''},,,,{cid_text},,{'' if k else raw_sha256}\n"
                            for k in range(count)]))

    def _row(self, event: Any, raw_sha256: str, turn_step: str) -> None:  # (an Event)
        kind = event.type
        record = event.record
        data = record.get("data")
        seq = event.seq
        call = self.call_at(seq)
        preview = ""
        if kind in SURFACE_TYPES:
            status = CURRENT if seq in self.final_nodes else SHADOWED
            try:
                has, message = derive_message(event)
                names = {call.call_id: call.tool} if call is not None and type(call.call_id) is str else None
                preview = message_text(message, tools=names) if has else ""
            except DeriveError:
                preview = ""
        else:
            status = LOG_ONLY
            if kind != "assistant/chunk" or _finish_chunk(data):  # (a streamed piece: its message's row shows it)
                preview = event_text(event, call)
        if self.unknown_from is not None and seq >= self.unknown_from:
            status = ""
        if preview:
            preview = self.csv.cell(csv_cell(one_line(preview, 120)))
        compaction_id = compaction_of(data, self.compactions.open)
        texts, text = self.texts, self.text
        kind_text = texts.get(kind) if type(kind) is str else None  # (a cell met before: no call)
        if kind_text is None:
            kind_text = text(kind)
        op = record.get("surfaceOp")
        op_text = "" if op is None else texts.get(op) if type(op) is str else None
        if op_text is None:
            op_text = text(op)
        called = "," if call is None else f"{text(call.call_id)},{text(call.tool)}"
        self.write(f"{seq},{event.line},{utc_time(event.time) or ''},{kind_text},{turn_step},{status},"
                   f"{op_text},{called},{'' if compaction_id is None else text(compaction_id)},{preview},"
                   f"{raw_sha256}\n")

    def finish(self, run: Run) -> None:
        self.csv.close()


def _finish_chunk(data: Any) -> bool:
    """Whether an assistant/chunk's data is the finish of a model call (a provider's error shows there)."""
    chunk = data.get("chunk") if type(data) is dict else None
    return type(chunk) is dict and chunk.get("type") == "finish"


class _ToolRows(Observer):
    """tools.csv: one row per tool call the model asked for (or the log started or
    answered), with its arguments, result, approval, hooks and outcome, all
    attached by call id (the ToolLedger)."""

    requires = (Indexer, ToolLedger)
    types = frozenset({"tool/result"})

    def __init__(self, path: Path) -> None:
        self.path = path

    def begin(self, run: Run) -> None:
        self.indexer = run.get(Indexer)
        self.tools = run.get(ToolLedger)
        self.previews: dict[int, str] = {}  # tool/result seq -> the start of its text

    def observe(self, record: Record) -> None:
        item: Any = record.item  # (an Event; the driver's Item on h28f)
        if item.record.get("surfaceOp") == "append":
            data = item.record.get("data")
            message = data.get("message") if type(data) is dict else None
            names = dict(self.tools.names(item.seq, message))
            self.previews[item.seq] = one_line(message_text(message, reasoning=False, tools=names), PREVIEW)

    def finish(self, run: Run) -> None:
        index = self.indexer.index
        rows = []
        for call in self.tools.calls:
            preview = None if call.result_seq is None else self.previews.get(call.result_seq)
            rows.append(csv_row(TOOLS_CSV, tool_call_facts(call, spilled_bytes(index, call.result_seq), preview)))
        write_csv(self.path, csv_header(TOOLS_CSV), rows)


class FinalNodes(Observer):
    """The surface at the end of a pass (of the original log, for events.csv's surface column),
    or, when the fold fails, before the failure (and the failure)."""

    nodes: frozenset[int] = frozenset()
    failure = None

    def finish(self, run: Run) -> None:
        self.failure = run.failure
        view = run.fold if run.failure is None or run.failure_view is None else run.failure_view
        self.nodes = frozenset(view.nodes)


def write_session_files(source: LogSource, folder: Path, header: dict[str, Any], final_nodes: frozenset[int],
            failure: dict[str, Any] | None,
            hasher: InputHash = PLAIN_HASH) -> tuple[Any, dict[str, Any]]:
    """The one pass over the redacted log: it indexes it and writes events.csv,
    calls.jsonl, messages.jsonl, tools.csv, approvals.csv and transcript.md; returns the index
    and what the report draws. `failure` (redacted): where the fold fails."""
    indexer = Indexer()
    unknown_from = None if failure is None else failure["seq"]
    store = MessageStore(folder / MESSAGES)
    records = CallRecords(folder, store, failure)
    transcript = _TranscriptFile(folder / "transcript.md", as_text(header.get("id")), store)
    summary = SessionSummary()
    observers = [indexer, summary, transcript, records,
                 _EventRows(folder / "events.csv", final_nodes, unknown_from, hasher),
                 _ToolRows(folder / "tools.csv")]
    try:
        run = run_pass(source, observers, on_fold_error=SKIP)
    finally:
        store.close()
    index = indexer.index
    turns = run.get(TurnSpans)
    stats = summary.stats
    assert stats is not None  # (made when the pass finishes)
    session = {k: v for k, v in stats.to_json().items() if k not in ("path", "error")}
    session["foldError"] = stats.fold_error_json()
    write_file(folder / "session.json", dumps(session))
    views = records.views
    last = run.last_seq if run.last_seq is not None else 0
    spans: dict[str, list[tuple[int, int, str]]] = {"turns": [], "steps": []}
    for s in turns.steps:
        label = f"turn {as_text(s.turn)} step {as_text(s.step)}"
        spans["steps"].append((s.start, s.end, label) if s.end is not None else (s.start, last, label + " (open)"))
    for s in turns.turns:
        label = f"turn {as_text(s.turn)}"
        spans["turns"].append((s.start, s.end, label) if s.end is not None else (s.start, last, label + " (open)"))
    tracker = run.get(ToolLedger)
    approvals = [a.row() for a in tracker.approvals]
    write_csv(folder / "approvals.csv", csv_header(APPROVALS_CSV),
              [csv_row(APPROVALS_CSV, approval_facts(a)) for a in tracker.approvals])
    shadows = [r for r in index.shadows if unknown_from is None or r.seq < unknown_from]
    return index, {"calls": views, "spans": spans, "approvals": approvals, "transcript": transcript.kept,
                   "finalNodes": final_nodes, "session": session, "shadows": shadows, "failure": failure}
