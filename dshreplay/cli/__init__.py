"""Command line: parse options, call the library, hand the result to a reporter.

No rule of the log format lives here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from dshreplay import __version__
from dshreplay.cli.options import (
    DshCommand,
    Mapper,
    Output,
    at_option,
    global_params,
    jobs_options,
    log_argument,
    output_options,
    run_of,
    snapshot_option,
)
from dshreplay.cli.params import CODES, LINE_RANGE, SEQ, TIME
from dshreplay.core.progress import Meter
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
from dshreplay.io.reader import TornTail, shown_path
from dshreplay.options import Options
from dshreplay.output.reporters import (
    JsonLinesReporter,
    JsonReporter,
    Reporter,
    TextReporter,
    envelope_of,
    json_text,
    unified_text_diff,
)
from dshreplay.session import Session

__all__ = ["cli", "main"]

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
        click.echo(f"dshreplay: {_safe(str(error))}", err=True)
        return
    click.echo(f"dshreplay: {error.kind} error: {_safe(str(error))}", err=True)


def say_answered_for(path: str, failure: Any) -> None:
    """The one stderr line of an answer cut short where the fold fails (`failure`: the
    error, or its JSON as a bundle's manifest keeps it)."""
    click.echo(f"dshreplay: {_safe(path)}: {_safe(answered_for(failure))}", err=True)


def warn(text: str) -> None:
    click.echo(f"dshreplay: warning: {_safe(text)}", err=True)


def warn_torn_tail(path: str, tail: TornTail | None, after: str = "") -> None:
    """One warning line for a torn tail (a half-written last line, left out of every answer)."""
    if tail is not None:
        warn(f"{path}: line {tail.line}: {tail.describe()}{after}")


def options_of(quiet: bool = False, **changes: Any) -> Options:
    """The run's options (from the global flags), with this command's own settings,
    and a progress bar on a terminal unless the output is JSON or `quiet` (-q)."""
    return run_of().options.with_(progress=None if quiet else _meter(), **changes)


def _meter() -> Meter | None:
    """The command's one progress meter (None: stderr is no terminal, or the output is JSON)."""
    run = run_of()
    if not run.metered:
        if sys.stderr.isatty() and not run.output.machine:
            from dshreplay.cli.progress import TerminalMeter
            run.meter = TerminalMeter()
        run.metered = True
    return run.meter


def open_log(log: str) -> Session:
    """The command's log as a Session; when the command ends, a torn tail
    that any of its passes read up to is reported on stderr."""
    session = Session(log, options_of())
    click.get_current_context().call_on_close(lambda: warn_torn_tail(session.path, session.torn_tail))
    return session


def _safe(text: str) -> str:
    """Log text on one terminal line: no escapes, no control characters, no line breaks."""
    from dshreplay.analyses.render import clean
    return clean(text).replace("\n", "\\n").replace("\t", " ")


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
            click.echo(f"dshreplay: usage error: {_safe(error.format_message())} (see '{where} --help')", err=True)
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
                click.echo(json_text({"error": error.to_json(), "answeredUpTo": None, "answer": None}))
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
            where = f"{shown_path(error.filename)}: " if error.filename else ""
            click.echo(f"dshreplay: error: {_safe(where)}{_safe(error.strerror or str(error))}", err=True)
            ctx.exit(EXIT_UNREADABLE)
        except Exception as exc:  # noqa: BLE001 - the one boundary for bugs of ours: exit 70, never a verdict
            if run_of(ctx).debug or os.environ.get("DSHREPLAY_DEBUG"):
                import traceback
                traceback.print_exc()
            click.echo(f"dshreplay: internal error: {type(exc).__name__}: {_safe(str(exc))[:300]} "
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
        note = _safe(answered_for(failure))
        ctx.call_on_close(lambda: click.echo(f"({note})"))
    say_answered_for(session.path, failure)
    run_of(ctx).exit = EXIT_FINDINGS


def mapper_for(options: Options) -> Mapper:
    """How a many-logs command runs its per-log function: a fleet's Dask
    mapper when `dshreplay fleet` set one, else a local process pool."""
    fleet = run_of().mapper
    if fleet is not None:
        return fleet
    from dshreplay.core.parallel import run_map
    return lambda fn, items: run_map(fn, items, options)


def reporter_for(output: Output) -> Reporter:
    """The reporter the output options ask for: JSON, JSON lines, or tables (--wide: cells whole)."""
    if output.format == "jsonl":
        return JsonLinesReporter()
    return JsonReporter() if output.format == "json" else TextReporter(wide=output.wide)


@click.group(name="dshreplay", cls=DshGroup, context_settings={"help_option_names": ["-h", "--help"],
                                             "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="dshreplay")
def cli() -> None:
    """Read DeepSeek Harness session logs offline: what did the model see,
    where did it come from, and is the log intact?

    LOG is a session.jsonl file, a session.jsonl.zstd file, a session
    directory, or - for standard input. The global options (--max-bytes,
    --max-line, --debug) go before the command or after it (given in both
    places, the one after the command wins). Exit codes: 0 clean, 1 findings
    (a log read to its end has errors, or a fold that fails: the answer
    stops there), 2 cannot read (no header, corrupt zstd, unsupported
    format version, a size ceiling, a missing file: in every command), bad
    usage or an output that cannot be written, 70 an internal error (a bug
    of dshreplay: please report it).
    """


@cli.command()
@log_argument
@at_option
@output_options
def fold(log: str, at: int | None, output: Output) -> None:
    """Refold the surface: the messages the model sees, in order.

    The table lists each surface node: the number of its message (from 1;
    - for a node that yields none), seq, role, how it entered, size in bytes,
    start of its text. --json prints {"seq", "nodes", "replacements",
    "messages"}: the messages exactly as dsh folds them, and each node as
    {"seq", "message"}, the number of its message in "messages" (or null).
    """
    report = open_log(log).fold(at)
    reporter_for(output).fold(report)
    if report.error is not None:
        say_error(report.error)
        sys.exit(exit_code_for(report.error))


@cli.command()
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too, not only on errors.")
@snapshot_option
@click.option("--select", type=CODES, metavar="CODES",
              help="Report only these finding codes or prefixes, comma-separated (e.g. DSH-E1,DSH-W).")
@click.option("--ignore", type=CODES, metavar="CODES",
              help="Never report these finding codes or prefixes, comma-separated.")
@click.option("--all-findings", is_flag=True,
              help="List every finding (by default 1,000 per code are listed and the rest counted); a "
                   "record lists 20 schema errors at most either way, then one finding says it has more.")
@jobs_options
@output_options
def validate(logs: tuple[str, ...], strict: bool, snapshot: bool, select: frozenset[str] | None,
             ignore: frozenset[str] | None, all_findings: bool, jobs: int | None, quiet: bool, output: Output) -> None:
    """Check that logs are intact and well-formed, in one streaming pass each.

    Checks every record against the JSON Schemas, the format rules (seqs,
    layouts, packed rows, known types, torn tails), dsh's surface fold, and
    the relations between events (turns, steps, tool calls, compaction
    brackets, metering). Each finding has a stable code (docs/findings.md),
    a severity, and its seq, line and JSON pointer. Exit 0 when no file has
    an error, 1 when one does (or a warning, with --strict), 2 when a file
    cannot be read to its end, as in every command (no header, corrupt zstd,
    a size ceiling: the findings of what was read are still listed). A line
    that is not JSON is a finding (DSH-E001): the lines after it are read.
    When schema errors are snapshot placeholders, one line on stderr
    suggests --snapshot.
    """
    options = options_of(snapshot=snapshot, select=select, ignore=ignore or frozenset(), jobs=jobs,
                         quiet=quiet, all_findings=all_findings)
    from dshreplay.io.store import discover
    reports = mapper_for(options)(_validate_one, [(log, options) for log in discover(logs)])
    reporter_for(output).validate(reports)
    for report in reports:
        if report.unreadable is not None or report.stopped is not None:  # (the rest of a log was not read)
            say_error(report.unreadable or report.stopped)
    placeholders = sum(r.placeholder_errors for r in reports)
    if placeholders and not snapshot:  # (one hint for the run, however many findings they caused)
        click.echo(f"dshreplay: hint: {placeholders} schema errors are values such as \"{{{{tools}}}}\", the "
                   "placeholders of dsh's test snapshots: validate them with --snapshot", err=True)
    if any(r.unreadable or r.stopped for r in reports):
        sys.exit(EXIT_UNREADABLE)
    from dshreplay.analyses.findings import ERROR, WARNING
    failing = (ERROR, WARNING) if strict else (ERROR,)
    if any(r.count(severity) for r in reports for severity in failing):
        sys.exit(EXIT_FINDINGS)


def _validate_one(item: tuple[str, Options]) -> Any:
    log, options = item
    from dshreplay.analyses.validate import validate_log
    return validate_log(log, options)


@cli.command()
@log_argument
@at_option
@output_options
def shadows(log: str, at: int | None, output: Output) -> None:
    """List every replacement: what it shadowed, its kind and what priced it.

    Kind is summary (a compaction/summary meters it), prune (compaction/prune),
    tool-result-rewrite, or other. The chain column names shadowed nodes that
    were themselves replacements (a summary of a summary).
    """
    session, reporter = open_log(log), reporter_for(output)
    shadows = session.shadows(at)
    answered_prefix(session, reporter)
    reporter.shadows(shadows)


@cli.command()
@log_argument
@output_options
def brackets(log: str, output: Output) -> None:
    """One row per compaction: start, end, status, summary and replacement.

    Status is closed, failed (with its error), open (no end: in progress or
    crashed) or abandoned (left open before a session/end-seed). Exit 1 when
    a bracket is open or has an anomaly (end without start, started twice,
    replacement outside its bracket), so scripts can alert.
    """
    session, reporter = open_log(log), reporter_for(output)
    records = session.brackets()
    answered_prefix(session, reporter)
    reporter.brackets(records)
    if any(b.status == "open" or b.anomalies for b in records):
        sys.exit(EXIT_FINDINGS)


@cli.command()
@log_argument
@at_option
@click.option("--message", "message", type=int, metavar="N", help="Only the N-th model message (from 1).")
@click.option("--seq", "seq", type=SEQ, metavar="Q", help="Only the message of surface node Q (a shadowed "
              "node: what replaced it).")
@output_options
def provenance(log: str, at: int | None, message: int | None, seq: int | None, output: Output) -> None:
    """Where each model-visible message came from.

    For each message: its seq, type, how it entered the surface, the seqs it
    cites directly, and its origins: everything it stands for, followed
    through replacements down to the original messages and the chunks and
    tool calls they cite. --seq Q of a message a replacement took off the
    view gives its row, with no message number, and names the replacement
    (its seq, kind and compaction id) and the node that stands for it now
    (in JSON: "replacedBy": {"seq", "kind", "compactionId", "visibleAs"},
    null for a message in the view).
    """
    if message is not None and seq is not None:
        raise click.UsageError("give --message or --seq, not both")
    rows = open_log(log).provenance(at, message=message, seq=seq)
    reporter_for(output).provenance(rows)
    for row in rows if not output.machine else ():
        if row.replaced is not None:  # (a node taken off the view: --seq of a shadowed message)
            click.echo(_safe(row.replaced.describe(row.seq)))


@cli.command()
@log_argument
@click.option("--from", "a", type=SEQ, required=True, metavar="A", help="The earlier (or first) seq.")
@click.option("--to", "b", type=SEQ, required=True, metavar="B", help="The later (or second) seq.")
@click.option("--text", "as_text", is_flag=True, help="Print a unified diff of the rendered messages.")
@output_options
def diff(log: str, a: int, b: int, as_text: bool, output: Output) -> None:
    """Compare the model's view at seq A with its view at seq B.

    Nodes kept, removed (with the replacement that shadowed each) and
    added. --text prints a unified diff of the rendered messages instead
    (with --json, as a "text" field).
    """
    from dshreplay.analyses.provenance import diff_states
    states = open_log(log).states([a, b])
    result = diff_states(states[a], states[b])
    text = unified_text_diff(states[a].node_messages(), states[b].node_messages(), a, b) if as_text else None
    reporter_for(output).diff(result, text)


@cli.command()
@click.argument("log", required=False)
@click.option("--list", "listing", is_flag=True, help="List every model call.")
@click.option("--all", "include_all", is_flag=True,
              help="With --list: also the auxiliary model calls (summaries, titles, web search).")
@click.option("--call", "call", type=int, metavar="N", help="The full request of main-loop call N.")
@at_option
@click.option("--bundle", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="With --call N or --list and no LOG: read the calls from an export bundle (its folder, "
                   "when it holds one session, or a session folder of it).")
@output_options
def request(log: str | None, listing: bool, include_all: bool, call: int | None, at: int | None,
            bundle: Path | None, output: Output) -> None:
    """Reconstruct the exact requests sent to the model.

    --list enumerates the model calls (one chunk stream each, retries
    included) with their chunk range, model, outcome (the finish reason's
    kind and error code, "cancelled" when an abort cut the stream short, or
    "(open)" when the log holds no end of it), usage and message count.
    --call N prints the request of call N: its outcome, the header in force
    and the messages the model was given (numbered from 1). --at S prints
    the request built right after seq S, with the turn and step in force
    there. --bundle DIR --call N rebuilds it from an export bundle (DIR: the
    bundle, when it holds one session, or one of its session folders):
    with --json, byte for byte what `request LOG --call N --json` prints
    for the (redacted) log; --bundle DIR --list lists its calls as `--list`
    does (in JSON without the finish reason's object; a call after the
    point where the fold fails has no message count).
    """
    if sum(x is not None and x is not False for x in (listing or None, call, at)) != 1:
        raise click.UsageError("give exactly one of --list, --call N, --at S")
    if include_all and not listing:
        raise click.UsageError("--all goes with --list")
    if (log is None) == (bundle is None):
        raise click.UsageError("give a LOG, or --bundle DIR (with --call N or --list)")
    if bundle is not None:
        if at is not None or include_all:
            raise click.UsageError("--bundle goes with --call N or --list")
        _bundle_request(session_folder_of(bundle), listing, call, reporter_for(output))
        return
    assert log is not None  # (checked above: a LOG or --bundle)
    session, reporter = open_log(log), reporter_for(output)
    if listing:
        calls, _ = session.call_list(include_auxiliary=include_all)
        answered_prefix(session, reporter)
        reporter.calls(calls)
    else:
        reporter.request(session.request(call, at=at))


def session_folder_of(bundle: Path) -> Path:
    from dshreplay.output.bundlecalls import session_folder
    return session_folder(bundle)


def _bundle_request(folder: Path, listing: bool, call: int | None, reporter: Reporter) -> None:
    """The calls of a bundle's session folder (`listing`), or the request of one, as the log's are shown."""
    from dshreplay.output.bundlecalls import bundle_request, listed_calls
    if listing:
        reporter.calls(listed_calls(folder))  # type: ignore[arg-type]  # (a ListedCall has every field a reporter reads of a Call)
    else:
        assert call is not None  # (checked by the command: exactly one of --list, --call)
        reporter.request(bundle_request(folder, call))


@cli.command()
@log_argument
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text",
              show_default=True, help="Output format.")
@click.option("--reasoning", is_flag=True, help="Include the model's reasoning blocks (in every format; left "
              "out otherwise).")
@output_options
def transcript(log: str, fmt: str, reasoning: bool, output: Output) -> None:
    """The conversation as it happened (not the model's compacted view).

    Messages that entered by appending, in log order, with a marker where a
    replacement changed what the model sees from then on.
    """
    session = open_log(log)
    entries = session.transcript(reasoning)
    if fmt == "json" and not output.machine:  # (--format json is --json)
        output = run_of().output = replace(output, format="json")
    reporter = reporter_for(output)
    answered_prefix(session, reporter)
    reporter.transcript(entries, markdown=fmt == "markdown")


@cli.command()
@log_argument
@click.option("--type", "types", multiple=True, metavar="T",
              help="Only events of type T (repeatable; a prefix ending in / matches a family).")
@click.option("--from", "start", type=SEQ, metavar="A", help="Only events from seq A on (with --to, in either "
              "order).")
@click.option("--to", "end", type=SEQ, metavar="B", help="Only events up to seq B.")
@click.option("--turn", type=int, metavar="N", help="Only events inside turn N.")
@click.option("--surface", type=click.Choice(["current", "shadowed", "log-only"]),
              help="Only events with this surface status.")
@click.option("--grep", multiple=True, metavar="TEXT", help="Only events whose record holds TEXT anywhere (any "
              "case); repeated, only events that hold every one of them.")
@click.option("--since", type=TIME, metavar="ISO", help="Only events at or after this time (UTC unless "
              "the time says otherwise); events without a time are left out.")
@click.option("--until", type=TIME, metavar="ISO", help="Only events at or before this time.")
@click.option("--lines", "line_range", type=LINE_RANGE, metavar="A-B",
              help="Instead: physical lines A to B (line 1 is the header) as stored, readable or not, each "
                   "with its number (characters a terminal would act on escaped).")
@at_option
@output_options
def events(log: str, types: tuple[str, ...], start: int | None, end: int | None, turn: int | None,
           surface: str | None, grep: tuple[str, ...], since: int | None, until: int | None,
           line_range: tuple[int, int] | None, at: int | None, output: Output) -> None:
    """Find events; each is current (on the model's surface), shadowed, or log-only.

    Each row gives the event's time, type, turn and step, surface status and
    what it says on one line (a message's text, a tool call's arguments, an
    approval or hook decision, a compaction's range, a finish or error code).
    The surface status is taken at the end of the log, or at --at S (then
    only events up to S are listed). When the fold fails, the events before
    the failure are listed, classified at the last of them (exit 1).
    """
    session = open_log(log)
    if line_range is not None:
        if types or grep or any(v is not None for v in (start, end, turn, surface, since, until, at)):
            raise click.UsageError("--lines goes alone: it shows lines as stored, not events")
        reporter_for(output).lines(session.lines(*line_range))
        return
    from dshreplay.analyses.query import EventFilter
    from dshreplay.errors import FilterError
    try:  # (the filter checks itself: a type without its family, an unknown family, ...; ranges in either order)
        flt = EventFilter(frozenset(types), start, end, turn, surface, tuple(grep) or None, since, until)
    except FilterError as exc:
        raise click.UsageError(exc.message) from None
    reporter = reporter_for(output)
    told: list[None] = []  # (the answer says how far it reaches before its first row)

    def each(row: Any) -> None:
        if not told:
            answered_prefix(session, reporter)
            told.append(None)
        sink(row)
    with reporter.event_rows() as sink:
        session.query(flt, at, sink=each)
        if not told:
            answered_prefix(session, reporter)


@cli.command()
@log_argument
@click.option("--spill-root", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Where the stored results are, when not at the paths the log names.")
@output_options
def spills(log: str, spill_root: Path | None, output: Output) -> None:
    """Tool results dsh moved out of the model's view, and where it stored them.

    For each: the seq of the result, the call id and tool, the bytes left out
    of the model's view, the stored file's path, and (when that path or
    --spill-root holds it) whether the file is there and its size. A fork
    child marks the spills it inherited from its seed.
    """
    session, reporter = open_log(log), reporter_for(output)
    spills = session.spills(spill_root)
    answered_prefix(session, reporter)
    reporter.spills(spills)


@cli.command("inspect")
@log_argument
@output_options
def inspect_command(log: str, output: Output) -> None:
    """The health summary an incident starts with.

    Header facts, counts by type, turns, steps and calls, a torn tail, and
    whether the last turn was interrupted: if so, the closers dsh would
    append on load (TOOL_OUTCOME_UNKNOWN for a recorded tool call that may
    have had side effects, TOOL_NOT_STARTED for one only asked for).
    """
    session, reporter = open_log(log), reporter_for(output)
    health = session.inspect()
    answered_prefix(session, reporter)
    reporter.inspect(health)


@cli.command()
@click.argument("logs", nargs=-1, required=True, metavar="LOG_OR_DIR...")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The bundle folder to write (must be empty or absent).")
@click.option("--redact", "rules", type=click.Path(dir_okay=False),
              help='A JSON rules file: {"text": [RE2 regex], "pointers": [JSON pointer], "keys": [name]}.')
@click.option("--no-default-redaction", is_flag=True,
              help="Do not mask secrets by default (the rules of docs/redaction.md: detect-secrets' "
                   "plugins and ours).")
@click.option("--timestamp", metavar="ISO", help="The generated-at time to record (default: "
              "SOURCE_DATE_EPOCH, else now); fix it for byte-identical bundles.")
@click.option("--force", is_flag=True, help="Replace an existing bundle in --out.")
@snapshot_option
@click.option("--sign-key", type=click.Path(dir_okay=False), metavar="KEY",
              help="Sign manifest.json with this Ed25519 private key (an OpenSSH key file, as ssh-keygen -t "
                   "ed25519 makes, or PEM; without a passphrase), writing manifest.json.sig as ssh-keygen -Y sign "
                   "-n dshreplay does; needs the sign extra.")
@click.option("--evidence-key", type=click.Path(dir_okay=False), metavar="FILE", envvar="DSHREPLAY_EVIDENCE_KEY",
              show_envvar=True,
              help="The evidence key that keys the inputs' hashes (HMAC-SHA256) when the export redacts: "
                   "required then, made if absent (mode 0600), refused inside --out. Keep it with the logs, "
                   "never with the bundle.")
@jobs_options
@output_options
def export(logs: tuple[str, ...], out: Path, rules: str | None, no_default_redaction: bool, timestamp: str | None,
           force: bool, snapshot: bool, sign_key: str | None, evidence_key: str | None, jobs: int | None, quiet: bool,
           output: Output) -> None:
    """Write an audit bundle: manifest, findings, events, every model request,
    shadows, brackets, approvals, transcript and an HTML report per session.

    Redaction applies to everything written, never to the inputs; when
    anything is redacted, the hashes of the inputs' bytes are keyed with
    --evidence-key, so none of them tells what was masked. The same inputs,
    rules, key and --timestamp give a byte-identical bundle. The last line is
    the bundle digest (`sha256sum manifest.json`: the manifest is written in
    its RFC 8785 canonical form): write it down, and `verify-export --digest`
    proves later that nothing in the bundle changed. Exit 1 when a session's
    verdict has errors, 2 when an input cannot be read (the others are still
    exported in both cases), or when the bundle cannot be written (a full
    disk: no bundle is left, an old one is kept whole). --force replaces
    only a folder that is a dshreplay bundle and holds no input; - reads
    standard input.
    """
    from dshreplay.io.store import discover
    from dshreplay.output.bundle import ExportOptions
    from dshreplay.output.bundle import export as write_bundle
    from dshreplay.output.redact import load_redactor
    redactor = load_redactor(rules, defaults=not no_default_redaction)
    read = options_of(jobs=jobs, quiet=quiet, redactor=redactor, snapshot=snapshot)
    options = ExportOptions(out, read, rules, timestamp, force, not no_default_redaction, sign_key, evidence_key)
    manifest = write_bundle(discover(logs), options, mapper_for(read))
    reporter_for(output).exported(out, manifest, manifest.digest)
    for entry in manifest["sessions"]:
        if entry.get("tornTail") is not None:
            warn_torn_tail(entry["input"], TornTail.from_json(entry["tornTail"], entry["encoding"]), " (not exported)")
        if entry.get("failure") is not None:
            say_answered_for(entry["input"], entry["failure"])
        if entry.get("verdict") in ("unreadable", "internal-error"):
            click.echo(f"dshreplay: {entry['verdict']}: {_safe(entry['input'])}: {_safe(entry['error'])}", err=True)
    if any(e.get("verdict") == "internal-error" for e in manifest["sessions"]):
        sys.exit(EXIT_BUG)
    if any(e.get("verdict") == "unreadable" for e in manifest["sessions"]):
        sys.exit(EXIT_UNREADABLE)
    if any(e.get("verdict") == "errors" for e in manifest["sessions"]):
        sys.exit(EXIT_FINDINGS)


@cli.command("verify-export")
@click.argument("bundle", type=click.Path(file_okay=False, path_type=Path))
@click.option("--inputs", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Look for the inputs only in DIR (by the path they were given as, an absolute one taken "
                   "as relative to DIR, then by name).")
@click.option("--bundle-only", is_flag=True, help="Check the bundle alone; inputs not found are listed, "
                                                  "not failed.")
@click.option("--grown", is_flag=True, help="Accept inputs that only grew since the export (the exported lines "
                                            "unchanged, byte for byte) and report what was appended.")
@click.option("--digest", metavar="HEX", help="The bundle digest written down at export time (sha256:..., "
                                             "what sha256sum manifest.json prints).")
@click.option("--public-key", type=click.Path(dir_okay=False), metavar="FILE",
              help="Check the bundle's signature with this Ed25519 public key: an OpenSSH public key "
                   "(ssh-ed25519 AAAA...), an allowed_signers file, or PEM.")
@click.option("--evidence-key", type=click.Path(dir_okay=False), metavar="FILE", envvar="DSHREPLAY_EVIDENCE_KEY",
              show_envvar=True, help="The evidence key the export was given: checks the inputs of a bundle "
                                     "whose export redacted (their hashes are keyed).")
@output_options
def verify_export_command(bundle: Path, inputs: Path | None, bundle_only: bool, grown: bool, digest: str | None,
                          public_key: str | None, evidence_key: str | None, output: Output) -> None:
    """Re-hash a bundle and its inputs; say what differs and what went unchecked.

    Shows when the bundle was made and each input's size at export.

    Every file of the bundle must match the manifest (size and SHA-256), no
    file may be missing or added, and each input must be found and match
    (unless --bundle-only). The manifest itself is checked only against
    --digest or the signature (--public-key); the inputs of a bundle whose
    export redacted only with --evidence-key. With --grown, what the bundle
    does not cover of a log that grew is reported. Exit 0 when everything
    checked matches, 1 on any difference or when nothing outside the bundle
    vouched for it (no digest, signature or input checked; no session), 2
    when BUNDLE is not a bundle.
    """
    from dshreplay.output.verify import verify_export
    result = verify_export(bundle, inputs=inputs, bundle_only=bundle_only, grown=grown, digest=digest,
                           public_key=public_key, evidence_key=evidence_key, options=options_of())
    reporter_for(output).verify(result)
    if not result.ok:
        sys.exit(EXIT_FINDINGS)


@cli.command()
@click.argument("logs", nargs=-1, required=True, metavar="LOG...")
@jobs_options
@output_options
def stats(logs: tuple[str, ...], jobs: int | None, quiet: bool, output: Output) -> None:
    """Figures per session: turns, steps, calls, retries, tools, approvals,
    compactions, tokens, how much the model has forgotten, and times.

    With several logs, a total row adds them up. --jsonl prints one row per
    session ({"kind": "session", ...}), then the total ({"kind": "total", ...}).
    """
    from dshreplay.analyses.stats import stats_for, totals
    from dshreplay.io.store import discover
    options = options_of(jobs=jobs, quiet=quiet)
    results = mapper_for(options)(stats_for, [(log, options) for log in discover(logs)])
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


@cli.command()
@click.argument("inputs", nargs=-1, required=True, metavar="ROOT_OR_FILES...")
@jobs_options
@output_options
def lineage(inputs: tuple[str, ...], jobs: int | None, quiet: bool, output: Output) -> None:
    """The tree of parent and child sessions, with each fork's seed verified.

    Finds logs in store roots, session folders or files. For each child that
    repeats its parent's history (seedLength), checks that its first events
    equal the parent's; flags missing parents, reused ids, a seedLength that
    is no non-negative safe integer, cycles and logs that cannot be read.
    Exit 1 when there is any problem. --jsonl prints one row per root
    ({"kind": "session", ...}, its children nested) and one per problem of
    no single session ({"kind": "problem", "problem": TEXT}).
    """
    from dshreplay.analyses.lineage import lineage as build
    options = options_of(jobs=jobs, quiet=quiet)
    roots, problems = build(inputs, options, mapper_for(options))
    reporter_for(output).lineage(roots, problems)
    if problems or any(node.problems for root in roots for _, node in root.walk()):
        sys.exit(EXIT_FINDINGS)


@cli.command()
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
    id, seq and line. Tables: docs/sql.md. Needs the sql extra.

    Incremental: a log indexed before is checked against the size, hash
    and line chain kept for it (keyed with --evidence-key when anything is
    redacted, so none of them tells what was masked); unchanged, its rows stay; grown, only the
    lines appended are read (on from the pass kept where it ended) and its
    rows replaced; rewritten inside what was indexed, it is indexed again
    whole and reported; gone, its session is marked vanished (its rows
    kept). Redaction applies as in export (text and keys rules). Exit 1
    when a log was rewritten or vanished, 2 when one cannot be read (the
    others are indexed).
    """
    from dshreplay.output.sqlindex import duckdb_module, index_options, update_index
    duckdb_module()
    read = options_of(jobs=jobs, quiet=quiet)
    options = index_options(read, messages=messages, rules=rules, defaults=not no_default_redaction,
                            parquet=parquet, db=db, evidence_key=evidence_key)
    report = update_index(list(paths), db, options, mapper_for(options.read))
    reporter_for(output).indexed(report)
    for log, detail in report.rewritten:
        warn(f"{log}: rewritten since it was indexed ({detail}): indexed again whole")
    for log in report.vanished:
        warn(f"{log}: vanished since it was indexed: marked vanished, its rows kept")
    for log, why in report.unreadable:
        click.echo(f"dshreplay: unreadable: {_safe(log)}: {_safe(why or '')}", err=True)
    if report.unreadable:
        sys.exit(EXIT_UNREADABLE)
    if report.rewritten or report.vanished:
        sys.exit(EXIT_FINDINGS)


@cli.command()
@click.argument("db", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE")
@click.argument("query", metavar="QUERY")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV with a header row.")
@output_options
def sql(db: Path, query: str, as_csv: bool, output: Output) -> None:
    """Run an SQL query on an index database (`dshreplay index`) and print
    its rows: a table fitted to the terminal, --json (an array of objects),
    --jsonl (one object per line) or --csv. The database is opened read-only
    and the query can read no other file. Example queries: docs/sql.md.
    """
    from dshreplay.output.reporters import CsvReporter
    from dshreplay.output.sqlindex import run_query
    columns, rows = run_query(db, query)
    (CsvReporter() if as_csv else reporter_for(output)).query(columns, rows)


@cli.command()
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
    folders, store roots) or an index database (--db). A fork's seed is
    counted once, in its parent. Exit 2 when a log cannot be read (the
    others are counted).
    """
    from dshreplay.io.store import discover
    from dshreplay.output.usage import load_prices, rows_from_db, rows_from_logs, usage_report
    if bool(paths) == (db is not None):
        raise UsageError("give logs (PATH...) or an index (--db FILE), not both")
    price_list = load_prices(prices) if prices is not None else None
    unreadable: Sequence[tuple[str, str | None]] = ()
    if db is not None:
        calls, compactions = rows_from_db(db)
    else:
        options = options_of(jobs=jobs, quiet=quiet)
        calls, compactions, unreadable = rows_from_logs(discover(paths), options, mapper_for(options))
    reporter_for(output).usage(usage_report(calls, compactions, by, since=since, until=until, prices=price_list))
    for log, why in unreadable:
        click.echo(f"dshreplay: unreadable: {_safe(log)}: {_safe(why or '')}", err=True)
    if unreadable:
        sys.exit(EXIT_UNREADABLE)


@cli.group()
def fleet() -> None:
    """Run validate, stats, export or index over many sessions on a Dask cluster.

    Same options and outputs as the local commands, plus --scheduler
    ADDRESS (default: start a LocalCluster with --workers processes). Needs
    the fleet extra: pip install 'dshreplay[fleet]'.
    """


def _fleet_variant(command: click.Command) -> click.Command:
    def callback(scheduler: str | None, workers: int, quiet: bool, **kwargs: Any) -> Any:
        from dshreplay.core.fleet import DaskMapper
        ctx = click.get_current_context()
        mapper = DaskMapper(scheduler, workers, quiet=quiet)
        run_of(ctx).mapper = mapper
        try:
            assert command.callback is not None
            return ctx.invoke(command.callback, jobs=1, quiet=quiet, **kwargs)  # one process per log on the cluster
        finally:
            mapper.close()
    params = [p for p in command.params if p.name != "jobs"] + [
        click.Option(["--scheduler"], metavar="ADDRESS",
                     help="The Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: a LocalCluster)."),
        click.Option(["--workers"], type=click.IntRange(min=1), default=2, show_default=True,
                     help="Worker processes of the LocalCluster started without --scheduler.")]
    return click.Command(command.name, callback=callback, params=params, help=command.help,
                         short_help=command.get_short_help_str(limit=70))


for _command in (validate, stats, export, index):
    fleet.add_command(_fleet_variant(_command))


def main(args: list[str] | None = None, prog_name: str = "dshreplay") -> None:
    cli.main(args=args, prog_name=prog_name)
