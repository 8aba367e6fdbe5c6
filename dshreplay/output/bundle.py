"""`export`: an audit bundle an auditor can archive, and `verify-export` to check it.

Layout of a bundle (all text UTF-8, LF line ends, deterministic):

    manifest.json                  inputs (path, size, hash, facts, verdict) and the
                                   SHA-256 of every other file in the bundle, written in
                                   its RFC 8785 canonical form (output.signing)
    manifest.json.sig              its SSH signature (with --sign-key)
    index.html                     links to each session's report
    <session>/findings.json        the validate output for that log
    <session>/events.csv           one row per event
    <session>/calls/NNNN.json      each model call's exact request
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

import csv
import datetime
import hashlib
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from dshreplay import __version__
from dshreplay.analyses.calls import CallTracker
from dshreplay.analyses.findings import ERROR, NOTICE, WARNING
from dshreplay.analyses.index import Indexer
from dshreplay.analyses.query import CURRENT, LOG_ONLY, SHADOWED
from dshreplay.analyses.render import clean, event_text, message_text, one_line, role_of
from dshreplay.analyses.schemas import PLACEHOLDER
from dshreplay.analyses.stats import SessionSummary
from dshreplay.analyses.tools import ToolLedger
from dshreplay.analyses.transcript import TranscriptBuilder
from dshreplay.analyses.turns import TurnSpans
from dshreplay.analyses.validate import validate_log
from dshreplay.core.driver import SKIP, Observer, Run, run_pass
from dshreplay.core.surface import SURFACE_TYPES, derive_message
from dshreplay.errors import DeriveError, DshReplayError, NoViewError, OutputError, ReadError, UsageError, fails_at
from dshreplay.io.reader import LogSource, open_regular, read_small_file, resolve_log_path, shown_path
from dshreplay.jsvalues import (
    MAX_TIME,
    MISSING,
    as_text,
    is_time,
    json_bytes,
    parse_count,
    parse_time,
    shown,
    utc_time,
)
from dshreplay.options import Options
from dshreplay.output.chain import (
    TurnEndLines,
    is_count,
    is_sha256,
    line_chain,
)
from dshreplay.output.evidence import PLAIN_HASH, InputHash, load_key
from dshreplay.output.htmlreport import MAX_TRANSCRIPT, render_index, render_report
from dshreplay.output.outfolder import create, make_folder, output_error, write_file, write_folder
from dshreplay.output.redact import ArgumentDeltas, Redactor
from dshreplay.output.reporters import TextReporter, json_text, markdown_label
from dshreplay.output.signing import NAMESPACE, Signer, canonical, representable

JSON_OPTS = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
FULL_REQUEST_EVERY = 100  # every 100th call record lists its whole request (the others build on the call before)
MAX_CALL_VIEWS = 200  # calls whose model view is drawn in report.html (every call has its JSON file)
PREVIEW = 160


def dumps(value) -> bytes:
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


def canonical_sha256(value) -> str:
    """SHA-256 of a JSON value's canonical form (sorted keys, no spaces)."""
    return hashlib.sha256(json_bytes(value, sort_keys=True)).hexdigest()


INDEX, MANIFEST, SIGNATURE = "index.html", "manifest.json", "manifest.json.sig"  # (signature: when signed)
OLD_SIGNATURE = "manifest.sig"  # a signature of a bundle of format 1 or 2
ROOT_FILES = frozenset({INDEX, MANIFEST, SIGNATURE, OLD_SIGNATURE})  # no folder takes their names
UNLISTED = (MANIFEST, SIGNATURE, OLD_SIGNATURE)  # the files the manifest cannot list: itself, and its signature
WINDOWS_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
                             *(f"COM{n}" for n in range(10)), *(f"LPT{n}" for n in range(10))})


def folder_name(session_id) -> str:
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


_FORMULA_START = ("=", "+", "-", "@", "\t")


def csv_cell(value) -> str:
    """A CSV cell that a spreadsheet will not run as a formula."""
    if type(value) is str and value.isprintable():  # the common case: nothing to replace or strip
        text = value
    elif type(value) is int:
        text = str(value)
    else:
        text = "" if value is None else (value if type(value) is str else json_bytes(value).decode())
        text = clean(text.replace("\r", " ").replace("\n", " "))
    if text.lstrip(" \ufeff")[:1] in _FORMULA_START:  # (a spreadsheet skips leading spaces and a BOM)
        text = "'" + text
    return text


class CsvFile:
    """A CSV file written row by row, every cell neutralised against formulas."""

    def __init__(self, path: Path, header: list[str]) -> None:
        self.fh = create(path, text=True, newline="")
        self.writer = csv.writer(self.fh, lineterminator="\n")
        self.writer.writerow(header)

    def row(self, values) -> None:
        self.writer.writerow([csv_cell(v) for v in values])

    def close(self) -> None:
        self.fh.close()


