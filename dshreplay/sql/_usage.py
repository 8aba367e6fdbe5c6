"""`usage`: tokens, calls, failures, retries, compactions and cost, by day, week, month, session or model.

The figures come from the index's rows (`model_calls`, `compactions`): read
from an index database, or built from the logs by the same row builder
(`rows.index_log`); either way `usage_report` adds them up, so both give the
same figures. A fork's seed (rows marked `inherited`) is its parent's usage,
counted once, in the parent.

Prices (`--prices FILE`, TOML or JSON) are per million tokens, per model:

    [models."deepseek-v4-flash"]
    input = 0.27        # input tokens not read from the cache
    output = 1.10
    cache_read = 0.07
    cache_write = 0.27

A model is looked up as "provider/model", then as "model"; the usage of a
model with no price has no cost (and is listed as unpriced).

A log whose fold fails is counted whole, as the index holds it: a call past
the failure was made and billed all the same. The report names each such log
(`FoldFailure`): where the fold's answers stop (the sessions row's
`answered_up_to`) and how many of the calls it counted lie past that point,
so that a reader can tell its figures from `stats`', which stop there.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import orjson

from dshreplay._jsvalues import as_key, as_text, is_number, shown
from dshreplay.core._mapper import Mapper
from dshreplay.errors import UsageError
from dshreplay.io._store import log_files
from dshreplay.io.reader import read_small_file, shown_path
from dshreplay.options import Options
from dshreplay.redaction.redactor import Redactor
from dshreplay.results._reports import TOKENS, Duplicate, FoldFailure, UsageReport, UsageRow
from dshreplay.sql.rows import TABLES, index_log

if TYPE_CHECKING:  # (DuckDB is imported only by the commands that use it)
    from duckdb import DuckDBPyConnection

GROUPINGS = ("day", "week", "month", "session", "model")

PRICED = ("input", "output", "cache_read", "cache_write")
NO_TIME = "(no time)"
CALL_COLUMNS = ("log", "session_id", "seq", "kind", "provider", "model", "failed", "error_code", "retry",
                "first_chunk_at", *(f"{t}_tokens" for t in TOKENS), "inherited")
COMPACTION_COLUMNS = ("log", "session_id", "seq", "started_at", "inherited")

Row = dict[str, Any]  # a row of the index's model_calls or compactions: column -> value
Prices = dict[str, dict[str, float]]  # model -> {input, output, cache_read, cache_write} per million tokens


class _Sessions:
    """Which log each session id is counted from: the first log that holds it."""

    def __init__(self) -> None:
        self.first: dict[Any, str] = {}
        self.duplicates: dict[str, Duplicate] = {}

    def counted(self, row: Row) -> bool:
        """Whether a row of this log is counted (False: its session is counted from another log)."""
        session, log = row["session_id"], row["log"]
        if session is None:
            return True
        key = as_key(session)
        first = self.first.setdefault(key, log)
        if first == log:
            return True
        if log not in self.duplicates:
            self.duplicates[log] = Duplicate(log, first, session)
        return False


# -- prices ---------------------------------------------------------------------

def load_prices(path: str) -> Prices:
    """model -> {input, output, cache_read, cache_write} in money per million tokens (TOML or JSON)."""
    raw = read_small_file(path, 1 << 20, "the prices file")
    if path.endswith(".toml"):
        try:
            import tomllib
        except ImportError:  # (Python 3.10)
            raise UsageError("TOML prices need Python 3.11 or later: give them as JSON", path=path) from None
        try:
            value = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"the prices file is not valid TOML: {exc}", path=path) from None
    else:
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise UsageError(f"the prices file is not valid JSON: {exc}", path=path) from None
    models = value.get("models") if type(value) is dict else None
    if type(models) is not dict:
        raise UsageError('the prices file must hold "models": {MODEL: {"input": N, "output": N, ...}}', path=path)
    out: Prices = {}
    for model, price in models.items():
        if type(price) is not dict or not set(price) <= set(PRICED) or not all(
                is_number(v) and v >= 0 for v in price.values()):
            raise UsageError(f"/models/{model}: expected {{{', '.join(PRICED)}}} as non-negative numbers "
                             f"(per million tokens), got {shown(price, 80)}", path=path)
        out[model] = {k: float(price.get(k, 0)) for k in PRICED}
    return out


def _price(prices: Prices | None, provider: Any, model: Any) -> dict[str, float] | None:
    if prices is None:
        return None
    return prices.get(f"{as_text(provider)}/{as_text(model)}") or prices.get(as_text(model))


# -- the figures -----------------------------------------------------------------

def _key(by: str, call: Row) -> str:
    if by == "session":
        return as_text(call["session_id"] if call["session_id"] is not None else call["log"])
    if by == "model":
        return f"{as_text(call['provider'])}/{as_text(call['model'])}"
    return period(by, call["first_chunk_at"])


def period(by: str, ms: int | None) -> str:
    """The day ("2026-07-06"), ISO week ("2026-W28") or month ("2026-07") of a time in epoch ms (UTC)."""
    if ms is None:
        return NO_TIME
    moment = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=ms)
    if by == "day":
        return moment.date().isoformat()
    if by == "week":
        year, week, _ = moment.isocalendar()
        return f"{year}-W{week:02d}"
    return f"{moment.year:04d}-{moment.month:02d}"


def usage_report(calls: Iterable[Row], compactions: Iterable[Row], by: str, *, since: int | None = None,
                 until: int | None = None, prices: Prices | None = None,
                 answered: dict[str, int] | None = None) -> UsageReport:
    """Add up call and compaction rows (dicts of CALL_COLUMNS and COMPACTION_COLUMNS) by `by`,
    within since..until (epoch ms, on each call's first chunk and each compaction's start).
    `answered`: log -> the sessions row's answered_up_to, for each log whose fold fails."""
    groups: dict[str, UsageRow] = {}
    total = UsageRow("(total)")
    unpriced: set[str] = set()
    failures = {log: FoldFailure(log, up_to) for log, up_to in sorted((answered or {}).items())}
    sessions = _Sessions()

    def inside(ms: int | None) -> bool:
        return (since is None or (ms is not None and ms >= since)) and (until is None or (ms is not None
                                                                                         and ms <= until))

    for call in calls:
        if not sessions.counted(call) or call["inherited"] or not inside(call["first_chunk_at"]):
            continue
        key = _key(by, call)
        row = groups.get(key)
        if row is None:
            row = groups[key] = UsageRow(key, log=call["log"] if by == "session" else None)
        price = _price(prices, call["provider"], call["model"])
        if prices is not None and price is None:
            unpriced.add(f"{as_text(call['provider'])}/{as_text(call['model'])}")
        for target in (row, total):
            _add(target, call, price)
        failure = failures.get(call["log"])
        if failure is not None:
            failure.calls += 1
            failure.past += call["seq"] is not None and call["seq"] > failure.answered_up_to
    if by != "model":
        for bracket in compactions:
            if not sessions.counted(bracket) or bracket["inherited"] or not inside(bracket["started_at"]):
                continue
            call = {"session_id": bracket["session_id"], "log": bracket["log"], "first_chunk_at": bracket["started_at"]}
            key = _key(by, call)
            row = groups.get(key)
            if row is None:
                row = groups[key] = UsageRow(key, log=bracket["log"] if by == "session" else None)
            row.compactions += 1
            total.compactions += 1
    if prices is None:
        for row in (*groups.values(), total):
            row.cost = None
    rows = [groups[k] for k in sorted(groups, key=lambda k: (k == NO_TIME, k))]
    return UsageReport(by, rows, total, prices is not None, sorted(unpriced), list(failures.values()),
                       sorted(sessions.duplicates.values(), key=lambda d: d.log))


