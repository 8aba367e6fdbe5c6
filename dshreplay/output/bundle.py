"""`export`: an audit bundle an auditor can archive, and `verify-export` to check it.

Layout of a bundle (all text UTF-8, LF line ends, deterministic):

    manifest.json                  inputs (path, size, SHA-256, facts, verdict) and
                                   the SHA-256 of every other file in the bundle
    index.html                     links to each session's report
    <session>/findings.json        the validate output for that log
    <session>/events.csv           one row per event
    <session>/calls/NNNN.json      each model call's exact request
    <session>/shadows.json, brackets.json, approvals.csv, transcript.md, report.html

Folder names come from session ids, escaped so that no id can leave the
bundle or collide with another. The bundle is built in a temporary folder
beside `--out` and renamed into place, so an interrupted export leaves no
half bundle behind.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import html
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from dshreplay import __version__
from dshreplay.analyses.calls import CallTracker, failure_code
from dshreplay.analyses.findings import ERROR, NOTICE, WARNING
from dshreplay.analyses.index import Indexer
from dshreplay.analyses.query import CURRENT, LOG_ONLY, SHADOWED
from dshreplay.analyses.render import clean, message_text, one_line, role_of, utc_time
from dshreplay.analyses.schemas import PLACEHOLDER
from dshreplay.analyses.stats import SessionSummary
from dshreplay.analyses.tools import ToolTracker
from dshreplay.analyses.transcript import TranscriptBuilder
from dshreplay.analyses.turns import TurnTracker
from dshreplay.analyses.validate import validate_log
from dshreplay.core.driver import SKIP, Observer, Run, run_pass
from dshreplay.core.surface import SURFACE_TYPES, derive_message
from dshreplay.errors import DeriveError, DshReplayError, ReadError, UsageError
from dshreplay.io.reader import LogSource, read_small_file, shown_path
from dshreplay.jsvalues import MISSING, json_bytes, short_json
from dshreplay.options import Options
from dshreplay.output.chain import TurnEndLines, check_growth, line_chain
from dshreplay.output.htmlreport import MAX_TRANSCRIPT, render_index, render_report
from dshreplay.output.redact import ArgumentDeltas, Redactor
from dshreplay.output.reporters import TextReporter, json_text, markdown_label

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


RESERVED_NAMES = frozenset({"index.html", "manifest.json"})
WINDOWS_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
                             *(f"COM{n}" for n in range(10)), *(f"LPT{n}" for n in range(10))})


def folder_name(session_id) -> str:
    """An injective, traversal-proof folder name for a session id.

    Letters, digits, `.`, `_` and `-` stay; every other character becomes
    `~XXXX` (or `~UXXXXXX` beyond the BMP); `.` and `..` are escaped too.
    Names longer than 120 characters keep 100 and add `~~` and a hash. A name
    that would be one of the bundle's own files (`index.html`, `manifest.json`)
    or a Windows device name (`CON`, `nul.txt`, `COM1`), or that ends in a dot,
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
    if name.lower() in RESERVED_NAMES or name.split(".")[0].upper() in WINDOWS_DEVICES:
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


def generated_at(timestamp: str | None) -> str:
    """--timestamp, else SOURCE_DATE_EPOCH, else now; as UTC ISO 8601 seconds."""
    if timestamp is not None:
        try:
            moment = datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
        except ValueError:
            raise UsageError(f"--timestamp {timestamp!r} is not an ISO 8601 time") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=datetime.timezone.utc)
        try:
            moment = moment.astimezone(datetime.timezone.utc)
        except (OverflowError, ValueError):
            raise UsageError(f"--timestamp {timestamp!r} is outside the years 1 to 9999 in UTC") from None
    elif os.environ.get("SOURCE_DATE_EPOCH", "").strip().isdigit():
        moment = datetime.datetime.fromtimestamp(int(os.environ["SOURCE_DATE_EPOCH"]), datetime.timezone.utc)
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
        self.fh = open(path, "w", newline="", encoding="utf-8")
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
    sign_key: str | None = None  # a PEM Ed25519 private key: sign the bundle digest

    @property
    def redactor(self) -> Redactor:
        return self.read.redactor