def write_csv(path: Path, header: list[str], rows) -> None:
    out = CsvFile(path, header)
    for row in rows:
        out.row(row)
    out.close()


@dataclass
class SessionExport:
    """What one session contributes to the bundle (kept for the report and manifest)."""

    input: str
    folder: str | None = None
    entry: dict = field(default_factory=dict)
    redactions: int = 0
    by_rule: dict = field(default_factory=dict)


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
        return self.read.redactor


@dataclass(frozen=True)
class _Seal:
    """How the bundle pins its inputs and itself: the hash of input bytes, and the signer."""

    hasher: InputHash = PLAIN_HASH
    signer: Signer | None = None

    @classmethod
    def of(cls, options: ExportOptions) -> _Seal:
        """Checked before anything is written: a bad key is a usage error and no bundle."""
        signer = None if options.sign_key is None else Signer(options.sign_key)
        if options.redactor is None or not options.redactor.active:
            return cls(PLAIN_HASH, signer)
        if options.evidence_key is None:
            raise UsageError("this export redacts, so the hashes of its inputs are keyed: give --evidence-key FILE "
                             "(made if absent; keep it with the logs, never with the bundle), or export with "
                             "--no-default-redaction and no --redact to hash them plainly")
        return cls(InputHash(load_key(options.evidence_key, create=True, out=options.out)), signer)

    def integrity(self) -> dict:
        """The manifest's account of its hashes, its key and its signature."""
        signature = None if self.signer is None else {
            "file": SIGNATURE, "format": "sshsig", "namespace": NAMESPACE, "key": self.signer.fingerprint}
        return {"canonical": "rfc8785", "digest": "sha256", "inputHash": self.hasher.name,
                "evidenceKey": self.hasher.fingerprint, "signature": signature}


def export(inputs: list[str], options: ExportOptions, mapper=None) -> dict:
    """Write the bundle; returns the manifest. Raises UsageError for a bad --out
    and OutputError when the bundle cannot be written (the old one is kept).

    `mapper(fn, items)` runs the per-session jobs (default: in this process;
    a process pool or a Dask client gives the same bytes). "-" is standard
    input, read once (up to --max-bytes) before --out is claimed.
    """
    stdin = None
    if "-" in inputs:
        stdin = LogSource("-", options.read)
    given = [stdin if g == "-" else g for g in inputs]
    stamp = generated_at(options.timestamp)
    seal = _Seal.of(options)
    mapper = mapper or (lambda fn, items: [fn(i) for i in items])

    def check_old(path: Path, shown: str) -> None:
        _check_replaceable(path, shown, _identities(given, options.redactor))
    return write_folder(options.out, lambda staging: _build(given, staging, options, stamp, mapper, seal),
                        force=options.force, check_old=check_old)


def _identities(inputs: list, redactor: Redactor) -> dict:
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


def _check_replaceable(folder: Path, shown: str, inputs: dict) -> None:
    """Raise a UsageError unless `folder` is provably a dshreplay bundle holding no input:
    its manifest reads as one; every file there is one it lists (or the manifest and its
    signature), every folder one that holds them (or a session's calls/ and messages/),
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
                        pending.append((entry.path, rel + "/"))
                    elif not (entry.is_file(follow_symlinks=False) and (rel in listed or rel in UNLISTED)):
                        raise UsageError(f"--force: {shown} holds {shown_path(rel)}, which is not in its bundle's "
                                         "manifest: it is not a dshreplay bundle, and nothing was deleted")
        except OSError as exc:
            raise UsageError(f"--force: cannot check {shown_path(here)}: {exc.strerror or exc}; "
                             "nothing was deleted") from None


def export_bundle(inputs, out, options: Options | None = None, *, timestamp: str | None = None,
                  force: bool = False, rules: str | None = None, default_rules: bool = True,
                  evidence_key=None, sign_key=None, mapper=None) -> dict:
    """The library's export: write the bundle of `inputs` (logs, session folders
    or store roots) to `out`; returns the manifest. `rules`: a redaction rules file;
    `evidence_key`: the key file that keys the inputs' hashes (needed when anything
    is redacted, made if absent); `sign_key`: an Ed25519 private key to sign with."""
    from dshreplay.io.store import discover
    from dshreplay.output.redact import load_redactor
    options = (options or Options()).with_(redactor=load_redactor(rules, defaults=default_rules))
    return export(discover(inputs), ExportOptions(Path(out), options, rules, timestamp, force, default_rules,
                                                  sign_key, evidence_key), mapper)


def _source(given, options: Options) -> LogSource:
    """An input as a LogSource (standard input is one already, read once)."""
    return given if isinstance(given, LogSource) else LogSource(given, options)


def _label(given) -> str:
    """An input as the user gave it: a path, or - for standard input."""
    return "-" if isinstance(given, LogSource) else shown_path(given)


def _shown_input(given, redactor: Redactor) -> str:
    """An input as the bundle and every message name it: its path as given, with the rules
    applied (a token in a file or folder name is masked like any other text)."""
    return redactor.text(_label(given))


def _log_name(given) -> str:
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


def _plan(inputs: list, options: Options) -> list[str | None]:
    """The folder of each input (None: unreadable), unique in input order."""
    used: set[str] = set()
    folders = []
    for given in inputs:
        try:
            with _source(given, options).reader() as reader:
                session_id = reader.header.get("id")
        except (DshReplayError, OSError):  # the session's job reports why
            folders.append(None)
            continue
        name = base = _folder_base(session_id, given, options.redactor)
        n = 1
        while name in used:
            n += 1
            name = f"{base}~~{n}"
        used.add(name)
        folders.append(name)
    return folders


def _folder_base(session_id, given, redactor: Redactor) -> str:
    """The folder name of a session before it is numbered apart (`~~2`) from the ones before:
    made from its id with the rules applied (a key in an id never names a folder), or for a
    snapshot's "{{sessionId}}" from its file's name. No hash of the id as logged is taken."""
    if type(session_id) is str and PLACEHOLDER.fullmatch(session_id):
        return folder_name(redactor.string(_log_name(given)))
    return folder_name(redactor.value(session_id))  # (an id that is no string: its strings redacted too)


def _job(item) -> SessionExport:
    """One session's part of the bundle (runs in any process)."""
    given, folder, root, options, hasher = item
    return _export_one(given, root, options.redactor.for_calls(()), folder, options, hasher)


