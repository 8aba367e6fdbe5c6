"""The commands on what happened in one log: request, transcript, events, spills, inspect.

Each module of `dshreplay.cli` holds a family of commands and is imported only
when one of them runs (or the help lists them): see `cli.COMMANDS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from dshreplay.cli import (
    answered_prefix,
    open_log,
    reporter_for,
)
from dshreplay.cli._flags import (
    DshCommand,
    Output,
    at_option,
    log_argument,
    output_options,
    run_of,
)
from dshreplay.cli._params import LINE_RANGE, SEQ, TIME
from dshreplay.console._interface import Reporter


@click.command(cls=DshCommand)
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

    Example: dshreplay request sample_logs/compaction.jsonl --call 5 --json
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
    from dshreplay.bundle._callread import session_folder
    return session_folder(bundle)


def _bundle_request(folder: Path, listing: bool, call: int | None, reporter: Reporter) -> None:
    """The calls of a bundle's session folder (`listing`), or the request of one, as the log's are shown."""
    from dshreplay.bundle._callread import bundle_request, listed_calls
    if listing:
        reporter.calls(listed_calls(folder))  # type: ignore[arg-type]  # (a ListedCall has every field a reporter reads of a Call)
    else:
        assert call is not None  # (checked by the command: exactly one of --list, --call)
        reporter.request(bundle_request(folder, call))


@click.command(cls=DshCommand)
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

    Example: dshreplay transcript sample_logs/compaction.jsonl --format markdown > transcript.md
    """
    session = open_log(log)
    entries = session.transcript(reasoning)
    if fmt == "json" and not output.machine:  # (--format json is --json)
        output = run_of().output = output._replace(format="json")
    reporter = reporter_for(output)
    answered_prefix(session, reporter)
    reporter.transcript(entries, markdown=fmt == "markdown")


@click.command(cls=DshCommand)
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

    Example: dshreplay events sample_logs/compaction.jsonl --surface shadowed --type user/
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


@click.command(cls=DshCommand)
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

    Example: dshreplay spills sample_logs/multi-turn.jsonl --spill-root ~/.dsh/spills
    """
    session, reporter = open_log(log), reporter_for(output)
    spills = session.spills(spill_root)
    answered_prefix(session, reporter)
    reporter.spills(spills)


@click.command("inspect", cls=DshCommand)
@log_argument
@output_options
def inspect_command(log: str, output: Output) -> None:
    """The health summary an incident starts with.

    Header facts, counts by type, turns, steps and calls, a torn tail, and
    whether the last turn was interrupted: if so, the closers dsh would
    append on load (TOOL_OUTCOME_UNKNOWN for a recorded tool call that may
    have had side effects, TOOL_NOT_STARTED for one only asked for).

    Example: dshreplay inspect sample_logs/torn-tail.jsonl
    """
    session, reporter = open_log(log), reporter_for(output)
    health = session.inspect()
    answered_prefix(session, reporter)
    reporter.inspect(health)
