"""Command line: parse options, call the library, hand the result to a reporter.

No rule of the log format lives here. The commands live in the modules of
this package, a family each (`COMMANDS` says where), and a command's module is
imported only when that command runs or the help lists it: a script that runs
`dshreplay fold` over 10,000 small logs pays for the fold's command alone, not
for the decorators of twenty others (bench/startup.py measures it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

import click

from dshreplay import __version__
from dshreplay.cli._flags import DshCommand, Output, global_params, run_of
from dshreplay.console.reporters import JsonReporter, envelope_of, json_text
from dshreplay.console.reporters import reporter_for as named_reporter
from dshreplay.errors import (
    DshReplayError,
    Interrupted,
    LineError,
    NoViewError,
    OutputError,
    ReadError,
    UsageError,
    answered_for,
)

if TYPE_CHECKING:
    from dshreplay.console._interface import Reporter
    from dshreplay.core._mapper import Mapper
    from dshreplay.core.progress import Meter
    from dshreplay.io.reader import TornTail
    from dshreplay.options import Options
    from dshreplay.session import Session

__all__ = ["COMMANDS", "cli", "main"]

# command name -> "module:attribute" of its click command, imported when first asked for
COMMANDS = {
    "fold": "dshreplay.cli._view:fold",
    "shadows": "dshreplay.cli._view:shadows",
    "brackets": "dshreplay.cli._view:brackets",
    "provenance": "dshreplay.cli._view:provenance",
    "diff": "dshreplay.cli._view:diff",
    "view": "dshreplay.cli._viewer:view",
    "request": "dshreplay.cli._history:request",
    "transcript": "dshreplay.cli._history:transcript",
    "events": "dshreplay.cli._history:events",
    "spills": "dshreplay.cli._history:spills",
    "inspect": "dshreplay.cli._history:inspect_command",
    "validate": "dshreplay.cli._checks:validate",
    "verify-export": "dshreplay.cli._checks:verify_export_command",
    "export": "dshreplay.cli._export:export",
    "stats": "dshreplay.cli._aggregate:stats",
    "lineage": "dshreplay.cli._aggregate:lineage",
    "usage": "dshreplay.cli._aggregate:usage",
    "index": "dshreplay.cli._database:index",
    "sql": "dshreplay.cli._database:sql",
    "fleet": "dshreplay.cli._fleet:fleet",
    "timeline": "dshreplay.cli._traces:timeline",
    "otel": "dshreplay.cli._traces:otel",
}


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's commands by name, each imported from where `COMMANDS` says on first
    access: click asks the mapping for the one command it runs (`get`); listing the
    names imports nothing, the help (`items`) imports every one."""

    def __init__(self, where: dict[str, str]) -> None:
        self._commands: dict[str, click.Command | str] = dict(where)

    def __getitem__(self, name: str) -> click.Command:
        command = self._commands[name]
        if isinstance(command, str):
            module, _, attribute = command.partition(":")
            __import__(module)  # (the import statement's machinery: `python -X importtime` reports it)
            command = self._commands[name] = getattr(sys.modules[module], attribute)
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._commands[name] = command

    def __delitem__(self, name: str) -> None:
        del self._commands[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._commands)

    def __len__(self) -> int:
        return len(self._commands)


EXIT_CLEAN, EXIT_FINDINGS, EXIT_UNREADABLE, EXIT_BUG = 0, 1, 2, 70


def exit_code_for(error: DshReplayError) -> int:
    """2 for a log that cannot be read to its end (in every command: validate's
    `FileReport.stopped` is the same case), a question that does not fit it, or an output
    that cannot be written; 1 for a defect of the log (a fold that fails, a line that is
    not JSON inside a log read to its end)."""
    unreadable = isinstance(error, (ReadError, UsageError, OutputError)) and not isinstance(error, LineError)
    return EXIT_UNREADABLE if unreadable else EXIT_FINDINGS


def say_error(error: DshReplayError) -> None:
    if isinstance(error, NoViewError):  # (its message says what could not be answered, and why)
        click.echo(f"dshreplay: {safe_text(str(error))}", err=True)
        return
    click.echo(f"dshreplay: {error.kind} error: {safe_text(str(error))}", err=True)


