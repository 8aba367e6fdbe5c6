"""Command line: parse options, call the library, hand the result to a reporter.

No rule of the log format lives here.
"""

from __future__ import annotations

import os
import sys

import click

from . import __version__
from .api import fold_log
from .findings import ERROR, WARNING
from .validate import ValidateOptions, validate_log
from .errors import DshReplayError, ReadError, UsageError
from .reporters import JsonReporter, TextReporter

EXIT_CLEAN, EXIT_FINDINGS, EXIT_UNREADABLE = 0, 1, 2


def exit_code_for(error: DshReplayError) -> int:
    return EXIT_UNREADABLE if isinstance(error, (ReadError, UsageError)) else EXIT_FINDINGS


def say_error(error: DshReplayError) -> None:
    click.echo(f"dshreplay: {error.kind} error: {error}", err=True)


def warn(text: str) -> None:
    click.echo(f"dshreplay: warning: {text}", err=True)


class DshGroup(click.Group):
    """Turns every library error into one stderr line and an exit code."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except DshReplayError as error:
            say_error(error)
            ctx.exit(exit_code_for(error))
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            _silence_stdout()
            ctx.exit(EXIT_FINDINGS)
        except KeyboardInterrupt:
            click.echo("dshreplay: interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:  # never show a user a traceback
            if os.environ.get("DSHREPLAY_DEBUG"):
                raise
            click.echo(f"dshreplay: internal error: {type(exc).__name__}: {exc} "
                       "(please report it; DSHREPLAY_DEBUG=1 shows the traceback)", err=True)
            ctx.exit(EXIT_UNREADABLE)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def output_options(func):
    """The options every command shares for choosing its output."""
    return click.option("--json", "as_json", is_flag=True,
                        help="Print machine-readable JSON (shape documented in README).")(func)


def reporter_for(as_json: bool):
    return JsonReporter() if as_json else TextReporter()


@click.group(cls=DshGroup, context_settings={"help_option_names": ["-h", "--help"],
                                             "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="dshreplay")
def cli() -> None:
    """Read DeepSeek Harness session logs offline: what did the model see,
    where did it come from, and is the log intact?

    LOG is a session.jsonl file, a session.jsonl.zstd file, a session
    directory, or - for standard input. Exit codes: 0 clean, 1 findings
    (or a failed fold), 2 cannot read or bad usage.
    """


@cli.command()
@click.argument("log")
@click.option("--at", "at", type=int, metavar="S",
              help="Show the model's view right after event S (default: the last event).")
@output_options
def fold(log: str, at: int | None, as_json: bool) -> None:
    """Refold the surface: the messages the model sees, in order.

    The table lists each surface node (position, seq, role, how it entered,
    size in bytes, start of its text). --json prints
    {"seq", "nodes", "replacements", "messages"} exactly as dsh folds them.
    """
    report = fold_log(log, at=at)
    if report.torn_tail is not None:
        warn(f"{report.path}: line {report.torn_tail.line}: {report.torn_tail.describe()}")
    reporter_for(as_json).fold(report)
    if report.error is not None:
        say_error(report.error)
        sys.exit(EXIT_FINDINGS)


def _codes(ctx, param, value: str | None):
    if value is None:
        return None
    codes = frozenset(c.strip().upper() for c in value.split(",") if c.strip())
    if not codes:
        raise click.BadParameter("give one or more codes or prefixes, comma-separated")
    return codes


@cli.command()
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too, not only on errors.")
@click.option("--snapshot", is_flag=True,
              help="Accept whole-string placeholders such as \"{{cwd}}\" (dsh's test snapshots) as any "
                   "value; they are counted in one notice per file.")
@click.option("--select", callback=_codes, metavar="CODES",
              help="Report only these finding codes or prefixes, comma-separated (e.g. DSH-E1,DSH-W).")
@click.option("--ignore", callback=_codes, metavar="CODES",
              help="Never report these finding codes or prefixes, comma-separated.")
@output_options
def validate(logs: tuple[str, ...], strict: bool, snapshot: bool, select, ignore, as_json: bool) -> None:
    """Check that logs are intact and well-formed, in one streaming pass each.

    Checks every record against the JSON Schemas, the format rules (seqs,
    layouts, packed rows, known types, torn tails), dsh's surface fold, and
    the relations between events (turns, steps, tool calls, compaction
    brackets, metering). Each finding has a stable code (docs/findings.md),
    a severity, and its seq, line and JSON pointer. Exit 0 when no file has
    an error, 1 when one does (or a warning, with --strict), 2 when a file
    cannot be read at all.
    """
    options = ValidateOptions(snapshot=snapshot, select=select, ignore=ignore or frozenset())
    reports = [validate_log(log, options) for log in logs]
    reporter_for(as_json).validate(reports)
    if any(r.unreadable for r in reports):
        sys.exit(EXIT_UNREADABLE)
    failing = (ERROR, WARNING) if strict else (ERROR,)
    if any(f.severity in failing for r in reports for f in r.findings):
        sys.exit(EXIT_FINDINGS)


def main(args=None, prog_name: str = "dshreplay") -> None:
    cli.main(args=args, prog_name=prog_name)
