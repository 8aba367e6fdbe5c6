"""Append-only proof: a hash chain over a log's lines, with checkpoints.

An export records, for each input, the chain's head after its last line and
a checkpoint every 1,000 lines and at each turn end. `verify-export --grown`
recomputes the chain over the lines the export saw: a log that only grew
since keeps every checkpoint and the head (the lines after are reported as
appended); a log rewritten anywhere inside that prefix breaks the first
checkpoint after the change, and the per-line hashes of `events.csv` then
name the first line that differs.

The chain: h0 = SHA-256("dshreplay line chain v1"), h(n) = SHA-256(h(n-1) ||
line n), lines as stored (with their newline; a `.zstd` log's decompressed
lines), the header and blank lines included.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path

from dshreplay.core.driver import Observer
from dshreplay.io.reader import LogSource

SEED = hashlib.sha256(b"dshreplay line chain v1").digest()
EVERY = 1000


class TurnEndLines(Observer):
    """The lines of the `turn/end` events of a pass (checkpoints of the chain)."""

    types = frozenset({"turn/end"})

    def begin(self, run) -> None:
        self.lines: set[int] = set()

    def observe(self, record) -> None:
        self.lines.add(record.item.line)


def line_chain(source: LogSource, marks=frozenset(), every: int = EVERY) -> dict:
    """The chain over every line of `source`, with checkpoints every `every` lines and at `marks`."""
    h, lines, size, checkpoints = SEED, 0, 0, []
    sha256 = hashlib.sha256
    with source.reader() as reader:
        for lineno, _, raw in reader.physical_lines():
            h = sha256(h + raw).digest()
            lines, size = lineno, size + len(raw)
            if lineno % every == 0 or lineno in marks:
                checkpoints.append({"line": lineno, "sha256": h.hex()})
    return {"every": every, "lines": lines, "textBytes": size, "head": h.hex(), "checkpoints": checkpoints}


@dataclass(frozen=True)
class Growth:
    """How a log compares with the lines an export saw."""

    status: str  # "same", "grew", "shorter" or "rewritten"
    detail: str
    first_line: int | None = None  # rewritten: the first line that differs (when known)


def check_growth(source: LogSource, chain: dict, events_csv: Path | None = None) -> Growth:
    """Recompute the chain over the first `chain["lines"]` lines of `source`."""
    expected = {c["line"]: c["sha256"] for c in chain.get("checkpoints", []) if type(c) is dict}
    total = chain.get("lines")
    if type(total) is not int:
        return Growth("rewritten", "the manifest's chain has no line count")
    h, extra_lines, extra_bytes, last_good, reached = SEED, 0, 0, 0, 0
    sha256 = hashlib.sha256
    with source.reader() as reader:
        for lineno, _, raw in reader.physical_lines():
            if lineno > total:
                extra_lines, extra_bytes = extra_lines + 1, extra_bytes + len(raw)
                continue
            h = sha256(h + raw).digest()
            reached = lineno
            want = expected.get(lineno) if lineno < total else chain.get("head")
            if want is None:
                continue
            if h.hex() != want:
                return _rewritten(source, last_good + 1, lineno, events_csv)
            last_good = lineno
    if reached < total:
        return Growth("shorter", f"the log has {reached} lines, fewer than the {total} the export saw")
    if extra_lines:
        return Growth("grew", f"lines {total + 1}..{total + extra_lines} appended ({extra_bytes} bytes)")
    return Growth("same", "unchanged")


def _rewritten(source: LogSource, low: int, high: int, events_csv: Path | None) -> Growth:
    """The first differing line between two checkpoints, from events.csv's per-line hashes."""
    known: dict[int, str] = {}
    if events_csv is not None:
        try:
            with open(events_csv, newline="", encoding="utf-8") as fh:
                for row in csv.DictReader(fh):
                    line = row.get("line", "")
                    if line.isdigit() and low <= int(line) <= high and row.get("rawSha256"):
                        known.setdefault(int(line), row["rawSha256"])
        except (OSError, csv.Error, UnicodeDecodeError):
            known = {}
    if known:
        with source.reader() as reader:
            for lineno, _, raw in reader.physical_lines():
                if lineno > high:
                    break
                if lineno in known and hashlib.sha256(raw).hexdigest() != known[lineno]:
                    return Growth("rewritten", f"rewritten inside the exported prefix: line {lineno} differs",
                                  lineno)
    return Growth("rewritten", f"rewritten inside the exported prefix, within lines {low}..{high}")