def export(inputs: list[str], options: ExportOptions, mapper=None) -> dict:
    """Write the bundle; returns the manifest. Raises UsageError for a bad --out.

    `mapper(fn, items)` runs the per-session jobs (default: in this process;
    a process pool or a Dask client gives the same bytes).
    """
    out = options.out
    if out.is_symlink():
        raise UsageError(f"--out {out} is a symbolic link: refusing to write through it")
    if out.exists():
        if not out.is_dir():
            raise UsageError(f"--out {out} exists and is not a folder")
        if any(out.iterdir()):
            if not options.force:
                raise UsageError(f"--out {out} is not empty (use --force to replace a previous bundle)")
            if not (out / "manifest.json").is_file():
                raise UsageError(f"--out {out} is not a dshreplay bundle: --force only replaces bundles")
        inside = [given for given in inputs if _within(Path(given), out)]
        if inside:
            raise UsageError(f"--out {out} holds the input {inside[0]}: --force would delete it with the old "
                             "bundle; write the bundle elsewhere")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot make its parent folder: {exc.strerror or exc}") from None
    stamp = generated_at(options.timestamp)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write beside it: {exc.strerror or exc}") from None
    try:
        manifest = _build(inputs, staging, options, stamp, mapper or (lambda fn, items: [fn(i) for i in items]))
        if out.exists():
            shutil.rmtree(out)
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


def _within(path: Path, folder: Path) -> bool:
    """Whether `path` (a file or session folder) lies inside `folder`."""
    try:
        path.resolve().relative_to(folder.resolve())
    except (ValueError, OSError):
        return False
    return True


def export_bundle(inputs, out, options: Options | None = None, *, timestamp: str | None = None,
                  force: bool = False, rules: str | None = None, default_rules: bool = True,
                  mapper=None) -> dict:
    """The library's export: write the bundle of `inputs` (logs, session folders
    or store roots) to `out`; returns the manifest. `rules`: a redaction rules file."""
    from dshreplay.io.store import discover
    from dshreplay.output.redact import load_redactor
    options = (options or Options()).with_(redactor=load_redactor(rules, defaults=default_rules))
    return export(discover(inputs), ExportOptions(Path(out), options, rules, timestamp, force, default_rules),
                  mapper)


def _log_name(given: str) -> str:
    """A log's name without its extension (`a__session` for `a__session.jsonl.zstd`); the
    folder's name for a session store's `session.jsonl`."""
    path = Path(given)
    name = path.name
    for suffix in (".zstd", ".jsonl"):
        name = name.removesuffix(suffix)
    if name == "session" and path.parent.name not in ("", "."):
        name = path.parent.name
    return name or "stdin"


def _plan(inputs: list[str], options: Options) -> list[str | None]:
    """The folder of each input (None: unreadable), unique in input order."""
    used: set[str] = set()
    folders = []
    for given in inputs:
        try:
            with LogSource(given, options).reader() as reader:
                session_id = reader.header.get("id")
        except (DshReplayError, OSError):  # the session's job reports why
            folders.append(None)
            continue
        if type(session_id) is str and PLACEHOLDER.fullmatch(session_id):  # a snapshot's "{{sessionId}}"
            name = base = folder_name(options.redactor.string(_log_name(given)))
        else:
            name = base = folder_name(options.redactor.string(session_id) if type(session_id) is str else session_id)
        n = 1
        while name in used:
            n += 1
            name = f"{base}~~{n}"
        used.add(name)
        folders.append(name)
    return folders


def _job(item) -> SessionExport:
    """One session's part of the bundle (runs in any process)."""
    given, folder, root, options = item
    return _export_one(given, root, options.redactor.for_calls(()), folder, options)


