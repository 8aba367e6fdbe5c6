"""Findings: what `validate` reports, and the catalogue of every finding code.

A code is stable forever once released: `DSH-<severity letter><number>`.
`docs/reference/findings.md` is generated from `CODES` (a test keeps it current).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

__all__ = ["Finding", "CODES", "ERROR", "WARNING", "NOTICE"]

ERROR, WARNING, NOTICE = "error", "warning", "notice"
SEVERITY_RANK = {ERROR: 0, WARNING: 1, NOTICE: 2}


@dataclass(frozen=True)
class Code:
    code: str
    severity: str
    name: str
    meaning: str
    why: str


def _codes(*entries: tuple[str, str, str, str]) -> dict[str, Code]:
    out = {}
    for code, name, meaning, why in entries:
        severity = {"E": ERROR, "W": WARNING, "N": NOTICE}[code[4]]
        out[code] = Code(code, severity, name, meaning, why)
    return out


CODES = _codes(
    # -- reading and format (0xx)
    ("DSH-E000", "unreadable-file", "The file cannot be read at all: missing, not a session log (no "
     "header), or a format version other than 0.", "Nothing in it was checked (exit code 2)."),
    ("DSH-E001", "unreadable-line", "A line is not valid JSON or not a JSON object; it was skipped. The "
     "next readable line's own seq resumes the numbering (in the projected layout the line is assumed to hold "
     "one event).", "dsh refuses to load the log; what the line held is lost (a finding that follows from "
     "the loss names it in `causedBy`)."),
    ("DSH-E002", "malformed-row", "A packed chunk row does not have dsh's exact row shape; it was skipped.",
     "dsh treats it as corrupt storage: a whole run of stream chunks is lost."),
    ("DSH-E003", "header-schema", "The header line does not match the header schema (for example no "
     "`version`).", "dsh's restore checks refuse a malformed header; provenance facts may be wrong."),
    ("DSH-E004", "record-schema", "An event envelope has a field of the wrong type or an unknown field.",
     "Readers may mis-number or misread the event."),
    ("DSH-E005", "payload-schema", "An event's `data` does not match the schema of its type.",
     "Consumers of that event (fold, reconstruction, stats) may crash or misreport."),
    ("DSH-E006", "unknown-type", "An event type dsh 0.1.1 does not define, without `ignorable: true`.",
     "dsh must refuse a log with an unknown required event: it may change what the rest means."),
    ("DSH-N007", "ignorable-unknown-type", "An unknown event type marked `ignorable: true`.",
     "Safe to skip by contract, but nothing checks what it says."),
    ("DSH-E008", "partial-envelope", "A record has `seq` without `time` or `time` without `seq`.",
     "dsh writes both or (in projected snapshots) neither; one alone means a hand-edited or damaged line."),
    ("DSH-N009", "mixed-layout", "Records in both the runtime and the projected layout in one file.",
     "Allowed while the seqs agree with positions, but no dsh writer produces it."),
    ("DSH-W010", "torn-tail", "The last line (or zstd frame) was cut short by a crash; it is not an event.",
     "The committed prefix is intact; whatever the tail held is lost."),
    ("DSH-N011", "placeholders", "Snapshot placeholders such as `{{cwd}}` were accepted (with --snapshot).",
     "Snapshot fixtures hide volatile values; those fields were not checked."),
    ("DSH-W012", "no-final-newline", "The last record parses but has no closing newline.",
     "dsh only counts newline-terminated lines as committed; its repair would cut this record."),
    ("DSH-E013", "unreadable-rest", "Reading stopped: corrupt zstd data or a decompression limit.",
     "Nothing after this point was checked."),
    ("DSH-W016", "duplicate-key", "An object in a record holds the same key twice.",
     "dsh's JSON.parse keeps the last value without a word; a writer that repeats a key may have meant "
     "the first."),
    ("DSH-W017", "hidden-bytes", "A zstd log holds a frame that decodes to no log text (a skippable frame).",
     "Every zstd reader, dsh's included, passes over such a frame without a word: bytes in the file "
     "that no reader of the log sees, which dsh never writes."),
    ("DSH-W018", "unknown-field", "A payload or the header holds a field the schemas do not name.",
     "A newer or forked dsh adds fields (for example `tool/result.mutations`); dsh's reader passes over "
     "them, and so does the fold: only --strict fails on them."),
    ("DSH-E014", "seed-boundary", "`seedLength` in the header does not point at the `session/end-seed` "
     "event.", "The inherited prefix of a fork cannot be told from the child's own history."),
    # -- the surface fold (1xx)
    ("DSH-E101", "not-contiguous", "An event's written seq is not its position in the log: seqs are "
     "missing, a line repeats or comes ahead of its place, or its seq is wrong (the message says which, as "
     "the next line tells it; one finding per damaged line, and checking goes on from the correct lines' own "
     "seqs).", "dsh's fold stops here: a line was lost, duplicated or reordered."),
    ("DSH-E102", "surface-field-on-log-only", "A log-only event carries `surfaceOp` or `sourceEventSeqs`.",
     "dsh's fold refuses it; only messages may join the model's view."),
    ("DSH-E103", "missing-surface-op", "A `user/message`, `assistant/message` or `tool/result` has no "
     "`surfaceOp`.", "dsh's fold refuses it: it cannot tell how the message entered the model's view."),
    ("DSH-E104", "invalid-surface-op", "`surfaceOp` is neither \"append\" nor an object.",
     "dsh's fold refuses it."),
    ("DSH-E105", "invalid-replace", "A replace `surfaceOp` is not exactly {op: \"replace\", start, end} with "
     "non-negative integer seqs.", "dsh's fold refuses it."),
    ("DSH-E106", "bad-source-seqs", "`sourceEventSeqs` is not an array of distinct earlier seqs (or is empty "
     "outside an assistant message).", "dsh's fold refuses it; provenance would point at nothing."),
    ("DSH-E107", "replace-start-not-found", "A replacement's `start` seq is not in the current surface.",
     "dsh's fold refuses it: the range it claims to summarize is not what the model sees."),
    ("DSH-E108", "replace-end-not-found", "A replacement's `end` seq is not in the current surface.",
     "dsh's fold refuses it."),
    ("DSH-E109", "replace-start-after-end", "A replacement's `start` comes after its `end` on the surface.",
     "dsh's fold refuses it."),
    ("DSH-E110", "missing-shadowed-sources", "A replacement does not cite every node it shadows in "
     "`sourceEventSeqs`.", "dsh's fold refuses it: what was summarized away would lose its provenance."),
    ("DSH-E111", "tool-result-rewrite", "A `tool/result` replacement shadows more than one node, a "
     "non-result, or changes more than the first result's content.",
     "dsh's fold refuses it: a rewrite may only shrink or redact a result."),
    ("DSH-E112", "no-message", "A surface node has no message to give the model (for example an assistant "
     "message without `data.message.content`).", "dsh crashes when it builds the model's request."),
    # -- turns, steps and tools (2xx)
    ("DSH-E201", "turn-start-while-open", "`turn/start` while another turn is open.",
     "Turn boundaries no longer say which events belong together."),
    ("DSH-E202", "turn-number", "`turn/start` does not number the next turn (1, 2, ...).",
     "Turn numbers are how every other event names its turn."),
    ("DSH-E203", "turn-end-mismatch", "`turn/end` does not name the open turn (or none is open).",
     "The turn it closes is ambiguous."),
    ("DSH-E204", "turn-end-with-open-step", "`turn/end` while a step is still open.",
     "dsh always closes the step first; a step was lost or the log was edited."),
    ("DSH-E205", "step-outside-turn", "`step/start` does not name the open turn.",
     "The step cannot be placed in a turn."),
    ("DSH-E206", "step-start-while-open", "`step/start` while another step is open.",
     "Steps do not nest."),
    ("DSH-E207", "step-number", "`step/start` does not number the next step of its turn (1, 2, ...).",
     "Step numbers are how chunks, messages and tools name their step."),
    ("DSH-E208", "not-in-open-step", "A step event (`step/end`, chunk, assistant message, `tool/call`, "
     "appended `tool/result`) names a turn/step that is not the open one.",
     "It cannot be tied to the model call it belongs to."),
    ("DSH-E209", "outside-turn", "`todo/write`, `request/header`, `request/context` or a `tool/result` "
     "rewrite outside any open turn.", "dsh only writes these inside a turn."),
    ("DSH-E210", "result-without-call", "A `tool/result` answers no `tool/call` of its step (and is not a "
     "synthetic TOOL_NOT_STARTED result).", "The model is shown a result for a call nobody made."),
    ("DSH-W211", "unanswered-call", "A step closed with a `tool/call` that got no `tool/result`.",
     "The model never saw that call's outcome; its side effects are unknown."),
    ("DSH-E212", "foreign-chunk-source", "An assistant message's `sourceEventSeqs` cite events that are not "
     "`assistant/chunk` events of its own step.", "Its provenance points at the wrong stream. dsh's fold and "
     "invariant checks let it pass, but its token meter throws on such a message when the message carries "
     "usage; in a projected log (seqs by position) a duplicated or swapped line shows up as this."),
    ("DSH-W213", "interrupted-turn", "The log ends inside a turn (a crash or a live session).",
     "dsh would close it on load with synthetic results; the message says which."),
    # -- compaction brackets and metering (3xx)
    ("DSH-E301", "nested-compaction", "`compaction/start` while another compaction is open.",
     "dsh runs one compaction at a time; brackets would overlap."),
    ("DSH-E302", "compaction-owner", "A compaction's `turn` does not fit the open turn (a numbered owner "
     "needs that turn open; `null` needs none open).", "The bracket does not lie where it says."),
    ("DSH-E303", "compaction-id-mismatch", "A summary, end or checkpoint names another `compactionId` (or "
     "`sourceCommandId`) than the open start.", "The pieces of one compaction no longer match."),
    ("DSH-E304", "compaction-without-start", "`compaction/summary`, `compaction/end` or a compaction "
     "checkpoint message with no open start (a checkpoint whose compaction already ended, for one).",
     "An orphan piece of a compaction: its start was lost or it was edited in; dsh's compaction invariant "
     "refuses it."),
    ("DSH-E305", "repeated-summary", "A second `compaction/summary` in one compaction.",
     "Which summary replaced the history is ambiguous."),
    ("DSH-E306", "summary-range", "A summary's `shadowedSeqs` is empty or its `shadowedRange` is not its "
     "first and last seq.", "The metering of the compaction is inconsistent."),
    ("DSH-E307", "end-owner-mismatch", "`compaction/end` names another `turn` than its start.",
     "The bracket's owner changed mid-way."),
    ("DSH-E308", "end-without-summary", "A compaction ended without error but never wrote a summary.",
     "dsh requires one summary for a successful compaction."),
    ("DSH-E309", "turn-boundary-in-compaction", "A turn started or ended while a compaction was open.",
     "Compaction brackets must not cross turn boundaries."),
    ("DSH-W310", "open-compaction", "The log ends with a compaction started but not ended.",
     "It was in progress or crashed; its replacement may be missing."),
    ("DSH-N311", "abandoned-compaction", "A compaction left open before a `session/end-seed`.",
     "It belongs to an ended (inherited) lifecycle; dsh ignores it."),
    ("DSH-W312", "meter-mismatch", "The metering event before a replacement lists other `shadowedSeqs` "
     "than the replacement actually shadowed.", "Its `shadowedTokenCount` prices other nodes than the ones "
     "removed. dsh does not compare the two (its compaction check wants only a non-empty list whose first and "
     "last seqs match `shadowedRange`, and its token meter prices the surface it folds), so the log stays valid."),
    ("DSH-E313", "meter-without-replacement", "A `compaction/summary` or `compaction/prune` is not directly "
     "followed by the replacement it prices (FORMAT.md section 7: immediately). Named on the replacement when "
     "it comes later, after other events; on the metering event when none follows before the next one or the "
     "log's end.", "The price is recorded apart from the replacement it is for, or for one that never happened."),
    ("DSH-N314", "unmetered-replacement", "A replacement with no metering event before it (and none pending).",
     "Token accounting cannot price what it removed. FORMAT.md asks for no meter before a replacement, and "
     "plugins replace unmetered (a tool result rewrite): a notice."),
    ("DSH-W315", "checkpoint-without-compaction", "A compaction checkpoint message (source plugin "
     "`compact`) replaces history with no compaction open and none ever started with its id.",
     "dsh's older logs write checkpoints this way (the compaction is `unbracketed`); nothing brackets the "
     "replacement to explain it."),
    # -- hooks (4xx)
    ("DSH-E401", "hook-outside-turn", "A `hook/invoked` or `hook/result` does not name the open turn (or no "
     "turn is open).", "dsh's hook-protocol invariant refuses it: hooks run inside a turn, and the turn is "
     "part of what pairs a result with its invocation."),
    ("DSH-E402", "hook-result-without-invocation", "A `hook/result` pairs with no earlier unanswered "
     "`hook/invoked` of the same turn, `point` and `handlerId`.",
     "dsh's hook-protocol invariant refuses it: the log records an outcome (perhaps a block or a deny) of a "
     "hook run that never started, or answers one run twice."),
    ("DSH-W403", "unanswered-hook", "A turn closed, or the log ended, with a `hook/invoked` that got no "
     "`hook/result`.", "dsh accepts it (a crash or an abort can cut a hook off), but the hook's decision is "
     "unknown: it may have blocked a tool or stopped the turn."),
)


@dataclass(frozen=True)
class Finding:
    """One defect or remark about a log, located as precisely as possible."""

    code: str
    severity: str
    message: str
    seq: int | None = None
    line: int | None = None
    pointer: str | None = None
    caused_by: int | None = None  # the seq of an earlier finding this one follows from

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "severity": self.severity, "seq": self.seq, "line": self.line,
                "pointer": self.pointer, "message": self.message}
        if self.caused_by is not None:
            body["causedBy"] = self.caused_by
        return body


def finding(code: str, message: str, *, seq: int | None = None, line: int | None = None, pointer: str | None = None,
            caused_by: int | None = None) -> Finding:
    return Finding(code, CODES[code].severity, message, seq, line, pointer, caused_by)


DEFAULT_CAP = 1000  # findings kept per code (then counted); --all-findings keeps every one
SCHEMA_CODES = frozenset({"DSH-E004", "DSH-E005"})  # capped per record: explaining a record is the costly part


class FindingList(list[Finding]):
    """Findings as a producer makes them: at most `cap` per code are kept (None:
    all), the rest only counted in `omitted`, so memory stays bounded."""

    def __init__(self, cap: int | None = DEFAULT_CAP) -> None:
        super().__init__()
        self.cap = cap
        self.omitted: Counter[str] = Counter()
        self._kept: Counter[str] = Counter()

    def append(self, f: Finding) -> None:
        if self.cap is not None and f.code not in SCHEMA_CODES:
            if self._kept[f.code] >= self.cap:
                self.omitted[f.code] += 1
                return
            self._kept[f.code] += 1
        super().append(f)

    def extend(self, findings: Iterable[Finding]) -> None:
        for f in findings:
            self.append(f)

    def __reduce__(self) -> tuple[type[FindingList], tuple[int | None], dict[str, Counter[str]], Iterator[Finding]]:
        # (a kept pass is pickled: the cap must be set before the findings are appended again)
        return FindingList, (self.cap,), {"omitted": self.omitted, "_kept": self._kept}, iter(self)


def cap_findings(findings: list[Finding], cap: int | None) -> tuple[list[Finding], Counter[str], int]:
    """The findings to list (in the given order), what is left out per code, and
    how many further records fail their schema: at most `cap` findings per code,
    and the schema findings of at most `cap` records."""
    if cap is None:
        return list(findings), Counter(), 0
    kept: list[Finding] = []
    omitted: Counter[str] = Counter()
    per_code: Counter[str] = Counter()
    schema_records: set[tuple[int | None, int | None]] = set()
    left_out: set[tuple[int | None, int | None]] = set()
    for f in findings:
        if f.code in SCHEMA_CODES:
            record = (f.line, f.seq)
            if record in schema_records or len(schema_records) < cap:
                schema_records.add(record)
                kept.append(f)
            else:
                left_out.add(record)
        elif per_code[f.code] < cap:
            per_code[f.code] += 1
            kept.append(f)
        else:
            omitted[f.code] += 1
    return kept, omitted, len(left_out)


def findings_doc() -> str:
    """The text of docs/reference/findings.md."""
    lines = ["# Finding codes", "",
             "Generated from `dshreplay/findings.py` by `python scripts/make_docs.py`; do not edit.",
             "", "Severity: **error** (exit 1), **warning** (exit 1 only with `--strict`), **notice** "
             "(information).", "", "| code | name | what it means | why it matters |", "|---|---|---|---|"]
    for c in CODES.values():
        lines.append(f"| `{c.code}` | {c.name} | {c.meaning} | {c.why} |")
    return "\n".join(lines) + "\n"