def say_answered_for(path: str, failure: Any) -> None:
    """The one stderr line of an answer cut short where the fold fails (`failure`: the
    error, or its JSON as a bundle's manifest keeps it)."""
    click.echo(f"dshreplay: {safe_text(path)}: {safe_text(answered_for(failure))}", err=True)


def warn(text: str) -> None:
    click.echo(f"dshreplay: warning: {safe_text(text)}", err=True)


def warn_torn_tail(path: str, tail: TornTail | None, after: str = "") -> None:
    """One warning line for a torn tail (a half-written last line, left out of every answer)."""
    if tail is not None:
        warn(f"{path}: line {tail.line}: {tail.describe()}{after}")


def options_of(quiet: bool = False, **changes: Any) -> Options:
    """The run's options (from the global flags), with this command's own settings,
    and a progress bar on a terminal unless the output is JSON or `quiet` (-q)."""
    return run_of().options.with_(progress=None if quiet else _progress_meter(), **changes)


def _progress_meter() -> Meter | None:
    """The command's one progress meter (None: stderr is no terminal, or the output is JSON)."""
    run = run_of()
    if not run.metered:
        if sys.stderr.isatty() and not run.output.machine:
            from dshreplay.cli._meter import TerminalMeter
            run.meter = TerminalMeter()
        run.metered = True
    return run.meter


def open_log(log: str) -> Session:
    """The command's log as a Session; when the command ends, a torn tail
    that any of its passes read up to is reported on stderr."""
    from dshreplay.session import Session
    session = Session(log, options_of())
    click.get_current_context().call_on_close(lambda: warn_torn_tail(session.path, session.torn_tail))
    return session


def safe_text(text: str) -> str:
    """Log text on one terminal line: no escapes, no control characters, no line breaks."""
    from dshreplay.analyses._render import clean
    return clean(text).replace("\n", "\\n").replace("\t", " ")


def _stdin_hint(error: click.UsageError, where: str) -> str:
    """For a missing LOG while a log is piped in: how to have it read (`-`)."""
    param = getattr(error, "param", None)
    piped = not sys.stdin.isatty() if sys.stdin is not None else False
    if isinstance(error, click.MissingParameter) and param is not None and param.name == "log" and piped:
        return f" A log on standard input is read when LOG is -: {where} - < LOG."
    return ""


