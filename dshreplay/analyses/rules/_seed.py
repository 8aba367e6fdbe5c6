"""A fork's seed: the header's `seedLength` counts the events a fork child
copied from its parent, so the event at that seq must be `session/end-seed`."""

from __future__ import annotations

from dshreplay.analyses.findings import finding
from dshreplay.analyses.rules._base import Family
from dshreplay.analyses.trackers.turns import Placed
from dshreplay.core.driver import Record, Run
from dshreplay.io.reader import seed_length


class SeedRules(Family):
    def begin(self, run: Run) -> None:
        super().begin(run)
        self.seed_length = seed_length(run.header)
        self.types = None if self.seed_length is not None else frozenset()  # (a log with no seed: nothing to read)
        self.checked = False

    def observe(self, record: Record) -> None:
        event: Placed
        event, seed = record.item, self.seed_length
        if event.seq <= seed < event.seq + event.count:  # type: ignore[operator]  # (observed only when the
            # header gives a seed length: `types` is empty otherwise)
            self.checked = True
            if event.type != "session/end-seed":
                self.add("DSH-E014", f"header seedLength {seed} points at {event.type}, not session/end-seed",
                         event)

    def at_end(self, last_seq: int | None) -> None:
        if self.seed_length is not None and not self.checked:
            self.findings.append(finding("DSH-E014", f"header seedLength {self.seed_length} is beyond the "
                                                     f"log's {0 if last_seq is None else last_seq + 1} events"))
