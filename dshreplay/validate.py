"""`validate`: one streaming pass that checks a log's shape, surface and relations.

For each event, in order: the envelope and payload schemas, the format rules,
the surface fold (a rejected event is reported and skipped for surface
purposes, and checking goes on), the message projection of surface nodes,
and the relational rules. Findings are collected, never raised.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import DeriveError, DshReplayError, FoldError, ReadError
from .findings import ERROR, NOTICE, WARNING, Finding, finding
from .jsvalues import short_json
from .reader import LogReader
from .rules import RelationChecker
from .schemas import SchemaSet, count_placeholders, event_schema_name
from .surface import NO_MESSAGE, SURFACE_TYPES, SurfaceFold, derive_message

_SCHEMAS: SchemaSet | None = None


def schemas() -> SchemaSet:
    """The shipped schema set, loaded once per process."""
    global _SCHEMAS
    if _SCHEMAS is None:
        _SCHEMAS = SchemaSet()
    return _SCHEMAS


@dataclass
class FileReport:
    """The verdict on one log."""

    path: str
    events: int = 0
    findings: list[Finding] = field(default_factory=list)
    unreadable: DshReplayError | None = None  # set when the file could not be read at all

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    @property
    def ok(self) -> bool:
        return self.unreadable is None and self.count(ERROR) == 0

    def to_json(self) -> dict:
        return {"path": self.path, "ok": self.ok, "events": self.events,
                "findings": [f.to_json() for f in self.findings]}


@dataclass(frozen=True)
class ValidateOptions:
    snapshot: bool = False  # accept whole-string {{placeholders}} as any value
    select: frozenset[str] | None = None  # only these codes (prefixes allowed)
    ignore: frozenset[str] = frozenset()  # never these codes (prefixes allowed)


def validate_log(source, options: ValidateOptions = ValidateOptions(), **reader_options) -> FileReport:
    """Validate one log. Never raises for a defect of the log: see `FileReport`."""
    name = reader_options.get("name") or str(source)
    try:
        reader = LogReader(source, **reader_options)
    except DshReplayError as exc:
        return _unreadable(FileReport(name), exc)
    with reader:
        report = FileReport(reader.path)
        checks = _Pass(reader, report, options)
        try:
            checks.run()
        except ReadError as exc:
            report.events = checks.fold.next_seq  # the events read before it stopped
            if reader._header is None:  # no header: nothing could be checked
                return _unreadable(report, exc)
            report.findings.append(finding("DSH-E013", f"reading stopped: {exc.message}", seq=exc.seq,
                                           line=exc.line))
    report.findings = [f for f in report.findings if _wanted(f.code, options)]
    report.findings.sort(key=_order)
    return report


def _order(f: Finding):
    """Findings in file order: by line where known, else by seq; file-wide ones last."""
    if f.line is None and f.seq is None:
        return (1, 0, 0)
    return (0, f.line if f.line is not None else 0, f.seq if f.seq is not None else -1)


def _unreadable(report: FileReport, exc: DshReplayError) -> FileReport:
    report.unreadable = exc
    report.findings = [finding("DSH-E000", exc.message, line=exc.line)]
    return report


def _wanted(code: str, options: ValidateOptions) -> bool:
    if any(code.startswith(p) for p in options.ignore):
        return False
    return options.select is None or any(code.startswith(p) for p in options.select)


class _Pass:
    def __init__(self, reader: LogReader, report: FileReport, options: ValidateOptions) -> None:
        self.reader = reader
        self.report = report
        self.snapshot = options.snapshot
        self.schemas = schemas()
        self.known = self.schemas.event_types
        self.placeholders = 0
        self.layouts: set[bool] = set()
        self.validators: dict = {}  # event type -> compiled whole-record validator
        self.fold = SurfaceFold()

    def add(self, code: str, message: str, **where) -> None:
        self.report.findings.append(finding(code, message, **where))

    def schema_check(self, name: str, instance, code: str, prefix: str, *, seq, line) -> None:
        errors = self.schemas.errors(name, instance, snapshot=self.snapshot)
        for error in errors:
            self.add(code, error.message, seq=seq, line=line, pointer=prefix + error.pointer)

    def run(self) -> None:
        reader = self.reader
        header = reader.header
        self.schema_check("header.schema.json", header, "DSH-E003", "", seq=None, line=reader.header_line)
        if self.snapshot:
            self.placeholders += count_placeholders(header)
        fold = self.fold
        rules = RelationChecker(header)
        add = self.add
        for event in reader.records(recover=self.unreadable_line):
            replacement = None
            if event.row is not None:
                self.check_row(event)
            else:
                self.check_record(event)
            try:
                replacement = fold.apply(event)
            except FoldError as exc:
                add(exc.code, f"{exc.message} (event skipped for surface purposes)", seq=event.seq,
                    line=event.line, pointer=exc.pointer)
                fold.skip(event)
            else:
                if event.type in SURFACE_TYPES:
                    try:
                        derive_message(event)
                    except DeriveError as exc:
                        add(NO_MESSAGE, exc.message, seq=event.seq, line=event.line, pointer=exc.pointer)
            rules.check(event, replacement)
        self.report.events = reader.event_count
        last = reader.event_count - 1 if reader.event_count else None
        self.report.findings.extend(rules.finish(last))
        self.finish()

    def unreadable_line(self, error: ReadError) -> None:
        code = "DSH-E002" if error.message.startswith("malformed ") else "DSH-E001"
        self.add(code, f"{error.message} (line skipped)", seq=error.seq, line=error.line)

    def check_record(self, event) -> None:
        rec = event.record
        seq, line = event.seq, event.line
        kind = event.type
        if self.snapshot:
            self.placeholders += count_placeholders(rec)
        validator = self.validators.get(kind)
        if validator is None and kind in self.known:
            validator = self.validators[kind] = self.schemas.record_validator(kind)
        known = validator is not None
        if not (known and validator.is_valid(rec)):
            # explain: the envelope and the payload separately
            self.schema_check("record.schema.json", rec, "DSH-E004", "", seq=seq, line=line)
            if known and "data" in rec:
                self.schema_check(event_schema_name(kind), rec["data"], "DSH-E005", "/data", seq=seq,
                                  line=line)
        runtime = "seq" in rec
        if runtime != ("time" in rec):
            self.add("DSH-E008", "record has " + ("seq but no time" if runtime else "time but no seq"),
                     seq=seq, line=line)
        self.layouts.add(runtime)
        if known:
            return
        shown = short_json(rec.get("type"), 80)
        if rec.get("ignorable") is True:
            self.add("DSH-N007", f"unknown event type {shown} skipped (marked ignorable)", seq=seq,
                     line=line, pointer="/type")
        else:
            self.add("DSH-E006", f"unknown event type {shown} without ignorable: true: dsh refuses "
                                 "to load the log", seq=seq, line=line, pointer="/type")

    def check_row(self, event) -> None:
        rec = event.row_record
        if self.snapshot:
            self.placeholders += count_placeholders(rec)
        self.schema_check(f"rows/{event.row}.schema.json", rec, "DSH-E004", "", seq=event.seq,
                          line=event.line)
        self.layouts.add("seq0" in rec)

    def finish(self) -> None:
        reader = self.reader
        if len(self.layouts) > 1:
            self.add("DSH-N009", "the file mixes runtime records (with seq/time) and projected records "
                                 "(without)")
        tail = reader.torn_tail
        if tail is not None:
            self.add("DSH-W010", tail.describe(), line=tail.line)
        elif not reader.final_newline:
            self.add("DSH-W012", "the last record has no closing newline", line=reader.lines or None)
        if self.placeholders:
            self.add("DSH-N011", f"{self.placeholders} snapshot placeholder values accepted (--snapshot)")


__all__ = ["FileReport", "ValidateOptions", "validate_log", "ERROR", "WARNING", "NOTICE"]