def _build(inputs: list, root: Path, options: ExportOptions, stamp: str, mapper, seal: _Seal) -> dict:
    redactor = options.redactor
    folders = _plan(inputs, options.read)
    sessions = mapper(_job, [(given, folder, root, options.read, seal.hasher)
                             for given, folder in zip(inputs, folders)])
    replacements = sum(s.redactions for s in sessions)
    by_rule: dict = {}
    for s in sessions:
        for rule, n in s.by_rule.items():
            by_rule[rule] = by_rule.get(rule, 0) + n
    write_file(root / INDEX, render_index([s.entry for s in sessions], stamp).encode())
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
    manifest = representable(manifest)  # (a log's integer past 2^53 - 1 as its decimal string)
    data = canonical(manifest)  # written as its own RFC 8785 form: `sha256sum manifest.json` is the digest
    write_file(root / MANIFEST, data)
    if seal.signer is not None:
        write_file(root / SIGNATURE, seal.signer.sign(data))
    return manifest


def _listing(root: Path) -> list[dict]:
    """The manifest's files: every file written, with its size and SHA-256."""
    files = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        try:
            files.append({"path": path.relative_to(root).as_posix(), "size": path.stat().st_size,
                          "sha256": sha256_file(path)})
        except OSError as exc:
            raise output_error(exc, path) from None
    return files


FORMAT = 2  # manifest.json: "files" is a list of {path, size, sha256}; format 1 (no "format") a map path -> sha256


def _input_facts(given, options: Options, hasher: InputHash) -> dict:
    """The input's size and hash (`sha256`: plain or keyed, as the manifest's integrity says),
    whether it reads as a log or not, read through the one regular-file check (a FIFO or a
    device is refused, never read); standard input's as it was read. Only the input's name
    when it cannot be read at all."""
    facts: dict = {"input": _label(given)}
    try:
        source = _source(given, options)
        if source.data is not None:
            facts.update(size=len(source.data), sha256=hasher.hex(source.data))
            return facts
        if Path(given).is_dir():
            facts["file"] = shown_path(source.file)
        facts.update(_bytes_facts(source, hasher))
    except (DshReplayError, OSError):  # (the session's export says why)
        pass
    return facts


def _bytes_facts(source: LogSource, hasher: InputHash) -> dict:
    digest, size = hasher.new(), 0
    with open_regular(source.file, source.path) as fh:
        try:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
                size += len(block)
        except OSError as exc:
            raise ReadError(f"cannot read: {exc.strerror or exc}", path=source.path) from None
    return {"size": size, "sha256": digest.hexdigest()}


