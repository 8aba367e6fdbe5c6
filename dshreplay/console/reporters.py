"""Reporters: turn results into text for people or JSON for machines, looked up by name.

Library code returns results (`dshreplay.results`), each owning its `--json` shape; only
reporters write to a stream. Every reporter follows one interface, `Reporter`
(`console.interface`): one method per kind of answer. `REPORTERS` names them: "text"
(`console.text`), "json" and "jsonl" (here); `reporter_for(name)` makes one.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from dshreplay.console._interface import Reporter, _is_terminal, cell_json, json_text
from dshreplay.console._table import display_width, render_table
from dshreplay.console._text import TextReporter
from dshreplay.results._shapes import (
    HasJson,
    answer_json,
    envelope_of,
    exported_json,
    files_json,
    fold_json,
    health_facts,
    lineage_json,
    stats_json,
)

if TYPE_CHECKING:  # (validate's machinery is imported by the command that validates, not by every start)
    from dshreplay.analyses.health import Health
    from dshreplay.analyses.lineage import Node
    from dshreplay.analyses.query import RawLine
    from dshreplay.analyses.stats import SessionStats
    from dshreplay.analyses.trackers.calls import Call, Request
    from dshreplay.analyses.trackers.compaction import BracketRecord
    from dshreplay.analyses.trackers.provenance import MessageProvenance, ShadowRecord, ViewDiff
    from dshreplay.analyses.trackers.spills import Spill
    from dshreplay.analyses.transcript import Entry
    from dshreplay.analyses.validate import FileReport
    from dshreplay.core.driver import FoldReport
    from dshreplay.results._reports import IndexReport, UsageReport, Verification

__all__ = ["Reporter", "TextReporter", "JsonReporter", "JsonLinesReporter", "CsvReporter", "HasJson", "json_text",
           "envelope_of", "answer_json", "fold_json", "health_facts", "files_json", "stats_json", "lineage_json",
           "exported_json",
           "render_table", "display_width", "REPORTERS", "reporter_for"]


class CsvReporter:
    """Query results as CSV (RFC 4180, a header row; NULL as an empty cell), every cell as a
    bundle's CSVs write it (`csvcells.csv_cell`: no formula, nothing a terminal acts on)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def query(self, columns: list[str], rows: Sequence[Sequence[object]]) -> None:
        import csv

        from dshreplay.console._csvcells import csv_cell
        writer = csv.writer(self.out, lineterminator="\n")
        writer.writerow([csv_cell(c) for c in columns])
        for row in rows:
            writer.writerow([csv_cell(cell_json(v)) for v in row])


class JsonReporter(Reporter):
    """One JSON value per answer: the shapes below (`fold_json`, `files_json`, ...), one place
    each, which the library's results give as their `to_json()` too."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.envelope: dict[str, Any] | None = None  # set when the answer is for a prefix: `envelope_of`
        self.terminal = _is_terminal(self.out)

    def json(self, value: object) -> str:
        """`value` as this reporter writes it: json_text, escaped for a terminal when it writes to one."""
        return json_text(value, self.terminal)

    def emit(self, value: object) -> None:
        if self.envelope is not None:
            value = {**self.envelope, "answer": value}
        self.out.write(self.json(value))
        self.out.write("\n")

    def fold(self, report: FoldReport) -> None:
        self.emit(fold_json(report))

    def validate(self, reports: list[FileReport]) -> None:
        self.emit(files_json(reports))

    def items(self, items: Iterable[HasJson]) -> None:
        """Any list of report objects with `to_json()`."""
        self.emit([item.to_json() for item in items])

    def shadows(self, records: Sequence[ShadowRecord]) -> None:
        self.items(records)

    def brackets(self, records: Sequence[BracketRecord]) -> None:
        self.items(records)

    def calls(self, calls: Sequence[Call]) -> None:
        self.items(calls)

    def spills(self, spills: Sequence[Spill]) -> None:
        self.items(spills)

    def provenance(self, rows: Iterable[MessageProvenance]) -> None:
        """Row by row: each row's origins are worked out as it is written, then dropped."""
        with self.event_rows() as sink:
            for row in rows:
                sink(row)

    @contextmanager
    def event_rows(self) -> Iterator[Callable[[HasJson], None]]:
        """A sink for rows (events, provenance), written as they come: one JSON array (inside the
        envelope, when one is set before the first row)."""
        out, first = self.out, [True]

        def head() -> str:
            return "[" if self.envelope is None else self.json(self.envelope)[:-1] + ',"answer":['

        def sink(row: HasJson) -> None:
            out.write((head() if first[0] else ",") + self.json(row.to_json()))
            first[0] = False
        yield sink
        out.write((head() if first[0] else "") + ("]\n" if self.envelope is None else "]}\n"))

    def lines(self, lines: Sequence[RawLine]) -> None:
        self.emit([line.to_json() for line in lines])

    def diff(self, diff: ViewDiff, text: str | None = None) -> None:
        body = diff.to_json()
        if text is not None:
            body["text"] = text
        self.emit(body)

    def request(self, request: Request) -> None:
        self.emit(request.to_json())

    def transcript(self, entries: Sequence[Entry], markdown: bool = False) -> None:
        self.emit([e.to_json() for e in entries])

    def inspect(self, health: Health) -> None:
        self.emit(health_facts(health))  # (the envelope, when set, is added here)

    def stats(self, stats: Sequence[SessionStats], total: SessionStats | None = None) -> None:
        self.emit(stats_json(stats, total))

    def lineage(self, roots: Sequence[Node], problems: list[str]) -> None:
        self.emit(lineage_json(roots, problems))

    def verify(self, result: Verification) -> None:
        self.emit({"bundle": str(result.bundle), "ok": result.ok, "format": result.format,
                   "generatedAt": result.generated_at, "sessions": result.sessions,
                   "manifestCheckedBy": result.manifest_checked_by, "bundleVerified": result.bundle_verified,
                   "inputsVerified": len(result.checked_inputs),
                   "differences": [d.to_json() for d in result.differences],
                   "inputs": [i.to_json() for i in result.inputs], "notChecked": result.not_checked,
                   "inputsNotChecked": result.unchecked_inputs(),
                   "inputsGrown": [{"input": g.path, "detail": g.problem} for g in result.grown()]})

    def exported(self, out: Path | str, manifest: dict[str, Any], digest: str) -> None:
        self.emit(exported_json(out, manifest, digest))

    def query(self, columns: list[str], rows: Sequence[Sequence[object]]) -> None:
        self.emit([dict(zip(columns, map(cell_json, row))) for row in rows])

    def indexed(self, report: IndexReport) -> None:
        self.emit(report.to_json())

    def usage(self, report: UsageReport) -> None:
        self.emit(report.to_json())


