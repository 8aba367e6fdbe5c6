"""What report.html and index.html show, as plain rows for their templates.

Every fact comes from the export's one pass: the index's turns (TurnSpans),
model calls (CallTracker) and tool calls with their approvals and hooks
(ToolLedger, attached by id), the findings and the call views the bundle
writes. Nothing is derived again here: facts are placed on the waterfall's
axis, worded, and long lists cut (`Listing`). The templates
(`report/templates/`) only lay the rows out; `htmlreport` renders them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Generic, TypeVar

from dshreplay.analyses.calls import Call, failed, outcome_text
from dshreplay.analyses.compaction import BracketRecord
from dshreplay.analyses.index import LogIndex
from dshreplay.analyses.provenance import ShadowRecord
from dshreplay.analyses.render import counted, one_line
from dshreplay.analyses.tools import (
    COMPLETED,
    ERROR,
    NOT_STARTED,
    ToolCall,
)
from dshreplay.analyses.turns import CLOSED_BY_DSH, INTERRUPTED, TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN, UNKNOWN, Span
from dshreplay.jsvalues import as_text, is_time, shown, utc_time
from dshreplay.results.tables import tool_call_facts

S = TypeVar("S")
T = TypeVar("T")

FIRST_ROWS = 40  # rows of a long list shown at once; the rest one click away (<details>)
MAX_ROWS = 2000  # rows of a list the report holds at all (the bundle's data files have every one)
FIRST_ITEMS = 12  # items of a long list of facts (turn endings) shown inline
ARGUMENTS_WIDTH = 300  # characters of a tool call's arguments in the table (tools.csv has them whole)
MIN_BAR = 0.4  # percent of the track: the narrowest bar drawn, so an instant call stays visible
MAX_SPANS = 2000  # marks of each lane of the seq timeline drawn in the report
PROBLEMS = ("failed", "aborted", "interrupted", "cancelled", "open")  # statuses the failures list names


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

@dataclass(frozen=True, slots=True)
class Bar:
    """One row of the waterfall: a turn, a model call or a tool call, placed on the axis.

    `left` and `width` are percents of the track as CSS text (None: the log gives the
    item no place on this axis, e.g. a tool call never started on a time axis); `wait`
    is the waiting part inside the bar (time to first chunk, an approval), as CSS
    percents of the bar: (left, width)."""

    kind: str  # "turn", "model" or "tool"
    label: str
    status: str  # "ok", "failed", "aborted", "interrupted", "cancelled", "open" or "warn"
    note: str  # the outcome in words: "error CONTEXT_WINDOW_EXCEEDED", "aborted by user"
    when: str  # where it starts: its UTC time, or "seq N" on a log without times
    title: str  # the hover text: seqs, times and outcome
    href: str | None  # the call's model view, row of a table, or None
    left: str | None
    width: str | None
    wait: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Tick:
    left: str  # percent of the track
    label: str


@dataclass(frozen=True, slots=True)
class Waterfall:
    axis: str  # "time" or "seq"
    caption: str
    ticks: list[Tick]
    rows: Listing[Bar]
    problems: Listing[Bar]  # the failed, aborted, interrupted, cancelled and open ones
    summary: str  # the problems counted, for the report's first line ("" when there are none)


@dataclass(frozen=True, slots=True)
class _Place:
    """An item's extent on the axis (in ms or seqs); `wait`: the waiting part's extent."""

    start: float | None
    end: float | None
    wait: tuple[float, float] | None = None


class _Axis:
    """Positions on the track: the axis's range mapped to percents."""

    def __init__(self, lo: float, hi: float) -> None:
        self.lo, self.span = lo, max(hi - lo, 1)

    def bar(self, place: _Place, open_end: float) -> tuple[str | None, str | None, tuple[str, str] | None]:
        if place.start is None:
            return None, None, None
        end = place.end if place.end is not None else open_end
        left = (place.start - self.lo) / self.span * 100
        width = max((end - place.start) / self.span * 100, MIN_BAR)
        left = min(max(left, 0.0), 100 - width)
        wait = None
        if place.wait is not None and end > place.start:
            length = end - place.start
            a = (place.wait[0] - place.start) / length * 100
            b = (place.wait[1] - place.wait[0]) / length * 100
            wait = (_pct(min(max(a, 0.0), 100.0)), _pct(min(max(b, 0.0), 100.0 - max(a, 0.0))))
        return _pct(left), _pct(width), wait