def _build(inputs: list[str], root: Path, options: ExportOptions, stamp: str, mapper) -> dict:
    redactor = options.redactor
    folders = _plan(inputs, options.read)
    sessions = mapper(_job, [(given, folder, root, options.read) for given, folder in zip(inputs, folders)])
    replacements = sum(s.redactions for s in sessions)
    by_rule: dict = {}
    for s in sessions:
        for rule, n in s.by_rule.items():
            by_rule[rule] = by_rule.get(rule, 0) + n
    index_html = render_index([s.entry for s in sessions], stamp)
    (root / "index.html").write_text(index_html, encoding="utf-8")
    files = [{"path": path.relative_to(root).as_posix(), "size": path.stat().st_size, "sha256": sha256_file(path)}
             for path in sorted(p for p in root.rglob("*") if p.is_file())]
    manifest = {
        "format": FORMAT,
        "dshreplay": __version__,
        "schemaSet": schema_set_version(),
        "generatedAt": stamp,
        "redaction": {"defaultRules": options.defaults,
                      "rulesFile": options.rules_label, "rulesSha256": redactor.rules_sha256,
                      "replacements": replacements, "replacementsByRule": dict(sorted(by_rule.items()))},
        "sessions": [s.entry for s in sessions],
        "files": files,
    }
    (root / "manifest.json").write_bytes(dumps(manifest))
    if options.sign_key is not None:
        (root / SIGNATURE).write_text(sign_digest(options.sign_key, manifest_digest(manifest)) + "\n")
    return manifest


FORMAT = 2  # manifest.json: "files" is a list of {path, size, sha256}; format 1 (no "format") a map path -> sha256
SIGNATURE = "manifest.sig"  # the Ed25519 signature of the bundle digest (hex), when signed


def manifest_digest(manifest: dict) -> str:
    """The bundle's digest: SHA-256 of its manifest in canonical form (sorted keys, no spaces).
    Written down at export time, it pins every byte of the bundle."""
    return "sha256:" + hashlib.sha256(json_bytes(manifest, sort_keys=True)).hexdigest()


def _ed25519():
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise UsageError("signing needs the cryptography library: pip install 'dshreplay[sign]'") from None
    return serialization, ed25519, InvalidSignature


def sign_digest(key_file: str, digest: str) -> str:
    """An Ed25519 signature (hex) of `digest`, with the PEM private key in `key_file`."""
    serialization, ed25519, _ = _ed25519()
    try:
        key = serialization.load_pem_private_key(read_small_file(key_file, 64 * 1024, "the signing key"),
                                                 password=None)
    except (ReadError, ValueError, TypeError) as exc:
        raise UsageError(f"{shown_path(key_file)}: not an unencrypted PEM private key: {exc}") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise UsageError(f"{shown_path(key_file)}: the signing key must be an Ed25519 key")
    return key.sign(digest.encode()).hex()


def check_signature(key_file: str, digest: str, signature: str) -> bool:
    """Whether `signature` (hex) is the Ed25519 signature of `digest` by the PEM public key in `key_file`."""
    serialization, ed25519, invalid = _ed25519()
    try:
        key = serialization.load_pem_public_key(read_small_file(key_file, 64 * 1024, "the public key"))
    except (ReadError, ValueError, TypeError) as exc:
        raise UsageError(f"{shown_path(key_file)}: not a PEM public key: {exc}") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise UsageError(f"{shown_path(key_file)}: the public key must be an Ed25519 key")
    try:
        key.verify(bytes.fromhex(signature.strip()), digest.encode())
    except (invalid, ValueError):
        return False
    return True


def _input_facts(given: str) -> dict:
    facts: dict = {"input": shown_path(given)}
    path = Path(given)
    if path.is_dir():
        from dshreplay.io.reader import resolve_log_path
        path = resolve_log_path(path)
        facts["file"] = shown_path(path)
    facts["size"] = path.stat().st_size
    facts["sha256"] = sha256_file(path)
    return facts


