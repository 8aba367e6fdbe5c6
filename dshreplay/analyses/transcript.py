"""The human transcript: what was said, in log order, not what the model sees.

FORMAT.md section 6: the transcript is the append-origin surface events in
log order; replacements are model-only, so each shows as a marker where the
model's view diverges from the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass

from dshreplay.analyses.provenance import ShadowTracker
from dshreplay.analyses.render import message_text, role_of, utc_time
from dshreplay.core.driver import SKIP, Observer, run_pass
from dshreplay.core.surface import SURFACE_TYPES, derive_message
from dshreplay.errors import DeriveError


@dataclass(frozen=True)
class Entry:
    """A message of the conversation, or a marker where the model's view diverges."""

    seq: int
    entry: str  # "message" or "replacement"
    type: str | None = None
    role: str | None = None
    time: str | None = None
    message: object = None
    kind: str | None = None  # for markers: summary | prune | tool-result-rewrite | other
    shadowed: tuple[int, ...] = ()

    def marker_text(self) -> str:
        what = {"summary": "summary", "prune": "prune", "tool-result-rewrite": "rewritten tool result"}.get(
            self.kind, "replacement")
        shadowed = self.shadowed
        span = f"seq {shadowed[0]}" if len(shadowed) == 1 else f"seqs {shadowed[0]}-{shadowed[-1]}"
        return f"[{span} replaced for the model by {what} at seq {self.seq}]"

    def to_json(self, reasoning: bool) -> dict:
        if self.entry == "replacement":
            return {"seq": self.seq, "entry": self.entry, "kind": self.kind, "shadowedSeqs": list(self.shadowed),
                    "text": self.marker_text()}
        return {"seq": self.seq, "entry": self.entry, "type": self.type, "role": self.role, "time": self.time,
                "text": message_text(self.message, reasoning), "message": self.message}


class TranscriptBuilder(Observer):
    """Collects transcript entries; observe it after `shadows` in the same pass."""

    def __init__(self, shadows: ShadowTracker) -> None:
        self.shadows = shadows
        self.entries: list[Entry] = []

    def observe(self, item, replacement) -> None:
        shadow = self.shadows.latest if replacement is not None else None
        if shadow is not None:
            self.entries.append(Entry(item.seq, "replacement", kind=shadow.kind, shadowed=shadow.shadowed_seqs))
        elif item.row is None and item.type in SURFACE_TYPES and item.record.get("surfaceOp") == "append":
            try:
                has, message = derive_message(item)
            except DeriveError:
                has, message = True, item.record.get("data")
            if has:
                self.entries.append(Entry(item.seq, "message", item.type, role_of(item.type, message),
                                          utc_time(item.time), message))


def transcript(source, observers=()) -> list[Entry]:
    """Transcript entries of a log (a LogSource), in one pass; events the fold
    rejects are skipped (validate says why), the transcript shows what it can."""
    shadows = ShadowTracker()
    builder = TranscriptBuilder(shadows)
    run_pass(source, [shadows, builder, *observers], on_fold_error=SKIP)
    return builder.entries