def _pct(value: float) -> str:
    return f"{value:.2f}"


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


def waterfall(index: LogIndex, views: Iterable[Mapping[str, Any]],
              failure: Mapping[str, Any] | None = None) -> Waterfall:
    """Turns, model calls and tool calls in log order, on a time axis when the log has
    times (every turn and model call timed), else on the seq axis (a projected log). Where
    the fold fails (`failure`, its error's JSON), only what starts before it, as `stats`
    answers, and the headline leads with the failure."""
    viewed = {v["call"] for v in views}
    turns, calls, tools = index.turn_spans, index.calls, index.tool_calls
    timed = bool(turns or calls) and all(is_time(t.start_time) for t in turns) \
        and all(is_time(c.first_chunk_time) for c in calls)
    place_turn, place_call, place_tool = ON_TIME if timed else ON_SEQS
    failed_at = failure["seq"] if failure is not None and type(failure.get("seq")) is int else None
    items = [_Item(t.start, 0, t, place_turn(t), turn_status(t.ending_read(failed_at))) for t in turns]
    items += [_Item(c.first_chunk_seq if c.first_chunk_seq is not None else 0, 1, c, place_call(c), call_status(c))
              for c in calls]
    items += [_Item(_tool_first_seq(tc), 2, tc, place_tool(tc), tool_status(tc), n)
              for n, tc in enumerate(tools, 1)]
    if failed_at is not None:  # (the answer reaches the seqs before it)
        items = [i for i in items if i.seq < failed_at]
    if timed:
        starts = [i.place.start for i in items if i.place.start is not None]
        lo = min(starts, default=0.0)
        hi = max([*starts, *(i.place.end for i in items if i.place.end is not None)], default=lo + 1)
    else:
        lo, hi = 0.0, float(max(index.event_count, 1))
    axis = _Axis(lo, hi)
    items.sort(key=attrgetter("seq", "order"))
    problems = [i for i in items if i.status in PROBLEMS]

    frame = _Frame(axis, hi, timed, viewed, failed_at)

    def bars(chosen: list[_Item]) -> Listing[Bar]:
        return listing(chosen, lambda i: _bar(i, frame))

    if timed:
        caption = (f"Time from {utc_time(lo)} ({duration_text(hi - lo)} in all); hover a bar for its seqs, "
                   "click it for its model view or row. Striped parts are waits: for the first chunk, "
                   "for an approval.")
        ticks = [Tick(_pct(f * 100), "+" + duration_text((hi - lo) * f) if f else "0") for f in (0, .25, .5, .75, 1)]
    else:
        caption = ("This log has no event times (a projected log): the axis is event seqs, so waits do "
                   "not show; hover a bar for its seqs, click it for its model view or row.")
        ticks = [Tick(_pct(f * 100), f"seq {round(lo + (hi - lo) * f)}") for f in (0, .25, .5, .75, 1)]
    lead = [] if failure is None else [f"the fold fails at seq {as_text(failure.get('seq'))} "
                                       f"({as_text(failure.get('code'))}): nothing past it is answered"]
    return Waterfall("time" if timed else "seq", caption, ticks, bars(items), bars(problems),
                     ", ".join([*lead, *filter(None, [headline(problems)])]))


@dataclass(frozen=True, slots=True)
class _Item:
    """A turn, model call or tool call before it is drawn: where it starts in the log, its
    place on the axis and its status (what the failures list and headline count)."""

    seq: int
    order: int  # at one seq: a turn, then a model call, then a tool call
    what: Span | Call | ToolCall
    place: _Place
    status: str
    number: int = 0  # a tool call's row in the tool-call table


