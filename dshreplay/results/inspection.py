"""`Session.inspect`'s answer: the health summary, printable as `inspect --json`.

Its own module: the health summary needs the index's analyses, which a
session that only folds never imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dshreplay.analyses.health import Health
from dshreplay.results._shapes import answer_json

__all__ = ["Inspection"]


@dataclass(frozen=True, repr=False)
class Inspection(Health):
    """The health summary (a `Health`) of one session."""

    def to_json(self) -> Any:
        """As `inspect --json` prints it: the summary, in its envelope when the fold fails
        before the log ends (the summary is then for the events before the failure)."""
        return answer_json(Health.to_json(self), self.failure)

    def __repr__(self) -> str:
        i = self.index
        failure = self.failure
        fold = "fold ok" if failure is None else f"fold fails at seq {failure.seq}"
        return (f"<Inspection {i.path!r}: {i.event_count} events, {i.turns} turns, {len(i.calls)} calls, "
                f"{fold}>")
