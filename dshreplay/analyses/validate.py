"""`validate`: one streaming pass that checks a log's shape, surface and relations.

For each event, in order: the envelope and payload schemas, the format rules,
the surface fold (a rejected event is reported and skipped for surface
purposes, and checking goes on), the message projection of surface nodes,
and the relational rules. Findings are collected, never raised.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any, Callable, Iterable

import orjson

from dshreplay._jsvalues import JSONObject, JSONValue, json_pointer, shown
from dshreplay.analyses._eventtypes import event_schema_name
from dshreplay.analyses._schemas import SchemaSet, count_placeholders
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
from dshreplay.core._parallel import window_jobs
from dshreplay.core.driver import SKIP, Observer, PassState, Record, Run, run_pass
from dshreplay.core.surface import IGNORABLE, NO_MESSAGE, NOT_CONTIGUOUS, SURFACE_TYPES, has_message
from dshreplay.errors import ChangedError, DeriveError, DshReplayError, FoldError, LineError, ReadError
from dshreplay.io.reader import UNREADABLE_REST, Item, LogInput, LogReader, LogSource, PackedRun
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
    stopped: ReadError | None = None  # set when reading stopped before the end (corrupt zstd, a ceiling)
    placeholder_errors: int = 0  # schema errors only snapshot placeholders cause ("{{tools}}"): --snapshot
    omitted: dict[str, int] = field(default_factory=dict)  # code -> findings counted, not listed (past the cap)
    omitted_records: int = 0  # further records failing their schema, findings not listed

    def count(self, severity: str) -> int:
        listed = sum(1 for f in self.findings if f.severity == severity)
        counted: int = sum(n for code, n in self.omitted.items() if CODES[code].severity == severity)
        return listed + counted + (self.omitted_records if severity == ERROR else 0)

    @property
    def ok(self) -> bool:
        return self.unreadable is None and self.count(ERROR) == 0

    def to_json(self) -> JSONObject:
        body: JSONObject = {"path": self.path, "ok": self.ok, "events": self.events,
                "findings": [f.to_json() for f in self.findings]}
        if self.omitted or self.omitted_records:
            body["omitted"] = {"findings": dict(sorted(self.omitted.items())), "schemaRecords": self.omitted_records}
        return body


def validate_log(source: LogInput | LogSource, options: Options = DEFAULT, observers: Iterable[Observer] = (), *,
                 resume: PassState | None = None, checkpoint: Callable[[PassState], None] | None = None) -> FileReport:
    """Validate one log (a path, "-", bytes or a LogSource). Never raises for a
    defect of the log: see `FileReport`.

    A large log file has its per-record checks run on other processes while
    this one runs the pass (see `core.parallel`); the findings are the same.
    `checkpoint` and `resume` are run_pass's: a pass kept after a clean log is
    resumed on the lines appended since (its observers are the state's:
    `resume.get(cls)`); the report is the one of a pass over the whole log.
    """
    try:
        log = source if isinstance(source, LogSource) else LogSource(source, options)
        with log.reader() as reader:
            reader.header  # noqa: B018 - a log without a header is unreadable
    except DshReplayError as exc:
        return _unreadable(FileReport(exc.path or str(source)), exc)
    report = _validate(log, options, parallel=resume is None and checkpoint is None, observers=observers,
                       resume=resume, checkpoint=checkpoint)
    report.findings = [f for f in report.findings if _wanted(f.code, options)]
    report.findings.sort(key=_order)
    report.findings, capped, records = cap_findings(report.findings, None if options.all_findings else DEFAULT_CAP)
    counted = report.omitted
    counted.update(capped)
    report.omitted = {code: n for code, n in sorted(Counter(counted).items()) if n and _wanted(code, options)}
    if _wanted("DSH-E004", options) or _wanted("DSH-E005", options):
        report.omitted_records += records
    else:
        report.omitted_records = 0
    return report


def _validate(log: LogSource, options: Options, parallel: bool, observers: Iterable[Observer] = (),
              resume: PassState | None = None, checkpoint: Callable[[PassState], None] | None = None) -> FileReport:
    """(`observers` share the pass: each must start afresh in `begin`, as a pass may be read twice.)"""
    cap = None if options.all_findings else DEFAULT_CAP
    if resume is None:
        checks = RecordChecks(options.snapshot, cap)
        read_errors = FindingList(cap)  # lines the reader skipped
        validation = Validation(checks, options.snapshot)
        rules = RuleFindings(cap)
    else:  # (what the pass kept with its state)
        extra = resume.extra
        assert isinstance(extra, tuple)  # (what `keep` put there: the record checks and the unreadable lines)
        checks, read_errors = extra
        validation, rules = resume.get(Validation), resume.get(RuleFindings)
    jobs = window_jobs(log, _WindowChecks(options.snapshot, cap), options) if parallel else None

    def unreadable_line(error: LineError) -> None:
        skipped = "" if error.code == UNREADABLE_REST else " (line skipped)"  # (the rest: nothing after it is read)
        read_errors.append(finding(error.code, f"{error.message}{skipped}", seq=error.seq, line=error.line))

    def keep(state: PassState) -> None:
        state.extra = (checks, read_errors)
        assert checkpoint is not None  # (keep is handed to the pass only with a checkpoint)
        checkpoint(state)

    later: list[Finding] = []
    try:
        run = run_pass(log, [rules, validation, *observers], on_fold_error=SKIP, recover=unreadable_line,
                       record_check=None if jobs is not None else checks.record, resume=resume,
                       checkpoint=None if checkpoint is None else keep)
    except ReadError as exc:
        if jobs is not None:
            jobs.close()
        if isinstance(exc, ChangedError) or not hasattr(validation, "run"):  # (the pass never began: the log
            # was removed or changed since its header was read)
            return _unreadable(FileReport(exc.path or log.path), exc)
        if jobs is not None:
            return _validate(log, options, parallel=False, observers=observers)
        validation.report.events = validation.run.fold.next_seq  # the events read before it stopped
        later = [finding("DSH-E013", f"reading stopped: {exc.message}", seq=exc.seq, line=exc.line)]
        validation.report.stopped = exc
        validation.assemble(read_errors, checks.findings, later)
        validation.count_omitted(read_errors, checks)
        return validation.report
    if jobs is not None:
        results = jobs.results()
        if results is None or read_errors or run.torn_tail is not None or not run.final_newline \
                or any(e.code == NOT_CONTIGUOUS for e in run.fold_errors):  # (a window numbers by position)
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


def _order(f: Finding) -> tuple[int, int, int]:
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


RECORD_SCHEMA_ERRORS = 20  # schema findings listed per record (then one says more are left out), --all-findings too


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
        self.placeholder_errors = 0  # schema errors only placeholders cause (without snapshot)
        self.layouts: set[bool] = set()
        self._schemas = schemas()
        self._validators: dict[JSONValue, Any] = {}  # event type (or packed row type) -> compiled validator

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state["_schemas"] = None  # compiled validators stay in the process that made them
        state["_validators"] = {}
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._schemas = schemas()

    def add(self, code: str, message: str, **where: Any) -> None:
        self.findings.append(finding(code, message, **where))

    def _explains(self) -> bool:
        """Whether to work out why a record fails its schema (else it is only counted)."""
        if self.cap is None or self.snapshot or self.explained < self.cap:
            self.explained += 1
            return True
        self.unexplained += 1
        return False

    def record(self, item: Item, raw: bytes | None = None) -> None:
        """Check one record as the reader gives it (an Event or a PackedRun), with
        its line. (validate's hot path, in one frame: a record of a known type that
        fits its schema costs a lookup, the compiled validator and two key tests.)"""
        if item.row is not None:
            if type(item) is PackedRun:
                self.row(item)
            return
        rec, kind = item.record, item.type
        validator = self._validators.get(kind)
        if validator is None and kind in self._schemas.event_types:
            validator = self._validators[kind] = self._schemas.record_validator(kind)
        if self.snapshot:
            self.placeholders += count_placeholders(rec)
        if (validator is None or not validator.is_valid(rec)) and self._explains():
            # explain: the envelope and the payload separately, in one record's room
            seq, line = item.seq, item.line
            room = self.schema_check("record.schema.json", rec, "DSH-E004", "", seq=seq, line=line)
            if validator is not None and "data" in rec and room >= 0:
                self.schema_check(event_schema_name(kind), rec["data"], "DSH-E005", "/data", seq=seq,
                                  line=line, room=room)
        runtime = "seq" in rec
        if runtime != ("time" in rec):
            self.add("DSH-E008", "record has " + ("seq but no time" if runtime else "time but no seq"),
                     seq=item.seq, line=item.line)
        self.layouts.add(runtime)
        if validator is None:
            self.unknown_type(item.seq, item.line, rec)
        if raw is not None:  # (a packed row's keys are checked by its exact shape)
            duplicate = duplicate_key(raw, rec)
            if duplicate is not None:
                key, pointer = duplicate
                self.add("DSH-W016", f"key {shown(key, 60)} appears twice in one object; dsh's JSON.parse "
                                     "keeps the last value, and so does dshreplay", seq=item.seq, line=item.line,
                         pointer=pointer)

    def row(self, run: PackedRun) -> None:
        """One packed row: its stored record against the row's schema."""
        rec = run.row_record
        if self.snapshot:
            self.placeholders += count_placeholders(rec)
        validator = self._validators.get(run.row)
        if validator is None:
            validator = self._validators[run.row] = self._schemas.fast(f"rows/{run.row}.schema.json")
        if not validator.is_valid(rec) and self._explains():
            self.schema_check(f"rows/{run.row}.schema.json", rec, "DSH-E004", "", seq=run.seq, line=run.line)
        self.layouts.add("seq0" in rec)

    def unknown_type(self, seq: int, line: int, rec: JSONObject) -> None:
        """A record whose type no schema names, marked ignorable: skipped (one without the mark is
        where the fold fails, DSH-E006: its verdict, `core.surface.surface_op`)."""
        if rec.get(IGNORABLE) is True:
            self.add("DSH-N007", f"unknown event type {shown(rec.get('type'), 80)} skipped (marked ignorable)",
                     seq=seq, line=line, pointer="/type")

    def merge(self, other: RecordChecks, dseq: int, dline: int) -> None:
        """Take what `other` found in a window whose first event is seq `dseq`
        and whose first line follows line `dline`."""
        self.findings.extend(f if not (dseq or dline) else replace(
            f, seq=None if f.seq is None else f.seq + dseq, line=None if f.line is None else f.line + dline)
            for f in other.findings)
        self.findings.omitted.update(other.findings.omitted)
        self.unexplained += other.unexplained
        self.placeholders += other.placeholders
        self.placeholder_errors += other.placeholder_errors
        self.layouts |= other.layouts

    def schema_check(self, name: str, instance: JSONValue, code: str, prefix: str, *, seq: int | None,
                     line: int | None, room: int = RECORD_SCHEMA_ERRORS) -> int:
        """Why `instance` fails schema `name`: at most `room` findings, then (if
        there are more) one saying so. Returns the room left, -1 when it ran out."""
        unknown = self._schemas.unknown_fields(name, instance) if code in NEWER_FIELDS else []
        if unknown:  # (a newer or forked dsh's fields: read as dsh reads them, told, not refused)
            for pointer, field in unknown[:room]:
                self.add("DSH-W018", f"field {shown(field, 60)} is not in dsh's schema as dshreplay knows it "
                                     "(a newer or forked dsh?): read, not checked", seq=seq, line=line,
                         pointer=prefix + pointer + "/" + field.replace("~", "~0").replace("/", "~1"))
            return room - min(len(unknown), room)
        errors = self._schemas.errors(name, instance, snapshot=self.snapshot, limit=room + 1)
        self.placeholder_errors += sum(1 for error in errors if error.placeholder)
        for error in errors[:room]:
            self.add(code, error.message, seq=seq, line=line, pointer=prefix + error.pointer)
        if len(errors) > room:
            self.add(code, f"... and more schema errors in this record (only its first {RECORD_SCHEMA_ERRORS} "
                           "are listed)", seq=seq, line=line)
            return -1
        return room - len(errors)


