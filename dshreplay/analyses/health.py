"""`inspect`: the health summary an incident starts with.

When the fold fails, the summary is that of the events before the failure: it
says how far it reaches (`answeredUpTo`, `error`), and the turn in force at the
failure is of unknown outcome, not interrupted: dsh refuses such a log, so it
synthesizes nothing (no closers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dshreplay._jsvalues import utc_time
from dshreplay.analyses.trackers.logindex import LogIndex
from dshreplay.analyses.trackers.toolcalls import Closer
from dshreplay.errors import FoldError, LineError, answered_up_to

__all__ = ["Health"]


@dataclass(frozen=True)
class Health:
    index: LogIndex

    @property
    def failure(self) -> FoldError | LineError | None:
        """Where the fold fails (None: it reads to the end)."""
        return self.index.fold_errors[0] if self.index.fold_errors else None

    @property
    def closers(self) -> list[Closer]:
        """What dsh would append on load to close an interrupted last turn (none when
        the fold fails: dsh refuses the log)."""
        return [] if self.failure is not None else list(self.index.closers)

    def turn_endings(self) -> list[dict[str, Any]]:
        failure = self.failure
        return [{"turn": s.turn, "startSeq": s.start, "endSeq": s.end,
                 "ending": s.ending_read(None if failure is None else failure.seq)}
                for s in self.index.turn_spans]

    def to_json(self) -> dict[str, Any]:
        i = self.index
        h = i.header
        tail = i.torn_tail
        failure = self.failure
        endings = self.turn_endings()
        return {
            "path": i.path, "encoding": i.encoding,
            "header": {"id": h.get("id"), "version": h.get("version"), "cwd": h.get("cwd"),
                       "createdAt": utc_time(h.get("createdAt")), "parentSession": h.get("parentSession"),
                       "seedLength": h.get("seedLength"), "origin": h.get("origin"),
                       "delegationDepth": h.get("delegationDepth"), "agentPreset": h.get("agentPreset")},
            "events": i.event_count, "lines": i.lines,
            "answeredUpTo": answered_up_to(failure),
            "error": None if failure is None else failure.to_json(),
            "countsByType": dict(sorted(i.counts.items(), key=lambda kv: (-kv[1], str(kv[0])))),
            "turns": i.turns, "steps": i.steps, "calls": len(i.calls),
            "auxiliaryCalls": len(i.auxiliary_calls), "replacements": len(i.shadows),
            "surfaceNodes": len(i.final.nodes) if i.final is not None else None,
            "tornTail": None if tail is None else tail.to_json(),
            "interrupted": None if failure is not None else bool(i.closers),
            "turnEndings": endings,
            "lastTurn": endings[-1]["ending"] if endings else None,
            "closers": [c.to_json() for c in self.closers],
        }