class JsonLinesReporter(JsonReporter):
    """One JSON object per line: a listing's rows (and a report's files or sessions), for `jq` and
    streaming. A listing answered for the events before a failure gives the envelope
    (`{"error", "answeredUpTo"}`) on its first line, then its rows, as `events` does.
    Nothing the JSON holds is left out: where a report has rows of several kinds
    (`stats`: sessions and their total; `lineage`: session trees and problems), each row
    names its kind first (`{"kind": "session", ...}`, `{"kind": "total", ...}`,
    `{"kind": "problem", "problem": TEXT}`; `usage`: its grouping, `{"kind": "day", "key": ...}`, then
    `total`, `unpricedModel` and `foldFailure`)."""

    def stats(self, stats: Sequence[SessionStats], total: SessionStats | None = None) -> None:
        body = stats_json(stats, total)
        self.emit([{"kind": "session", **s} for s in body["sessions"]]
                  + ([{"kind": "total", **body["total"]}] if "total" in body else []))

    def lineage(self, roots: Sequence[Node], problems: list[str]) -> None:
        self.emit([{"kind": "session", **r.to_json()} for r in roots]
                  + [{"kind": "problem", "problem": p} for p in problems])

    def usage(self, report: UsageReport) -> None:
        self.emit([{"kind": report.by, **r.to_json()} for r in report.rows]
                  + [{"kind": "total", **report.total.to_json()}]
                  + [{"kind": "unpricedModel", "model": m} for m in report.unpriced]
                  + [{"kind": "foldFailure", **f.to_json()} for f in report.fold_failures])

    def emit(self, value: object) -> None:
        if self.envelope is not None:  # a listing answered for a prefix: the envelope's line, then its rows
            if type(value) is list:
                self.out.write(self.json(self.envelope) + "\n")
            else:
                value = {**self.envelope, "answer": value}
        if type(value) is dict and len(value) <= 2:
            rows = next((value[k] for k in ("files", "sessions") if type(value.get(k)) is list), None)
            if rows is not None:
                value = rows
        for row in value if type(value) is list else [value]:
            self.out.write(self.json(row))
            self.out.write("\n")

    @contextmanager
    def event_rows(self) -> Iterator[Callable[[HasJson], None]]:
        """Rows one per line (after one line holding the envelope, when one is set
        before the first row)."""
        first = [True]

        def head() -> None:
            if first[0] and self.envelope is not None:
                self.out.write(self.json(self.envelope) + "\n")
            first[0] = False

        def sink(row: HasJson) -> None:
            head()
            self.out.write(self.json(row.to_json()) + "\n")
        yield sink
        head()


# The reporters by the name the output options give (--json: "json", --jsonl: "jsonl", else "text").
REPORTERS: dict[str, type[Reporter]] = {"text": TextReporter, "json": JsonReporter, "jsonl": JsonLinesReporter}


def reporter_for(name: str, *, wide: bool = False) -> Reporter:
    """The reporter named `name` (a key of REPORTERS); `wide`: a text reporter prints table cells whole."""
    return TextReporter(wide=wide) if name == "text" else REPORTERS[name]()
