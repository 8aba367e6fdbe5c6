"""What view.html shows of one log: the fold as a compact change list, and the session's shape.

One pass (`build_view`) reads the log through the one fold and the session model's
trackers (`analyses.index.Indexer`: replacements, provenance, tool call pairs), the
observers of the timeline's spans (`analyses.spans.TimelinePass`: the page's lanes of
turns, steps, model calls, tool calls, compactions and failures are those spans, as
`timeline` and `otel` draw them) and `ChangeList`, which notes what the fold did at each seq:
a node appended (`[seq]`), or nodes `start` onwards (`n` of them) replaced by one
(`[seq, start, n]`). The page rebuilds the model's view at any seq S by applying the
changes with seq <= S to the empty surface (from the nearest checkpoint it keeps), so
the view it shows is the fold's own, change by change; `view_at` does the same here,
and a unit test holds it to `fold --at S` at every seq. Each node's message is kept
once, as blocks of text (`render.content_text`, the text every command shows).

When the fold fails, the change list stops there (the failure's seq is the last point
the page offers, with the reason): the policy of every command (NEEDS_VIEW past it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

from dshreplay._jsvalues import as_text, is_time
from dshreplay.analyses._eventtypes import event_text
from dshreplay.analyses._render import clean, content_text, one_line, role_of
from dshreplay.analyses.spans import (
    CALL,
    COMPACTION,
    FAILURE,
    NOT_STARTED,
    STEP,
    TOOL,
    TURN,
    SessionTimeline,
    TimedSpan,
    TimelinePass,
)
from dshreplay.analyses.trackers.calls import outcome_text
from dshreplay.analyses.trackers.logindex import Indexer, LogIndex
from dshreplay.core.driver import STOP, Observer, Record, Run, run_pass
from dshreplay.core.surface import SURFACE_TYPES, derive_message
from dshreplay.errors import DeriveError, DshReplayError, answered_for

if TYPE_CHECKING:
    from dshreplay.io.reader import LogSource

__all__ = ["ChangeList", "SessionView", "build_view", "runs", "view_at", "MAX_BLOCK_TEXT", "MAX_LINKS"]

MAX_BLOCK_TEXT = 20_000  # characters of one content block the page holds (the bundle's messages.jsonl has all)
MAX_LINKS = 50  # runs of sources or origins the page lists per node (`provenance --seq` lists them all)
PREVIEW = 80  # characters of an event's text in the events list
FAILURE_TEXT = 200  # characters of a failure's text
CHUNK = "assistant/chunk"
SAID = frozenset({"turn/start", "step/start", "step/end"})  # events whose text the events list's heading says


class ChangeList(Observer):
    """The fold's changes seq by seq, each new node's message as blocks, and the events as
    rows (runs of chunk events as one row), up to where the fold fails."""

    def begin(self, run: Run) -> None:
        self.run = run
        self.ops: list[list[int]] = []
        self.nodes: dict[int, dict[str, Any]] = {}
        self.rows: list[list[Any]] = []  # [seq, count, type, time, preview]
        self.type_names: dict[str, int] = {}
        self.t0: int | float | None = None  # the first event time (rows hold times from it, in ms)
        self.text_bytes = 0  # UTF-8 bytes of the nodes' message text, whole (what the page's size is held to)

    def observe(self, record: Record) -> None:
        if record.error is not None or self.run.fold_errors:
            return  # (the view stops where the fold fails)
        item = record.item
        kind = CHUNK if item.row is not None else item.type
        self._row(record, kind)
        replacement = record.replacement
        if replacement is not None:
            self.ops.append([item.seq, replacement.start, len(replacement.shadowed_seqs)])
        elif kind in SURFACE_TYPES and self.run.fold.last_node == item.seq:
            self.ops.append([item.seq])
        else:
            return
        node = self.nodes[item.seq] = _node(record)
        self.text_bytes += node.pop("bytes", 0)

    def _row(self, record: Record, kind: Any) -> None:
        item = record.item
        name = clean(kind if type(kind) is str else as_text(kind))
        rows = self.rows
        if name == CHUNK and rows and rows[-1][2] == self._type(CHUNK) and rows[-1][0] + rows[-1][1] == item.seq:
            rows[-1][1] += item.count
            return
        quiet = name == CHUNK or kind in SURFACE_TYPES or name in SAID  # (the page shows these otherwise)
        text = "" if quiet else one_line(event_text(item), PREVIEW)
        time = item.time if is_time(item.time) else None
        if time is not None:
            if self.t0 is None:
                self.t0 = time
            time -= self.t0
        rows.append([item.seq, item.count, self._type(name), time, text])

    def _type(self, name: str) -> int:
        found = self.type_names.get(name)
        if found is None:
            found = self.type_names[name] = len(self.type_names)
        return found


def _node(record: Record) -> dict[str, Any]:
    """One surface node as the page draws it: type, role, its message's blocks (or why it
    yields none)."""
    event: Any = record.item
    node: dict[str, Any] = {"type": clean(as_text(event.type))}
    try:
        has, message = derive_message(event)
    except DeriveError as exc:
        node.update(role="?", blocks=[], derive=clean(exc.message))
        return node
    node["role"] = role_of(event.type, message) if has else "-"
    node["blocks"], node["bytes"] = _blocks(message) if has else ([], 0)
    if not has:
        node["none"] = True  # (an assistant message with empty content: no model message)
    return node


def _blocks(message: Any) -> tuple[list[list[Any]], int]:
    """A message's content as [kind, id, text] per block: kind text, reasoning, call,
    result or other; id the tool call's (for pairing); text as every command shows it.
    And the UTF-8 bytes of that text, whole."""
    content = message.get("content") if type(message) is dict else None
    if type(content) is not list:
        text = content_text(content) if type(content) is str else ("" if content is None else as_text(content))
        return [["text", None, _cut(text)]], len(text.encode("utf-8", "surrogatepass"))
    out: list[list[Any]] = []
    size = 0
    for block in content:
        kind = block.get("type") if type(block) is dict else None
        ident: Any = None
        if kind == "tool-call":
            label, ident = "call", block.get("id")
        elif kind == "tool-result":
            label, ident = "result", block.get("toolCallId")
        elif kind in ("text", "reasoning"):
            label = kind
        else:
            label = "other"
        text = content_text([block])
        size += len(text.encode("utf-8", "surrogatepass"))
        out.append([label, None if ident is None else clean(as_text(ident)), _cut(text)])
    return out, size


def _cut(text: str) -> str:
    text = clean(text)
    if len(text) <= MAX_BLOCK_TEXT:
        return text
    return text[:MAX_BLOCK_TEXT] + f"\n… {len(text) - MAX_BLOCK_TEXT:,} more characters (messages.jsonl has them all)"


@dataclass
class SessionView:
    """Everything view.html draws, as one JSON value (`to_json`)."""

    index: LogIndex
    changes: ChangeList
    timeline: SessionTimeline  # its rows and failure marks (the spans `timeline` and `otel` draw, from the same pass)
    failure: DshReplayError | None
    title: str
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def last(self) -> int:
        """The last seq the scrubber reaches: the log's last, or where the fold fails."""
        if self.failure is not None and type(self.failure.seq) is int:
            return self.failure.seq
        return self.index.event_count - 1

    def to_json(self) -> dict[str, Any]:
        changes = self.changes
        return {"title": self.title, "last": self.last, "types": list(changes.type_names), "rows": changes.rows,
                "ops": changes.ops, "nodes": self._nodes(), "turns": self._turns(), "steps": self._steps(),
                "calls": self._calls(), "tools": self._tools(), "compactions": self._compactions(),
                "failures": self._failures(),
                "failure": None if self.failure is None else {"seq": self.failure.seq,
                                                              "text": clean(answered_for(self.failure))},
                "timed": changes.t0 is not None, **self.meta}

    def _nodes(self) -> list[list[Any]]:
        index = self.index
        shadows = {r.seq: r for r in index.shadows}
        by = {s: r for r in index.shadows for s in r.shadowed_seqs}
        pairs: dict[str, list[int | None]] = {}
        for call in index.tool_calls:
            if type(call.call_id) is str:
                pairs[clean(call.call_id)] = [call.asked_seq, call.result_seq]
        out = []
        types = self.changes.type_names
        for seq, node in self.changes.nodes.items():
            sources = index.sources.get(seq, ())
            prov: dict[str, Any] = {}
            if sources:
                prov["src"] = runs(sources)  # (whole: the page follows them for a replacement's origins)
            shadow = shadows.get(seq)
            if shadow is not None:  # (its origins: the page follows the nodes' sources when asked; computed
                # here for every replacement, they cost the whole session's length each: quadratic)
                prov.update(kind=shadow.kind, cid=None if shadow.compaction_id is None else as_text(
                    shadow.compaction_id), hid=list(shadow.shadowed_seqs))
            replaced = by.get(seq)
            if replaced is not None:
                prov["by"] = replaced.seq
            spills = index.spills_of(seq)
            if spills:
                prov["spilled"] = sum(s.omitted for s in spills)
            links = {ident: pairs[ident] for _, ident, _ in node["blocks"] if ident is not None and ident in pairs}
            entry = [seq, types[node["type"]], node["role"], node["blocks"], prov, links]
            note = node.get("derive", 1 if node.get("none") else None)
            out.append(entry if note is None else [*entry, note])
        return out

    def _turns(self) -> list[list[Any]]:
        return [[t.start_seq, t.end_seq, clean(as_text(t.attributes["turn"])), clean(as_text(t.attributes["ending"]))]
                for t in self._spans(TURN)]

    def _steps(self) -> list[list[Any]]:
        return [[s.start_seq, s.end_seq, clean(as_text(s.attributes["turn"])), clean(as_text(s.attributes["step"]))]
                for s in self._spans(STEP)]

    def _calls(self) -> list[list[Any]]:
        out = []
        for c in self._spans(CALL):
            a = c.attributes
            out.append([c.start_seq, c.end_seq, a["call"], clean(outcome_text(a["outcome"], a["errorCode"])),
                        a["failed"]])
        return out

    def _tools(self) -> list[list[Any]]:
        """Each tool call that ran (a span), and each asked for and never started (a moment at
        its asking, drawn as a point)."""
        out = [[t.start_seq, t.end_seq, _tool_name(t.attributes), clean(as_text(t.attributes["outcome"])),
                bool(t.attributes["isError"])] for t in self._spans(TOOL)]
        out += [[m.seq, m.seq, _tool_name(m.attributes), clean(as_text(m.attributes["outcome"])), False]
                for m in self.timeline.moments if m.kind == NOT_STARTED]
        return sorted(out, key=lambda row: row[0])

    def _compactions(self) -> list[list[Any]]:
        return [[c.start_seq, c.end_seq, clean(f"compaction {as_text(c.attributes['compactionId'])}"),
                 c.attributes["status"]] for c in self._spans(COMPACTION)]

    def _spans(self, kind: str) -> list[TimedSpan]:
        """The timeline's spans of one kind, by start (the page looks them up by seq)."""
        return sorted(self.timeline.of_kind(kind), key=lambda span: span.start_seq)

    def _failures(self) -> list[list[Any]]:
        """[seq, text] of each failure the page marks: the timeline's failures (what the session
        summary lists: a provider error that ended a model call or a turn, a retry, a hook or a
        slash command or a compaction that failed), and where the fold fails."""
        out: list[list[Any]] = []
        for m in self.timeline.moments:
            if m.kind == FAILURE:
                message = m.attributes.get("message")
                text = as_text(m.name) if message is None else f"{as_text(m.name)}: {as_text(message)}"
                out.append([m.seq, one_line(text, FAILURE_TEXT)])
        if self.failure is not None and type(self.failure.seq) is int:
            out.append([self.failure.seq, clean(answered_for(self.failure))])
        return sorted(out, key=lambda f: f[0])


