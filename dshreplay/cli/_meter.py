"""The command line's progress meter: click's progress bar on stderr, on a terminal only.

A run shows its bar once it has taken `delay` seconds (a short command prints
nothing), with bytes read, rate and time left for one log, or logs done for
many. While a run over many logs is counted, the passes over each log are
not shown (their bars would fight for the line). A worker process gets no
meter: one pickles to None.
"""

from __future__ import annotations

import itertools
import sys
import time
from typing import TYPE_CHECKING, Callable, Iterable, TextIO

import click

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar  # (what click.progressbar returns)

from dshreplay._jsvalues import visible
from dshreplay.core.progress import BYTES, LOGS, Meter

DELAY = 2.0  # seconds a run goes unshown

Rate = tuple[int, float, str]  # what the bar's item shows: (units done, seconds since the start, unit)


def _none() -> None:
    return None


class TerminalMeter(Meter):
    def __init__(self, file: TextIO | None = None, *, delay: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.file = file if file is not None else sys.stderr
        self.delay = DELAY if delay is None else delay
        self.clock = clock
        self.logs = False  # a run over many logs is being counted
        self.run: tuple[int | None, str, str, float] | None = None  # (total, unit, label, began) of the run
        self.bar: ProgressBar[Rate] | None = None

    def __reduce__(self) -> tuple[Callable[[], None], tuple[()]]:
        return _none, ()

    def start(self, total: int | None, unit: str, label: str) -> None:
        if unit == BYTES and self.logs:  # a log's pass, inside a count of logs: not shown
            return
        self._close()
        self.logs = unit == LOGS
        self.run = (total, unit, label, self.clock())

    def advance(self, done: int, unit: str) -> None:
        run = self.run
        if run is None or run[1] != unit:
            return
        total, unit, label, began = run
        if self.bar is None:
            if self.clock() - began < self.delay:
                return
            # (a length unknown, as a zstd log's: click wants an iterable then, and draws a bar without end)
            endless: Iterable[Rate] | None = itertools.repeat((0, 0.0, unit)) if total is None else None
            self.bar = click.progressbar(endless, length=total, label=visible(label)[-40:], file=self.file,
                                         show_eta=total is not None, show_percent=total is not None,
                                         show_pos=unit == LOGS, item_show_func=self._rate)
            self.bar.render_progress()
        self.bar.update(max(done - self.bar.pos, 0), (done, self.clock() - began, unit))

    @staticmethod
    def _rate(item: Rate | None) -> str | None:
        if item is None or item[2] != BYTES:
            return None
        done, seconds, _ = item
        rate = done / seconds if seconds > 0 else 0
        return f"{_size(done)} read, {_size(rate)}/s"

    def finish(self, unit: str) -> None:
        if self.run is not None and self.run[1] == unit:
            self._close()
            self.logs = False

    def _close(self) -> None:
        if self.bar is not None:
            self.bar.render_finish()
            self.bar = None
        self.run = None


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"
