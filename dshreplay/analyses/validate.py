"""`validate`: one streaming pass that checks a log's shape, surface and relations.

For each event, in order: the envelope and payload schemas, the format rules,
the surface fold (a rejected event is reported and skipped for surface
purposes, and checking goes on), the message projection of surface nodes,
and the relational rules. Findings are collected, never raised.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cache

import orjson

from dshreplay.analyses.findings import (
    CODES,
    DEFAULT_CAP,
    ERROR,
    NOTICE,
    WARNING,
    Finding,
    FindingList,
    cap_findings,
    finding,
)
from dshreplay.analyses.rules import Relations, RuleFindings
from dshreplay.analyses.schemas import SchemaSet, count_placeholders, event_schema_name
from dshreplay.core.driver import SKIP, Observer, Run, run_pass
from dshreplay.core.parallel import window_jobs
from dshreplay.core.surface import NO_MESSAGE, SURFACE_TYPES, has_message
from dshreplay.errors import DeriveError, DshReplayError, ReadError
from dshreplay.io.reader import LogSource
from dshreplay.jsvalues import short_json
from dshreplay.options import DEFAULT, Options


@cache
def schemas() -> SchemaSet:
    """The shipped schema set, loaded once per process."""
    return SchemaSet()


@dataclass
class FileReport:
    """The verdict on one log."""

    path: str
    events: int = 0
    findings: list[Finding] = field(default_factory=list)
    unreadable: DshReplayError | None = None  # set when the file could not be read at all
    omitted: dict = field(default_factory=dict)  # code -> findings counted, not listed (past the cap)
    omitted_records: int = 0  # further records failing their schema, findings not listed

    def count(self, severity: str) -> int:
        listed = sum(1 for f in self.findings if f.severity == severity)
        counted = sum(n for code, n in self.omitted.items() if CODES[code].severity == severity)
        return listed + counted + (self.omitted_records if severity == ERROR else 0)

    @property
    def ok(self) -> bool:
        return self.unreadable is None and self.count(ERROR) == 0

    def to_json(self) -> dict:
        body = {"path": self.path, "ok": self.ok, "events": self.events,
                "findings": [f.to_json() for f in self.findings]}
        if self.omitted or self.omitted_records:
            body["omitted"] = {"findings": dict(sorted(self.omitted.items())), "schemaRecords": self.omitted_records}
        return body


def validate_log(source, options: Options = DEFAULT, observers=()) -> FileReport:
    """Validate one log (a path, "-", bytes or a LogSource). Never raises for a
    defect of the log: see `FileReport`.

    A large log file has its per-record checks run on other processes while
    this one runs the pass (see `core.parallel`); the findings are the same.
    """
    try:
        log = source if isinstance(source, LogSource) else LogSource(source, options)
        with log.reader() as reader:
            reader.header  # noqa: B018 - a log without a header is unreadable
    except DshReplayError as exc:
        return _unreadable(FileReport(exc.path or str(source)), exc)
    report = _validate(log, options, parallel=True, observers=observers)
    report.findings = [f for f in report.findings if _wanted(f.code, options)]
    report.findings.sort(key=_order)
    report.findings, capped, records = cap_findings(report.findings, None if options.all_findings else DEFAULT_CAP)
    counted = report.omitted
    counted.update((code, n) for code, n in capped.items())
    report.omitted = {code: n for code, n in sorted(Counter(counted).items()) if n and _wanted(code, options)}
    if _wanted("DSH-E004", options) or _wanted("DSH-E005", options):
        report.omitted_records += records
    else:
        report.omitted_records = 0
    return report


def _validate(log: LogSource, options: Options, parallel: bool, observers=()) -> FileReport:
    """(`observers` share the pass: each must start afresh in `begin`, as a pass may be read twice.)"""
    cap = None if options.all_findings else DEFAULT_CAP
    checks = RecordChecks(options.snapshot, cap)
    jobs = window_jobs(log, _WindowChecks(options.snapshot, cap), options) if parallel else None
    read_errors = FindingList(cap)  # lines the reader skipped

    def unreadable_line(error: ReadError) -> None:
        code = "DSH-E002" if error.message.startswith("malformed ") else "DSH-E001"
        read_errors.append(finding(code, f"{error.message} (line skipped)", seq=error.seq, line=error.line))

    validation = Validation(checks, options.snapshot)
    later: list[Finding] = []
    try:
        run = run_pass(log, [RuleFindings(cap), validation, *observers], on_fold_error=SKIP, recover=unreadable_line,
                       record_check=None if jobs is not None else checks.record)
    except ReadError as exc:
        if jobs is not None:
            jobs.close()
            return _validate(log, options, parallel=False, observers=observers)
        validation.report.events = validation.run.fold.next_seq  # the events read before it stopped
        later = [finding("DSH-E013", f"reading stopped: {exc.message}", seq=exc.seq, line=exc.line)]
        validation.assemble(read_errors, checks.findings, later)
        validation.count_omitted(read_errors, checks)
        return validation.report
    if jobs is not None:
        results = jobs.results()
        if results is None or read_errors or run.torn_tail is not None or not run.final_newline:
            return _validate(log, options, parallel=False, observers=observers)
        seq, line = 0, run.header_line
        for events, lines, window in results:
            checks.merge(window, seq, line)
            seq += events
            line += lines
    validation.assemble(read_errors, checks.findings, validation.rules.findings)
    validation.finish_file(run, checks)
    validation.count_omitted(read_errors, checks)
    return validation.report


def _order(f: Finding):
    """Findings in file order: by line where known, else by seq; file-wide ones last."""
    if f.line is None and f.seq is None:
        return (1, 0, 0)
    return (0, f.line if f.line is not None else 0, f.seq if f.seq is not None else -1)


def _unreadable(report: FileReport, exc: DshReplayError) -> FileReport:
    report.unreadable = exc
    report.findings = [finding("DSH-E000", exc.message, line=exc.line)]
    return report


def _wanted(code: str, options: Options) -> bool:
    if any(code.startswith(p) for p in options.ignore):
        return False
    return options.select is None or any(code.startswith(p) for p in options.select)


class RecordChecks:
    """The checks of one record on its own: schemas, layout, known type.

    Runs wherever the record is parsed (in the pass, or in a worker reading
    a window of a large log: see `_WindowChecks`); collects findings, the
    layouts seen and the snapshot placeholders counted.
    """

    def __init__(self, snapshot: bool = False, cap: int | None = DEFAULT_CAP) -> None:
        self.snapshot = snapshot
        self.cap = cap
        self.findings = FindingList(cap)
        self.explained = 0  # records failing their schema whose findings were worked out
        self.unexplained = 0  # further ones, past the cap: counted (explaining is the costly part)
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

    def _explains(self) -> bool:
        """Whether to work out why a record fails its schema (else it is only counted)."""
        if self.cap is None or self.snapshot or self.explained < self.cap:
            self.explained += 1
            return True
        self.unexplained += 1
        return False

    def record(self, item, raw: bytes | None = None) -> None:
        """Check one record as the reader gives it (an Event or a PackedRun), with its line."""
        if item.row is None:
            self.check(item.seq, item.line, item.type, item.record, None)
            if raw is not None:  # (a packed row's keys are checked by its exact shape)
                duplicate = duplicate_key(raw, item.record)
                if duplicate is not None:
                    key, pointer = duplicate
                    self.add("DSH-W016", f"key {short_json(key, 60)} appears twice in one object; dsh's JSON.parse "
                                         "keeps the last value, and so does dshreplay", seq=item.seq, line=item.line,
                             pointer=pointer)
        else:
            self.check(item.seq, item.line, item.row, item.row_record, item)

    def merge(self, other: RecordChecks, dseq: int, dline: int) -> None:
        """Take what `other` found in a window whose first event is seq `dseq`
        and whose first line follows line `dline`."""
        self.findings.extend(f if not (dseq or dline) else replace(
            f, seq=None if f.seq is None else f.seq + dseq, line=None if f.line is None else f.line + dline)
            for f in other.findings)
        self.findings.omitted.update(other.findings.omitted)
        self.unexplained += other.unexplained
        self.placeholders += other.placeholders
        self.layouts |= other.layouts

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
            if not validator.is_valid(rec) and self._explains():
                self.schema_check(f"rows/{run.row}.schema.json", rec, "DSH-E004", "", seq=seq, line=line)
            self.layouts.add("seq0" in rec)
            return
        validator = self._validators.get(kind)
        if validator is None and kind in self._schemas.event_types:
            validator = self._validators[kind] = self._schemas.record_validator(kind)
        known = validator is not None
        if not (known and validator.is_valid(rec)) and self._explains():
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


def duplicate_key(raw: bytes, record: dict) -> tuple[str, str] | None:
    """The first key that appears twice in one object of the line, with the
    object's JSON pointer; None when there is none.

    A line that orjson writes back at its own length has none (dsh writes
    compact JSON, so this rules out almost every line); any other is parsed
    again, object by object."""
    try:
        if len(orjson.dumps(record)) == len(raw.rstrip(b"\r\n")):
            return None
    except orjson.JSONEncodeError:
        pass
    try:
        value = json.loads(raw, object_pairs_hook=_Pairs.of)
    except (ValueError, RecursionError):
        return None
    stack = [(value, "")]
    while stack:
        item, pointer = stack.pop()
        if isinstance(item, _Pairs):
            if item.duplicate is not None:
                return item.duplicate, pointer
            stack.extend((v, f"{pointer}/{_escape(k)}") for k, v in reversed(list(item.items())))
        elif type(item) is list:
            stack.extend((v, f"{pointer}/{i}") for i, v in reversed(list(enumerate(item))))
    return None


class _Pairs(dict):
    """An object as json.loads builds it, remembering a key it saw twice."""

    duplicate = None

    @classmethod
    def of(cls, pairs: list) -> _Pairs:
        made = cls(pairs)
        if len(made) != len(pairs):
            seen: set = set()
            made.duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
        return made


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


class _WindowChecks:
    """The per-record checks of one window of a large log, run in a worker."""

    def __init__(self, snapshot: bool, cap: int | None) -> None:
        self.snapshot = snapshot
        self.cap = cap

    def __call__(self, reader) -> RecordChecks:
        checks = RecordChecks(self.snapshot, self.cap)
        for item in reader.records():
            checks.record(item, reader.raw)
        return checks


class Validation(Observer):
    """The checks that need the events in order: the fold's verdict on each
    event, the message projection of surface nodes, the relational rules
    (Relations); then the file-wide ones."""

    requires = (Relations,)
    types = SURFACE_TYPES  # (the fold's verdicts on the others are in run.fold_errors)

    def __init__(self, checks: RecordChecks, snapshot: bool) -> None:
        self.checks = checks
        self.snapshot = snapshot
        self.report: FileReport | None = None
        self.head: list[Finding] = []  # the header's

    def begin(self, run: Run) -> None:
        self.report = FileReport(run.path)
        self.run = run
        self.rules = run.get(Relations)
        self.projection = FindingList(self.rules.cap)  # surface nodes dsh could not project
        head_checks = RecordChecks(self.snapshot)
        head_checks.schema_check("header.schema.json", run.header, "DSH-E003", "", seq=None, line=run.header_line)
        self.head = head_checks.findings
        if self.snapshot:
            self.checks.placeholders += count_placeholders(run.header)

    def observe(self, record) -> None:
        item = record.item
        if record.error is None and item.row is None:
            try:
                has_message(item)
            except DeriveError as exc:
                self.projection.append(finding(NO_MESSAGE, exc.message, seq=item.seq, line=item.line,
                                               pointer=exc.pointer))

    def surface(self) -> FindingList:
        """The fold's verdicts (each rejected event) and the projection's, in log order."""
        rejected = [finding(e.code, f"{e.message} (event skipped for surface purposes)", seq=e.seq, line=e.line,
                            pointer=e.pointer) for e in self.run.fold_errors]
        out = FindingList(self.rules.cap)
        out.extend(sorted(rejected + self.projection, key=lambda f: f.seq))
        out.omitted.update(self.projection.omitted)
        return out

    def finish(self, run: Run) -> None:
        if run.complete:
            self.report.events = run.event_count

    def assemble(self, read_errors: list[Finding], checks: list[Finding], later: list[Finding]) -> None:
        """The report's findings, per line in the order the checks run: reading,
        the record's own checks, the fold and projection, then `later` ones."""
        self.surface_findings = self.surface()
        self.report.findings = [*self.head, *read_errors, *checks, *self.surface_findings, *later]

    def count_omitted(self, read_errors: FindingList, checks: RecordChecks) -> None:
        """What the producers counted past their caps."""
        counted = Counter()
        for findings in (read_errors, checks.findings, self.surface_findings, self.rules.findings):
            counted.update(findings.omitted)
        self.report.omitted = dict(counted)
        self.report.omitted_records = checks.unexplained

    def finish_file(self, run: Run, checks: RecordChecks) -> None:
        found = []
        if len(checks.layouts) > 1:
            found.append(finding("DSH-N009", "the file mixes runtime records (with seq/time) and projected "
                                             "records (without)"))
        tail = run.torn_tail
        if tail is not None:
            found.append(finding("DSH-W010", tail.describe(), line=tail.line))
        elif not run.final_newline:
            found.append(finding("DSH-W012", "the last record has no closing newline", line=run.lines or None))
        if checks.placeholders:
            found.append(finding("DSH-N011", f"{checks.placeholders} snapshot placeholder values accepted "
                                             "(--snapshot)"))
        self.report.findings.extend(found)


__all__ = ["FileReport", "validate_log", "ERROR", "WARNING", "NOTICE"]