def _export_one(given, root: Path, redactor: Redactor, name: str | None, options: Options,
                hasher: InputHash) -> SessionExport:
    """One session's part; whatever goes wrong in reading it stays in it: its folder is
    removed and its manifest entry says why (with the input's size and hash, whenever
    its bytes can be read), the other sessions are kept. An error of the output (a full
    disk) is no verdict on the input: it ends the export."""
    facts = _input_facts(given, options, hasher)
    facts["input"] = _shown_input(given, redactor)  # (a path is redacted like any text the bundle holds)
    if "file" in facts:
        facts["file"] = redactor.text(facts["file"])
    try:
        return _export_session(given, root, redactor, name, options, facts, hasher)
    except OutputError:
        raise
    except (DshReplayError, OSError) as exc:  # a defect past what validate can read around
        verdict, why = "unreadable", str(exc) if isinstance(exc, DshReplayError) else _os_reason(exc)
    except Exception as exc:  # noqa: BLE001 - a bug of ours: named as one (export exits 70), the rest kept
        verdict, why = "internal-error", f"internal error: {type(exc).__name__}: {exc} (please report it)"
    if name is not None:
        shutil.rmtree(root / name, ignore_errors=True)
    result = SessionExport(facts["input"])
    result.entry = {**facts, "verdict": verdict, "error": redactor.text(why)}
    return result


def _os_reason(exc: OSError) -> str:
    where = f"{shown_path(exc.filename)}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


def _export_session(given, root: Path, redactor: Redactor, name: str | None,
                    options: Options, facts: dict, hasher: InputHash) -> SessionExport:
    label = facts["input"]
    result = SessionExport(label)
    try:
        plain = _source(given, options)
        with plain.transformed(redactor.record).reader() as reader:
            header = reader.header
    except (DshReplayError, OSError) as exc:
        message = exc.message if isinstance(exc, DshReplayError) else _os_reason(exc)
        result.entry = {**facts, "verdict": "unreadable", "error": redactor.text(message)}
        return result
    # the findings and the surface column of events.csv are the original's (findings redacted when written)
    deltas, ends, final = ArgumentDeltas(), TurnEndLines(), _FinalNodes()
    report = validate_log(plain, options, observers=[deltas, ends, final])
    if report.unreadable is not None or name is None:
        message = report.unreadable.message if report.unreadable is not None else "unreadable header"
        result.entry = {**facts, "verdict": "unreadable", "error": redactor.text(message)}
        return result
    facts = {**facts, "chain": line_chain(plain, ends.lines, hasher=hasher)}  # for verify-export --grown
    # this session's redactor also masks every delta of a tool call whose assembled arguments hold a secret
    redactor = redactor.for_calls(deltas.secret_calls(redactor))
    source = plain.transformed(redactor.record)
    folder = root / name
    make_folder(folder)
    make_folder(folder / "calls")
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
    result.entry = {**facts, "folder": name, "encoding": index.encoding, "header": head,
                    "events": index.event_count, "verdict": "ok" if report.ok else "errors",
                    "findings": counts, "tornTail": None if index.torn_tail is None else index.torn_tail.to_json(),
                    "answeredUpTo": None if failure is None else failure["seq"] - 1, "failure": failure,
                    "redactions": {"replacements": redactor.replacements,
                                   "byRule": dict(sorted(redactor.by_rule.items()))}}
    report_html = render_report(entry=result.entry, index=index, findings=findings, view=view,
                                transcript=entries, input_hash=hasher.name)
    write_file(folder / "report.html", report_html.encode())
    result.redactions, result.by_rule = redactor.replacements, dict(redactor.by_rule)
    return result


class _TranscriptFile(TranscriptBuilder):
    """transcript.md written entry by entry; the report keeps only its first entries."""

    def __init__(self, path: Path, title: str) -> None:
        super().__init__()
        self.path, self.title = path, title

    def begin(self, run: Run) -> None:
        super().begin(run)
        self.fh = create(self.path, text=True)
        self.fh.write(f"# Transcript of {markdown_label(self.title)}\n\n")
        self.reporter = TextReporter(self.fh)
        self.kept: list = []

    def observe(self, record) -> None:
        super().observe(record)
        if self.entries:
            self._flush()

    def finish(self, run: Run) -> None:
        super().finish(run)
        self._flush()
        self.fh.close()

    def _flush(self) -> None:
        for entry in self.entries:
            self.reporter.transcript([entry], markdown=True)
            if len(self.kept) < MAX_TRANSCRIPT:
                self.kept.append(entry)
        self.entries.clear()