def _add(row: UsageRow, call: Row, price: dict[str, float] | None) -> None:
    row.sessions.add(call["log"])
    row.calls += 1
    if call["failed"]:
        code = as_text(call["error_code"])
        row.failed[code] = row.failed.get(code, 0) + 1
    row.retries += bool(call["retry"])
    for name in TOKENS:
        row.tokens[name] += call[f"{name}_tokens"] or 0
    if price is None:
        row.cost = None
    elif row.cost is not None:
        row.cost += sum((call[f"{name}_tokens"] or 0) * price[name] for name in PRICED) / 1e6


# -- where the rows come from ----------------------------------------------------------

def rows_from_db(db: Path) -> tuple[list[Row], list[Row], dict[str, int]]:
    """The call and compaction rows of an index database, and log -> answered_up_to of each log
    whose fold fails."""
    from dshreplay.sql._database import check_tables, duckdb_module, one_line, open_index
    con = open_index(db)
    try:
        check_tables(con, shown_path(db), ("sessions", "model_calls", "compactions"))
        calls = _dicts(con, "model_calls", CALL_COLUMNS, ("first_chunk_at",))
        compactions = _dicts(con, "compactions", COMPACTION_COLUMNS, ("started_at",))
        answered = dict(con.execute("SELECT log, answered_up_to FROM sessions WHERE answered_up_to IS NOT NULL "
                                    "AND log IS NOT NULL").fetchall())
    except duckdb_module().Error as exc:
        raise UsageError(f"cannot read the index database: {one_line(exc)}", path=shown_path(db)) from None
    finally:
        con.close()
    return calls, compactions, answered


def _dicts(con: DuckDBPyConnection, table: str, columns: tuple[str, ...], times: tuple[str, ...]) -> list[Row]:
    shown_columns = ", ".join(f"epoch_ms({c})" if c in times else c for c in columns)
    rows = con.execute(f"SELECT {shown_columns} FROM {table} ORDER BY log, seq").fetchall()
    return [dict(zip(columns, row)) for row in rows]


def _usage_rows(item: tuple[str, Options]) -> tuple[list[Row], list[Row], int | None, str | None, str]:
    """(call rows, compaction rows, answered_up_to, why the log cannot be read, its key) of one log, by the
    index's row builder."""
    path, options = item
    indexed = index_log(path, options, Redactor())
    if indexed.status != "indexed":
        return [], [], None, indexed.error, indexed.log
    return (_pick(indexed.tables["model_calls"], "model_calls", CALL_COLUMNS),
            _pick(indexed.tables["compactions"], "compactions", COMPACTION_COLUMNS), indexed.answered_up_to,
            None, indexed.log)


def _pick(rows: list[tuple[Any, ...]], table: str, columns: tuple[str, ...]) -> list[Row]:
    names = [c.name for c in TABLES[table]]
    where = [names.index(c) for c in columns]
    return [{c: row[i] for c, i in zip(columns, where)} for row in rows]


def rows_from_logs(paths: list[str], options: Options,
                   mapper: Mapper) -> tuple[list[Row], list[Row], dict[str, int], list[tuple[str, str]]]:
    """The call and compaction rows of logs, built as `index` builds them; log -> answered_up_to of
    each log whose fold fails; and (log, why) of those that cannot be read."""
    calls: list[Row] = []
    compactions: list[Row] = []
    answered: dict[str, int] = {}
    unreadable: list[tuple[str, str]] = []
    jobs = [(p, options) for p in log_files(paths, "usage")]
    for got_calls, got_compactions, up_to, error, key in mapper(_usage_rows, jobs):
        calls += got_calls
        compactions += got_compactions
        if up_to is not None:
            answered[key] = up_to
        if error is not None:
            unreadable.append((key, error))
    return calls, compactions, answered, unreadable
