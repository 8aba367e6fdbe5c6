"""What report.html and index.html show, as plain rows for their templates.

Every fact comes from the export's one pass: the index's turns (TurnSpans),
model calls (CallTracker) and tool calls with their approvals and hooks
(ToolLedger, attached by id), the findings and the call views the bundle
writes. Nothing is derived again here: facts are placed on the waterfall's
axis, worded, and long lists cut (`Listing`). The templates
(`report/templates/`) only lay the rows out; `htmlreport` renders them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from dshreplay._jsvalues import as_text, shown
from dshreplay.analyses._render import one_line
from dshreplay.analyses.trackers.calls import Call, failed, outcome_text
from dshreplay.analyses.trackers.compaction import BracketRecord
from dshreplay.analyses.trackers.logindex import LogIndex
from dshreplay.analyses.trackers.provenance import ShadowRecord
from dshreplay.analyses.trackers.toolcalls import (
    COMPLETED,
    ERROR,
    NOT_STARTED,
    ToolCall,
)
from dshreplay.analyses.trackers.turns import CLOSED_BY_DSH, INTERRUPTED, TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN
from dshreplay.results._tables import tool_call_facts

S = TypeVar("S")
T = TypeVar("T")

FIRST_ROWS = 40  # rows of a long list shown at once; the rest one click away (<details>)
MAX_ROWS = 2000  # rows of a list the report holds at all (the bundle's data files have every one)
FIRST_ITEMS = 12  # items of a long list of facts (turn endings) shown inline
MAX_SPANS = 2000  # marks of each lane of the seq timeline drawn in the report
ARGUMENTS_WIDTH = 300  # characters of a tool call's arguments in the table (tools.csv has them whole)


@dataclass(frozen=True, slots=True)
class Listing(Generic[T]):
    """A list cut for a page: `first` shown, `rest` behind a <details>, `total` in the log
    (more than first + rest when the report holds only MAX_ROWS of them)."""

    first: list[T]
    rest: list[T]
    total: int

    @property
    def dropped(self) -> int:
        """Rows the report leaves to the data files."""
        return self.total - len(self.first) - len(self.rest)

    def __bool__(self) -> bool:
        return self.total > 0


ID_WIDTH = 80  # characters of a turn, step, tool, call id or model a label or cell shows (a log may hold megabytes)


def ident(value: object) -> str:
    """A short log value (turn, step, tool name, call id, model) as a label shows it: its text,
    cut to ID_WIDTH characters at a cost bounded by that width."""
    return shown(value, ID_WIDTH, quote=False)


def listing(items: Sequence[S], make: Callable[[S], T]) -> Listing[T]:
    """`items` cut for a page, each of the first MAX_ROWS made a row by `make` (the others
    are counted, never made: a 400k-event log has thousands)."""
    made = [make(item) for item in items[:MAX_ROWS]]
    return Listing(made[:FIRST_ROWS], made[FIRST_ROWS:], len(items))


# -- the waterfall -------------------------------------------------------------


def duration_text(ms: object) -> str:
    """A duration in words: "840 ms", "12.3 s", "4 min 05 s", "2 h 03 min"; "-" when unknown."""
    if not isinstance(ms, (int, float)) or isinstance(ms, bool) or ms < 0:
        return "-"
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, sec = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


TURN_STATUS = {"completed": "ok", INTERRUPTED: "interrupted", CLOSED_BY_DSH: "interrupted"}


def turn_status(ending: str) -> str:
    """A turn's ending (`Span.ending`) as the report marks it."""
    if ending in TURN_STATUS:
        return TURN_STATUS[ending]
    if ending.startswith("aborted"):
        return "aborted"
    return "failed" if ending.startswith("error") else "warn"


def call_status(call: Call) -> str:
    """A model call's outcome as the report marks it."""
    if failed(call.finish):
        return "failed"
    if call.outcome is None:
        return "open"
    return "cancelled" if call.cancelled else "ok"


def call_href(number: int | None, viewed: set[Any]) -> str | None:
    """Where a call's bar leads: its model view, else its row of the calls table."""
    if number is None:
        return None
    return f"#call-{number}" if number in viewed else (f"#call-row-{number}" if number <= MAX_ROWS else None)


def call_note(call: Call) -> str:
    """A model call's outcome in words, its finish kind and error code cut as ids are."""
    return outcome_text(None if call.outcome is None else ident(call.outcome),
                        None if call.error_code is None else ident(call.error_code))


TOOL_STATUS = {COMPLETED: "ok", ERROR: "failed", NOT_STARTED: "cancelled"}  # (outcome unknown, unread: open)


