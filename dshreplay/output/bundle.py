"""`export`: an audit bundle an auditor can archive, and `verify-export` to check it.

Layout of a bundle (all text UTF-8, LF line ends, deterministic):

    manifest.json                  inputs (path, size, hash, facts, verdict) and the
                                   SHA-256 of every other file in the bundle, written in
                                   its RFC 8785 canonical form (output.signing)
    manifest.json.sig              its SSH signature (with --sign-key)
    index.html                     links to each session's report
    <session>/findings.json        the validate output for that log
    <session>/events.csv           one row per event
    <session>/calls.jsonl          each model call: its request (message ids) and response
    <session>/messages.jsonl       every message the calls sent, once, keyed by its SHA-256
    <session>/shadows.json, brackets.json, approvals.csv, transcript.md, report.html

When the fold fails (dsh refuses the log), the bundle keeps every line's
facts (findings, events, calls and their responses, tools, approvals) and
invents no model view past the failure: a call after it is listed with
`"view": null` and the reason, events.csv's surface column is empty from the
failure on, shadows.json and transcript.md stop there, and the manifest entry
says `answeredUpTo` and `failure` (session.WHEN_THE_FOLD_FAILS lists each part).

Every input is pinned by its size and hash, whether it reads as a log or
not. When the export redacts, every hash of input bytes the bundle holds (the
input's, events.csv's `rawSha256`, the line chain) is keyed with the evidence
key (`output.evidence`), so none of them confirms a guess at what was masked.
The manifest says how (`integrity`) and is written in its RFC 8785 form, so
its digest is `sha256sum manifest.json` and its SSH signature covers exactly
those bytes (`output.signing`).

Folder names come from session ids, escaped so that no id can leave the
bundle or collide with another, or with a file of the bundle's root. The
bundle is built in a staging folder beside `--out` and swapped in by renames
(`output.outfolder`): an interrupted or failed export leaves the old bundle
whole and nothing half written; `--force` replaces only a folder that is
provably a bundle of ours and holds no input.
"""

from __future__ import annotations

import base64
import csv
import datetime
import hashlib
import io
import os
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, Union

import orjson

from dshreplay import __version__
from dshreplay.analyses.compaction import CompactionTracker, compaction_of
from dshreplay.analyses.findings import ERROR, NOTICE, WARNING
from dshreplay.analyses.index import Indexer
from dshreplay.analyses.query import CURRENT, LOG_ONLY, SHADOWED
from dshreplay.analyses.render import event_text, message_text, one_line
from dshreplay.analyses.schemas import PLACEHOLDER
from dshreplay.analyses.stats import SessionSummary
from dshreplay.analyses.tools import ToolLedger
from dshreplay.analyses.transcript import TranscriptBuilder
from dshreplay.analyses.turns import TurnSpans
from dshreplay.analyses.validate import validate_log
from dshreplay.core.driver import SKIP, Observer, Record, Run, run_pass
from dshreplay.core.progress import Relabelled
from dshreplay.core.surface import SURFACE_TYPES, derive_message
from dshreplay.errors import (
    ChangedError,
    DeriveError,
    DshReplayError,
    OutputError,
    ReadError,
    UsageError,
    answered_up_to,
)
from dshreplay.io.reader import LogSource, resolve_log_path, shown_path
from dshreplay.jsvalues import (
    MAX_TIME,
    as_text,
    json_bytes,
    parse_count,
    parse_time,
    shown,
    utc_time,
)
from dshreplay.options import Options
from dshreplay.output.bundlejson import read_bundle_json
from dshreplay.output.callrecords import MESSAGES, PREVIEW, CallRecords, MessageStore
from dshreplay.output.chain import TurnEndLines, line_chain
from dshreplay.output.csvcells import csv_cell
from dshreplay.output.evidence import PLAIN_HASH, InputHash, input_hash
from dshreplay.output.htmlreport import MAX_TRANSCRIPT, render_index, render_report
from dshreplay.output.outfolder import create, make_folder, output_error, write_file, write_folder
from dshreplay.output.reporters import TextReporter, markdown_label
from dshreplay.output.reportview import Notes, session_notes
from dshreplay.output.signing import NAMESPACE, Signer, canonical, exact_integers, manifest_digest, representable
from dshreplay.output.summaries import Exported
from dshreplay.redaction.redactor import ArgumentDeltas, Redactor

__all__ = ["export_bundle", "ExportOptions", "read_manifest"]

JSON_OPTS = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE


def dumps(value: Any) -> bytes:  # (JSON: the bundle's own values, or the log's)
    try:
        return orjson.dumps(value, option=JSON_OPTS)
    except orjson.JSONEncodeError:  # deeper than orjson writes, or text that is not UTF-8
        return json_bytes(value) + b"\n"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


INDEX, MANIFEST, SIGNATURE = "index.html", "manifest.json", "manifest.json.sig"  # (signature: when signed)
OLD_SIGNATURE = "manifest.sig"  # a signature of a bundle of format 1 or 2
ROOT_FILES = frozenset({INDEX, MANIFEST, SIGNATURE, OLD_SIGNATURE})  # no folder takes their names
UNLISTED = (MANIFEST, SIGNATURE, OLD_SIGNATURE)  # the files the manifest cannot list: itself, and its signature
WINDOWS_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
                             *(f"COM{n}" for n in range(10)), *(f"LPT{n}" for n in range(10))})