class DshGroup(click.Group):
    """Turns every library error, and every usage error click finds, into one stderr line and an exit code.

    Its subcommands (and subgroups) take the global options too (`options.DshCommand`)."""

    command_class = DshCommand
    group_class = type

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.extend(global_params())

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as help_:  # (bare `dshreplay`: the help, as click gives it)
            help_.show()
            sys.exit(help_.exit_code)
        except click.UsageError as error:  # one line, as every other error: what is wrong, and where help is
            where = error.ctx.command_path if error.ctx is not None else (prog_name or "dshreplay")
            click.echo(f"dshreplay: usage error: {safe_text(error.format_message())}{_stdin_hint(error, where)} "
                       f"(see '{where} --help')", err=True)
            sys.exit(error.exit_code)
        except click.ClickException as error:
            error.show()
            sys.exit(error.exit_code)
        except click.exceptions.Abort:
            click.echo("dshreplay: interrupted", err=True)
            sys.exit(128 + 2)
        sys.exit(code if type(code) is int else EXIT_CLEAN)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            result = super().invoke(ctx)
            code = run_of(ctx).exit
            if code:
                ctx.exit(code)
            return result
        except DshReplayError as error:
            if run_of(ctx).output.machine:  # one JSON error object
                click.echo(json_text({"error": error.to_json(), "answeredUpTo": None, "answer": None},
                                     sys.stdout.isatty()))
            say_error(error)
            ctx.exit(exit_code_for(error))
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except BrokenPipeError:  # the reader closed early (as `head` does): not our failure
            _silence_stdout()
            ctx.exit(EXIT_CLEAN)
        except KeyboardInterrupt as stop:  # Ctrl-C; or SIGTERM or SIGHUP while an export writes (Interrupted)
            signum = stop.signum if isinstance(stop, Interrupted) else 2
            click.echo("dshreplay: interrupted", err=True)
            ctx.exit(128 + signum)
        except OSError as error:  # the file system said no (read-only, not a folder, no space): not a bug
            from dshreplay.io.reader import shown_path
            where = f"{shown_path(error.filename)}: " if error.filename else ""
            click.echo(f"dshreplay: error: {safe_text(where)}{safe_text(error.strerror or str(error))}", err=True)
            ctx.exit(EXIT_UNREADABLE)
        except Exception as exc:  # noqa: BLE001 - the one boundary for bugs of ours: exit 70, never a verdict
            if run_of(ctx).debug or os.environ.get("DSHREPLAY_DEBUG"):
                import traceback
                traceback.print_exc()
            click.echo(f"dshreplay: internal error: {type(exc).__name__}: {safe_text(str(exc))[:300]} "
                       "(please report it; --debug or DSHREPLAY_DEBUG=1 shows the traceback)", err=True)
            ctx.exit(EXIT_BUG)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def answered_prefix(session: Session, reporter: Reporter) -> None:
    """When the session's last answer stops where the fold fails (`session.partial`),
    make the answer say so (JSON: {"error", "answeredUpTo", "answer"}; text: a last line),
    say it on one stderr line and end with exit 1 (at close)."""
    failure = session.partial
    if failure is None:
        return
    ctx = click.get_current_context()
    if isinstance(reporter, JsonReporter):
        reporter.envelope = envelope_of(failure)
    else:
        note = safe_text(answered_for(failure))
        ctx.call_on_close(lambda: click.echo(f"({note})"))
    say_answered_for(session.path, failure)
    run_of(ctx).exit = EXIT_FINDINGS


def mapper_for(options: Options, logs: Iterable[str | os.PathLike[str]] = ()) -> Mapper:
    """How a many-logs command runs its per-log function over `logs` (its LOG arguments): a
    fleet's Dask mapper when `dshreplay fleet` set one, else a local process pool. Standard
    input (`-`) can be read only by this process (a worker's is empty): with `-` among the
    logs they are read here one after another, and a fleet refuses it."""
    stdin = any(os.fspath(log) == "-" for log in logs)
    fleet = run_of().mapper
    if fleet is not None:
        if stdin:
            from dshreplay.io._store import log_files
            log_files(logs, "fleet", "a worker cannot read this process's input")
        return fleet
    from dshreplay.core._parallel import run_map
    here = options.with_(jobs=1) if stdin else options
    return lambda fn, items: run_map(fn, items, here)


def reporter_for(output: Output) -> Reporter:
    """The reporter the output options ask for: JSON, JSON lines, or tables (--wide: cells whole)."""
    return named_reporter(output.format, wide=output.wide)


@click.group(name="dshreplay", cls=DshGroup, commands=LazyCommands(COMMANDS),
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="dshreplay")
def cli() -> None:
    """Read DeepSeek Harness session logs offline: what did the model see,
    where did it come from, and is the log intact?

    LOG is a session.jsonl file, a session.jsonl.zstd file, a session
    directory, or - for standard input; or a session in a dsh SQLite store
    (STORE.sqlite#SESSION_ID; STORE.sqlite alone is its only session, or
    every session for a command that takes many logs) or in a dsh web export
    ZIP (export.zip is its root session, export.zip#subagents/ID a subagent;
    for many logs, all of them). The global options (--max-bytes,
    --max-line, --debug) go before the command or after it (given in both
    places, the one after the command wins). Exit codes: 0 clean, 1 findings
    (a log read to its end has errors, or a fold that fails, a corrupt zstd
    frame included: the answer stops there), 2 cannot read (no header,
    unsupported format version, a size ceiling, a missing file: in every
    command), bad
    usage or an output that cannot be written, 70 an internal error (a bug
    of dshreplay: please report it).
    """


def main(args: list[str] | None = None, prog_name: str = "dshreplay") -> None:
    cli.main(args=args, prog_name=prog_name)