def tool_status(call: ToolCall) -> str:
    """A tool call's outcome (the ToolLedger's) as the report marks it."""
    return TOOL_STATUS.get(call.outcome or "", "open")


def tool_note(call: ToolCall) -> str:
    """A tool call's outcome in words, with its error code unless the outcome names it."""
    outcome = call.outcome or "unread"
    code = call.error_code
    if code is None or code in (TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN):
        return outcome
    return f"{outcome} {ident(code)}"


def approval_text(facts: Mapping[str, Any]) -> str:
    """The approval asked for a call (its facts: `results.tables.tool_call_facts`): its outcome and how long
    it waited ("-": none asked)."""
    if facts["approval_asked_seq"] is None and facts["approval_decided_seq"] is None:
        return "-"  # (an approval has an ask or a decision)
    outcome = "no decision" if facts["approval_decided_seq"] is None else ident(facts["approval_outcome"])
    waited = facts["approval_waited_ms"]
    return f"{outcome} after {duration_text(waited)}" if waited is not None else outcome


# -- tables --------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ToolRow:
    """One row of the tool-call table: the ToolLedger's call, worded."""

    anchor: str
    tool: str
    call_id: str
    turn: str  # "turn/step"
    arguments: str  # as the bundle holds them (redacted), on one line and cut
    outcome: str
    status: str
    approval: str
    hooks: str
    duration: str
    seqs: str


def tool_rows(calls: Sequence[ToolCall]) -> Listing[ToolRow]:
    return listing(range(1, len(calls) + 1), lambda n: _tool_row(n, calls[n - 1]))


def _tool_row(n: int, call: ToolCall) -> ToolRow:
    facts = tool_call_facts(call)
    arguments = "" if facts["arguments"] is None else \
        one_line(shown(facts["arguments"], 4 * ARGUMENTS_WIDTH, quote=False), ARGUMENTS_WIDTH)
    seqs = "-".join(str(s) for s in (facts["call_seq"], facts["result_seq"]) if s is not None)
    return ToolRow(f"tool-{n}", ident(facts["tool"]), ident(facts["call_id"]),
                   f"{ident(facts['turn'])}/{ident(facts['step'])}", arguments, tool_note(call), tool_status(call),
                   approval_text(facts), facts["hooks"] or "-", duration_text(facts["duration_ms"]), seqs or "-")


@dataclass(frozen=True, slots=True)
class CallRow:
    """One row of the model-call table."""

    anchor: str
    cells: list[str]  # call, turn, step, chunks, model, outcome, in, out, messages
    status: str


def call_rows(calls: Sequence[Call], failure: Mapping[str, Any] | None) -> Listing[CallRow]:
    """The model-call table; a call past where the fold fails has no message count (no view)."""
    def row(call: Call) -> CallRow:
        usage = call.usage if type(call.usage) is dict else {}
        past = failure is not None and call.first_chunk_seq is not None and call.first_chunk_seq > failure["seq"]
        return CallRow(f"call-row-{call.call}", [
            cell(call.call), cell(call.turn), cell(call.step),
            f"{cell(call.first_chunk_seq)}–{cell(call.last_chunk_seq)}",
            f"{ident(call.provider)}/{ident(call.model)}", call_note(call),
            cell(usage.get("inputTokens")), cell(usage.get("outputTokens")), "-" if past else cell(call.message_count)],
            call_status(call))
    return listing(calls, row)


@dataclass(frozen=True, slots=True)
class Fact:
    """A row of the session card; `rest`: the items of a long list past the first (<details>)."""

    label: str
    value: str
    css: str | None = None  # "ok", "bad" or "warn": the value's colour
    code: bool = False  # the value is an identifier or a hash (monospace)
    rest: list[str] = field(default_factory=list)


def summarised(label: str, items: Sequence[str], empty: str = "-") -> Fact:
    """A fact that lists items: the first FIRST_ITEMS inline, the others behind a <details>."""
    if len(items) <= FIRST_ITEMS:
        return Fact(label, ", ".join(items) or empty)
    return Fact(label, ", ".join(items[:FIRST_ITEMS]) + f", … ({len(items) - FIRST_ITEMS:,} more)",
                rest=list(items[FIRST_ITEMS:]))