def folder_name(session_id: Any) -> str:  # (a session id as logged: any JSON value)
    """An injective, traversal-proof folder name for a session id.

    Letters, digits, `.`, `_` and `-` stay; every other character becomes
    `~XXXX` (or `~UXXXXXX` beyond the BMP); `.` and `..` are escaped too.
    Names longer than 120 characters keep 100 and add `~~` and a hash. A name
    that would be one of the files of the bundle's root (`ROOT_FILES`, in any
    case) or a Windows device name (`CON`, `nul.txt`, `COM1`), or that ends in a dot,
    has its first (or last) character escaped too.
    """
    raw = session_id if type(session_id) is str else json_bytes(session_id).decode()
    if raw == "":
        return "~~empty"
    if raw in (".", ".."):
        return "".join(f"~{ord(c):04X}" for c in raw)
    parts = []
    for ch in raw:
        if ch != "~" and (ch.isascii() and (ch.isalnum() or ch in "._-")):
            parts.append(ch)
        elif ord(ch) <= 0xFFFF:
            parts.append(f"~{ord(ch):04X}")
        else:
            parts.append(f"~U{ord(ch):06X}")
    name = "".join(parts)
    if name.lower() in ROOT_FILES or name.split(".")[0].upper() in WINDOWS_DEVICES:
        name = f"~{ord(name[0]):04X}" + name[1:]
    if name.endswith("."):
        name = name[:-1] + "~002E"
    if len(name) > 120:
        name = name[:100] + "~~" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return name


def schema_set_version() -> str:
    from dshreplay.analyses.validate import schemas
    digest = hashlib.sha256()
    for name, doc in sorted(schemas().documents.items()):
        digest.update(name.encode() + b"\0" + orjson.dumps(doc, option=orjson.OPT_SORT_KEYS) + b"\0")
    return "sha256:" + digest.hexdigest()[:16]


MAX_EPOCH = MAX_TIME // 1000  # 9999-12-31T23:59:59Z, the last second an ISO 8601 year of four digits holds