def _tool_name(attributes: dict[str, Any]) -> str:
    return clean(f"{as_text(attributes['tool'])} {as_text(attributes['callId'])}")


def runs(seqs: Iterable[int]) -> list[list[int]]:
    """Seqs in order as runs [first, last] of consecutive ones: a message's sources are
    mostly one run of chunks."""
    out: list[list[int]] = []
    for seq in seqs:
        if out and out[-1][1] == seq - 1:
            out[-1][1] = seq
        else:
            out.append([seq, seq])
    return out


def build_view(source: LogSource, title: str) -> SessionView:
    """One pass over `source` (read as given: redact it first for a redacted page)."""
    indexer, changes, spans = Indexer(), ChangeList(), TimelinePass()
    run = run_pass(source, [indexer, changes, *spans.observers], on_fold_error=STOP)
    failure = run.failure
    if failure is not None and failure.path is None:
        failure.path = run.path
    return SessionView(indexer.index, changes, spans.timeline(run), failure, title)


def view_at(ops: list[list[int]], seq: int) -> list[int]:
    """The nodes of the model's view after `seq`, from the change list as the page applies it."""
    nodes: list[int] = []
    for op in ops:
        if op[0] > seq:
            break
        if len(op) == 1:
            nodes.append(op[0])
        else:
            at = nodes.index(op[1])
            nodes[at:at + op[2]] = [op[0]]
    return nodes
