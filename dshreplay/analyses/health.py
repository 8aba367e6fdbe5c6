"""`inspect`: the health summary an incident starts with."""

from __future__ import annotations

from dataclasses import dataclass

from dshreplay.analyses.index import LogIndex
from dshreplay.analyses.render import utc_time


@dataclass(frozen=True)
class Health:
    index: LogIndex

    def to_json(self) -> dict:
        i = self.index
        h = i.header
        tail = i.torn_tail
        return {
            "path": i.path, "encoding": i.encoding,
            "header": {"id": h.get("id"), "version": h.get("version"), "cwd": h.get("cwd"),
                       "createdAt": utc_time(h.get("createdAt")), "parentSession": h.get("parentSession"),
                       "seedLength": h.get("seedLength"), "origin": h.get("origin"),
                       "delegationDepth": h.get("delegationDepth"), "agentPreset": h.get("agentPreset")},
            "events": i.event_count, "lines": i.lines,
            "countsByType": dict(sorted(i.counts.items(), key=lambda kv: (-kv[1], str(kv[0])))),
            "turns": i.turns, "steps": i.steps, "calls": len(i.calls),
            "auxiliaryCalls": len(i.auxiliary_calls), "replacements": len(i.shadows),
            "surfaceNodes": len(i.final.nodes) if i.final is not None else None,
            "foldErrors": [{"seq": e.seq, "line": e.line, "message": e.message} for e in i.fold_errors],
            "tornTail": None if tail is None else tail.to_json(),
            "interrupted": bool(i.closers),
            "turnEndings": [{"turn": s.turn, "startSeq": s.start, "endSeq": s.end, "ending": s.ending}
                            for s in i.turn_spans],
            "lastTurn": i.turn_spans[-1].ending if i.turn_spans else None,
            "closers": [c.to_json() for c in i.closers],
        }
