"""How a long run says how far it got, without knowing who shows it.

A `Meter` is told when a run starts (its size in bytes of a log, or in logs),
how far it got, and when it ends. The pass driver reports the bytes of the
log it has read, every few thousand records; a run over many logs reports
the logs done. The library shows nothing by default (`Options.progress` is
None); the command line gives a meter that draws click's progress bar on a
terminal (`dshreplay.cli._meter`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from dshreplay.options import ProgressMeter

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


class Relabelled(Meter):
    """A meter whose runs are shown under `relabel(label)`: an export shows a log's path as its
    bundle writes it (redacted), never as given. Pickled with its meter (a terminal's pickles
    to None, and then so does this)."""

    def __init__(self, meter: ProgressMeter, relabel: Callable[[str], str]) -> None:
        self.meter, self.relabel = meter, relabel

    @classmethod
    def of(cls, meter: ProgressMeter | None, relabel: Callable[[str], str]) -> Relabelled | None:
        return None if meter is None else cls(meter, relabel)

    def __reduce__(self) -> tuple[Callable[..., Relabelled | None], tuple[ProgressMeter, Callable[[str], str]]]:
        return Relabelled.of, (self.meter, self.relabel)

    def start(self, total: int | None, unit: str, label: str) -> None:
        self.meter.start(total, unit, self.relabel(label))

    def advance(self, done: int, unit: str) -> None:
        self.meter.advance(done, unit)

    def finish(self, unit: str) -> None:
        self.meter.finish(unit)