class _EventRows(Observer):
    """events.csv, one row per event (packed rows expanded)."""

    HEADER = ["seq", "line", "time", "type", "turn", "step", "surface", "op", "callId", "tool", "compactionId",
              "preview", "sha256", "rawSha256"]
    requires = (TurnSpans, ToolLedger)

    def __init__(self, path: Path, final_nodes: set, unknown_from: int | None,
                 hasher: InputHash = PLAIN_HASH) -> None:
        self.path = path
        self.line_hash = hasher.hex  # the raw line's hash: plain, or keyed when the export redacts
        self.final_nodes = final_nodes
        self.unknown_from = unknown_from  # where the fold fails: no surface status from there on

    def begin(self, run: Run) -> None:
        self.csv = CsvFile(self.path, self.HEADER)
        self.tools = run.get(ToolLedger)
        self.hashed = None  # the line whose hash was written

    def observe(self, record) -> None:
        item, raw = record.item, record.raw
        # the line's hash is on the row of its first event (`sed -n LINEp LOG | sha256sum`, or with
        # the evidence key `| openssl dgst -sha256 -mac HMAC -macopt hexkey:$(cat KEY)`)
        raw_sha256 = self.line_hash(raw) if raw is not None and item.line != self.hashed else ""
        self.hashed = item.line
        for event in item.members() if item.row is not None else (item,):
            self._row(event, raw_sha256, record.turn, record.step)
            raw_sha256 = ""

    def _row(self, event, raw_sha256: str, turn, step) -> None:
        kind = event.type
        record = event.record
        data = record.get("data")
        status = (CURRENT if event.seq in self.final_nodes else SHADOWED) if kind in SURFACE_TYPES else LOG_ONLY
        if self.unknown_from is not None and event.seq >= self.unknown_from:
            status = ""
        call = self.tools.call_at(event.seq) if event.row is None else None
        text = ""
        if kind in SURFACE_TYPES:
            try:
                has, message = derive_message(event)
                names = {call.call_id: call.tool} if call is not None and type(call.call_id) is str else None
                text = message_text(message, tools=names) if has else ""
            except DeriveError:
                text = ""
        elif kind != "assistant/chunk" or _finish_chunk(data):  # (a streamed piece: its message's row shows it)
            text = event_text(event, call)
        compaction_id = data.get("compactionId") if type(data) is dict else None
        if compaction_id is None and type(data) is dict and type(data.get("source")) is dict:
            compaction_id = data["source"].get("compactionId")
        self.csv.row([event.seq, event.line, utc_time(event.time), kind, turn, step, status, record.get("surfaceOp"),
                      None if call is None else call.call_id, None if call is None else call.tool,
                      compaction_id, one_line(text, 120),
                      canonical_sha256(record), raw_sha256])

    def finish(self, run: Run) -> None:
        self.csv.close()


def _finish_chunk(data) -> bool:
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

    def observe(self, record) -> None:
        item = record.item
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
                         self.previews.get(call.result_seq), call.is_error,
                         None if approval is None else utc_time(approval.asked_time),
                         None if approval is None else approval.outcome,
                         None if approval is None else utc_time(approval.decided_time),
                         " ".join(h.label() for h in call.hooks), utc_time(started), utc_time(finished),
                         _ms(finished, started), call.asked_seq, call.call_seq, call.result_seq,
                         _spilled_bytes(index, call.result_seq)])
        write_csv(self.path, self.HEADER, rows)


class _FinalNodes(Observer):
    """The surface at the end of a pass (of the original log, for events.csv's surface column),
    or, when the fold fails, before the failure (and the failure)."""

    nodes: frozenset = frozenset()
    failure = None

    def finish(self, run: Run) -> None:
        self.failure = run.failure
        self.nodes = frozenset(run.fold.nodes if run.failure is None else run.failure_view.nodes)


def _stream(source: LogSource, folder: Path, header: dict, final_nodes: frozenset, failure: dict | None,
            hasher: InputHash = PLAIN_HASH) -> tuple:
    """The one pass over the redacted log: it indexes it and writes events.csv,
    calls/*.json, tools.csv, approvals.csv and transcript.md; returns the index
    and what the report draws. `failure` (redacted): where the fold fails."""
    indexer = Indexer()
    unknown_from = None if failure is None else failure["seq"]
    records = _CallRecords(folder, failure)
    transcript = _TranscriptFile(folder / "transcript.md", as_text(header.get("id")))
    summary = SessionSummary()
    observers = [indexer, summary, transcript, records,
                 _EventRows(folder / "events.csv", final_nodes, unknown_from, hasher),
                 _ToolRows(folder / "tools.csv")]
    run = run_pass(source, observers, on_fold_error=SKIP)
    index = indexer.index
    turns = run.get(TurnSpans)
    session = {k: v for k, v in summary.stats.to_json().items() if k not in ("path", "error")}
    write_file(folder / "session.json", dumps(session))
    views = records.views
    last = run.last_seq if run.last_seq is not None else 0
    spans: dict = {"turns": [], "steps": []}
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


