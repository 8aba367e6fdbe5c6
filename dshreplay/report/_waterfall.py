"""The report's waterfall: turns, model calls and tool calls as bars on one axis (time, or seqs
for a log without times), problems first, with a one-line headline of what went wrong."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from dshreplay._jsvalues import as_text, is_time, utc_time
from dshreplay.analyses._render import counted
from dshreplay.analyses.trackers.calls import Call
from dshreplay.analyses.trackers.logindex import LogIndex
from dshreplay.analyses.trackers.toolcalls import (
    ToolCall,
)
from dshreplay.analyses.trackers.turns import INTERRUPTED, UNKNOWN, Span
from dshreplay.report._view import (
    Listing,
    approval_text,
    call_href,
    call_note,
    call_status,
    duration_text,
    ident,
    listing,
    tool_note,
    tool_status,
    turn_status,
)
from dshreplay.results._tables import tool_call_facts

MIN_BAR = 0.4  # percent of the track: the narrowest bar drawn, so an instant call stays visible




PROBLEMS = ("failed", "aborted", "interrupted", "cancelled", "open")  # statuses the failures list names


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
