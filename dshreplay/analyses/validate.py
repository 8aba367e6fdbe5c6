"""`validate`: one streaming pass that checks a log's shape, surface and relations.

For each event, in order: the envelope and payload schemas, the format rules,
the surface fold (a rejected event is reported and skipped for surface
purposes, and checking goes on), the message projection of surface nodes,
and the relational rules. Findings are collected, never raised.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial

from dshreplay.errors import DeriveError, DshReplayError, FoldError, ReadError
from dshreplay.analyses.findings import ERROR, NOTICE, WARNING, Finding, finding
from dshreplay.jsvalues import short_json
from dshreplay.io.reader import LogReader
from dshreplay.analyses.rules import RelationChecker
from dshreplay.core.scan import RELATIONS, expanded, run_pass, scannable
from dshreplay.analyses.schemas import SchemaSet, count_placeholders, event_schema_name
from dshreplay.core.surface import NO_MESSAGE, SURFACE_TYPES, SurfaceFold, has_message

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
    """Validate one log. Never raises for a defect of the log: see `FileReport`.

    A large log file is read on several processes (see `scan`); the findings
    are the same as those of the sequential pass.
    """
    name = reader_options.get("name") or str(source)
    try:
        first = LogReader(source, **reader_options)
    except DshReplayError as exc:
        return _unreadable(FileReport(name), exc)
    fresh = iter([first])

    def reader() -> LogReader:
        return next(fresh, None) or LogReader(source, **reader_options)

    read_errors: list[Finding] = []  # lines the sequential reader skipped
    attempt: dict = {}

    def consume(p) -> _Pass:
        check = attempt["pass"] = _Pass(p, options)
        check.run(read_errors)
        return check

    def unreadable_line(error: ReadError) -> None:
        code = "DSH-E002" if error.message.startswith("malformed ") else "DSH-E001"
        read_errors.append(finding(code, f"{error.message} (line skipped)", seq=error.seq, line=error.line))

    schemas()  # loaded before a parallel pass forks its workers, which then share it
    try:
        report = run_pass(reader, RELATIONS, consume, checker_factory=partial(RecordChecks, options.snapshot),
                          recover=unreadable_line, path=scannable(source, reader_options.get("transform"))).report
    except ReadError as exc:
        check = attempt.get("pass")
        if check is None:  # no header: nothing could be checked
            return _unreadable(FileReport(first.path), exc)
        report = check.report
        report.events = check.fold.next_seq  # the events read before it stopped
        check.assemble(read_errors, [finding("DSH-E013", f"reading stopped: {exc.message}", seq=exc.seq,
                                             line=exc.line)])
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


class RecordChecks:
    """The checks of one record on its own: schemas, layout, known type.

    Runs wherever the record is parsed (in a scan worker, or in order in the
    sequential pass); collects findings, the layouts seen and the snapshot
    placeholders counted.
    """

    def __init__(self, snapshot: bool = False) -> None:
        self.snapshot = snapshot
        self.findings: list[Finding] = []
        self.placeholders = 0
        self.layouts: set[bool] = set()
        self._schemas = schemas()
        self._validators: dict = {}  # event type (or packed row type) -> compiled whole-record validator

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_schemas"] = None  # compiled validators stay in the process that made them
        state["_validators"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._schemas = schemas()

    def add(self, code: str, message: str, **where) -> None:
        self.findings.append(finding(code, message, **where))

    def schema_check(self, name: str, instance, code: str, prefix: str, *, seq, line) -> None:
        for error in self._schemas.errors(name, instance, snapshot=self.snapshot):
            self.add(code, error.message, seq=seq, line=line, pointer=prefix + error.pointer)

    def check(self, seq: int, line: int, kind, rec: dict, run) -> None:
        """One stored record: `kind` its type (None if not a string), `run` the
        PackedRun when it is a packed row."""
        if self.snapshot:
            self.placeholders += count_placeholders(rec)
        if run is not None:
            validator = self._validators.get(run.row)
            if validator is None:
                validator = self._validators[run.row] = self._schemas.fast(f"rows/{run.row}.schema.json")
            if not validator.is_valid(rec):
                self.schema_check(f"rows/{run.row}.schema.json", rec, "DSH-E004", "", seq=seq, line=line)
            self.layouts.add("seq0" in rec)
            return
        validator = self._validators.get(kind)
        if validator is None and kind in self._schemas.event_types:
            validator = self._validators[kind] = self._schemas.record_validator(kind)
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


class _Pass:
    """The checks that need the events in order: the fold, the message
    projection of surface nodes, the relational rules; then the file-wide ones."""

    def __init__(self, p, options: ValidateOptions) -> None:
        self.p = p
        self.report = FileReport(p.path)
        self.snapshot = options.snapshot
        self.fold = SurfaceFold()
        self.head: list[Finding] = []  # the header's
        self.surface: list[Finding] = []  # the fold's and the projection's, in order

    def add(self, code: str, message: str, **where) -> None:
        self.surface.append(finding(code, message, **where))

    def assemble(self, read_errors: list[Finding], later: list[Finding]) -> None:
        """The report's findings, per line in the order the checks run: reading,
        the record's own checks, the fold and projection, then `later` ones."""
        self.report.findings = [*self.head, *read_errors, *self.checks_so_far(), *self.surface, *later]

    def run(self, read_errors: list[Finding]) -> None:
        p = self.p
        header = p.header
        head_checks = RecordChecks(self.snapshot)
        head_checks.schema_check("header.schema.json", header, "DSH-E003", "", seq=None, line=p.header_line)
        self.head = head_checks.findings
        placeholders = count_placeholders(header) if self.snapshot else 0
        fold = self.fold
        rules = RelationChecker(header)
        for item in expanded(p.items, lambda span: fold.takes_whole(span) and rules.takes_whole(span)):
            self.step(item, rules)
        self.report.events = p.event_count
        last = p.event_count - 1 if p.event_count else None
        self.assemble(read_errors, rules.finish(last))
        layouts: set = set()
        for checks, _, _ in p.checkers:
            layouts |= checks.layouts
            placeholders += checks.placeholders
        self.finish(layouts, placeholders)

    def step(self, event, rules: RelationChecker) -> None:
        replacement = None
        try:
            replacement = self.fold.apply(event)
        except FoldError as exc:
            self.add(exc.code, f"{exc.message} (event skipped for surface purposes)", seq=event.seq,
                     line=event.line, pointer=exc.pointer)
            self.fold.skip(event)
        else:
            if event.type in SURFACE_TYPES:
                try:
                    has_message(event)
                except DeriveError as exc:
                    self.add(NO_MESSAGE, exc.message, seq=event.seq, line=event.line, pointer=exc.pointer)
        rules.check(event, replacement)

    def checks_so_far(self) -> list[Finding]:
        """The per-record findings, with the seqs and lines of the whole log."""
        out = []
        for checks, dseq, dline in self.p.checkers:
            for f in checks.findings:
                out.append(f if not (dseq or dline) else replace(
                    f, seq=None if f.seq is None else f.seq + dseq, line=None if f.line is None else f.line + dline))
            checks.findings = []
        return out

    def finish(self, layouts: set, placeholders: int) -> None:
        p = self.p
        found = []
        if len(layouts) > 1:
            found.append(finding("DSH-N009", "the file mixes runtime records (with seq/time) and projected "
                                             "records (without)"))
        tail = p.torn_tail
        if tail is not None:
            found.append(finding("DSH-W010", tail.describe(), line=tail.line))
        elif not p.final_newline:
            found.append(finding("DSH-W012", "the last record has no closing newline", line=p.lines or None))
        if placeholders:
            found.append(finding("DSH-N011", f"{placeholders} snapshot placeholder values accepted (--snapshot)"))
        self.report.findings.extend(found)


__all__ = ["FileReport", "ValidateOptions", "validate_log", "ERROR", "WARNING", "NOTICE"]