def _export_one(given: str, root: Path, redactor: Redactor, name: str | None, options: Options) -> SessionExport:
    """One session's part; whatever goes wrong in it stays in it: its folder is
    removed and its manifest entry says why, the other sessions are kept."""
    try:
        return _export_session(given, root, redactor, name, options)
    except (DshReplayError, OSError) as exc:  # a defect past what validate can read around
        verdict, why = "unreadable", str(exc) if isinstance(exc, DshReplayError) else _os_reason(exc)
    except Exception as exc:  # noqa: BLE001 - a bug of ours: named as one (export exits 70), the rest kept
        verdict, why = "internal-error", f"internal error: {type(exc).__name__}: {exc} (please report it)"
    if name is not None:
        shutil.rmtree(root / name, ignore_errors=True)
    result = SessionExport(given)
    result.entry = {"input": shown_path(given), "verdict": verdict, "error": redactor.text(why)}
    return result


def _os_reason(exc: OSError) -> str:
    where = f"{shown_path(exc.filename)}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"


def _export_session(given: str, root: Path, redactor: Redactor, name: str | None,
                    options: Options) -> SessionExport:
    result = SessionExport(given)
    try:
        facts = _input_facts(given)
        source = LogSource(given, options, transform=redactor.record)
        with source.reader() as reader:
            header = reader.header
    except (DshReplayError, OSError) as exc:
        message = exc.message if isinstance(exc, DshReplayError) else _os_reason(exc)
        result.entry = {"input": shown_path(given), "verdict": "unreadable", "error": redactor.text(message)}
        return result
    # the findings and the surface column of events.csv are the original's (findings redacted when written)
    deltas, ends, final = ArgumentDeltas(), TurnEndLines(), _FinalNodes()
    report = validate_log(given, options, observers=[deltas, ends, final])
    if report.unreadable is not None or name is None:
        message = report.unreadable.message if report.unreadable is not None else "unreadable header"
        result.entry = {**facts, "verdict": "unreadable", "error": redactor.text(message)}
        return result
    facts["chain"] = line_chain(LogSource(given, options), ends.lines)  # for verify-export --grown
    # this session's redactor also masks every delta of a tool call whose assembled arguments hold a secret
    redactor = redactor.for_calls(deltas.secret_calls(redactor))
    source = LogSource(given, options, transform=redactor.record)
    folder = root / name
    (folder / "calls").mkdir(parents=True)
    result.folder = name
    redactor.counting = True
    index, view = _stream(source, folder, header, final.nodes)
    redactor.counting = False
    counts = {s: report.count(s) for s in (ERROR, WARNING, NOTICE)}
    findings = [{**f.to_json(), "message": redactor.text(f.message),
                 "pointer": None if f.pointer is None else redactor.text(f.pointer)} for f in report.findings]
    (folder / "findings.json").write_bytes(dumps({"files": [{
        "path": shown_path(given), "ok": report.ok, "events": report.events, "findings": findings}]}))
    (folder / "shadows.json").write_bytes(dumps([r.to_json() for r in index.shadows]))
    (folder / "brackets.json").write_bytes(dumps([b.to_json() for b in index.brackets]))
    (folder / "spills.json").write_bytes(dumps([s.to_json() for s in index.spills]))
    entries = view.pop("transcript")
    head = {k: header.get(k) for k in ("id", "version", "createdAt", "cwd", "parentSession", "seedLength",
                                       "origin", "delegationDepth", "agentPreset") if k in header}
    result.entry = {**facts, "folder": name, "encoding": index.encoding, "header": head,
                    "events": index.event_count, "verdict": "ok" if report.ok else "errors",
                    "findings": counts, "tornTail": None if index.torn_tail is None else index.torn_tail.to_json()}
    report_html = render_report(entry=result.entry, index=index, findings=findings, view=view,
                                transcript=entries)
    (folder / "report.html").write_text(report_html, encoding="utf-8")
    result.redactions, result.by_rule = redactor.replacements, dict(redactor.by_rule)
    return result