@dataclass(frozen=True, slots=True)
class _Frame:
    """What every bar is drawn against: the axis, the end of the log on it (where what never
    ended stops), whether it is a time axis, and the calls whose model view the report draws."""

    axis: _Axis
    end: float
    timed: bool
    viewed: set[Any]
    failed_at: int | None = None  # where the fold fails: a turn open there ends "unknown"

    def when(self, place: _Place) -> str:
        if place.start is None:
            return "-"
        return (utc_time(place.start) or "-") if self.timed else f"seq {place.start:.0f}"


def _bar(item: _Item, frame: _Frame) -> Bar:
    what = item.what
    if isinstance(what, Span):
        return _turn_bar(what, item, frame)
    if isinstance(what, Call):
        return _call_bar(what, item, frame)
    return _tool_bar(what, item, frame)


HEADLINES = [  # (kind, status, one, many): how the first line counts the problems, in this order
    ("model", "failed", "failed model call", "failed model calls"),
    ("tool", "failed", "failed tool call", "failed tool calls"),
    ("turn", "failed", "turn ended in error", "turns ended in error"),
    ("turn", "aborted", "aborted turn", "aborted turns"),
    ("model", "cancelled", "cancelled model call", "cancelled model calls"),
    ("tool", "cancelled", "tool call not started", "tool calls not started"),
    ("tool", "open", "tool call without an outcome", "tool calls without an outcome"),
    ("model", "open", "unfinished model call", "unfinished model calls"),
]


KINDS = ("turn", "model", "tool")  # by _Item.order


def headline(problems: Sequence[_Item]) -> str:
    """The problems counted in words: "1 failed model call, 1 aborted turn, interrupted: the log
    ends inside turn 3"."""
    counts: dict[tuple[str, str], int] = {}
    for i in problems:
        key = (KINDS[i.order], i.status)
        counts[key] = counts.get(key, 0) + 1
    parts = [counted(counts[(kind, status)], one, many)
             for kind, status, one, many in HEADLINES if (kind, status) in counts]
    parts += [f"interrupted: the log ends inside turn {ident(i.what.turn)}" if i.what.ending == INTERRUPTED
              else f"turn {ident(i.what.turn)} {i.what.ending}" for i in problems
              if i.status == "interrupted" and isinstance(i.what, Span)]
    return ", ".join(parts)


def _tool_first_seq(call: ToolCall) -> int:
    for seq in (call.asked_seq, call.call_seq, call.approval.asked_seq if call.approval else None, call.result_seq):
        if seq is not None:
            return seq
    return 0


# where turns, model calls and tool calls lie on an axis
Placer = tuple[Callable[[Span], _Place], Callable[[Call], _Place], Callable[[ToolCall], _Place]]


def _time_turn(span: Span) -> _Place:
    return _Place(_ms(span.start_time), _ms(span.end_time) if span.end is not None else None)


def _time_call(call: Call) -> _Place:
    """From the request (the event before its first chunk) to its last chunk; the wait: to its first."""
    first, asked = _ms(call.first_chunk_time), _ms(call.requested_at)
    start = asked if asked is not None else first
    wait = (start, first) if start is not None and first is not None and first > start else None
    return _Place(start, _ms(call.last_chunk_time), wait)


def _time_tool(call: ToolCall) -> _Place:
    """From its approval's ask or its tool/call, whichever is first, to its result; the wait: the approval."""
    approval = call.approval
    asked = _ms(approval.asked_time) if approval is not None else None
    decided = _ms(approval.decided_time) if approval is not None else None
    starts = [t for t in (_ms(call.started_at), asked) if t is not None]
    wait = (asked, decided) if asked is not None and decided is not None else None
    return _Place(min(starts) if starts else None, _ms(call.finished_at), wait)


def _seq_turn(span: Span) -> _Place:
    last = span.last
    return _Place(span.start, None if last is None else last + 1)  # (a bar ends past its last event)


