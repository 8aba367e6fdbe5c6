"""How a long run says how far it got, without knowing who shows it.

A `Meter` is told when a run starts (its size in bytes of a log, or in logs),
how far it got, and when it ends. The pass driver reports the bytes of the
log it has read, every few thousand records; a run over many logs reports
the logs done. The library shows nothing by default (`Options.progress` is
None); the command line gives a meter that draws click's progress bar on a
terminal (`dshreplay.cli.progress`).
"""

from __future__ import annotations

__all__ = ["Meter"]

BYTES, LOGS = "bytes", "logs"


class Meter:
    """What a long run tells of its progress; every method is optional."""

    def start(self, total: int | None, unit: str, label: str) -> None:
        """A run of `total` units (BYTES of a log's text, or LOGS; None: not known) begins."""

    def advance(self, done: int, unit: str) -> None:
        """The run of `unit`s got `done` of them from its start."""

    def finish(self, unit: str) -> None:
        """The run of `unit`s is over (done or stopped). (A run over many logs holds the
        runs over each: the unit says which one a call is about.)"""