class _TranscriptFile(TranscriptBuilder):
    """transcript.md written entry by entry; the report keeps only its first entries."""

    def __init__(self, path: Path, title: str) -> None:
        self.path, self.title = path, title

    def begin(self, run: Run) -> None:
        super().begin(run)
        self.fh = open(self.path, "w", encoding="utf-8")
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
            self.reporter.transcript([entry], reasoning=False, markdown=True)
            if len(self.kept) < MAX_TRANSCRIPT:
                self.kept.append(entry)
        self.entries.clear()


class _EventRows(Observer):
    """events.csv, one row per event (packed rows expanded)."""

    HEADER = ["seq", "line", "time", "type", "turn", "step", "surface", "op", "callId", "tool", "compactionId",
              "preview", "sha256", "rawSha256"]
    requires = (TurnTracker, ToolTracker)

    def __init__(self, path: Path, final_nodes: set) -> None:
        self.path = path
        self.final_nodes = final_nodes

    def begin(self, run: Run) -> None:
        self.csv = CsvFile(self.path, self.HEADER)
        self.tools = run.get(ToolTracker).by_seq
        self.hashed = None  # the line whose hash was written

    def observe(self, record) -> None:
        item, raw = record.item, record.raw
        # the line's hash is on the row of its first event (`sed -n LINEp LOG | sha256sum`)
        raw_sha256 = hashlib.sha256(raw).hexdigest() if raw is not None and item.line != self.hashed else ""
        self.hashed = item.line
        for event in item.members() if item.row is not None else (item,):
            self._row(event, raw_sha256, record.turn, record.step)
            raw_sha256 = ""

    def _row(self, event, raw_sha256: str, turn, step) -> None:
        kind = event.type
        record = event.record
        data = record.get("data")
        status = (CURRENT if event.seq in self.final_nodes else SHADOWED) if kind in SURFACE_TYPES else LOG_ONLY
        call = self.tools.get(event.seq) if event.row is None else None
        text = ""
        if kind in SURFACE_TYPES:
            try:
                has, message = derive_message(event)
                names = {call.call_id: call.tool} if call is not None and type(call.call_id) is str else None
                text = message_text(message, tools=names) if has else ""
            except DeriveError:
                text = ""
        compaction_id = data.get("compactionId") if type(data) is dict else None
        if compaction_id is None and type(data) is dict and type(data.get("source")) is dict:
            compaction_id = data["source"].get("compactionId")
        self.csv.row([event.seq, event.line, utc_time(event.time), kind, turn, step, status, record.get("surfaceOp"),
                      None if call is None else call.call_id, None if call is None else call.tool,
                      compaction_id, one_line(text, 120),
                      canonical_sha256(record), raw_sha256])

    def finish(self, run: Run) -> None:
        self.csv.close()


class _ToolRows(Observer):
    """tools.csv: one row per tool call the model asked for (or the log started or
    answered), with its arguments, result, approval, hooks and outcome, all
    attached by call id (the ToolTracker)."""

    HEADER = ["callId", "turn", "step", "tool", "outcome", "arguments", "resultPreview", "isError", "approvalAsked",
              "approvalOutcome", "approvalDecided", "hooks", "startedAt", "finishedAt", "durationMs", "askedSeq",
              "callSeq", "resultSeq", "spilledBytes"]

    requires = (Indexer, ToolTracker)
    types = frozenset({"tool/result"})

    def __init__(self, path: Path) -> None:
        self.path = path

    def begin(self, run: Run) -> None:
        self.indexer = run.get(Indexer)
        self.tools = run.get(ToolTracker)
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
    """The surface at the end of a pass (of the original log, for events.csv's surface column)."""

    nodes: frozenset = frozenset()

    def finish(self, run: Run) -> None:
        self.nodes = frozenset(run.fold.nodes)


