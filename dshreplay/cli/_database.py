"""The commands on an SQL index of many sessions: index (build it), sql (query it).

Each module of `dshreplay.cli` holds a family of commands and is imported only
when one of them runs (or the help lists them): see `cli.COMMANDS`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from dshreplay.cli import (
    EXIT_FINDINGS,
    EXIT_UNREADABLE,
    mapper_for,
    options_of,
    reporter_for,
    safe_text,
    warn,
)
from dshreplay.cli._flags import (
    DshCommand,
    Output,
    jobs_options,
    output_options,
)


@click.command(cls=DshCommand)
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--db", required=True, type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="The DuckDB database to build or bring up to date.")
@click.option("--messages", is_flag=True, help="Also write one row per model message (its text, redacted).")
@click.option("--redact", "rules", type=click.Path(dir_okay=False),
              help='A JSON rules file, as export takes: {"text": [RE2 regex], "keys": [name]}.')
@click.option("--no-default-redaction", is_flag=True,
              help="Do not mask API keys, bearer tokens and private keys by default.")
@click.option("--parquet", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Also write the tables as Parquet: DIR/TABLE/day=YYYY-MM-DD/data.parquet (the days that "
                   "changed).")
@click.option("--evidence-key", type=click.Path(dir_okay=False), metavar="FILE", envvar="DSHREPLAY_EVIDENCE_KEY",
              show_envvar=True,
              help="The evidence key that keys the inputs' hashes (HMAC-SHA256) when the index redacts: "
                   "required then, made if absent (mode 0600), refused as --db or inside --parquet. Keep it "
                   "with the logs, never with the index; an index is updated only with the key it was "
                   "built with.")
@jobs_options
@output_options
def index(paths: tuple[str, ...], db: Path, messages: bool, rules: str | None, no_default_redaction: bool,
          parquet: Path | None, evidence_key: str | None, jobs: int | None, quiet: bool, output: Output) -> None:
    """Build or update an SQL index (DuckDB) of many sessions: one row per
    session, turn, model call, tool call, approval, replacement, compaction
    and finding (and message, with --messages), each with its log, session
    id, seq and line. Tables: docs/reference/sql.md. Needs the sql extra.

    Incremental: a log indexed before is checked against the size, hash
    and line chain kept for it (keyed with --evidence-key when anything is
    redacted, so none of them tells what was masked); unchanged, its rows stay; grown, only the
    lines appended are read (on from the pass kept where it ended) and its
    rows replaced; rewritten inside what was indexed, it is indexed again
    whole and reported; gone, its session is marked vanished (its rows
    kept). Redaction applies as in export (text and keys rules). A log
    whose fold fails is indexed whole, every line as logged, and named on
    stderr (its sessions row says where the fold's answers stop:
    answered_up_to). Exit 1 when a log was rewritten or vanished or its
    fold fails, 2 when one cannot be read (the others are indexed).

    Example: dshreplay index ~/.dsh/sessions --db index.duckdb
    """
    from dshreplay.sql._database import duckdb_module, index_options, update_index
    duckdb_module()
    read = options_of(jobs=jobs, quiet=quiet)
    options = index_options(read, messages=messages, rules=rules, defaults=not no_default_redaction,
                            parquet=parquet, db=db, evidence_key=evidence_key)
    report = update_index(list(paths), db, options, mapper_for(options.read))
    reporter_for(output).indexed(report)
    from dshreplay.redaction.redactor import Redactor, engine_off
    if isinstance(options.read.redactor, Redactor) and (off := engine_off(options.read.redactor)) is not None:
        warn(off)  # (once the index is written: what it was masked with)
    for log, detail in report.rewritten:
        warn(f"{log}: rewritten since it was indexed ({detail}): indexed again whole")
    for log in report.vanished:
        warn(f"{log}: vanished since it was indexed: marked vanished, its rows kept")
    for log, up_to in report.fold_failures:
        click.echo(f"dshreplay: {safe_text(log)}: the fold fails at seq {up_to + 1}: indexed whole, every line "
                   f"as logged; the fold's answers stop at seq {up_to} (sessions.answered_up_to; `validate` "
                   f"says why)", err=True)
    for log, note in report.notes:
        click.echo(f"dshreplay: note: {safe_text(log)}: {safe_text(note)}", err=True)
    for log, why in report.unreadable:
        click.echo(f"dshreplay: unreadable: {safe_text(log)}: {safe_text(why or '')}", err=True)
    if report.unreadable:
        sys.exit(EXIT_UNREADABLE)
    if report.rewritten or report.vanished or report.fold_failures:
        sys.exit(EXIT_FINDINGS)


@click.command(cls=DshCommand)
@click.argument("given", nargs=-1, metavar="[FILE] QUERY")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="The index database (as index and usage take it; or give FILE before QUERY).")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV with a header row.")
@output_options
def sql(given: tuple[str, ...], db: Path | None, as_csv: bool, output: Output) -> None:
    """Run an SQL query on an index database (`dshreplay index`) and print
    its rows: a table fitted to the terminal, --json (an array of objects),
    --jsonl (one object per line) or --csv. The database is opened read-only
    and the query can read no other file. Example queries: docs/reference/sql.md.

    Example: dshreplay sql --db index.duckdb "SELECT kind, count(*) FROM model_calls GROUP BY kind"
    """
    from dshreplay.console.reporters import CsvReporter
    from dshreplay.sql._database import run_query
    if db is None and len(given) == 2:
        db, query = Path(given[0]), given[1]
    elif db is not None and len(given) == 1:
        query = given[0]
    else:
        raise click.UsageError("give the database and one QUERY: sql --db FILE QUERY (or sql FILE QUERY)")
    columns, rows = run_query(db, query)
    (CsvReporter() if as_csv else reporter_for(output)).query(columns, rows)