# a header's or a payload's: a newer dsh adds fields there (DSH-W018)
NEWER_FIELDS = frozenset({"DSH-E003", "DSH-E005"})


def duplicate_key(raw: bytes, record: JSONObject) -> tuple[str, str] | None:
    """The first key that appears twice in one object of the line, with the
    object's JSON pointer; None when there is none. "First": in the object
    that opens first, the key whose second appearance comes first.

    A line of up to 64 KiB that begins with orjson's compact writing of its
    record has none, exactly: a JSON text ends where its object closes (only
    whitespace may follow), so the line is that writing, which holds every key
    once. dsh writes compact JSON, so one serialization and one comparison of
    bytes clear almost every line. (Comparing lengths would not be exact: a
    number written shorter than orjson writes it can make up for the bytes of
    a duplicate, {"k":0,"k":1e6} and {"k":1000000.0}.) Any other line is
    scanned once, as bytes, holding only the keys of the objects still open:
    time linear in the line, memory a fraction of it, at any depth. (A long
    line is not written back: orjson reserves address space by the element,
    1 GB for a list of 4 million numbers, and under an address-space limit it
    crashes rather than fail.)"""
    if len(raw) <= COMPACT_CHECK_BYTES:
        try:
            if raw.startswith(orjson.dumps(record)):
                return None
        except orjson.JSONEncodeError:
            pass
    found = _first_duplicate(raw)
    if found is None:
        return None
    offset, key = found
    return key.decode("utf-8", "surrogatepass"), _pointer_at(raw, offset)