class _Store:
    """Values stored once each, by the SHA-256 of their stored bytes: `messages/<sha256>.json`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / "messages"
        make_folder(self.folder)
        self.known: set[str] = set()

    def put(self, value) -> str:
        data = (json_text(value) + "\n").encode()
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self.known:
            self.known.add(digest)
            write_file(self.folder / f"{digest}.json", data)
        return digest


class _CallRecords(Observer):
    """calls/NNNN.json, one per main-loop call: its request (the header and the ids of its
    messages in the store) and its response (the assistant message, finish, error code,
    usage, chunk times)."""

    requires = (CallTracker,)

    def __init__(self, folder: Path, failure: dict | None = None) -> None:
        self.folder = folder / "calls"
        self.store = _Store(folder)
        self.failure = failure  # where the fold fails: calls sent after it get no model view

    def begin(self, run: Run) -> None:
        self.calls = run.get(CallTracker)
        self.views: list[dict] = []
        self.pending: dict[int, tuple] = {}  # call number -> (Call, record)
        self._new: list = []
        self.fold = run.fold
        self.request_time = None  # the time of the last event before a call's first chunk
        self.digests: dict[int, str | None] = {}  # surface node -> its message's digest (None: no message)
        self.previous: list[str] = []  # the previous call's request message ids
        self.previews: dict[str, tuple] = {}  # message id -> (role, preview), for the report's views

    def opened(self, call, header) -> None:
        if self.failure is not None and call.first_chunk_seq - 1 >= self.failure["seq"]:
            self._no_view(call, header)
            return
        fold = self.fold  # (at the call's first chunk, a log-only event: the surface it was sent)
        digests = {}
        for seq in fold.nodes:  # a node's message never changes: each is encoded and hashed once
            digest = self.digests.get(seq, MISSING)
            if digest is MISSING:
                try:
                    has, message = derive_message(fold.events[seq])
                except DeriveError:  # the fold keeps it, the request skips it (as `request` does)
                    has, message = False, None
                digest = self.store.put(message) if has else None
                if digest is not None and len(self.views) < MAX_CALL_VIEWS:
                    self.previews[digest] = (role_of("", message), one_line(message_text(message, False), PREVIEW))
            digests[seq] = digest
        self.digests = digests
        ids = [d for d in digests.values() if d is not None]
        kept = _common_prefix(self.previous, ids)
        full = kept == 0 or call.call % FULL_REQUEST_EVERY == 1
        record = {"call": call.call, "turn": call.turn, "step": call.step, "firstChunkSeq": call.first_chunk_seq,
                  "atSeq": call.first_chunk_seq - 1, "headerSeq": call.header_seq,
                  "header": None if header is None else self.store.put(header), "messageCount": len(ids),
                  "messagesFrom": None if full else {"call": call.call - 1, "first": kept},
                  "messages": ids if full else ids[kept:], "response": {}}
        self.previous = ids
        self.pending[call.call] = (call, record)
        self._new.append(record)
        if len(self.views) < MAX_CALL_VIEWS:
            self.views.append({"call": call.call, "turn": call.turn, "step": call.step,
                               "firstChunkSeq": call.first_chunk_seq, "headerSeq": call.header_seq,
                               "header": header, "count": len(ids), "kept": 0 if full else kept,
                               "messages": [self.previews[d] for d in (ids if full else ids[kept:])]})
        if len(self.views) >= MAX_CALL_VIEWS:
            self.previews.clear()

    def _no_view(self, call, header) -> None:
        """A call sent after the point where the fold fails: its request has no known view."""
        reason = f"{fails_at(self.failure)}: no model view past seq {self.failure['seq'] - 1}"
        record = {"call": call.call, "turn": call.turn, "step": call.step, "firstChunkSeq": call.first_chunk_seq,
                  "atSeq": call.first_chunk_seq - 1, "headerSeq": call.header_seq,
                  "header": None if header is None else self.store.put(header), "view": None, "reason": reason,
                  "failure": self.failure, "response": {}}
        self.previous = []
        self.pending[call.call] = (call, record)
        self._new.append(record)
        if len(self.views) < MAX_CALL_VIEWS:
            self.views.append({"call": call.call, "turn": call.turn, "step": call.step,
                               "firstChunkSeq": call.first_chunk_seq, "headerSeq": call.header_seq,
                               "header": header, "count": None, "kept": 0, "messages": None, "reason": reason})

    def observe(self, record) -> None:
        item = record.item
        time = item.time
        if item.type != "assistant/chunk":
            if item.type == "assistant/message" and item.row is None:
                self._answered(item)
            self.request_time = time
            return
        call = record.call
        if call is not None and call.first_chunk_seq == item.seq:  # this chunk opened a call
            self.opened(call, self.calls.header)
        for entry in self._new:  # calls this chunk opened
            entry["response"]["firstChunkTime"] = time
            entry["response"]["timeToFirstChunkMs"] = _ms(time, self.request_time)
        self._new.clear()
        last = item.seq + item.count - 1
        for call, entry in self.pending.values():
            if call.last_chunk_seq == last:
                entry["response"]["lastChunkTime"] = item.times[-1] if item.row is not None else time

    def _answered(self, item) -> None:
        sources = item.record.get("sourceEventSeqs")
        cited = [s for s in sources if type(s) is int] if type(sources) is list else []
        for number, (call, record) in list(self.pending.items()):
            if any(call.first_chunk_seq <= s <= (call.last_chunk_seq or -1) for s in cited):
                data = item.record.get("data")
                message = data.get("message") if type(data) is dict else None
                record["response"].update(messageSeq=item.seq,
                                          message=None if message is None else self.store.put(message))
                self._write(call, record)
                del self.pending[number]
                return

    def _write(self, call, record) -> None:
        response = record["response"]
        first, last = response.pop("firstChunkTime", None), response.pop("lastChunkTime", None)
        record["response"] = {
            "messageSeq": response.get("messageSeq"), "message": response.get("message"),
            "finish": call.outcome, "errorCode": call.error_code,
            "usage": call.usage, "lastChunkSeq": call.last_chunk_seq,
            "firstChunkTime": utc_time(first), "lastChunkTime": utc_time(last),
            "timeToFirstChunkMs": response.get("timeToFirstChunkMs"), "durationMs": _ms(last, first)}
        write_file(self.folder / f"{call.call:04d}.json", dumps(record))

    def finish(self, run: Run) -> None:
        for call, record in self.pending.values():  # calls with no assistant message (cut short)
            self._write(call, record)
        self.pending.clear()


def _spilled_bytes(index, seq) -> int | None:
    """The bytes dsh kept out of the model's view of the tool result at `seq` (None: none)."""
    spills = index.spills_of(seq) if type(seq) is int else ()
    return sum(s.omitted for s in spills) if spills else None


