"""The commands over many sessions: stats, lineage, usage.

Each module of `dshreplay.cli` holds a family of commands and is imported only
when one of them runs (or the help lists them): see `cli.COMMANDS`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from dshreplay.cli import (
    EXIT_FINDINGS,
    EXIT_UNREADABLE,
    mapper_for,
    options_of,
    reporter_for,
    safe_text,
    say_answered_for,
    say_error,
    warn_torn_tail,
)
from dshreplay.cli._flags import (
    DshCommand,
    Output,
    jobs_options,
    output_options,
)
from dshreplay.cli._params import TIME
from dshreplay.errors import UsageError


@click.command(cls=DshCommand)
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@jobs_options
@output_options
def stats(logs: tuple[str, ...], jobs: int | None, quiet: bool, output: Output) -> None:
    """Figures per session: turns, steps, calls, retries, tools, approvals,
    compactions, tokens, how much the model has forgotten, and times.

    With several logs, a total row adds them up. --jsonl prints one row per
    session ({"kind": "session", ...}), then the total ({"kind": "total", ...}).

    Example: dshreplay stats sample_logs/*.jsonl
    """
    from dshreplay.analyses.stats import stats_for, totals
    from dshreplay.io._store import discover
    options = options_of(jobs=jobs, quiet=quiet)
    found = discover(logs)
    results = mapper_for(options, found)(stats_for, [(log, options) for log in found])
    reporter_for(output).stats(results, totals(results) if len(results) > 1 else None)
    for result in results:
        warn_torn_tail(result.path, result.torn_tail)
        if result.unreadable:
            say_error(result.error)
        elif result.error is not None:
            say_answered_for(result.path, result.error)
    if any(r.unreadable for r in results):
        sys.exit(EXIT_UNREADABLE)
    if any(r.error is not None for r in results):
        sys.exit(EXIT_FINDINGS)


@click.command(cls=DshCommand)
@click.argument("inputs", nargs=-1, required=True, metavar="ROOT_OR_FILES...")
@jobs_options
@output_options
def lineage(inputs: tuple[str, ...], jobs: int | None, quiet: bool, output: Output) -> None:
    """The tree of parent and child sessions, with each fork's seed verified.

    Finds logs in store roots, session folders or files. For each child that
    repeats its parent's history (seedLength), checks that its first events
    equal the parent's; flags missing parents, reused ids, a seedLength that
    is no non-negative safe integer, cycles and logs that cannot be read.
    Exit 2 when a log cannot be read (the others are still drawn), else 1
    when there is any problem. --jsonl prints one row per root ({"kind":
    "session", ...}, its children nested) and one per problem of no single
    session ({"kind": "problem", "problem": TEXT}).

    Example: dshreplay lineage ~/.dsh/sessions
    """
    from dshreplay.analyses.lineage import lineage as build
    options = options_of(jobs=jobs, quiet=quiet)
    roots, unreadable = build(inputs, options, mapper_for(options, inputs))
    reporter_for(output).lineage(roots, unreadable)
    for problem in unreadable:  # (the problems of no single session are the logs that cannot be read)
        click.echo(f"dshreplay: unreadable: {safe_text(problem)}", err=True)
    if unreadable:
        sys.exit(EXIT_UNREADABLE)
    if any(node.problems for root in roots for _, node in root.walk()):
        sys.exit(EXIT_FINDINGS)


@click.command(cls=DshCommand)
@click.argument("paths", nargs=-1, metavar="[PATH...]")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Read an index database (`dshreplay index`) instead of logs.")
@click.option("--by", type=click.Choice(["day", "week", "month", "session", "model"]), default="day",
              show_default=True, help="Group by UTC day, ISO week, month, session or provider/model.")
@click.option("--prices", type=click.Path(dir_okay=False), metavar="FILE",
              help="Per-model prices per million tokens, TOML or JSON (docs/prices.example.toml): adds costs.")
@click.option("--since", type=TIME, metavar="ISO", help="Only calls at or after this time (UTC unless "
              "it says otherwise).")
@click.option("--until", type=TIME, metavar="ISO", help="Only calls at or before this time.")
@jobs_options
@output_options
def usage(paths: tuple[str, ...], db: Path | None, by: str, prices: str | None, since: int | None, until: int | None,
          jobs: int | None, quiet: bool, output: Output) -> None:
    """Tokens (input, output, cache read and write), model calls, failed calls
    by error code, retries, compactions and, with --prices, cost: by day,
    week, month, session or model, over logs (PATHs: files, session
    folders, store roots) or an index database (--db). Every model call is
    counted, the auxiliary ones too (compaction summaries, session titles,
    web searches), where `stats` counts the main loop's calls and gives the
    auxiliary ones apart (auxiliaryCalls). A fork's seed is counted once, in its parent; a
    session given twice (a log and its zstd twin) is counted once, from the
    first log, and the other is named on stderr. A log whose fold fails is
    counted whole, as logged, and named on stderr with how many of its calls
    lie past the failure (exit 1). Exit 2 when a log cannot be read (the
    others are counted).

    Example: dshreplay usage ~/.dsh/sessions --by model --prices prices.toml
    """
    from dshreplay.io._store import discover
    from dshreplay.sql._usage import load_prices, rows_from_db, rows_from_logs, usage_report
    if bool(paths) == (db is not None):
        raise UsageError("give logs (PATH...) or an index (--db FILE), not both")
    price_list = load_prices(prices) if prices is not None else None
    unreadable: Sequence[tuple[str, str | None]] = ()
    if db is not None:
        calls, compactions, answered = rows_from_db(db)
    else:
        options = options_of(jobs=jobs, quiet=quiet)
        found = discover(paths)
        calls, compactions, answered, unreadable = rows_from_logs(found, options, mapper_for(options, found))
    report = usage_report(calls, compactions, by, since=since, until=until, prices=price_list, answered=answered)
    reporter_for(output).usage(report)
    for failure in report.fold_failures:
        click.echo(f"dshreplay: {safe_text(failure.log)}: {failure.describe()}", err=True)
    for duplicate in report.duplicates:
        click.echo(f"dshreplay: {safe_text(duplicate.log)}: {safe_text(duplicate.describe())}", err=True)
    for log, why in unreadable:
        click.echo(f"dshreplay: unreadable: {safe_text(log)}: {safe_text(why or '')}", err=True)
    if unreadable:
        sys.exit(EXIT_UNREADABLE)
    if report.fold_failures:
        sys.exit(EXIT_FINDINGS)