COMPACT_CHECK_BYTES = 64 * 1024  # lines written back by orjson to see whether they are compact (see duplicate_key)
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_KEY_OR_BRACKET = re.compile(_STRING + rb'(\s*:)?|([{}\[\]])', re.S)  # a string (a key: group 1), or a bracket (2)
_TOKEN = re.compile(_STRING + rb'(\s*:)?|[{}\[\],]', re.S)  # a string (a key: group 1), a bracket or a comma


def _first_duplicate(raw: bytes) -> tuple[int, bytes] | None:
    """(offset of the object, its key as UTF-8) of the first duplicate key of a JSON text, or None.

    The object that opens first is the one reported; once one is found, only
    the objects enclosing it (opened earlier) can still beat it, and the
    others are not tracked. Iterative: no depth is too deep."""
    keys: list[set[bytes] | None] = []  # per open container: its keys so far (an object still tracked), else None
    starts: list[int] = []  # per open container: the offset of its bracket
    tracked = 0  # the containers in `keys` that are tracked
    found: tuple[int, bytes] | None = None
    for m in _KEY_OR_BRACKET.finditer(raw):
        kind = m.lastindex
        if kind is None:
            continue  # a string value
        if kind == 1:  # a key
            seen = keys[-1]
            if seen is None:
                continue
            key = raw[m.start() + 1:m.start(1) - 1]
            if b"\\" in key:  # (escapes: compared as the text they stand for)
                text: str = json.loads(raw[m.start():m.start(1)])
                key = text.encode("utf-8", "surrogatepass")
            if key not in seen:
                seen.add(key)
                continue
            if found is None or starts[-1] < found[0]:
                found = (starts[-1], key)
            keys[-1] = None  # its first duplicate is known
            tracked -= 1
            continue
        at = m.start()
        bracket = raw[at]
        if bracket == 0x7B and found is None:  # {
            keys.append(set())
            starts.append(at)
            tracked += 1
        elif bracket == 0x7B or bracket == 0x5B:  # { after the first found, or [
            keys.append(None)
            starts.append(at)
        else:
            tracked -= keys.pop() is not None
            starts.pop()
            if found is not None and not tracked:
                break
    return found