def _stream(source: LogSource, folder: Path, header: dict, final_nodes: frozenset) -> tuple:
    """The one pass over the redacted log: it indexes it and writes events.csv,
    calls/*.json, tools.csv, approvals.csv and transcript.md; returns the index
    and what the report draws."""
    indexer = Indexer()
    records = _CallRecords(folder)
    transcript = _TranscriptFile(folder / "transcript.md", str(header.get("id")))
    summary = SessionSummary()
    observers = [indexer, summary, transcript, records, _EventRows(folder / "events.csv", final_nodes),
                 _ToolRows(folder / "tools.csv")]
    run = run_pass(source, observers, on_fold_error=SKIP)
    index = indexer.index
    turns = run.get(TurnTracker)
    session = {k: v for k, v in summary.stats.to_json().items() if k not in ("path", "error")}
    (folder / "session.json").write_bytes(dumps(session))
    views = records.views
    last = run.last_seq if run.last_seq is not None else 0
    spans: dict = {"turns": [], "steps": []}
    for s in turns.steps:
        label = f"turn {s.turn} step {s.step}"
        spans["steps"].append((s.start, s.end, label) if s.end is not None else (s.start, last, label + " (open)"))
    for s in turns.turns:
        label = f"turn {s.turn}"
        spans["turns"].append((s.start, s.end, label) if s.end is not None else (s.start, last, label + " (open)"))
    tracker = run.get(ToolTracker)
    approvals = [a.row() for a in tracker.approvals]
    write_csv(folder / "approvals.csv", ["askedSeq", "decidedSeq", "id", "tool", "callId", "outcome", "reason",
                                         "flag", "askedAt", "decidedAt", "arguments"],
              [[*a.row(), utc_time(a.asked_time), utc_time(a.decided_time), tracker.arguments_of(a)]
               for a in tracker.approvals])
    return index, {"calls": views, "spans": spans, "approvals": approvals, "transcript": transcript.kept,
                   "finalNodes": final_nodes, "session": session}


class _Store:
    """Values stored once each, by the SHA-256 of their stored bytes: `messages/<sha256>.json`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / "messages"
        self.folder.mkdir()
        self.known: set[str] = set()

    def put(self, value) -> str:
        data = (json_text(value) + "\n").encode()
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self.known:
            self.known.add(digest)
            (self.folder / f"{digest}.json").write_bytes(data)
        return digest


class _CallRecords(Observer):
    """calls/NNNN.json, one per main-loop call: its request (the header and the ids of its
    messages in the store) and its response (the assistant message, finish, error code,
    usage, chunk times)."""

    requires = (CallTracker,)

    def __init__(self, folder: Path) -> None:
        self.folder = folder / "calls"
        self.store = _Store(folder)

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
        finish = call.finish
        first, last = response.pop("firstChunkTime", None), response.pop("lastChunkTime", None)
        record["response"] = {
            "messageSeq": response.get("messageSeq"), "message": response.get("message"),
            "finish": finish.get("kind") if type(finish) is dict else finish,
            "errorCode": failure_code(finish),
            "usage": call.usage, "lastChunkSeq": call.last_chunk_seq,
            "firstChunkTime": utc_time(first), "lastChunkTime": utc_time(last),
            "timeToFirstChunkMs": response.get("timeToFirstChunkMs"), "durationMs": _ms(last, first)}
        (self.folder / f"{call.call:04d}.json").write_bytes(dumps(record))

    def finish(self, run: Run) -> None:
        for call, record in self.pending.values():  # calls with no assistant message (cut short)
            self._write(call, record)
        self.pending.clear()


def _spilled_bytes(index, seq) -> int | None:
    """The bytes dsh kept out of the model's view of the tool result at `seq` (None: none)."""
    spills = index.spills_of(seq) if type(seq) is int else ()
    return sum(s.omitted for s in spills) if spills else None


def _ms(later, earlier):
    ok = all(type(t) in (int, float) and t > 0 for t in (later, earlier))
    return later - earlier if ok else None


