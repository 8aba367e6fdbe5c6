"""The SQL index: a DuckDB database of many sessions' rows, kept current incrementally.

`update_index` brings the database up to date with the logs found in the
inputs. Per input it keeps what the export records to prove growth (size,
hash, encoding and the line chain, `integrity.chain`), so that a later run
checks each known log with `check_growth` before reading it as a log. As in
the bundle, those hashes are HMAC-SHA256 under the evidence key whenever
anything is redacted (`integrity.evidence`): a plain hash of a log or of its
lines would confirm a guess at what the index masked. The key's fingerprint
is one of the settings an index is never updated across.

- unchanged (the same size and SHA-256): its rows stay;
- grown (lines only appended): the log is indexed again and its rows replaced;
- rewritten inside the indexed prefix (or shorter, or re-encoded): indexed
  again whole, and reported;
- vanished (known, under an input, no longer there): its sessions row is
  marked `vanished`, its rows are kept, and it is reported;
- new: indexed.

A log's key (`rows.log_key`) is its path as redacted as the bundle's names, and
`_inputs` keeps keyed hashes of the real path and its folders (`_whereabouts`),
so the index holds no token of a folder or file name and still finds its logs.
The database is input like a log: its tables' shapes (`check_tables`), its
settings and each log's facts are checked before they are used.

Rows are built in worker processes (`--jobs`, or Dask for `fleet index`), a
batch of logs at a time, and each batch is written in one transaction, so
that memory is bounded by a batch of sessions whatever the store's size: a
run that fails or is interrupted leaves every session's rows as one run or
the other wrote them, never a mix, and the next run goes on from there.

DuckDB and pyarrow are the `sql` extra, imported only by the commands that
use them.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Iterable

import orjson

from dshreplay.core._mapper import Mapper
from dshreplay.core._passstate import StateError, check_size, state_ceiling
from dshreplay.errors import DshReplayError, OutputError, UsageError
from dshreplay.integrity._chain import EntryError, Exported, check_growth
from dshreplay.integrity._evidence import PLAIN_HASH, InputHash, input_hash
from dshreplay.io._store import discover, log_files
from dshreplay.io.reader import LogSource, read_small_file, shown_path
from dshreplay.options import Options
from dshreplay.redaction.redactor import Redactor, load_redactor
from dshreplay.results._reports import IndexReport
from dshreplay.sql.rows import (
    INDEX_FORMAT,
    OPTIONAL,
    TABLES,
    Indexed,
    index_log,
    input_facts,
    log_key,
    log_path,
    unreadable_row,
)

if TYPE_CHECKING:  # (DuckDB is imported only by the commands that use it)
    from duckdb import DuckDBPyConnection

SQL_EXTRA = "needs the sql extra (DuckDB, pyarrow, cryptography): pip install 'dshreplay[sql]'"
BATCH = 256  # logs whose rows are built and written at a time (memory: a batch of sessions, never the store)
DUCKDB_MEMORY = "512MB"  # DuckDB's cache of the database while it is written (it spills past that)
ARROW_TYPES = {"VARCHAR": "string", "BIGINT": "int64", "DOUBLE": "float64", "BOOLEAN": "bool_"}


def duckdb_module() -> ModuleType:
    """DuckDB, or a UsageError saying how to install it (one line, exit 2)."""
    try:
        import cryptography  # noqa: F401 - (kept passes are sealed)
        import duckdb
        import pyarrow  # noqa: F401 - (rows reach DuckDB as Arrow tables)
    except ImportError:
        raise UsageError(f"this command {SQL_EXTRA}") from None
    return duckdb


@dataclass(frozen=True)
class IndexOptions:
    """How to index: the run's settings (`read`, with the redaction rules), whether
    to keep messages, the rules' identity (an index is never mixed across rules), and
    the hash of input bytes its facts are kept with (`hasher`: keyed when it redacts)."""

    read: Options
    messages: bool = False
    rules: str | None = None  # the --redact file
    defaults: bool = True  # the default secret rules are on
    parquet: Path | None = None
    hasher: InputHash = PLAIN_HASH

    def settings(self) -> dict[str, Any]:
        """What the rows depend on: a database built with other settings is not updated with these."""
        rules = None
        if self.rules is not None:
            rules = hashlib.sha256(read_small_file(self.rules, 1 << 20, "the redaction rules file")).hexdigest()
        return {"format": INDEX_FORMAT, "messages": self.messages, "defaultRules": self.defaults,
                "rulesSha256": rules, "inputHash": self.hasher.name, "evidenceKey": self.hasher.fingerprint}


@dataclass
class _Job:
    path: str
    key: str
    known: dict[str, Any] | None  # what the last run recorded of the log (the export's facts)
    options: IndexOptions
    state: bytes | StateError | None = None  # the pass kept where the log ended when it was indexed (a
    # StateError: one too large to be read from the database)
    doubt: str | None = None  # why what the last run kept of the log cannot be used (it is read whole)


@dataclass
class _Done:
    indexed: Indexed | None  # None: unchanged
    change: str  # "new", "appended", "rewritten", "unchanged"
    detail: str = ""
    note: str | None = None  # why the kept pass was not used (the log was read whole)


def _index_job(job: _Job) -> _Done:
    """One log: its growth checked against what the last run indexed, then indexed if it changed:
    a log that only grew is read on from the pass kept where it ended, when there is one."""
    change, detail, state = "new", "", None
    if job.doubt is not None:
        change, detail = "rewritten", job.doubt
    elif job.known is not None:
        try:
            source = LogSource(job.path, job.options.read)
            hasher = job.options.hasher
            if input_facts(source, seal=False, hasher=hasher)[0] == {"size": job.known.get("size"),
                                                                     "sha256": job.known.get("sha256")}:
                return _Done(None, "unchanged")  # (the same bytes: one streaming hash, no line read)
            growth = check_growth(Path(source.file or job.path), Exported.of(job.known, ""), options=job.options.read,
                                  hasher=hasher)
        except (DshReplayError, OSError, EntryError) as exc:
            growth = None
            change, detail = "rewritten", f"cannot be checked: {exc}"
        if growth is not None:
            if growth.status == "same":
                return _Done(None, "unchanged")
            change = "appended" if growth.status == "grew" else "rewritten"
            detail = growth.detail
            state = job.state if growth.status == "grew" else None
    given = job.options.read.redactor  # (Options names no output type: a Redactor, or None)
    redactor = (given if isinstance(given, Redactor) else Redactor()).for_calls(())
    note = None
    if isinstance(state, StateError):
        note, state = _unused(state), None
    if state is not None and job.known is not None:  # (a kept state is the known log's)
        try:
            return _Done(index_log(job.path, job.options.read, redactor, job.options.messages,
                                   resume=(job.known["size"], state, job.known["chain"]["lines"]), keep=True,
                                   hasher=job.options.hasher),
                         change, detail)
        except StateError as exc:
            note = _unused(exc)
            redactor = redactor.for_calls(())  # (then read the log whole)
    indexed = index_log(job.path, job.options.read, redactor, job.options.messages, keep=True,
                        hasher=job.options.hasher)
    return _Done(indexed, change, detail, note)


def _unused(why: StateError) -> str:
    return f"the pass kept where it was indexed is not used ({why}): read whole"


def update_index(inputs: list[str], db: Path, options: IndexOptions, mapper: Mapper | None = None) -> IndexReport:
    """Bring the database `db` up to date with the logs found in `inputs` (see the module)."""
    duckdb = duckdb_module()
    mapper = mapper or (lambda fn, items: [fn(i) for i in items])
    settings = options.settings()
    report = IndexReport(shown_path(db))
    paths = log_files(discover(inputs), "index")
    con = _connect(db, read_only=False)
    try:
        _prepare(con, settings, shown_path(db))
        seen: dict[str, str] = {}
        redactor = options.read.redactor if isinstance(options.read.redactor, Redactor) else None
        for path in paths:
            seen.setdefault(log_key(path, redactor, options.hasher), path)
        jobs = [_Job(path, key, None, options) for key, path in seen.items()]
        for start in range(0, len(jobs), BATCH):  # (a batch at a time: memory is a batch's, never the store's)
            batch = jobs[start:start + BATCH]
            _known(con, batch)
            results = mapper(_index_job, batch)
            touched: set[datetime.date | None] = set()
            con.execute("BEGIN TRANSACTION")
            _store(con, batch, results, report, touched)
            _pend(con, touched)
            con.execute("COMMIT")
            del results, batch
        touched = set()
        con.execute("BEGIN TRANSACTION")
        _mark_vanished(con, inputs, set(seen), options.hasher, report, touched)
        _pend(con, touched)
        con.execute("COMMIT")
        if options.parquet is not None:
            report.parquet = shown_path(options.parquet)
            try:
                write_parquet(con, options.parquet)
            except duckdb.Error as exc:  # (the database is up to date: the partitions are written next run)
                raise OutputError(f"cannot write the Parquet partitions (the index database is up to date): "
                                  f"{one_line(exc)}", path=shown_path(options.parquet)) from None
        report.sessions = _count(con, "SELECT count(*) FROM sessions")
    except duckdb.Error as exc:
        raise OutputError(f"cannot update the index database: {one_line(exc)}", path=shown_path(db)) from None
    finally:
        con.close()
    return report


def _known(con: DuckDBPyConnection, batch: list[_Job]) -> None:
    """What the last runs kept of the logs of a batch: their facts and kept passes (read a batch at
    a time: a state weighs about what its log's surface does)."""
    ceilings = [state_ceiling(_size(job.path)) for job in batch]
    rows = con.execute("SELECT i.log, i.facts, CASE WHEN octet_length(i.state) <= c.most THEN i.state END, "
                       "octet_length(i.state), c.most FROM _inputs i JOIN (SELECT unnest(?) AS log, unnest(?) AS most) "
                       "c ON i.log = c.log", [[job.key for job in batch], ceilings]).fetchall()
    found = {log: rest for log, *rest in rows}
    for job in batch:
        if job.key in found:
            facts, state, size, most = found[job.key]
            try:  # (a state past what the log can need is not read out of the database)
                check_size(size or 0, most)
                job.state = state
            except StateError as exc:
                job.state = exc
            job.known, job.doubt = _facts(facts)


def _size(path: str) -> int:
    """The size of a log's file now (0 when it cannot be known: no kept state is then read)."""
    try:
        return os.stat(log_path(path)).st_size
    except OSError:
        return 0


def _facts(text: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """(the facts, None) a run kept of a log, or (None, why) when they are not what a run keeps
    (the database is input like any other: the log is then indexed again whole, and reported)."""
    try:
        facts = orjson.loads(text if text is not None else "")
        Exported.of(facts, "")
    except (orjson.JSONDecodeError, EntryError) as exc:
        why = "not JSON" if isinstance(exc, orjson.JSONDecodeError) else str(exc)
        return None, f"the facts the index kept of it are not the index's: {why}"
    return facts, None


def one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


INTERNAL: dict[str, tuple[tuple[str, str], ...]] = {  # the index's own tables: (column, DuckDB type)
    "_meta": (("key", "VARCHAR"), ("value", "VARCHAR")),
    "_inputs": (("log", "VARCHAR"), ("path_hash", "VARCHAR"), ("folders", "VARCHAR[]"), ("facts", "VARCHAR"),
                ("state", "BLOB")),
    "_parquet_pending": (("day", "DATE"),),
    "_parquet_written": (("dir", "VARCHAR"),),
}
PRIMARY = {"_meta": "key", "_inputs": "log", "_parquet_written": "dir"}  # (their keys)
NOT_AN_INDEX = "not an index database this dshreplay writes"


def check_tables(con: DuckDBPyConnection, shown: str, needed: Iterable[str] = (),
                 only: Iterable[str] | None = None) -> None:
    """UsageError (one line) unless every table of the index the database holds (of `only`, when given)
    has the columns and types the index gives it, and each of `needed` is there: a database made or
    changed by another hand is refused before a query or an insert fails on it."""
    columns: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE database_name = "
            "current_database() AND schema_name = 'main' ORDER BY table_name, column_index").fetchall():
        columns.setdefault(table, []).append((column, kind))
    expected = {**INTERNAL, **{name: tuple((c.name, c.type) for c in spec) for name, spec in TABLES.items()}}
    if only is not None:
        expected = {name: expected[name] for name in only}
    for name in needed:
        if name not in columns:
            raise UsageError(f"{NOT_AN_INDEX}: it has no {name} table (build one with `dshreplay index PATH... "
                             "--db FILE`)", path=shown)
    for name, want in expected.items():
        have = columns.get(name)
        if have is None or have == list(want):
            continue
        wrong = next(((i, w) for i, w in enumerate(want) if i >= len(have) or have[i] != w), None)
        if wrong is None:
            got = f"an extra column {have[len(want)][0]}"
        else:
            i, (column, kind) = wrong
            got = "nothing" if i >= len(have) else f"{have[i][0]} {have[i][1]}"
            got = f"column {i + 1} {column} {kind} expected, {got} found"
        raise UsageError(f"{NOT_AN_INDEX}: table {name}: {got}", path=shown)


def _prepare(con: DuckDBPyConnection, settings: dict[str, Any], shown: str) -> None:
    """The tables (made when absent), and the settings the database was built with checked."""
    check_tables(con, shown, only=("_meta",))  # (the settings first: an index of another format says so)
    _create(con, "_meta")
    row = con.execute("SELECT value FROM _meta WHERE key = 'settings'").fetchone()
    wanted = orjson.dumps(settings, option=orjson.OPT_SORT_KEYS).decode()
    if row is not None and row[0] != wanted:
        have = _settings(row[0], shown)
        diff = ", ".join(f"{k} {have.get(k)!r} (now {settings.get(k)!r})" for k in sorted(settings)
                         if have.get(k) != settings.get(k))
        raise UsageError(f"the index was built with other settings: {diff}; index into a new --db", path=shown)
    check_tables(con, shown)
    if row is None:
        con.execute("INSERT INTO _meta VALUES ('settings', ?)", [wanted])
    for name in ("_inputs", "_parquet_pending", "_parquet_written"):
        _create(con, name)
    for name, columns in TABLES.items():
        if name in OPTIONAL and not settings["messages"]:
            continue
        spec = ", ".join(f"{c.name} {c.type}" for c in columns)
        con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({spec})")


def _create(con: DuckDBPyConnection, name: str) -> None:
    """One of the index's own tables (INTERNAL), made when absent."""
    spec = ", ".join(f"{column} {kind}{' PRIMARY KEY' if PRIMARY.get(name) == column else ''}"
                     for column, kind in INTERNAL[name])
    con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({spec})")


def _settings(text: str | None, shown: str) -> dict[str, Any]:
    """The settings `_meta` holds, or a UsageError when they are not a JSON object."""
    try:
        have = orjson.loads(text or "")
    except orjson.JSONDecodeError:
        have = None
    if type(have) is not dict:
        raise UsageError(f"{NOT_AN_INDEX}: _meta's settings are not a JSON object; index into a new --db",
                         path=shown)
    return have


def _tables(con: DuckDBPyConnection) -> list[str]:
    present = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    return [name for name in TABLES if name in present]


def _arrow(name: str, rows: list[tuple[Any, ...]]) -> Any:
    """Rows of table `name` as an Arrow table of its columns' types."""
    import pyarrow as pa
    types = {"TIMESTAMP": pa.timestamp("ms"), "DATE": pa.date32(), "BIGINT[]": pa.list_(pa.int64())}
    columns = TABLES[name]
    arrays = []
    for n, column in enumerate(columns):
        kind = types.get(column.type) or getattr(pa, ARROW_TYPES[column.type])()
        arrays.append(pa.array([row[n] for row in rows], type=kind))
    return pa.Table.from_arrays(arrays, names=[c.name for c in columns])


def _days(con: DuckDBPyConnection, keys: list[str]) -> set[datetime.date | None]:
    if not keys:
        return set()
    return {r[0] for r in con.execute("SELECT DISTINCT day FROM sessions WHERE log IN (SELECT unnest(?))",
                                      [keys]).fetchall()}


def _store(con: DuckDBPyConnection, batch: list[_Job], results: list[_Done], report: IndexReport,
           touched: set[datetime.date | None]) -> None:
    """Replace the rows of the changed logs of a batch, and record their facts."""
    changed = [(job, done) for job, done in zip(batch, results) if done.indexed is not None]
    report.unchanged += len(results) - len(changed)
    back = [job.key for job, done in zip(batch, results) if done.indexed is None]
    if back:  # (a log marked vanished is there again, unchanged)
        con.execute("UPDATE sessions SET status = 'indexed' WHERE status = 'vanished' AND log IN (SELECT unnest(?))",
                    [back])
    if not changed:
        return
    keys = [job.key for job, _ in changed]
    touched |= _days(con, keys)
    tables = _tables(con)
    for name in tables:
        con.execute(f"DELETE FROM {name} WHERE log IN (SELECT unnest(?))", [keys])
    con.execute("DELETE FROM _inputs WHERE log IN (SELECT unnest(?))", [keys])
    rows: dict[str, list[tuple[Any, ...]]] = {name: [] for name in tables}
    facts: list[tuple[str, str, list[str], str, bytes | None]] = []
    for job, done in changed:
        indexed = done.indexed
        if indexed is None:  # (not in `changed`)
            continue
        if indexed.status == "unreadable":
            error = indexed.error or ""  # (an unreadable log's Indexed says why)
            report.unreadable.append((job.key, error))
            rows["sessions"].append(unreadable_row(job.key, error))
            continue
        for name in tables:
            rows[name].extend(indexed.tables.get(name, ()))
        facts.append((job.key, *_whereabouts(job.path, job.options.hasher), orjson.dumps(indexed.facts).decode(),
                      indexed.state))
        report.resumed += indexed.resumed
        if done.note is not None:
            report.notes.append((job.key, done.note))
        if indexed.answered_up_to is not None:
            report.fold_failures.append((job.key, indexed.answered_up_to))
        if done.change == "new":
            report.new.append(job.key)
        elif done.change == "appended":
            report.appended.append((job.key, done.detail))
        else:
            report.rewritten.append((job.key, done.detail))
    for name in tables:
        if rows[name]:
            table = _arrow(name, rows[name])
            con.register("_incoming", table)
            con.execute(f"INSERT INTO {name} SELECT * FROM _incoming")
            con.unregister("_incoming")
    if facts:
        con.executemany("INSERT INTO _inputs VALUES (?, ?, ?, ?, ?)", facts)
    touched |= _days(con, keys)


def _whereabouts(path: str, hasher: InputHash) -> tuple[str, list[str]]:
    """Where a log is, as the index keeps it: `hasher`'s hash of its file's absolute path and of each
    folder above it (keyed when the index redacts: the path's masked parts stay masked), so that a
    later run tells which known logs lie under its inputs."""
    real = log_path(path)
    folders, here = [], os.path.dirname(real)
    while True:
        folders.append(hasher.hex(os.fsencode(here)))
        up = os.path.dirname(here)
        if up == here:
            return hasher.hex(os.fsencode(real)), folders
        here = up


def _mark_vanished(con: DuckDBPyConnection, inputs: Iterable[str], found: set[str], hasher: InputHash,
                   report: IndexReport, touched: set[datetime.date | None]) -> None:
    """Known logs under the inputs (by the hashes of their paths) that are gone: marked `vanished`, their
    rows kept. (A key that is a path, nothing of it masked, is looked for there too.)"""
    roots = {hasher.hex(os.fsencode(os.path.abspath(i))) for i in inputs}
    gone: list[str] = []
    for log, path_hash, folders in con.execute("SELECT log, path_hash, coalesce(folders, []) FROM _inputs "
                                               "WHERE log IS NOT NULL ORDER BY log").fetchall():
        if log in found or os.path.exists(log):
            continue
        if path_hash in roots or not roots.isdisjoint(folders):
            gone.append(log)
    if gone:
        con.execute("UPDATE sessions SET status = 'vanished' WHERE log IN (SELECT unnest(?))", [gone])
        report.vanished = gone
        touched |= _days(con, gone)


def _pend(con: DuckDBPyConnection, days: set[datetime.date | None]) -> None:
    """Days whose Parquet partitions are out of date (written at the next --parquet run)."""
    for day in days:
        con.execute("INSERT INTO _parquet_pending VALUES (?)", [day])


HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"


def write_parquet(con: DuckDBPyConnection, out: Path) -> None:
    """Write the days of partitions that changed (all of them the first time for `out`): one
    folder per table, `day=YYYY-MM-DD/data.parquet` inside, each file replaced whole
    (written aside, then renamed); a day left with no rows loses its file."""
    out = Path(os.path.abspath(out))  # (as checked: DuckDB would expand a leading ~ of a relative path)
    out.mkdir(parents=True, exist_ok=True)
    where = str(out.resolve())
    first = _count(con, "SELECT count(*) FROM _parquet_written WHERE dir = ?", [where]) == 0
    if first:
        days = {r[0] for r in con.execute("SELECT DISTINCT day FROM sessions").fetchall()}
    else:
        days = {r[0] for r in con.execute("SELECT DISTINCT day FROM _parquet_pending").fetchall()}
    _check_parquet_folder(out, _tables(con))
    for name in _tables(con):
        folder = out / name
        folder.mkdir(exist_ok=True)
        if first:  # (another index's partitions, or ours from before an error: none is kept)
            for old in folder.glob("day=*"):
                shutil.rmtree(old, ignore_errors=True)
        for day in sorted(days, key=lambda d: (d is None, d)):
            _write_day(con, name, folder, day)
    con.execute("BEGIN TRANSACTION")
    con.execute("DELETE FROM _parquet_pending")
    con.execute("INSERT OR IGNORE INTO _parquet_written VALUES (?)", [where])
    con.execute("COMMIT")


PARQUET_FILES = ("data.parquet", ".data.parquet.tmp")  # (all a partition folder of ours ever holds)


def _check_parquet_folder(out: Path, tables: list[str]) -> None:
    """Raise a UsageError, before anything is deleted, unless every partition folder that
    `write_parquet` may remove is one it writes: each table's folder a folder (not a link),
    each `day=*` in it a folder (not a link) holding only its data file. (Another tool's
    Hive-partitioned files, such as sessions/day=.../part-0.parquet, are never deleted.)"""
    def not_ours(rel: str) -> UsageError:
        return UsageError(f"--parquet {shown_path(out)} holds {shown_path(rel)}, which the index does not write: "
                          "nothing was deleted; give --parquet a folder of its own")
    try:
        for name in tables:
            folder = out / name
            if not os.path.lexists(folder):
                continue
            if folder.is_symlink() or not folder.is_dir():
                raise not_ours(name)
            with os.scandir(folder) as days:
                for day in days:
                    if not day.name.startswith("day="):
                        continue  # (never deleted)
                    if not day.is_dir(follow_symlinks=False):
                        raise not_ours(f"{name}/{day.name}")
                    with os.scandir(day.path) as files:
                        for file in files:
                            if file.name not in PARQUET_FILES or not file.is_file(follow_symlinks=False):
                                raise not_ours(f"{name}/{day.name}/{file.name}")
    except OSError as exc:
        raise OutputError(f"--parquet: cannot check {shown_path(exc.filename or out)}: {exc.strerror or exc}; "
                          "nothing was deleted") from None


def _write_day(con: DuckDBPyConnection, name: str, folder: Path, day: datetime.date | None) -> None:
    part = folder / f"day={HIVE_NULL if day is None else day.isoformat()}"
    match = "s.day IS NULL" if day is None else "s.day = ?"
    params = [] if day is None else [day]
    if name == "sessions":
        query = f"SELECT * EXCLUDE (day) FROM sessions s WHERE {match} ORDER BY log"
    else:
        query = (f"SELECT t.* FROM {name} t JOIN sessions s ON t.log = s.log WHERE {match} "
                 "ORDER BY t.log, t.seq NULLS FIRST")
    count = _count(con, f"SELECT count(*) FROM ({query})", params)
    target = part / "data.parquet"
    if not count:
        if part.exists():
            shutil.rmtree(part)
        return
    part.mkdir(exist_ok=True)
    aside = part / ".data.parquet.tmp"
    con.execute(f"COPY ({query}) TO '{_sql_text(str(aside))}' (FORMAT parquet)", params)
    os.replace(aside, target)


def _count(con: DuckDBPyConnection, query: str, params: list[Any] | None = None) -> int:
    """The count a `SELECT count(*)` query gives (it always gives one row)."""
    row = con.execute(query, params).fetchone()
    return 0 if row is None else int(row[0])


def _sql_text(text: str) -> str:
    return text.replace("'", "''")


# -- reading -------------------------------------------------------------------

def open_index(db: Path) -> DuckDBPyConnection:
    """A read-only connection to an index database, with no access to other files (a query
    cannot read or write anything but the index); UsageError when it cannot be opened."""
    if not Path(db).is_file():
        raise UsageError("no index database there (build one with `dshreplay index PATH... --db FILE`)",
                         path=shown_path(db))
    return _connect(db, read_only=True)


def _connect(db: Path, *, read_only: bool) -> DuckDBPyConnection:
    """The one way an index database is opened: no DuckDB extension installed or loaded (a
    SQLite file, md:NAME or s3://... would fetch one from the network and write the index
    into what it opens), and only a DuckDB database file (DuckDB opens a CSV or JSON file,
    such as a log, or ":memory:" as an in-memory database, which would lose the index).
    Read-only: no other file can be read or written either. UsageError when it cannot be opened."""
    not_duckdb = UsageError("not a DuckDB database file (DuckDB would open it as an in-memory database, and an "
                            "index there is lost): an index is a file of its own, such as index.duckdb",
                            path=shown_path(db))
    if os.fspath(db).startswith(":memory:"):  # (DuckDB's name of a database in memory, not a file's)
        raise not_duckdb
    try:
        with open(db, "rb") as fh:  # (a DuckDB file says DUCK after its header's checksum: a log, a CSV file
            head = fh.read(12)  # or a SQLite file is refused before DuckDB reads it as something else)
    except FileNotFoundError:
        head = None  # (a new index)
    except OSError as exc:
        raise UsageError(f"cannot open the index database: {exc.strerror or exc}", path=shown_path(db)) from None
    if head and head[8:12] != b"DUCK":
        raise not_duckdb
    duckdb = duckdb_module()
    config: dict[str, Any] = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    config.update({"enable_external_access": False} if read_only else {"memory_limit": DUCKDB_MEMORY})
    try:
        con: DuckDBPyConnection = duckdb.connect(os.path.abspath(db),  # (the file checked: DuckDB would expand
                                                 read_only=read_only, config=config)  # a leading ~ of a name)
        row = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    except duckdb.Error as exc:
        raise UsageError(f"cannot open the index database: {one_line(exc)}", path=shown_path(db)) from None
    if row is None or row[0] is None:
        con.close()
        raise not_duckdb
    return con


def run_query(db: Path, query: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """(column names, rows) of `query` on the index; UsageError names what DuckDB refused."""
    duckdb = duckdb_module()
    con = open_index(db)
    try:
        cursor = con.execute(query)
        if cursor.description is None:
            return [], []
        return [d[0] for d in cursor.description], cursor.fetchall()
    except duckdb.Error as exc:
        raise UsageError(f"the query failed: {one_line(exc)}") from None
    finally:
        con.close()


def index_options(read: Options, *, messages: bool, rules: str | None, defaults: bool,
                  parquet: Path | None, db: Path | None = None, evidence_key: str | None = None) -> IndexOptions:
    """The options of one index run, the redaction rules loaded into `read`, and the hash
    of input bytes: keyed with the evidence key when anything is redacted (as export's)."""
    if parquet is not None and db is not None and os.path.realpath(parquet) == os.path.realpath(db):
        raise UsageError(f"--parquet {shown_path(parquet)} is the --db file: give the Parquet tables a folder of "
                         "their own")
    redactor = load_redactor(rules, defaults=defaults)
    if redactor.rules.pointers:
        raise UsageError("the index writes values, not records: its redaction takes text and keys rules; "
                         "pointer rules would not apply (mask those members by name with keys)", path=rules)
    hasher = input_hash(redactor.active, evidence_key, command="index", writes="the index",
                        places={"--db": db, "--parquet": parquet})
    return IndexOptions(read.with_(redactor=redactor), messages, rules, defaults, parquet, hasher)