def _ms(later, earlier):
    ok = is_time(later) and is_time(earlier)
    return later - earlier if ok else None


def request_from_bundle(folder: Path, call: int) -> dict:
    """The request of main-loop call `call` rebuilt from a bundle's session folder:
    what `dshreplay request LOG --call N --json` prints for the (redacted) log.

    Every value read from the bundle is checked before use: a call record or a
    stored message that is not what export writes is a ReadError naming the
    file, the JSON pointer and what was expected (the bundle is damaged)."""
    record = _call_record(folder, call)
    response = record["response"]
    return {"call": record["call"], "turn": record["turn"], "step": record["step"],
            "firstChunkSeq": record["firstChunkSeq"], "lastChunkSeq": response["lastChunkSeq"],
            "outcome": response["finish"], "errorCode": response["errorCode"], "usage": response["usage"],
            "atSeq": record["atSeq"], "headerSeq": record["headerSeq"],
            "header": _stored_message(folder, record["header"]),
            "messages": [_stored_message(folder, d) for d in _request_ids(folder, record)]}


def _request_ids(folder: Path, record: dict) -> list:
    """A call record's request message ids: its `messages`, after the first
    `messagesFrom.first` ids of the call it names (a record repeats no more
    than it must; every FULL_REQUEST_EVERY-th call lists them all)."""
    chain = [record]
    while chain[-1]["messagesFrom"] is not None:
        if len(chain) > FULL_REQUEST_EVERY:
            raise ReadError(f"call {record['call']} builds on more than {FULL_REQUEST_EVERY} calls before it "
                            f"(every {FULL_REQUEST_EVERY}th lists its whole request): the bundle is damaged",
                            path=shown_path(folder / "calls"))
        chain.append(_call_record(folder, chain[-1]["messagesFrom"]["call"], needed_by=chain[-1]["call"]))
    ids = chain[-1]["messages"]
    for link in reversed(chain[:-1]):
        base = link["messagesFrom"]
        if base["first"] > len(ids):
            raise ReadError(f"expected at most the {len(ids)} messages of call {base['call']}, got {base['first']} "
                            "(the bundle is damaged)", path=shown_path(_call_path(folder, link["call"])),
                            pointer="/messagesFrom/first")
        ids = ids[:base["first"]] + link["messages"]
    return ids


def _call_path(folder: Path, call: int) -> Path:
    return folder / "calls" / f"{call:04d}.json"