def request_from_bundle(folder: Path, call: int) -> dict:
    """The request of main-loop call `call` rebuilt from a bundle's session folder:
    what `dshreplay request LOG --call N --json` prints for the (redacted) log."""
    try:
        record = orjson.loads(read_small_file(folder / "calls" / f"{call:04d}.json", MAX_MANIFEST_BYTES,
                                              f"call {call}"))
    except ReadError:
        raise UsageError(f"there is no call {call} in {shown_path(folder)}") from None

    def load(digest):
        if digest is None:
            return None
        if type(digest) is not str or not digest.isalnum():
            raise UsageError(f"{shown_path(folder)}: call {call} names a message that is not a digest")
        return orjson.loads(read_small_file(folder / "messages" / f"{digest}.json", MAX_MANIFEST_BYTES,
                                            "a stored message"))
    return {"call": record["call"], "turn": record["turn"], "step": record["step"],
            "firstChunkSeq": record["firstChunkSeq"], "atSeq": record["atSeq"], "headerSeq": record["headerSeq"],
            "header": load(record["header"]), "messages": [load(d) for d in _request_ids(folder, record)]}


def _request_ids(folder: Path, record: dict) -> list:
    """A call record's request message ids: its `messages`, after the first
    `messagesFrom.first` ids of the call it names (a record repeats no more
    than it must; every FULL_REQUEST_EVERY-th call lists them all)."""
    chain = [record]
    while type(chain[-1].get("messagesFrom")) is dict:
        base = chain[-1]["messagesFrom"]
        number = base.get("call")
        if type(number) is not int or not 0 < number < chain[-1]["call"] or len(chain) > FULL_REQUEST_EVERY:
            raise UsageError(f"{shown_path(folder)}: call {record['call']} has a broken messagesFrom")
        try:
            chain.append(orjson.loads(read_small_file(folder / "calls" / f"{number:04d}.json", MAX_MANIFEST_BYTES,
                                                      f"call {number}")))
        except ReadError:
            raise UsageError(f"{shown_path(folder)}: call {record['call']} builds on call {number}, "
                             "which is not in the bundle") from None
    ids = list(chain[-1]["messages"])
    for link in reversed(chain[:-1]):
        ids = ids[:link["messagesFrom"]["first"]] + list(link["messages"])
    return ids


def _common_prefix(a: list, b: list) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


# -- verification -------------------------------------------------------------

@dataclass(frozen=True)
class Difference:
    path: str
    problem: str

    def to_json(self) -> dict:
        return {"path": self.path, "problem": self.problem}


MAX_MANIFEST_BYTES = 256 * 1024**2


