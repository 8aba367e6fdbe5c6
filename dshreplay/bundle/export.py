"""`export`: an audit bundle an auditor can archive, and `verify-export` to check it.

Layout of a bundle (all text UTF-8, LF line ends, deterministic):

    manifest.json                  inputs (path, size, hash, facts, verdict) and the
                                   SHA-256 of every other file in the bundle, written in
                                   its RFC 8785 canonical form (integrity.signing)
    manifest.json.sig              its SSH signature (with --sign-key)
    index.html                     links to each session's report
    <session>/findings.json        the validate output for that log
    <session>/events.csv           one row per event
    <session>/calls.jsonl          each model call: its request (message ids) and response
    <session>/messages.jsonl       every message the calls sent, once, keyed by its SHA-256
    <session>/shadows.json, brackets.json, approvals.csv, transcript.md, report.html, view.html

When the fold fails (dsh refuses the log), the bundle keeps every line's
facts (findings, events, calls and their responses, tools, approvals) and
invents no model view past the failure: a call after it is listed with
`"view": null` and the reason, events.csv's surface column is empty from the
failure on, shadows.json and transcript.md stop there, and the manifest entry
says `answeredUpTo` and `failure` (session.WHEN_THE_FOLD_FAILS lists each part).

Every input is pinned by its size and hash, whether it reads as a log or
not. When the export redacts, every hash of input bytes the bundle holds (the
input's, events.csv's `rawSha256`, the line chain) is keyed with the evidence
key (`integrity.evidence`), so none of them confirms a guess at what was masked.
The manifest says how (`integrity`) and is written in its RFC 8785 form, so
its digest is `sha256sum manifest.json` and its SSH signature covers exactly
those bytes (`integrity.signing`).

Folder names come from session ids, escaped so that no id can leave the
bundle or collide with another, or with a file of the bundle's root. The
bundle is built in a staging folder beside `--out` and swapped in by renames
(`bundle.outfolder`): an interrupted or failed export leaves the old bundle
whole and nothing half written; `--force` replaces only a folder that is
provably a bundle of ours and holds no input.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, Union

import orjson

from dshreplay import __version__
from dshreplay._jsvalues import (
    MAX_TIME,
    parse_count,
    parse_time,
    shown,
)
from dshreplay.analyses._schemas import PLACEHOLDER
from dshreplay.analyses.findings import ERROR, NOTICE, WARNING
from dshreplay.analyses.validate import validate_log
from dshreplay.bundle._layout import (
    FORMAT,
    INDEX,
    MANIFEST,
    SIGNATURE,
    UNLISTED,
    _pinned,
    dumps,
    folder_name,
    read_manifest,
    sha256_file,
)
from dshreplay.bundle._outfolder import make_folder, output_error, write_file, write_folder
from dshreplay.bundle._sessionfiles import FinalNodes, write_session_files
from dshreplay.core.progress import Relabelled
from dshreplay.errors import (
    ChangedError,
    DshReplayError,
    OutputError,
    ReadError,
    UsageError,
    answered_up_to,
)
from dshreplay.integrity._chain import TurnEndLines, line_chain
from dshreplay.integrity._evidence import PLAIN_HASH, InputHash, input_hash
from dshreplay.integrity._signing import NAMESPACE, Signer, canonical, exact_integers, manifest_digest, representable
from dshreplay.io._container import pin_facts
from dshreplay.io.reader import LogSource, resolve_log_path, shown_path
from dshreplay.options import Options
from dshreplay.redaction.redactor import ArgumentDeltas, Redactor
from dshreplay.report._html import render_index, render_report
from dshreplay.report._view import Notes, session_notes
from dshreplay.results.summaries import Exported
from dshreplay.viewer._html import view_page

__all__ = ["export_bundle", "ExportOptions", "read_manifest"]




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
    from dshreplay.io._store import discover
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
            if source.container is not None:  # a session in a dsh SQLite store or web export ZIP: pin that too
                facts.update(pin_facts(source.container, hasher))
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
    deltas, ends, final = ArgumentDeltas(), TurnEndLines(), FinalNodes()
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
    index, view = write_session_files(source, folder, header, final.nodes, failure, hasher)
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
    write_file(folder / "view.html", view_page(source, header.get("id")))  # (the redacted log, as the report's)
    result.notes = session_notes(findings)
    return result


# -- reading a bundle -----------------------------------------------------------