def facts(entry: Mapping[str, Any], index: LogIndex, session: Mapping[str, Any], input_hash: str) -> list[Fact]:
    """The session card: the manifest entry's facts and session.json's; `input_hash` names the
    hash of the input's bytes ("hmac-sha256": keyed with the evidence key)."""
    header = entry.get("header", {})
    counts = entry.get("findings", {})
    verdict = entry.get("verdict")
    models = ", ".join(f"{as_text(m['provider'])}/{as_text(m['model'])}" for m in session.get("models", []))
    failures = ", ".join(f"{as_text(code)}: {n}" for code, n in session.get("failedCalls", {}).items())
    return [
        Fact("input", as_text(entry.get("input")), code=True),
        Fact("HMAC-SHA256 (evidence key)" if input_hash == "hmac-sha256" else "SHA-256",
             as_text(entry.get("sha256")), code=True),
        Fact("size / encoding", f"{as_text(entry.get('size'))} bytes / {as_text(entry.get('encoding'))}"),
        Fact("session id", as_text(header.get("id"))), Fact("cwd", as_text(header.get("cwd"))),
        Fact("parent / seedLength", f"{as_text(header.get('parentSession') or '-')} / "
                                    f"{as_text(header.get('seedLength', '-'))}"),
        Fact("start / end / duration", f"{as_text(session.get('start') or '-')} / "
                                       f"{as_text(session.get('end') or '-')} / {cell(session.get('durationMs'))} ms"),
        Fact("models", models or "-"),
        Fact("failed calls", failures or "none", "bad" if failures else None),
        Fact("retries", as_text(session.get("retries"))),
        Fact("tokens", ", ".join(f"{k} {as_text(v)}" for k, v in session.get("tokens", {}).items()) or "-"),
        summarised("turn endings", [f"{as_text(t['turn'])}: {as_text(t['ending'])}"
                                    for t in session.get("turnSpans", [])]),
        Fact("events", as_text(entry.get("events"))),
        Fact("turns / steps / model calls", f"{as_text(session.get('turns'))} / {as_text(session.get('steps'))} / "
                                            f"{as_text(session.get('calls'))}"),
        Fact("verdict", f"{as_text(verdict)}: {as_text(counts.get('error', 0))} errors, "
                        f"{as_text(counts.get('warning', 0))} warnings, {as_text(counts.get('notice', 0))} notices",
             "ok" if verdict == "ok" else "bad"),
        Fact("spilled tool results", _spills(session.get("spills"))),
        Fact("torn tail", "none" if index.torn_tail is None else index.torn_tail.describe(),
             None if index.torn_tail is None else "warn"),
    ]


def _spills(spills: Any) -> str:
    if not spills or not spills.get("results"):
        return "none"
    inherited = f", {spills['inherited']} inherited from the parent" if spills.get("inherited") else ""
    return (f"{spills['results']} ({spills['omittedBytes']:,} bytes kept out of the model's view{inherited}; "
            "see spills.json)")


def cell(value: object, empty: str = "") -> str:
    """A log value in a table cell: its text (`as_text`), `empty` for none (null)."""
    return empty if value is None else as_text(value)


def finding_rows(findings: Sequence[Mapping[str, Any]]) -> Listing[list[str]]:
    return listing(findings, lambda f: [cell(f["severity"]), cell(f["code"]), cell(f["seq"]), cell(f["line"]),
                                        cell(f["pointer"]), cell(f["message"])])


def shadow_rows(shadows: Sequence[ShadowRecord]) -> Listing[list[str]]:
    return listing(shadows, lambda r: [cell(r.seq), cell(r.kind), f"{cell(r.start)}–{cell(r.end)}",
                                       ", ".join(map(str, r.shadowed_seqs)), cell(r.meter_seq), cell(r.tokens),
                                       cell(r.compaction_id)])


def bracket_rows(brackets: Sequence[BracketRecord]) -> Listing[list[str]]:
    return listing(brackets, lambda b: [cell(b.compaction_id), cell(b.start), cell(b.end), cell(b.status),
                                        cell(b.turn), cell(b.summary_seq), cell(b.replacement_seq),
                                        "; ".join(b.anomalies)])


APPROVAL_REASON = 6  # the column of an approval row (`Approval.row`) that is prose, not an id


def approval_rows(rows: Sequence[Sequence[object]]) -> Listing[list[str]]:
    """The approvals table: ids cut as everywhere on the page, the reason on one line of
    ARGUMENTS_WIDTH characters (approvals.csv has them whole)."""
    def row(values: Sequence[object]) -> list[str]:
        return [one_line(cell(v), ARGUMENTS_WIDTH) if k == APPROVAL_REASON else cell(v) if v is None else ident(v)
                for k, v in enumerate(values)]
    return listing(rows, row)


# -- the seq timeline of the model's view ---------------------------------------

@dataclass(frozen=True, slots=True)
class Mark:
    x: str
    width: str
    colour: str
    title: str


@dataclass(frozen=True, slots=True)
class Lane:
    name: str
    y: int
    marks: list[Mark]