def verify_export(bundle: Path, *, inputs: Path | None = None, bundle_only: bool = False, grown: bool = False,
                  digest: str | None = None, public_key: str | None = None
                  ) -> tuple[list[Difference], list[str], list[Difference]]:
    """Re-hash a bundle and its inputs. Returns (differences, inputs not checked,
    inputs that only grew since the export: accepted with `grown`).

    An input that cannot be found (beside the path it was given as, or in
    `inputs`) is a difference unless `bundle_only`. `digest` is the digest
    written down at export time; `public_key` checks the bundle's signature.
    A doctored manifest (not a regular file, too large, entries of the wrong
    type, names the file system refuses) is a difference or a UsageError,
    never a hang or a crash. Bundles of format 1 are read too."""
    try:
        manifest = orjson.loads(read_small_file(bundle / "manifest.json", MAX_MANIFEST_BYTES, "manifest.json"))
    except (ReadError, orjson.JSONDecodeError) as exc:
        reason = exc.message if isinstance(exc, ReadError) else "not valid JSON"
        raise UsageError(f"{shown_path(bundle)} has no readable manifest.json ({reason}): "
                         "not a dshreplay bundle") from None
    files = manifest.get("files") if type(manifest) is dict else None
    sessions = manifest.get("sessions") if type(manifest) is dict else None
    if type(files) is dict:  # format 1
        files = [{"path": k, "sha256": v} for k, v in files.items()]
    if type(files) is not list or type(sessions) is not list:
        raise UsageError(f"{shown_path(bundle)}/manifest.json lacks its files and sessions: not a dshreplay bundle")
    differences: list[Difference] = []
    actual = manifest_digest(manifest)
    if digest is not None and digest.removeprefix("sha256:").lower() != actual.removeprefix("sha256:"):
        differences.append(Difference("manifest.json", f"the bundle digest is {actual}, not the {digest} "
                                                       "written down at export"))
    if public_key is not None:
        try:
            signature = read_small_file(bundle / SIGNATURE, 4096, SIGNATURE).decode("ascii", "replace")
        except ReadError:
            differences.append(Difference(SIGNATURE, "no signature in the bundle"))
        else:
            if not check_signature(public_key, actual, signature):
                differences.append(Difference(SIGNATURE, "the signature does not match the bundle digest and "
                                                         "this public key"))
    listed = set()
    for entry in files:
        rel = entry.get("path") if type(entry) is dict else None
        if type(rel) is not str:
            differences.append(Difference("manifest.json", f"a file entry without a path: {short_json(entry, 60)}"))
            continue
        listed.add(rel)
        path = bundle / rel
        try:
            if not _within(path, bundle) or path.is_symlink() or not path.is_file():
                differences.append(Difference(_printable_name(rel), "listed in the manifest but missing"))
            elif "size" in entry and path.stat().st_size != entry["size"]:
                differences.append(Difference(_printable_name(rel), f"size changed: {path.stat().st_size} bytes, "
                                                                    f"manifest says {short_json(entry['size'])}"))
            elif type(entry.get("sha256")) is not str or sha256_file(path) != entry["sha256"]:
                differences.append(Difference(_printable_name(rel), "content changed (SHA-256 differs)"))
        except OSError as exc:
            differences.append(Difference(_printable_name(rel), f"cannot be read: {exc.strerror or exc}"))
    for path in sorted(p for p in bundle.rglob("*") if p.is_file() or p.is_symlink()):
        rel = path.relative_to(bundle).as_posix()
        if rel not in ("manifest.json", SIGNATURE) and rel not in listed:
            differences.append(Difference(_printable_name(rel), "not listed in the manifest (added)"))
    unchecked, appended = [], []
    for entry in sessions:
        given = entry.get("input") if type(entry) is dict else None
        if type(given) is not str or "sha256" not in entry:
            continue
        named = entry.get("file") or given
        if type(named) is not str:
            differences.append(Difference(given, "the manifest names its file with something not a path"))
            continue
        target = _find_input(named, inputs)
        try:
            if target is None:
                if bundle_only:
                    unchecked.append(given)
                else:
                    differences.append(Difference(given, "input not found (give its folder with --inputs, or "
                                                         "--bundle-only to check the bundle alone)"))
                continue
            size = target.stat().st_size
            if size == entry.get("size") and sha256_file(target) == entry["sha256"]:
                continue
            if grown and type(entry.get("chain")) is dict:
                folder = entry.get("folder")
                events = bundle / folder / "events.csv" if type(folder) is str else None
                growth = check_growth(LogSource(target), entry["chain"], events)
                if growth.status in ("same", "grew"):
                    appended.append(Difference(given, growth.detail))
                else:
                    differences.append(Difference(given, growth.detail))
            elif size != entry.get("size"):
                differences.append(Difference(given, f"input size changed: {size} bytes, "
                                                     f"manifest says {entry.get('size')}"))
            else:
                differences.append(Difference(given, "input content changed (SHA-256 differs)"))
        except (OSError, DshReplayError) as exc:
            reason = exc.message if isinstance(exc, DshReplayError) else (exc.strerror or str(exc))
            differences.append(Difference(given, f"input cannot be read: {reason}"))
    return differences, unchecked, appended


def _find_input(named: str, inputs: Path | None) -> Path | None:
    """The input file: in `inputs` (by its path as given, then by its name), else where it was given."""
    candidates = [Path(named)] if inputs is None else [inputs / named, inputs / Path(named).name]
    for candidate in candidates:
        try:
            if candidate.is_file():
                return candidate
        except OSError:
            continue
    return None


def _printable_name(name: str) -> str:
    return shown_path(name) if isinstance(name, str) else repr(name)


__all__ = ["export", "ExportOptions", "verify_export", "folder_name", "html"]