def generated_at(timestamp: str | None) -> str:
    """--timestamp, else SOURCE_DATE_EPOCH, else now; as UTC ISO 8601 seconds.

    SOURCE_DATE_EPOCH is whole seconds since 1970 in ASCII digits
    (reproducible-builds.org); a value that is not, or lies past the year
    9999, is a usage error: it is never silently replaced by now."""
    if timestamp is not None:
        try:
            moment = parse_time(timestamp)
        except ValueError as exc:
            raise UsageError(f"--timestamp {shown(timestamp)} {exc}") from None
    elif os.environ.get("SOURCE_DATE_EPOCH", "").strip():
        given = os.environ["SOURCE_DATE_EPOCH"]
        seconds = parse_count(given.strip(), MAX_EPOCH)
        if seconds is None:
            raise UsageError(f"SOURCE_DATE_EPOCH {shown(given)} is not a time: want whole seconds since "
                             f"1970-01-01 in ASCII digits, at most {MAX_EPOCH} (the end of the year 9999)")
        moment = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    else:
        moment = datetime.datetime.now(datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class CsvFile:
    """A CSV file written row by row, every cell neutralised against formulas."""

    def __init__(self, path: Path, header: list[str]) -> None:
        self.fh = create(path, text=True, newline="")
        self.writer = csv.writer(self.fh, lineterminator="\n")
        self.writer.writerow(header)
        self.texts: dict[Any, str] = {}  # short log strings met before -> their cells' CSV text
        self._cell = io.StringIO()  # one cell's CSV text is written here (`cell`), by one writer made once
        self._cell_writer = csv.writer(self._cell, lineterminator="")

    def row(self, values: Iterable[Any]) -> None:
        self.writer.writerow([csv_cell(v) for v in values])

    def text(self, value: Any) -> str:
        """The CSV text of `csv_cell(value)` inside a row, as `row` writes it (quoted when it
        holds a comma, a quote or a line end); remembered for the short strings a column
        repeats (types, ops, ids). A row of such texts joined by commas is what `row` writes,
        without a list of cells to make and collect."""
        if value is None:
            return ""
        if type(value) is int and value >= 0:
            return str(value)
        known = self.texts.get(value) if type(value) is str else None
        if known is None:
            cell = csv_cell(value)
            known = self.cell(cell) if cell != "" else ""
            if type(value) is str and len(value) <= 64 and len(self.texts) < 4096:
                self.texts[value] = known
        return known

    def cell(self, cell: str | int) -> str:
        """A cell (a csv_cell) as the CSV text of part of a row, quoted as the csv module quotes it
        (by one writer for every cell: a writer and a buffer made per cell cost more than the cell).
        Text the writer would not quote (no delimiter, quote or line end; not empty) is its own CSV text."""
        if type(cell) is str and cell and "," not in cell and '"' not in cell and "\n" not in cell \
                and "\r" not in cell:  # (the characters for which the csv module quotes: QUOTE_MINIMAL)
            return cell
        out = self._cell
        out.seek(0)
        out.truncate()
        self._cell_writer.writerow((cell,))
        return out.getvalue()

    def close(self) -> None:
        self.fh.close()


def write_csv(path: Path, header: list[str], rows: Iterable[Iterable[Any]]) -> None:
    out = CsvFile(path, header)
    for row in rows:
        out.row(row)
    out.close()


@dataclass
class SessionExport:
    """What one session contributes to the bundle (kept for the report and manifest)."""

    input: str
    folder: str | None = None
    entry: dict[str, Any] = field(default_factory=dict)
    redactions: int = 0
    by_rule: dict[str, int] = field(default_factory=dict)
    notes: Notes = field(default_factory=Notes)  # index.html's reason and warnings (not in the manifest)


@dataclass(frozen=True)
class ExportOptions:
    """Where and how to write a bundle; `read` holds the settings of the run
    (max bytes, jobs, progress, snapshot) and the redaction rules."""

    out: Path
    read: Options
    rules_label: str | None = None
    timestamp: str | None = None
    force: bool = False
    defaults: bool = True  # the default secret rules were on
    sign_key: str | None = None  # an Ed25519 private key (OpenSSH or PEM): sign manifest.json
    evidence_key: str | None = None  # the evidence key file: needed when the export redacts

    @property
    def redactor(self) -> Redactor:
        return _redactor(self.read)


def _redactor(options: Options) -> Redactor:
    """The run's redactor (none given: one with no rules)."""
    redactor = options.redactor
    return redactor if isinstance(redactor, Redactor) else Redactor()


@dataclass(frozen=True)
class _Seal:
    """How the bundle pins its inputs and itself: the hash of input bytes, and the signer."""

    hasher: InputHash = PLAIN_HASH
    signer: Signer | None = None

    @classmethod
    def of(cls, options: ExportOptions) -> _Seal:
        """Checked before anything is written: a bad key is a usage error and no bundle."""
        signer = None if options.sign_key is None else Signer(options.sign_key)
        redacts = options.redactor is not None and options.redactor.active
        return cls(input_hash(redacts, options.evidence_key, command="export", writes="the bundle",
                              places={"--out": options.out}), signer)

    def integrity(self) -> dict[str, Any]:
        """The manifest's account of its hashes, its key and its signature."""
        signature = None if self.signer is None else {
            "file": SIGNATURE, "format": "sshsig", "namespace": NAMESPACE, "key": self.signer.fingerprint}
        return {"canonical": "rfc8785", "digest": "sha256", "inputHash": self.hasher.name,
                "evidenceKey": self.hasher.fingerprint, "signature": signature}


Given = Union[str, Path, LogSource]  # an input: a log, a session folder, or standard input read once
Job = tuple[Given, Union[str, None], Path, Options, InputHash]  # a session's part: input, folder, root, options, hash
Mapper = Callable[[Callable[[Job], SessionExport], list[Job]], list[SessionExport]]  # runs the jobs


def export(inputs: Sequence[Given], options: ExportOptions, mapper: Mapper | None = None) -> Exported:
    """Write the bundle; returns the manifest (an `Exported`: with where the bundle is and its
    digest, printable as `export --json`). Raises UsageError for a bad --out
    and OutputError when the bundle cannot be written (the old one is kept).

    `mapper(fn, items)` runs the per-session jobs (default: in this process;
    a process pool or a Dask client gives the same bytes). "-" is standard
    input, read once (up to --max-bytes) before --out is claimed.
    """
    read = options.read
    if read.progress is not None:  # a log's pass shows its path as the bundle writes it
        options = replace(options, read=read.with_(progress=Relabelled.of(read.progress, options.redactor.text)))
    stdin = None
    if "-" in inputs:
        stdin = LogSource("-", options.read)
    given: list[Given] = [stdin if g == "-" and stdin is not None else g for g in inputs]
    stamp = generated_at(options.timestamp)
    seal = _Seal.of(options)
    mapper = mapper or (lambda fn, items: [fn(i) for i in items])

    def check_old(path: Path, shown: str) -> None:
        _check_replaceable(path, shown, _identities(given, options.redactor))
    manifest = write_folder(options.out, lambda staging: _build(given, staging, options, stamp, mapper, seal),
                            force=options.force, check_old=check_old)
    return Exported(manifest, options.out, manifest_digest(canonical(manifest)))


def _identities(inputs: list[Given], redactor: Redactor) -> dict[tuple[int, int], str]:
    """(st_dev, st_ino) -> the input as messages name it, for every input file (and standard
    input when it is a file): what --force must never delete, whatever path names it."""
    found = {}
    for given in inputs:
        try:
            info = os.fstat(0) if isinstance(given, LogSource) else os.stat(resolve_log_path(given))
        except (OSError, ReadError):
            continue
        found[(info.st_dev, info.st_ino)] = _shown_input(given, redactor)
    return found


def _check_replaceable(folder: Path, shown: str, inputs: dict[tuple[int, int], str]) -> None:
    """Raise a UsageError unless `folder` is provably a dshreplay bundle holding no input:
    its manifest reads as one; every file there is one it lists (or the manifest and its
    signature), every folder one that holds them (or a format 2 session's calls/ and messages/),
    and nothing is a link or an input. Checked before anything is deleted; the walk stops
    at the first thing that is not ours."""
    try:
        _, manifest = read_manifest(folder)
    except UsageError as exc:
        raise UsageError(f"--force: {exc.message}; nothing was deleted (--force replaces only a bundle)") from None
    files, sessions = manifest["files"], manifest["sessions"]
    if type(files) is dict:  # format 1: path -> sha256
        files = [{"path": path} for path in files]
    listed = {e["path"] for e in files if type(e) is dict and type(e.get("path")) is str}
    folders = {"/".join(parts[:k]) for parts in (p.split("/") for p in listed) for k in range(1, len(parts))}
    for entry in sessions:
        name = entry.get("folder") if type(entry) is dict else None
        if type(name) is str:
            folders.update((name, f"{name}/calls", f"{name}/messages"))
    pending = [(folder, "")]
    while pending:
        here, prefix = pending.pop()
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    rel = prefix + entry.name
                    info = entry.stat(follow_symlinks=False)
                    held = inputs.get((info.st_dev, info.st_ino))
                    if held is not None:
                        raise UsageError(f"--out {shown} holds the input {held}: --force would delete it with the "
                                         "old bundle; write the bundle elsewhere")
                    if entry.is_dir(follow_symlinks=False) and rel in folders:
                        pending.append((Path(entry.path), rel + "/"))
                    elif not (entry.is_file(follow_symlinks=False) and (rel in listed or rel in UNLISTED)):
                        raise UsageError(f"--force: {shown} holds {shown_path(rel)}, which is not in its bundle's "
                                         "manifest: it is not a dshreplay bundle, and nothing was deleted")
        except OSError as exc:
            raise UsageError(f"--force: cannot check {shown_path(here)}: {exc.strerror or exc}; "
                             "nothing was deleted") from None


def export_bundle(inputs: Iterable[str | Path], out: str | Path, options: Options | None = None, *,
                  timestamp: str | None = None,
                  force: bool = False, rules: str | None = None, default_rules: bool = True,
                  evidence_key: str | None = None, sign_key: str | None = None,
                  mapper: Mapper | None = None) -> Exported:
    """The library's export: write the bundle of `inputs` (logs, session folders
    or store roots) to `out`; returns the manifest, an `Exported` whose `to_json()` is
    `export --json`'s. `rules`: a redaction rules file;
    `evidence_key`: the key file that keys the inputs' hashes (needed when anything
    is redacted, made if absent); `sign_key`: an Ed25519 private key to sign with."""
    from dshreplay.io.store import discover
    from dshreplay.redaction.redactor import load_redactor
    options = (options or Options()).with_(redactor=load_redactor(rules, defaults=default_rules))
    return export(discover(inputs), ExportOptions(Path(out), options, rules, timestamp, force, default_rules,
                                                  sign_key, evidence_key), mapper)


def _source(given: Given, options: Options) -> LogSource:
    """An input as a LogSource (standard input is one already, read once)."""
    return given if isinstance(given, LogSource) else LogSource(given, options)


def _label(given: Given) -> str:
    """An input as the user gave it: a path, or - for standard input."""
    return "-" if isinstance(given, LogSource) else shown_path(given)


def _shown_input(given: Given, redactor: Redactor) -> str:
    """An input as the bundle and every message name it: its path as given, with the rules
    applied (a token in a file or folder name is masked like any other text)."""
    return redactor.text(_label(given))


def _log_name(given: Given) -> str:
    """A log's name without its extension (`a__session` for `a__session.jsonl.zstd`); the
    folder's name for a session store's `session.jsonl`."""
    if isinstance(given, LogSource):
        return "stdin"
    path = Path(given)
    name = path.name
    for suffix in (".zstd", ".jsonl"):
        name = name.removesuffix(suffix)
    if name == "session" and path.parent.name not in ("", "."):
        name = path.parent.name
    return name or "stdin"


def _plan(inputs: list[Given], options: Options) -> list[str | None]:
    """The folder of each input (None: unreadable), unique in input order."""
    used: set[str] = set()
    folders: list[str | None] = []
    for given in inputs:
        try:
            with _source(given, options).reader() as reader:
                session_id = reader.header.get("id")
        except (DshReplayError, OSError):  # the session's job reports why
            folders.append(None)
            continue
        name = base = _folder_base(session_id, given, _redactor(options))
        n = 1
        while name in used:
            n += 1
            name = f"{base}~~{n}"
        used.add(name)
        folders.append(name)
    return folders


def _folder_base(session_id: Any, given: Given, redactor: Redactor) -> str:
    """The folder name of a session before it is numbered apart (`~~2`) from the ones before:
    made from its id with the rules applied (a key in an id never names a folder), or for a
    snapshot's "{{sessionId}}" from its file's name. No hash of the id as logged is taken."""
    if type(session_id) is str and PLACEHOLDER.fullmatch(session_id):
        return folder_name(redactor.string(_log_name(given)))
    return folder_name(redactor.value(session_id))  # (an id that is no string: its strings redacted too)


def _job(item: Job) -> SessionExport:
    """One session's part of the bundle (runs in any process)."""
    given, folder, root, options, hasher = item
    return _export_one(given, root, _redactor(options).for_calls(()), folder, options, hasher)


def _build(inputs: list[Given], root: Path, options: ExportOptions, stamp: str, mapper: Mapper,
           seal: _Seal) -> dict[str, Any]:
    redactor = options.redactor
    folders = _plan(inputs, options.read)
    sessions = mapper(_job, [(given, folder, root, options.read, seal.hasher)
                             for given, folder in zip(inputs, folders)])
    replacements = sum(s.redactions for s in sessions)
    by_rule: dict[str, int] = {}
    for s in sessions:
        for rule, n in s.by_rule.items():
            by_rule[rule] = by_rule.get(rule, 0) + n
    write_file(root / INDEX, render_index([s.entry for s in sessions], stamp, [s.notes for s in sessions]).encode())
    files = _listing(root)
    manifest = {
        "format": FORMAT,
        "dshreplay": __version__,
        "schemaSet": schema_set_version(),
        "generatedAt": stamp,
        "integrity": seal.integrity(),
        "redaction": {"defaultRules": options.defaults,
                      "rulesFile": options.rules_label, "rules": redactor.summary,
                      "replacements": replacements, "replacementsByRule": dict(sorted(by_rule.items()))},
        "sessions": [s.entry for s in sessions],
        "files": files,
    }
    written: dict[str, Any] = representable(manifest)  # (a log's integer past 2^53 - 1 as its decimal string)
    data = canonical(written)  # written as its own RFC 8785 form: `sha256sum manifest.json` is the digest
    write_file(root / MANIFEST, data)
    if seal.signer is not None:
        write_file(root / SIGNATURE, seal.signer.sign(data))
    return written


def _listing(root: Path) -> list[dict[str, Any]]:
    """The manifest's files: every file written, with its size and SHA-256."""
    files = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            files.append({"path": path.relative_to(root).as_posix(), "size": path.stat().st_size,
                          "sha256": sha256_file(path)})
        except OSError as exc:
            raise output_error(exc, path) from None
    return files


# manifest.json: "files" is a list of {path, size, sha256} (format 1, with no "format": a map path -> sha256);
# format 3 keeps a session's calls in calls.jsonl and messages.jsonl (format 2: calls/NNNN.json, messages/*.json);
# in format 4 every 100th call record builds on an earlier one instead of listing its whole request
# (output/callrecords.py: checkpoints), so a surface that only grows no longer costs N²/200 message ids
FORMAT = 4


def _input_facts(given: Given, source: LogSource | None, hasher: InputHash) -> dict[str, Any]:
    """The input's size and hash (`sha256`: plain or keyed, as the manifest's integrity says),
    whether it reads as a log or not, read through the one regular-file check (a FIFO or a
    device is refused, never read); standard input's as it was read. Only the input's name
    when it cannot be read at all (`source` None: not even found)."""
    facts: dict[str, Any] = {"input": _label(given)}
    if source is None:
        return facts
    try:
        if source.data is not None:
            facts.update(size=len(source.data), sha256=hasher.hex(source.data))
            return facts
        if not isinstance(given, LogSource) and Path(given).is_dir():
            assert source.file is not None  # (a session folder's log is a file)
            facts["file"] = shown_path(source.file)
        facts.update(_bytes_facts(source, hasher))
    except (DshReplayError, OSError):  # (the session's export says why)
        pass
    return facts


def _bytes_facts(source: LogSource, hasher: InputHash) -> dict[str, Any]:
    digest, size = hasher.new(), 0
    assert source.file is not None  # (only a file's bytes are read here: standard input is held as data)
    with source.open() as fh:  # (the source's fixed extent: every pass of the export reads the same bytes)
        try:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
                size += len(block)
        except OSError as exc:
            raise ReadError(f"cannot read: {exc.strerror or exc}", path=source.path) from None
    return {"size": size, "sha256": digest.hexdigest()}


def _export_one(given: Given, root: Path, redactor: Redactor, name: str | None, options: Options,
                hasher: InputHash) -> SessionExport:
    """One session's part; whatever goes wrong in reading it stays in it: its folder is
    removed and its manifest entry says why (with the input's size and hash, whenever
    its bytes can be read), the other sessions are kept. An error of the output (a full
    disk) is no verdict on the input: it ends the export."""
    try:  # (one source for every pass: its extent is fixed when first opened, by the facts)
        source: LogSource | None = _source(given, options)
    except (DshReplayError, OSError):
        source = None  # (the session's export says why)
    facts = _input_facts(given, source, hasher)
    redactor.counting = True  # (a path is redacted like any text the bundle holds, and counted as the session's)
    facts["input"] = _shown_input(given, redactor)
    if "file" in facts:
        facts["file"] = redactor.text(facts["file"])
    redactor.counting = False
    if not isinstance(given, LogSource):
        facts.update(_pinned("input", facts["input"], given))
        if "file" in facts and source is not None and source.file is not None:
            facts.update(_pinned("file", facts["file"], source.file))
    try:
        return _export_session(given, source, root, redactor, name, options, facts, hasher)
    except OutputError:
        raise
    except (DshReplayError, OSError) as exc:  # a defect past what validate can read around
        verdict, why = "unreadable", exc.within() if isinstance(exc, DshReplayError) else _os_reason(exc)
    except Exception as exc:  # noqa: BLE001 - a bug of ours: named as one (export exits 70), the rest kept
        verdict, why = "internal-error", f"internal error: {type(exc).__name__}: {exc} (please report it)"
    if name is not None:
        shutil.rmtree(root / name, ignore_errors=True)
    result = SessionExport(facts["input"])
    result.entry = {**facts, "verdict": verdict, "error": redactor.text(why)}
    return _counted(result, redactor)


def _pinned(key: str, written: str, path: str | os.PathLike[str]) -> dict[str, str]:
    """`{KEY + "Bytes": base64}`: the bytes of a name that is not UTF-8 (the manifest's text
    shows them as \\xNN, which names another file), so verify-export finds the file again
    (`pinned_path`); nothing when the name is text, or when redaction masked any of it (its
    bytes would hold what was masked)."""
    raw = os.fsencode(path)
    if written != shown_path(path) or raw.decode("utf-8", "replace").encode() == raw:
        return {}
    return {key + "Bytes": base64.b64encode(raw).decode("ascii")}


def pinned_path(entry: dict[str, Any], key: str) -> str | None:
    """The path a session entry pins as bytes under KEY + "Bytes" (`_pinned`), as the file system
    names it; None when it pins none (or not as base64 of a path)."""
    value = entry.get(key + "Bytes")
    if type(value) is not str:
        return None
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:
        return None
    return os.fsdecode(raw) if raw and b"\0" not in raw else None


def _counted(result: SessionExport, redactor: Redactor) -> SessionExport:
    """`result` with the replacements `redactor` counted for its session (in its manifest entry too)."""
    result.redactions, result.by_rule = redactor.replacements, dict(redactor.by_rule)
    result.entry["redactions"] = {"replacements": redactor.replacements,
                                  "byRule": dict(sorted(redactor.by_rule.items()))}
    return result


def _os_reason(exc: OSError) -> str:
    where = f"{shown_path(exc.filename)}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


def _export_session(given: Given, source: LogSource | None, root: Path, redactor: Redactor, name: str | None,
                    options: Options, facts: dict[str, Any], hasher: InputHash) -> SessionExport:
    label = facts["input"]
    result = SessionExport(label)
    try:
        plain = source if source is not None else _source(given, options)
        with plain.transformed(redactor.record).reader() as reader:
            header, header_text = reader.header, reader.header_text
    except (DshReplayError, OSError) as exc:
        message = exc.within() if isinstance(exc, DshReplayError) else _os_reason(exc)
        result.entry = {**facts, "verdict": "unreadable", "error": redactor.text(message)}
        return _counted(result, redactor)
    # the findings and the surface column of events.csv are the original's (findings redacted when written)
    deltas, ends, final = ArgumentDeltas(), TurnEndLines(), _FinalNodes()
    report = validate_log(plain, options, observers=[deltas, ends, final])
    if report.unreadable is not None or name is None:
        message = report.unreadable.within() if report.unreadable is not None else ChangedError(
            "changed while it was read: its header could not be read when the export began, and can now (read it "
            "again once nothing rewrites it)", path=plain.path).within()
        result.entry = {**facts, "verdict": "unreadable", "error": redactor.text(message)}
        return _counted(result, redactor)
    facts = {**facts, "chain": line_chain(plain, ends.lines, hasher=hasher)}  # for verify-export --grown
    # this session's redactor also masks every delta of a tool call whose assembled arguments hold a secret
    redactor = redactor.for_calls(deltas.secret_calls(redactor))
    source = plain.transformed(redactor.record)
    folder = root / name
    make_folder(folder)
    result.folder = name
    failure = None if final.failure is None else {
        **final.failure.to_json(), "message": redactor.text(final.failure.message),
        "pointer": None if final.failure.pointer is None else redactor.text(final.failure.pointer)}
    redactor.counting = True
    index, view = _stream(source, folder, header, final.nodes, failure, hasher)
    redactor.counting = False
    counts = {s: report.count(s) for s in (ERROR, WARNING, NOTICE)}
    findings = [redactor.finding(f.to_json()) for f in report.findings]
    write_file(folder / "findings.json", dumps({"files": [{
        "path": label, "ok": report.ok, "events": report.events, "findings": findings}]}))
    write_file(folder / "shadows.json", dumps([r.to_json() for r in view["shadows"]]))
    write_file(folder / "brackets.json", dumps([b.to_json() for b in index.brackets]))
    write_file(folder / "spills.json", dumps([s.to_json() for s in index.spills]))
    entries = view.pop("transcript")
    head = {k: header.get(k) for k in ("id", "version", "createdAt", "cwd", "parentSession", "seedLength",
                                       "origin", "delegationDepth", "agentPreset") if k in header}
    head = exact_integers(head, header_text)  # (an integer past 64 bits as the log wrote it, not orjson's float)
    result.entry = {**facts, "folder": name, "encoding": index.encoding, "header": head,
                    "events": index.event_count, "verdict": "ok" if report.ok else "errors",
                    "findings": counts, "tornTail": None if index.torn_tail is None else index.torn_tail.to_json(),
                    "answeredUpTo": answered_up_to(failure), "failure": failure}
    _counted(result, redactor)
    report_html = render_report(entry=result.entry, index=index, findings=findings, view=view,
                                transcript=entries, input_hash=hasher.name)
    write_file(folder / "report.html", report_html.encode())
    result.notes = session_notes(findings)
    return result


TRANSCRIPT_QUOTE = 1000  # characters of a tool result transcript.md quotes; its whole message is in messages.jsonl


class _TranscriptFile(TranscriptBuilder):
    """transcript.md written entry by entry; the report keeps only its first entries.

    A tool result longer than TRANSCRIPT_QUOTE characters is quoted that far, with a note
    naming its message in messages.jsonl (stored there if no call sent it): the bundle
    holds each message once, and tool output is most of a session's bytes."""

    def __init__(self, path: Path, title: str, store: MessageStore) -> None:
        super().__init__()
        self.path, self.title, self.store = path, title, store

    def begin(self, run: Run) -> None:
        super().begin(run)
        self.fh = create(self.path, text=True)
        self.fh.write(f"# Transcript of {markdown_label(self.title)}\n\n")
        self.reporter = TextReporter(self.fh)
        self.kept: list[Any] = []  # (the transcript's entries)

    def observe(self, record: Record) -> None:
        super().observe(record)
        if self.entries:
            self._flush()

    def finish(self, run: Run) -> None:
        super().finish(run)
        self._flush()
        self.fh.close()

    def _flush(self) -> None:
        for entry in self.entries:
            self.reporter.transcript([entry], markdown=True, quote=self._quote)
            if len(self.kept) < MAX_TRANSCRIPT:
                self.kept.append(entry)
        self.entries.clear()

    def _quote(self, entry: Any, text: str) -> tuple[str, str | None]:
        if entry.type != "tool/result" or len(text) <= TRANSCRIPT_QUOTE:
            return text, None
        key = self.store.put(entry.message)  # (a tool result has no reasoning: the message a request sends)
        return text[:TRANSCRIPT_QUOTE], (f"[{len(text) - TRANSCRIPT_QUOTE:,} more characters: the whole tool result "
                                         f"is the message {key} of messages.jsonl]")


class _EventRows(Observer):
    """events.csv, one row per event (packed rows expanded). Each row is written as one
    string of its cells' CSV texts (`CsvFile.text`): a million rows make no lists or tuples
    for the garbage collector to walk."""

    HEADER = ["seq", "line", "time", "type", "turn", "step", "surface", "op", "callId", "tool", "compactionId",
              "preview", "rawSha256"]
    requires = (TurnSpans, ToolLedger, CompactionTracker)

    def __init__(self, path: Path, final_nodes: frozenset[int], unknown_from: int | None,
                 hasher: InputHash = PLAIN_HASH) -> None:
        self.path = path
        self.line_hash = hasher.hex  # the raw line's hash: plain, or keyed when the export redacts
        self.final_nodes = final_nodes
        self.unknown_from = unknown_from  # where the fold fails: no surface status from there on

    def begin(self, run: Run) -> None:
        self.csv = CsvFile(self.path, self.HEADER)
        self.write = self.csv.fh.write
        self.text, self.texts = self.csv.text, self.csv.texts  # (bound once: looked up for every cell of every row)
        self.call_at = run.get(ToolLedger).call_at
        self.compactions = run.get(CompactionTracker)
        self.hashed = None  # the line whose hash was written
        self.turn_step: tuple[Any, Any, str] = (None, None, ",")  # the last turn and step, and their cells' text

    def observe(self, record: Record) -> None:
        item: Any = record.item  # (an Event or a PackedRun; the driver's Item on h28f)
        raw = record.raw
        # the line's hash is on the row of its first event (`sed -n LINEp LOG | sha256sum`, or with
        # the evidence key `| openssl dgst -sha256 -mac HMAC -macopt hexkey:$(cat KEY)`)
        raw_sha256 = self.line_hash(raw) if raw is not None and item.line != self.hashed else ""
        self.hashed = item.line
        turn, step = record.turn, record.step
        last = self.turn_step
        if turn is not last[0] or step is not last[1]:  # (a step's records share their cells' text)
            last = self.turn_step = (turn, step, f"{self.text(turn)},{self.text(step)}")
        if item.row is not None:
            self._packed(item, raw_sha256, last[2])
        else:
            self._row(item, raw_sha256, last[2])

    def _packed(self, run: Any, raw_sha256: str, turn_step: str) -> None:  # (a PackedRun)
        """The events of a packed row: chunks, alike but for their seq and time (no surface op,
        no call, no preview; the compaction open around them, if any)."""
        seq, count, line, times = run.seq, run.count, run.line, run.times
        unknown_from = self.unknown_from if self.unknown_from is not None else seq + count
        shared = f"{self.text(run.type)},{turn_step}"
        cid = compaction_of(None, self.compactions.open)
        cid_text = "" if cid is None else self.text(cid)
        self.write("".join([f"{seq + k},{line},{utc_time(times[k]) or ''},{shared},"
                            f"{LOG_ONLY if seq + k < unknown_from else ''},,,,{cid_text},,{'' if k else raw_sha256}\n"
                            for k in range(count)]))

    def _row(self, event: Any, raw_sha256: str, turn_step: str) -> None:  # (an Event)
        kind = event.type
        record = event.record
        data = record.get("data")
        seq = event.seq
        call = self.call_at(seq)
        preview = ""
        if kind in SURFACE_TYPES:
            status = CURRENT if seq in self.final_nodes else SHADOWED
            try:
                has, message = derive_message(event)
                names = {call.call_id: call.tool} if call is not None and type(call.call_id) is str else None
                preview = message_text(message, tools=names) if has else ""
            except DeriveError:
                preview = ""
        else:
            status = LOG_ONLY
            if kind != "assistant/chunk" or _finish_chunk(data):  # (a streamed piece: its message's row shows it)
                preview = event_text(event, call)
        if self.unknown_from is not None and seq >= self.unknown_from:
            status = ""
        if preview:
            preview = self.csv.cell(csv_cell(one_line(preview, 120)))
        compaction_id = compaction_of(data, self.compactions.open)
        texts, text = self.texts, self.text
        kind_text = texts.get(kind) if type(kind) is str else None  # (a cell met before: no call)
        if kind_text is None:
            kind_text = text(kind)
        op = record.get("surfaceOp")
        op_text = "" if op is None else texts.get(op) if type(op) is str else None
        if op_text is None:
            op_text = text(op)
        called = "," if call is None else f"{text(call.call_id)},{text(call.tool)}"
        self.write(f"{seq},{event.line},{utc_time(event.time) or ''},{kind_text},{turn_step},{status},"
                   f"{op_text},{called},{'' if compaction_id is None else text(compaction_id)},{preview},"
                   f"{raw_sha256}\n")

    def finish(self, run: Run) -> None:
        self.csv.close()


def _finish_chunk(data: Any) -> bool:
    """Whether an assistant/chunk's data is the finish of a model call (a provider's error shows there)."""
    chunk = data.get("chunk") if type(data) is dict else None
    return type(chunk) is dict and chunk.get("type") == "finish"


class _ToolRows(Observer):
    """tools.csv: one row per tool call the model asked for (or the log started or
    answered), with its arguments, result, approval, hooks and outcome, all
    attached by call id (the ToolLedger)."""

    HEADER = ["callId", "turn", "step", "tool", "outcome", "arguments", "resultPreview", "isError", "approvalAsked",
              "approvalOutcome", "approvalDecided", "hooks", "startedAt", "finishedAt", "durationMs", "askedSeq",
              "callSeq", "resultSeq", "spilledBytes"]

    requires = (Indexer, ToolLedger)
    types = frozenset({"tool/result"})

    def __init__(self, path: Path) -> None:
        self.path = path

    def begin(self, run: Run) -> None:
        self.indexer = run.get(Indexer)
        self.tools = run.get(ToolLedger)
        self.previews: dict[int, str] = {}  # tool/result seq -> the start of its text

    def observe(self, record: Record) -> None:
        item: Any = record.item  # (an Event; the driver's Item on h28f)
        if item.record.get("surfaceOp") == "append":
            data = item.record.get("data")
            message = data.get("message") if type(data) is dict else None
            names = dict(self.tools.names(item.seq, message))
            self.previews[item.seq] = one_line(message_text(message, reasoning=False, tools=names), PREVIEW)

    def finish(self, run: Run) -> None:
        index = self.indexer.index
        rows = []
        for call in self.tools.calls:
            started, finished, approval = call.started_at, call.finished_at, call.approval
            rows.append([call.call_id, call.turn, call.step, call.tool, call.outcome, call.arguments,
                         None if call.result_seq is None else self.previews.get(call.result_seq), call.is_error,
                         None if approval is None else utc_time(approval.asked_time),
                         None if approval is None else approval.outcome,
                         None if approval is None else utc_time(approval.decided_time),
                         " ".join(h.label() for h in call.hooks), utc_time(started), utc_time(finished),
                         call.duration_ms, call.asked_seq, call.call_seq, call.result_seq,
                         _spilled_bytes(index, call.result_seq)])
        write_csv(self.path, self.HEADER, rows)


class _FinalNodes(Observer):
    """The surface at the end of a pass (of the original log, for events.csv's surface column),
    or, when the fold fails, before the failure (and the failure)."""

    nodes: frozenset[int] = frozenset()
    failure = None

    def finish(self, run: Run) -> None:
        self.failure = run.failure
        view = run.fold if run.failure is None or run.failure_view is None else run.failure_view
        self.nodes = frozenset(view.nodes)


def _stream(source: LogSource, folder: Path, header: dict[str, Any], final_nodes: frozenset[int],
            failure: dict[str, Any] | None,
            hasher: InputHash = PLAIN_HASH) -> tuple[Any, dict[str, Any]]:
    """The one pass over the redacted log: it indexes it and writes events.csv,
    calls.jsonl, messages.jsonl, tools.csv, approvals.csv and transcript.md; returns the index
    and what the report draws. `failure` (redacted): where the fold fails."""
    indexer = Indexer()
    unknown_from = None if failure is None else failure["seq"]
    store = MessageStore(folder / MESSAGES)
    records = CallRecords(folder, store, failure)
    transcript = _TranscriptFile(folder / "transcript.md", as_text(header.get("id")), store)
    summary = SessionSummary()
    observers = [indexer, summary, transcript, records,
                 _EventRows(folder / "events.csv", final_nodes, unknown_from, hasher),
                 _ToolRows(folder / "tools.csv")]
    try:
        run = run_pass(source, observers, on_fold_error=SKIP)
    finally:
        store.close()
    index = indexer.index
    turns = run.get(TurnSpans)
    stats = summary.stats
    assert stats is not None  # (made when the pass finishes)
    session = {k: v for k, v in stats.to_json().items() if k not in ("path", "error")}
    session["foldError"] = stats.fold_error_json()
    write_file(folder / "session.json", dumps(session))
    views = records.views
    last = run.last_seq if run.last_seq is not None else 0
    spans: dict[str, list[tuple[int, int, str]]] = {"turns": [], "steps": []}
    for s in turns.steps:
        label = f"turn {as_text(s.turn)} step {as_text(s.step)}"
        spans["steps"].append((s.start, s.end, label) if s.end is not None else (s.start, last, label + " (open)"))
    for s in turns.turns:
        label = f"turn {as_text(s.turn)}"
        spans["turns"].append((s.start, s.end, label) if s.end is not None else (s.start, last, label + " (open)"))
    tracker = run.get(ToolLedger)
    approvals = [a.row() for a in tracker.approvals]
    write_csv(folder / "approvals.csv", ["askedSeq", "decidedSeq", "id", "tool", "callId", "outcome", "reason",
                                         "flag", "askedAt", "decidedAt", "arguments"],
              [[*a.row(), utc_time(a.asked_time), utc_time(a.decided_time), a.arguments]
               for a in tracker.approvals])
    shadows = [r for r in index.shadows if unknown_from is None or r.seq < unknown_from]
    return index, {"calls": views, "spans": spans, "approvals": approvals, "transcript": transcript.kept,
                   "finalNodes": final_nodes, "session": session, "shadows": shadows, "failure": failure}


def _spilled_bytes(index: Any, seq: object) -> int | None:  # (the Indexer's index)
    """The bytes dsh kept out of the model's view of the tool result at `seq` (None: none)."""
    spills = index.spills_of(seq) if type(seq) is int else ()
    return sum(s.omitted for s in spills) if spills else None


# -- reading a bundle -----------------------------------------------------------

def read_manifest(bundle: Path) -> tuple[bytes, dict[str, Any]]:
    """manifest.json's bytes and value, with its files (a list; a format 1 map) and sessions (a list)."""
    try:
        data, manifest = read_bundle_json(bundle / "manifest.json", "manifest.json")
    except ReadError as exc:
        raise UsageError(f"{shown_path(bundle)} has no readable manifest.json ({exc.message}): "
                         "not a dshreplay bundle") from None
    files = manifest.get("files") if type(manifest) is dict else None
    sessions = manifest.get("sessions") if type(manifest) is dict else None
    if type(files) not in (list, dict) or type(sessions) is not list:
        raise UsageError(f"{shown_path(bundle)}/manifest.json lacks its files and sessions: not a dshreplay bundle")
    assert isinstance(manifest, dict)  # (its files and sessions were read from it)
    return data, manifest