def _pointer_at(raw: bytes, offset: int) -> str:
    """The JSON pointer of the value whose text starts at `offset` (one scan of what comes before)."""
    path: list[list[Any]] = []  # per open container: [is an object, its current key's match or its index]
    for m in _TOKEN.finditer(raw, 0, offset):
        byte = raw[m.start()]
        if byte == 0x22:  # "
            if m.lastindex == 1:
                path[-1][1] = m
        elif byte in (0x7B, 0x5B):
            path.append([byte == 0x7B, None if byte == 0x7B else 0])
        elif byte == 0x2C:  # ,
            if not path[-1][0]:
                path[-1][1] += 1
        else:
            path.pop()
    return json_pointer(json.loads(raw[label.start():label.start(1)]) if is_object else label
                        for is_object, label in path)


class _WindowChecks:
    """The per-record checks of one window of a large log, run in a worker."""

    def __init__(self, snapshot: bool, cap: int | None) -> None:
        self.snapshot = snapshot
        self.cap = cap

    def __call__(self, reader: LogReader) -> RecordChecks:
        checks = RecordChecks(self.snapshot, self.cap)
        for item in reader.records():
            checks.record(item, reader.raw)
        return checks


class Validation(Observer):
    """The checks that need the events in order: the fold's verdict on each
    event, the message projection of surface nodes, the relational rules
    (Relations); then the file-wide ones."""

    requires = (Relations,)
    types = SURFACE_TYPES | {"compaction/summary", "compaction/prune"}  # (the fold's verdicts are in
    # run.fold_errors; a metering event's shadowedSeqs may cite a seq that never joined the surface)

    def __init__(self, checks: RecordChecks, snapshot: bool) -> None:
        self.checks = checks
        self.snapshot = snapshot
        self.report = FileReport("")  # (each pass's, made in `begin`)
        self.head: list[Finding] = []  # the header's
        self.follows: dict[int, int] = {}  # seq of an event citing a seq never on the surface -> that defect's seq

    def begin(self, run: Run) -> None:
        self.report = FileReport(run.path)
        self.run = run
        self.rules = run.get(Relations)
        self.projection = FindingList(self.rules.cap)  # surface nodes dsh could not project
        head_checks = RecordChecks(self.snapshot)
        head_checks.schema_check("header.schema.json", run.header, "DSH-E003", "", seq=None, line=run.header_line)
        self.head = head_checks.findings
        self.head_placeholder_errors = head_checks.placeholder_errors
        if self.snapshot:
            self.checks.placeholders += count_placeholders(run.header)

    def observe(self, record: Record) -> None:
        item, error = record.item, record.error
        if item.row is not None:
            return
        if self.run.fold.lost:
            self._cites_lost(item)
        if item.type in SURFACE_TYPES and (error is None or not error.skipped):
            try:
                has_message(item)
            except DeriveError as exc:
                self.projection.append(finding(NO_MESSAGE, exc.message, seq=item.seq, line=item.line,
                                               pointer=exc.pointer))

    def surface(self) -> FindingList:
        """The fold's verdicts (each rejected event) and the projection's, in log order."""
        rejected = FindingList(self.rules.cap)  # (capped as made: a log may have a verdict on every record)
        rejected.extend(_verdict(e) for e in self.run.fold_errors if isinstance(e, FoldError))
        out = FindingList(self.rules.cap)
        out.extend(sorted(rejected + self.projection, key=lambda f: -1 if f.seq is None else f.seq))
        out.omitted.update(self.projection.omitted)
        out.omitted.update(rejected.omitted)
        return out

    def _cites_lost(self, item: Item) -> None:
        """Note an event that cites a seq that never joined the surface (a line that could not
        be read, a missing seq, a rejected event) in its sourceEventSeqs, replace range or
        shadowedSeqs: what the rules find wrong with it follows from that."""
        rec = item.record
        if item.type in SURFACE_TYPES:
            cited = rec.get("sourceEventSeqs")
            cited = list(cited) if type(cited) is list else []
            op = rec.get("surfaceOp")
            if type(op) is dict:
                cited += [op.get("start"), op.get("end")]
        elif item.type in ("compaction/summary", "compaction/prune"):
            data = rec.get("data")
            cited = data.get("shadowedSeqs") if type(data) is dict else None
            cited = cited if type(cited) is list else []
        else:
            return
        for seq in cited:
            cause = self.run.fold.cause(seq, unseen=True) if type(seq) is int else None
            if cause is not None:
                self.follows[item.seq] = cause
                return

    def finish(self, run: Run) -> None:
        if run.complete and run.events_held is not None:  # (a complete pass counted its events)
            self.report.events = run.events_held

    def assemble(self, read_errors: list[Finding], checks: list[Finding], later: list[Finding]) -> None:
        """The report's findings, per line in the order the checks run: reading,
        the record's own checks, the fold and projection, then `later` ones (a finding
        of the rules about an event next to seqs never read, or citing one, says it follows from them)."""
        follows = self.follows
        for first, last, unseen in self.run.fold.lost:
            if unseen:  # the relations of the events on either side of a run never read are suspect
                follows.setdefault(first - 1, first)
                follows.setdefault(last + 1, first)
        if follows:
            later = [f if f.caused_by is not None or f.seq not in follows else
                     replace(f, caused_by=follows[f.seq], message=f"{f.message} ({_follows(follows[f.seq])})")
                     for f in later]
        self.surface_findings = self.surface()
        self.report.findings = [*self.head, *read_errors, *checks, *self.surface_findings, *later]

    def count_omitted(self, read_errors: FindingList, checks: RecordChecks) -> None:
        """What the producers counted past their caps."""
        counted: Counter[str] = Counter()
        for findings in (read_errors, checks.findings, self.surface_findings, self.rules.findings):
            counted.update(findings.omitted)
        self.report.omitted = dict(counted)
        self.report.omitted_records = checks.unexplained

    def finish_file(self, run: Run, checks: RecordChecks) -> None:
        found: list[Finding] = []
        if len(checks.layouts) > 1:
            found.append(finding("DSH-N009", "the file mixes runtime records (with seq/time) and projected "
                                             "records (without)"))
        tail = run.torn_tail
        if tail is not None:
            found.append(finding("DSH-W010", tail.describe(), line=tail.line))
        elif not run.final_newline:
            found.append(finding("DSH-W012", "the last record has no closing newline", line=run.lines or None))
        if run.hidden_frame is not None:
            offset, size = run.hidden_frame
            found.append(finding("DSH-W017", f"the zstd frame at byte offset {offset} holds {size} bytes that "
                                             "decode to no log text (a skippable frame): hidden from every reader"))
        self.report.placeholder_errors = self.head_placeholder_errors + checks.placeholder_errors
        if checks.placeholders:
            found.append(finding("DSH-N011", f"{checks.placeholders} snapshot placeholder values accepted "
                                             "(--snapshot)"))
        self.report.findings.extend(found)


def _verdict(error: FoldError) -> Finding:
    """The finding of an event the fold rejected, with what the pass did next."""
    after = error.after if error.caused_by is None else f"{error.after}; {_follows(error.caused_by)}"
    assert error.code is not None, "the fold names the code of every event it rejects"
    return finding(error.code, f"{error.message} ({after})", seq=error.seq, line=error.line, pointer=error.pointer,
                   caused_by=error.caused_by)


def _follows(cause: int) -> str:
    return f"follows from the finding at seq {cause}"


__all__ = ["FileReport", "validate_log", "ERROR", "WARNING", "NOTICE"]
