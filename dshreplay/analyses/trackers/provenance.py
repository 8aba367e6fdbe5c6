"""Where the model's view came from: replacements, their meters, origins, diffs.

`ShadowTracker` watches the fold replace surface ranges and records each
replacement with what priced it (the metering event right before it).
`origins` follows `sourceEventSeqs` transitively. `diff_states` compares the
model's view at two seqs. All of it reads the one fold in `surface`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from dshreplay._jsvalues import as_text, dig
from dshreplay.core.driver import Observer, Record, Run
from dshreplay.core.surface import SURFACE_TYPES, Replacement, SurfaceState, numbered
from dshreplay.io.reader import Event

if TYPE_CHECKING:
    from dshreplay.analyses.trackers.spills import Spill

__all__ = ["MessageProvenance", "Replaced", "ShadowRecord", "ShadowTracker", "ViewDiff", "diff_states",
           "message_provenance"]

METERS: dict[object, str] = {"compaction/summary": "summary", "compaction/prune": "prune"}  # (keyed by event type)


@dataclass(frozen=True)
class ShadowRecord:
    """One replacement: what it shadowed, what kind it was, what priced it."""

    seq: int
    kind: str  # summary | prune | tool-result-rewrite | other
    start: int
    end: int
    shadowed_seqs: tuple[int, ...]
    meter_seq: int | None
    tokens: Any  # (the metering event's shadowedTokenCount, as logged)
    compaction_id: Any  # (as logged)
    chain: tuple[int, ...]  # shadowed nodes that were themselves replacements

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "kind": self.kind, "start": self.start, "end": self.end,
                "shadowedSeqs": list(self.shadowed_seqs), "meterSeq": self.meter_seq,
                "tokens": self.tokens, "compactionId": self.compaction_id, "chain": list(self.chain)}


def _data_get(record: dict[str, Any], *keys: str) -> Any:
    return dig(record, "data", *keys)


def meter_of(record: Record) -> Event | None:
    """The metering event directly before a record (compaction/summary or
    compaction/prune): what its replacement, if it makes one, is priced by."""
    previous: Event | None = record.previous  # type: ignore[assignment]  # (a surface event's previous record)
    return previous if previous is not None and previous.type in METERS else None


class Links(Protocol):
    """What provenance reads of a log's index (`analyses.logindex.LogIndex`, which imports this
    module: named here by what it offers)."""

    ops: dict[int, str | tuple[int, int]]  # surface event -> "append" or its replaced range
    sources: dict[int, tuple[int, ...]]  # surface event -> its sourceEventSeqs
    shadows: list[ShadowRecord]

    def type_of(self, seq: int) -> object: ...

    def origins(self, seq: int) -> list[tuple[int, object]]: ...

    def spills_of(self, seq: int) -> tuple[Spill, ...]: ...


class ShadowTracker(Observer):
    """Every replacement the fold makes, with what priced it: the metering event
    (`meter_of`) directly before it. `by_seq` holds each ShadowRecord by its seq."""

    types = SURFACE_TYPES  # (only surface events make replacements)

    def begin(self, run: Run) -> None:
        self.shadows: list[ShadowRecord] = []
        self.by_seq: dict[int, ShadowRecord] = {}
        self.replacers: set[int] = set()

    def observe(self, record: Record) -> None:
        if record.replacement is not None:
            event: Event = record.item  # type: ignore[assignment]  # (types: surface events only, Events)
            shadow = self._record(event, record.replacement, meter_of(record))
            self.shadows.append(shadow)
            self.by_seq[event.seq] = shadow
            self.replacers.add(event.seq)

    def _record(self, event: Event, r: Replacement, meter: Event | None) -> ShadowRecord:
        if meter is not None and meter.seq != event.seq - 1:
            meter = None  # (an unreadable line between them)
        if meter is not None:
            kind = METERS[meter.type]
        elif event.type == "tool/result":
            kind = "tool-result-rewrite"
        else:
            kind = "other"
        cid = _data_get(meter.record, "compactionId") if meter is not None else None
        if cid is None:
            cid = _data_get(event.record, "source", "compactionId")
        return ShadowRecord(
            seq=event.seq, kind=kind, start=r.start, end=r.end, shadowed_seqs=r.shadowed_seqs,
            meter_seq=meter.seq if meter is not None else None,
            tokens=_data_get(meter.record, "shadowedTokenCount") if meter is not None else None,
            compaction_id=cid, chain=tuple(s for s in r.shadowed_seqs if s in self.replacers))


def origins(seq: int, sources: dict[int, tuple[int, ...]], types: Sequence[object]) -> list[tuple[int, object]]:
    """Every event `seq` stands for: the transitive closure of `sourceEventSeqs`.

    Through replacements down to the append-origin messages they replaced and
    the events (chunks, tool calls, compaction markers) those cite. Returns
    (seq, type) pairs in seq order, `seq` itself excluded.
    """
    seen: set[int] = set()
    stack = list(sources.get(seq, ()))
    while stack:
        s = stack.pop()
        if s in seen:
            continue
        seen.add(s)
        stack.extend(sources.get(s, ()))
    return [(s, types[s] if 0 <= s < len(types) else None) for s in sorted(seen)]


@dataclass(frozen=True)
class ViewDiff:
    """The model's view at `a` versus at `b`."""

    a: int | None  # (the seqs of the two views; None: before any event)
    b: int | None
    kept: tuple[int, ...]
    removed: tuple[tuple[int, int | None], ...]  # (seq, replacement that shadowed it or None)
    added: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"from": self.a, "to": self.b, "kept": list(self.kept),
                "removed": [{"seq": s, "by": by} for s, by in self.removed], "added": list(self.added)}


