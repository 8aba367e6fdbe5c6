"""Every setting of a run, as one explicit value.

The command line (or a library caller) builds one `Options` and passes it
down; no module keeps a setting of its own that a run could change. Options
are frozen and picklable, so a process pool or a Dask worker gets exactly
the caller's settings.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from dshreplay._jsvalues import parse_count, shown

__all__ = ["Options", "DEFAULT", "parse_size", "available_cores", "DEFAULT_MAX_BYTES", "DEFAULT_MAX_LINE",
           "MAX_SIZE"]

DEFAULT_MAX_BYTES = 8 * 1024**3  # ceiling on decompressed zstd text
DEFAULT_MAX_LINE = 256 * 1024**2  # ceiling on one line: a line with no end stops there
MAX_SIZE = 1024**5  # the largest size a ceiling may be set to (1P): past what any file system holds
_SCALES = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}
_SIZE = r"([0-9]+)([KMGTP]?)"  # (compiled by `re` on first use, and cached: not at start-up)


def parse_size(text: str) -> int:
    """A size such as 500M or 4G (ASCII digits, then K, M, G, T or P, any case)
    in bytes, from 1 to MAX_SIZE. The one parser of sizes; ValueError says
    what is wanted."""
    match = re.fullmatch(_SIZE, text.strip().upper()) if type(text) is str else None
    number = parse_count(match.group(1), MAX_SIZE) if match else None
    scale = _SCALES[match.group(2)] if match else 0
    if number is None or not 0 < number * scale <= MAX_SIZE:
        raise ValueError("want a size such as 500M or 4G: ASCII digits and K, M, G, T or P, "
                         "from 1 byte to 1P")
    return number * scale


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class ProgressMeter(Protocol):
    """What `Options.progress` is told (`core.progress.Meter` implements it, each method a no-op:
    options sit below core, so the type is named here)."""

    def start(self, total: int | None, unit: str, label: str) -> None: ...

    def advance(self, done: int, unit: str) -> None: ...

    def finish(self, unit: str) -> None: ...


@dataclass(frozen=True)
class Options:
    """How to read logs and what to report.

    max_bytes   refuse a .zstd log whose text is larger (a decompression bomb)
    max_line    refuse a line longer than this (a line with no end)
    jobs        processes: for many logs at once, or for one large log's
                per-record checks (None: every available core)
    progress    a `core.progress.Meter` told how far long runs get (None: nobody is told)
    snapshot    accept dsh's test-snapshot placeholders ("{{cwd}}") as any value
    select      report only these finding codes or prefixes (None: all)
    ignore      never report these finding codes or prefixes
    all_findings  keep every finding (else 1,000 per code are listed, the rest counted); a
                record's schema errors stay at 20 either way, then one finding says it has more
    redactor    the redaction rules of an export (an `redaction.redactor.Redactor`)
    """

    max_bytes: int = DEFAULT_MAX_BYTES
    max_line: int = DEFAULT_MAX_LINE
    jobs: int | None = None
    progress: ProgressMeter | None = field(default=None, compare=False)
    snapshot: bool = False
    select: frozenset[str] | None = None
    ignore: frozenset[str] = frozenset()
    all_findings: bool = False
    redactor: object = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_line"):
            value = getattr(self, name)
            if type(value) is not int or not 0 < value <= MAX_SIZE:
                raise ValueError(f"{name} must be an integer from 1 to {MAX_SIZE}, not {shown(value)}")
        if self.jobs is not None and (type(self.jobs) is not int or self.jobs < 1):
            raise ValueError(f"jobs must be a positive integer or None, not {shown(self.jobs)}")

    @property
    def processes(self) -> int:
        """How many processes `jobs` means here."""
        return self.jobs if self.jobs is not None else available_cores()

    def with_(self, **changes: Any) -> Options:
        """A copy with some settings changed."""
        return replace(self, **changes)


DEFAULT = Options()
