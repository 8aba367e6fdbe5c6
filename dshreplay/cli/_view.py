"""The commands on the model's view of one log: fold, shadows, brackets, provenance, diff.

Each module of `dshreplay.cli` holds a family of commands and is imported only
when one of them runs (or the help lists them): see `cli.COMMANDS`.
"""

from __future__ import annotations

import sys

import click

from dshreplay.cli import (
    EXIT_FINDINGS,
    answered_prefix,
    exit_code_for,
    open_log,
    reporter_for,
    safe_text,
    say_error,
)
from dshreplay.cli._flags import (
    DshCommand,
    Output,
    at_option,
    log_argument,
    output_options,
)
from dshreplay.cli._params import SEQ
from dshreplay.console._markdown import unified_text_diff


@click.command(cls=DshCommand)
@log_argument
@at_option
@output_options
def fold(log: str, at: int | None, output: Output) -> None:
    """Refold the surface: the messages the model sees, in order.

    The table lists each surface node: the number of its message (from 1;
    - for a node that yields none), seq, role, how it entered, size in bytes,
    start of its text. --json prints {"seq", "nodes", "replacements",
    "messages", "tornTail"}: the messages exactly as dsh folds them, each
    node as {"seq", "message"}, the number of its message in "messages" (or
    null), and tornTail {"line", "offset", "bytes"} when the view of the
    whole log reaches only the last whole line (else null).

    Example: dshreplay fold sample_logs/compaction.jsonl --at 40
    """
    report = open_log(log).fold(at)
    reporter_for(output).fold(report)
    if report.error is not None:
        say_error(report.error)
        sys.exit(exit_code_for(report.error))


@click.command(cls=DshCommand)
@log_argument
@at_option
@output_options
def shadows(log: str, at: int | None, output: Output) -> None:
    """List every replacement: what it shadowed, its kind and what priced it.

    Kind is summary (a compaction/summary meters it), prune (compaction/prune),
    tool-result-rewrite, or other. The chain column names shadowed nodes that
    were themselves replacements (a summary of a summary).

    Example: dshreplay shadows sample_logs/compaction.jsonl
    """
    session, reporter = open_log(log), reporter_for(output)
    shadows = session.shadows(at)
    answered_prefix(session, reporter)
    reporter.shadows(shadows)


@click.command(cls=DshCommand)
@log_argument
@output_options
def brackets(log: str, output: Output) -> None:
    """One row per compaction: start, end, status, summary and replacement.

    Status is closed, failed (with its error), open (no end: in progress or
    crashed) or abandoned (left open before a session/end-seed). Exit 1 when
    a bracket is open or has an anomaly (end without start, started twice,
    replacement outside its bracket), so scripts can alert.

    Example: dshreplay brackets sample_logs/compaction.jsonl
    """
    session, reporter = open_log(log), reporter_for(output)
    records = session.brackets()
    answered_prefix(session, reporter)
    reporter.brackets(records)
    if any(b.status == "open" or b.anomalies for b in records):
        sys.exit(EXIT_FINDINGS)


@click.command(cls=DshCommand)
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

    Example: dshreplay provenance sample_logs/compaction.jsonl --message 1
    """
    if message is not None and seq is not None:
        raise click.UsageError("give --message or --seq, not both")
    rows = open_log(log).provenance(at, message=message, seq=seq)
    reporter_for(output).provenance(rows)
    for row in rows if not output.machine else ():
        if row.replaced is not None:  # (a node taken off the view: --seq of a shadowed message)
            click.echo(safe_text(row.replaced.describe(row.seq)))


@click.command(cls=DshCommand)
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

    Example: dshreplay diff sample_logs/compaction.jsonl --from 60 --to 70
    """
    from dshreplay.analyses.trackers.provenance import diff_states
    states = open_log(log).states([a, b])
    result = diff_states(states[a], states[b])
    text = unified_text_diff(states[a].node_messages(), states[b].node_messages(), a, b) if as_text else None
    reporter_for(output).diff(result, text)