TIMELINE_WIDTH, TIMELINE_LEFT, LANE = 1100, 110, 22
BRACKET_COLOURS = {"closed": "#8e6bbf", "failed": "#b42318", "open": "#d08700", "abandoned": "#9aa4ae"}


def surface_lanes(index: LogIndex, shadows: Sequence[ShadowRecord] | None = None) -> list[Lane]:
    """Turns, compaction brackets and shadowed ranges over the event seqs (what the model saw when)."""
    total = max(index.event_count, 1)
    scale = (TIMELINE_WIDTH - TIMELINE_LEFT - 10) / total

    def mark(start: int, end: int, colour: str, title: str) -> Mark:
        x0, x1 = TIMELINE_LEFT + scale * start, TIMELINE_LEFT + scale * (end + 1)
        return Mark(f"{x0:.1f}", f"{max(x1 - x0, 1.5):.1f}", colour, title)

    last = total - 1
    turns = [mark(s.start, s.end if s.end is not None else last, "#7aa7d6",
                  f"turn {ident(s.turn)}: seqs {s.start}-{s.end if s.end is not None else last}"
                  + ("" if s.end is not None else " (open)")) for s in index.turn_spans[:MAX_SPANS]]
    brackets = []
    for b in index.brackets[:MAX_SPANS]:
        if b.start is None:
            continue
        end = b.end if b.end is not None else last
        brackets.append(mark(b.start, end, BRACKET_COLOURS.get(b.status, "#8e6bbf"),
                             f"compaction {ident(b.compaction_id)} ({b.status}): seqs {b.start}-{end}"))
    shadowed = []
    for r in (index.shadows if shadows is None else shadows)[:MAX_SPANS]:
        if r.shadowed_seqs:  # (one mark for the messages a replacement shadows: a summary takes hundreds)
            first, final, count = min(r.shadowed_seqs), max(r.shadowed_seqs), len(r.shadowed_seqs)
            seqs = f"seq {first}" if count == 1 else f"{count} messages of seqs {first}-{final}"
            shadowed.append(mark(first, final, "#d08700", f"{seqs} shadowed by {r.kind} at seq {r.seq}"))
        shadowed.append(mark(r.seq, r.seq, "#17324d", f"{r.kind} at seq {r.seq} replaces {r.start}-{r.end}"))
    return [Lane(name, i * LANE, marks) for i, (name, marks)
            in enumerate((("turns", turns), ("compactions", brackets), ("shadowed", shadowed)))]


# -- index.html ----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Notes:
    """What index.html says of a session beside its verdict: why it failed (its first
    error) and its warnings (a torn tail, an interrupted turn), from its findings."""

    reason: str | None = None
    warnings: tuple[str, ...] = ()
    more: int = 0  # warnings past the ones named


MAX_NOTES = 3


def session_notes(findings: Sequence[Mapping[str, Any]]) -> Notes:
    """The first error and the first warnings of a session's (redacted) findings."""
    errors = [f for f in findings if f.get("severity") == "error"]
    warnings = [f for f in findings if f.get("severity") == "warning"]
    return Notes(_finding_text(errors[0]) if errors else None,
                 tuple(_finding_text(f) for f in warnings[:MAX_NOTES]), max(len(warnings) - MAX_NOTES, 0))


def _finding_text(finding: Mapping[str, Any]) -> str:
    where = f"seq {as_text(finding['seq'])}" if finding.get("seq") is not None else \
        f"line {as_text(finding.get('line'))}"
    return one_line(f"{as_text(finding.get('code'))} at {where}: {as_text(finding.get('message'))}", 300)


@dataclass(frozen=True, slots=True)
class IndexRow:
    input: str
    session: str
    verdict: str
    status: str  # "ok", "warn" (ok, with warnings) or "bad"
    reason: str | None
    warnings: tuple[str, ...]
    more: int
    events: str
    folder: str | None


def index_rows(entries: Sequence[Mapping[str, Any]], notes: Sequence[Notes] | None = None) -> list[IndexRow]:
    rows = []
    for n, e in enumerate(entries):
        note = notes[n] if notes is not None else Notes()
        verdict = as_text(e.get("verdict"))
        reason = e.get("error") if verdict in ("unreadable", "internal-error") else note.reason
        status = "bad" if verdict != "ok" else ("warn" if note.warnings else "ok")
        folder = e.get("folder")
        session_id = (e.get("header") or {}).get("id")
        rows.append(IndexRow(cell(e.get("input")), "-" if session_id is None else ident(session_id), verdict, status,
                             None if reason is None else as_text(reason), note.warnings, note.more,
                             cell(e.get("events"), "-"), folder if type(folder) is str else None))
    return rows