def diff_states(before: SurfaceState, after: SurfaceState,
                shadows: Iterable[Replacement | ShadowRecord] | None = None) -> ViewDiff:
    """Compare two views. `removed` names the replacement that shadowed each node
    (the first one after `before`'s seq that took it off the surface), when
    the later view is `after`; going back in time nothing shadowed them.
    `shadows` defaults to the replacements the later state records."""
    if shadows is None:
        shadows = after.replacements
    kept_set = set(before.nodes) & set(after.nodes)
    forward = (after.seq or 0) >= (before.seq or 0)
    shadowed_by: dict[int, int] = {}
    if forward:
        low, high = before.seq if before.seq is not None else -1, after.seq if after.seq is not None else -1
        for record in shadows:
            if low < record.seq <= high:
                for s in record.shadowed_seqs:
                    shadowed_by.setdefault(s, record.seq)
    removed = tuple((s, shadowed_by.get(s)) for s in before.nodes if s not in kept_set)
    added = tuple(s for s in after.nodes if s not in kept_set)
    return ViewDiff(before.seq, after.seq, tuple(s for s in after.nodes if s in kept_set), removed, added)


@dataclass(frozen=True)
class Replaced:
    """What took a node off the model's view: the replacement `by` (its seq, kind and
    compaction id) and the node of the view that stands for it now (`visible_as`: `by`
    itself, or the replacement that in turn shadowed `by`, and so on)."""

    by: ShadowRecord
    visible_as: int

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.by.seq, "kind": self.by.kind, "compactionId": self.by.compaction_id,
                "visibleAs": self.visible_as}

    def describe(self, seq: int) -> str:
        """One line: what replaced node `seq`, and what stands for it in the view."""
        by = self.by
        how = by.kind + (f", compaction {as_text(by.compaction_id)}" if by.compaction_id is not None else "")
        now = "" if self.visible_as == by.seq else f"; in the view as seq {self.visible_as}"
        return f"seq {seq} is not in the model's view: replaced at seq {by.seq} ({how}){now}"


@dataclass(frozen=True)
class MessageProvenance:
    """Where one model-visible message came from (or, asked for by seq, one that a
    replacement took off the view: `index` None, `replaced` says by what).

    Its origins are worked out from the log's index each time they are asked
    for, and never kept: in a chain of N messages each citing the one before,
    they hold N²/2 seqs in all (a 1 MB log's took 4 GB), so rows are written
    one at a time and each row's origins live only while it is written.
    """

    index: int | None  # position among the model messages, from 1 (None: replaced, not in the view)
    seq: int
    type: object
    op: str | tuple[int, int] | None  # "append" or the replaced range (LogIndex.ops)
    sources: tuple[int, ...]
    links: Links = field(repr=False, compare=False)  # the LogIndex its origins are followed in
    spills: tuple[Spill, ...] = ()  # spills.Spill notes in it: output dsh kept out of the model's view
    replaced: Replaced | None = None  # the replacement that took it off the view, when it is not in it

    @property
    def origins(self) -> tuple[tuple[int, object], ...]:
        """Every event the message stands for, as (seq, type) in seq order (see `origins`)."""
        return tuple(self.links.origins(self.seq))

    def to_json(self) -> dict[str, Any]:
        op = self.op if not isinstance(self.op, tuple) else {"op": "replace", "start": self.op[0],
                                                              "end": self.op[1]}
        return {"index": self.index, "seq": self.seq, "type": self.type, "op": op,
                "sources": list(self.sources),
                "origins": [{"seq": s, "type": t} for s, t in self.links.origins(self.seq)],
                "spills": [{"omittedBytes": s.omitted, "locator": s.locator, "inherited": s.inherited}
                           for s in self.spills],
                "replacedBy": self.replaced.to_json() if self.replaced is not None else None}


def message_provenance(node_messages: list[tuple[int, object | None]], index: Links, *, message: int | None = None,
                       seq: int | None = None) -> list[MessageProvenance]:
    """Provenance of each model message (`node_messages` as SurfaceState.node_messages()),
    or only of message number `message` (from 1) or of the message of node `seq`:
    origins are followed only when a row's are asked for. A `seq` that a replacement
    took off this view gives its row with `replaced` set (see `replaced_in_view`)."""
    out = []
    for node, position, _ in numbered(node_messages):
        if position is not None and (message is None or message == position) and (seq is None or seq == node):
            out.append(MessageProvenance(position, node, index.type_of(node), index.ops.get(node),
                                         index.sources.get(node, ()), index, index.spills_of(node)))
    if seq is not None and not out:
        replaced = replaced_in_view(seq, {node for node, _ in node_messages}, index.shadows)
        if replaced is not None:
            out.append(MessageProvenance(None, seq, index.type_of(seq), index.ops.get(seq),
                                         index.sources.get(seq, ()), index, index.spills_of(seq), replaced))
    return out


def replaced_in_view(seq: int, view: set[int], shadows: list[ShadowRecord]) -> Replaced | None:
    """The replacement that shadowed node `seq`, when a chain of replacements leads from
    it to a node of `view` (the nodes of the model's view at some seq); else None: the
    node is in that view, not shadowed, or shadowed only after it."""
    shadowed_by = {shadowed: record for record in shadows for shadowed in record.shadowed_seqs}
    first = shadowed_by.get(seq)
    record = first
    while record is not None and record.seq not in view:
        record = shadowed_by.get(record.seq)
    return Replaced(first, record.seq) if first is not None and record is not None else None