def _seq_call(call: Call) -> _Place:
    last = call.last_chunk_seq if call.last_chunk_seq is not None else call.first_chunk_seq
    return _Place(call.first_chunk_seq, None if last is None else last + 1)


def _seq_tool(call: ToolCall) -> _Place:
    approval = call.approval
    starts = [s for s in (call.call_seq, approval.asked_seq if approval else None) if s is not None]
    ends = [s for s in (call.result_seq, approval.decided_seq if approval else None) if s is not None]
    return _Place(min(starts) if starts else call.asked_seq, max(ends) + 1 if ends else None)


ON_TIME: Placer = (_time_turn, _time_call, _time_tool)
ON_SEQS: Placer = (_seq_turn, _seq_call, _seq_tool)


def _ms(value: object) -> float | None:
    """A log time as a number of epoch ms, or None (`is_time`)."""
    return value if isinstance(value, (int, float)) and is_time(value) else None


TURN_STATUS = {"completed": "ok", INTERRUPTED: "interrupted", CLOSED_BY_DSH: "interrupted"}


def turn_status(ending: str) -> str:
    """A turn's ending (`Span.ending`) as the report marks it."""
    if ending in TURN_STATUS:
        return TURN_STATUS[ending]
    if ending.startswith("aborted"):
        return "aborted"
    return "failed" if ending.startswith("error") else "warn"


def _turn_bar(span: Span, item: _Item, frame: _Frame) -> Bar:
    ending = span.ending_read(frame.failed_at)
    last = span.last
    end = f"the fold failure at seq {frame.failed_at}" if ending == UNKNOWN \
        else "the end of the log (interrupted)" if last is None else f"seq {last}"
    times = ""
    if frame.timed:
        times = f"; {utc_time(span.start_time)}, {duration_text(span.duration_ms)}"
    title = f"turn {ident(span.turn)}: seqs {span.start} to {end}{times}; {ending}"
    left, width, _ = frame.axis.bar(item.place, frame.end)
    return Bar("turn", f"turn {ident(span.turn)}", item.status, ending, frame.when(item.place), title,
               None, left, width)


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


def _call_bar(call: Call, item: _Item, frame: _Frame) -> Bar:
    note = call_note(call)
    model = f"{ident(call.provider)}/{ident(call.model)}"
    last = call.last_chunk_seq if call.last_chunk_seq is not None else call.first_chunk_seq
    title = f"call {call.call} (turn {ident(call.turn)}, step {ident(call.step)}, {model}): seqs " \
            f"{call.first_chunk_seq}-{last}"
    if frame.timed:
        asked = _ms(call.requested_at)
        title += (f"; requested {utc_time(asked)}, first chunk after {duration_text(call.latency_ms)}" if asked
                  else f"; first chunk at {utc_time(call.first_chunk_time)}")
        title += f", streamed {duration_text(call.duration_ms)}"
    title += f"; {note}"
    left, width, wait = frame.axis.bar(item.place, frame.end)
    return Bar("model", f"call {call.call}", item.status, note, frame.when(item.place), title,
               call_href(call.call, frame.viewed), left, width, wait)


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


def _tool_bar(call: ToolCall, item: _Item, frame: _Frame) -> Bar:
    note = tool_note(call)
    seqs = ", ".join(f"{name} {seq}" for name, seq in (("asked", call.asked_seq), ("tool/call", call.call_seq),
                                                       ("result", call.result_seq)) if seq is not None)
    title = f"{ident(call.tool)} {ident(call.call_id)} (turn {ident(call.turn)}, step {ident(call.step)})" \
            f": seqs {seqs or '-'}"
    if frame.timed:
        title += f"; {duration_text(call.duration_ms)}"
    approval = approval_text(tool_call_facts(call))
    if approval != "-":
        title += f"; approval {approval}"
    title += f"; {note}"
    left, width, wait = frame.axis.bar(item.place, frame.end)
    return Bar("tool", ident(call.tool), item.status, note, frame.when(item.place), title, f"#tool-{item.number}",
               left, width, wait)


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