def _call_record(folder: Path, call: int, needed_by: int | None = None) -> dict:
    """calls/NNNN.json, each value `request_from_bundle` uses checked."""
    path = _call_path(folder, call)
    if not os.path.lexists(path):
        if needed_by is None:
            raise UsageError(f"there is no call {call} in {shown_path(folder)}")
        raise ReadError(f"call {needed_by} builds on call {call}, which is not in the bundle (the bundle is damaged)",
                        path=shown_path(folder / "calls"))
    _, record = read_bundle_json(path, f"the record of call {call}")
    where = shown_path(path)

    def expect(pointer: str, value, ok: bool, expected: str) -> None:
        if not ok:
            got = "nothing" if value is MISSING else shown(value, 60)
            raise ReadError(f"expected {expected}, got {got} (the bundle is damaged)", path=where, pointer=pointer)
    expect("", record, type(record) is dict, "a call record (a JSON object)")
    number = record.get("call", MISSING)
    expect("/call", number, type(number) is int and number == call, f"{call}, the number in the file's name")
    if "view" in record and record["view"] is None:  # a call sent after the point where the fold fails
        failure = record.get("failure", MISSING)
        expect("/failure", failure, type(failure) is dict, "the failure that leaves the call without a view")
        if needed_by is not None:
            raise ReadError(f"call {needed_by} builds on call {call}, which has no model view (the bundle is damaged)",
                            path=where, pointer="/view")
        raise NoViewError(f"call {call} has no model view in the bundle", failure, path=shown_path(folder))
    for key in ("turn", "step"):
        expect(f"/{key}", MISSING, key in record, f"the call's {key}")
    for key in ("firstChunkSeq", "atSeq"):
        expect(f"/{key}", record.get(key, MISSING), type(record.get(key)) is int, "a seq")
    response = record.get("response", MISSING)
    expect("/response", response, type(response) is dict, "the call's response (an object)")
    for key in ("finish", "errorCode", "usage"):
        expect(f"/response/{key}", MISSING, key in response, f"the response's {key}")
    last = response.get("lastChunkSeq", MISSING)
    expect("/response/lastChunkSeq", last, last is None or type(last) is int, "a seq or null")
    header_seq, header = record.get("headerSeq", MISSING), record.get("header", MISSING)
    expect("/headerSeq", header_seq, header_seq is None or type(header_seq) is int, "a seq or null")
    expect("/header", header, header is None or is_sha256(header), "null or a stored message's SHA-256")
    messages = record.get("messages", MISSING)
    expect("/messages", messages, type(messages) is list and all(is_sha256(d) for d in messages),
           "an array of stored messages' SHA-256")
    base = record.get("messagesFrom", MISSING)
    expect("/messagesFrom", base, base is None or type(base) is dict, "null or {call, first}")
    if base is not None:
        earlier, first = base.get("call", MISSING), base.get("first", MISSING)
        expect("/messagesFrom/call", earlier, type(earlier) is int and 0 < earlier < call,
               f"an earlier call (1 to {call - 1})")
        expect("/messagesFrom/first", first, is_count(first), "a message count")
    return record


def _stored_message(folder: Path, digest: str | None):
    """messages/<digest>.json (None for None): a value stored under the SHA-256 of its bytes."""
    if digest is None:
        return None
    path = folder / "messages" / f"{digest}.json"
    data, value = read_bundle_json(path, "a stored message")
    if hashlib.sha256(data).hexdigest() != digest:
        raise ReadError("the stored message's bytes do not hash to its name (the bundle is damaged)",
                        path=shown_path(path))
    return value


def _common_prefix(a: list, b: list) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


# -- reading a bundle's JSON files -------------------------------------------

# Every JSON file of a bundle (its manifest, a call record, a stored message) is
# read whole and parsed whole, so both are bounded before a byte is parsed. A
# parsed value costs up to ~120 bytes of memory (30 times the 3 bytes of `{},`);
# a real manifest holds one value per ~26 bytes (the corpus' 179 sessions: 833 KB,
# 32,000 values). 2,000,000 values is a real manifest of ~50 MB (~11,000 sessions
# of the corpus' kind, ~300,000 files) and at most ~250 MB of memory; 64 MiB of
# bytes leaves room for long strings (paths, ids) beyond that.
MAX_JSON_BYTES = 64 * 1024**2
MAX_JSON_VALUES = 2_000_000
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


def read_bundle_json(path: Path, what: str) -> tuple[bytes, object]:
    """A JSON file of a bundle, read as every input is (a regular file, never a
    pipe or a device), at most MAX_JSON_BYTES long and parsed only when it holds
    at most MAX_JSON_VALUES values (counted first, in one pass over its bytes).
    Returns its bytes and its value; anything else is a ReadError naming it."""
    data = read_small_file(path, MAX_JSON_BYTES, what)
    if _value_count(data) > MAX_JSON_VALUES:
        raise ReadError(f"{what} holds more than {MAX_JSON_VALUES:,} JSON values, more than a bundle dshreplay "
                        "writes: not parsed", path=shown_path(path))
    try:
        return data, orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ReadError(f"{what} is not valid JSON: {exc}", path=shown_path(path)) from None


def _value_count(data: bytes) -> int:
    """At most how many values and keys a JSON text holds: one per `,` `:` `[` `{`,
    and one more. When that is too many, those inside strings are left out (a
    second pass with the strings blanked: a long string full of commas is one
    value), unless the text holds over a million quotes: blanking costs ~200
    bytes a string, and no manifest export writes has that many strings and
    still too many of those characters outside them."""
    def count(text: bytes) -> int:
        return text.count(b",") + text.count(b":") + text.count(b"[") + text.count(b"{") + 1
    rough = count(data)
    if rough <= MAX_JSON_VALUES or data.count(b'"') > MAX_JSON_VALUES // 2:
        return rough
    return count(_JSON_STRING.sub(b'""', data))


def read_manifest(bundle: Path) -> tuple[bytes, dict]:
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
    return data, manifest
