"""The commands that render a session's spans for trace tools: timeline (Chrome Trace Event
JSON, or plain rows) and otel (OpenTelemetry traces, to a file or pushed to a collector).

Each module of `dshreplay.cli` holds a family of commands and is imported only
when one of them runs (or the help lists them): see `cli.COMMANDS`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO, Any

import click

from dshreplay.cli import (
    EXIT_FINDINGS,
    EXIT_UNREADABLE,
    options_of,
    safe_text,
    say_answered_for,
    say_error,
    warn_torn_tail,
)
from dshreplay.cli._flags import DshCommand
from dshreplay.errors import DshReplayError, OutputError, UsageError


def _write(out: Path | None, lines: list[bytes]) -> None:
    """The output lines to `out` (stdout when None)."""
    if out is None:
        stream: IO[bytes] = sys.stdout.buffer
        stream.writelines(lines)
        stream.flush()
        return
    try:
        with open(out, "wb") as fh:
            fh.writelines(lines)
    except OSError as error:
        raise OutputError(f"{out}: cannot write: {error.strerror or error}") from None


@click.command(cls=DshCommand)
@click.argument("log")
@click.option("--format", "fmt", type=click.Choice(["chrome", "json"]), default="chrome", show_default=True,
              help="chrome: Chrome Trace Event JSON (Perfetto, chrome://tracing); json: the spans as plain rows.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write to FILE (default: standard output).")
def timeline(log: str, fmt: str, out: Path | None) -> None:
    """A session's turns, steps, model calls, tool calls, compactions, approvals,
    hooks and failures on one time axis, with the model's view (messages,
    bytes) and each call's tokens as counters.

    --format chrome writes Chrome Trace Event JSON that Perfetto
    (ui.perfetto.dev: Open trace file) and chrome://tracing open: turns, steps
    and calls nest on the "turns" track; tool calls, approvals and hooks are
    async spans (parallel calls overlap); failures and retries are instants
    with their code. Times are microseconds from the session's start; a log
    without times is drawn one microsecond per seq (metadata.axis "seq").
    --format json gives the same spans as rows: {"metadata", "spans",
    "moments", "view"} (docs/guide/timeline.md). Where the fold fails the spans
    stop, the metadata says where (answeredUpTo, error) and the exit code is 1.

    Example: dshreplay timeline session.jsonl --out trace.json
    """
    from dshreplay._jsvalues import json_bytes
    from dshreplay.session import Session
    from dshreplay.traces._chrome import chrome_trace, timeline_rows
    spans = Session(log, options_of(quiet=True)).timeline()
    body = chrome_trace(spans) if fmt == "chrome" else timeline_rows(spans)
    _write(out, [json_bytes(body) + b"\n"])
    warn_torn_tail(spans.path, spans.stats.torn_tail)
    if spans.stats.error is not None:
        say_answered_for(spans.path, spans.stats.error)
        sys.exit(EXIT_FINDINGS)


def _header(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise click.BadParameter(f"{text!r}: give K=V", param_hint="--header")
    return name.strip(), value.strip()


@click.command(cls=DshCommand)
@click.argument("logs", nargs=-1, required=True, metavar="LOG_OR_DIR...")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write OTLP/JSON: one ExportTraceServiceRequest per line, a line per trace.")
@click.option("--endpoint", metavar="URL", help="Push over OTLP/HTTP (protobuf) to this traces URL "
              "(http://127.0.0.1:6006/v1/traces); needs the otel extra.")
@click.option("--header", "headers", multiple=True, metavar="K=V",
              help="An HTTP header for --endpoint (repeatable), e.g. Authorization=Basic ...")
@click.option("--trace-per", type=click.Choice(["session", "turn"]), default="session", show_default=True,
              help="One trace per session, or one per turn (linked to the session's root span).")
@click.option("--content", is_flag=True, help="Add message text, tool arguments and results, through "
              "export's redaction (the default rules, and --redact's).")
@click.option("--redact", "rules", type=click.Path(dir_okay=False), metavar="FILE",
              help="With --content: a JSON rules file as export takes ({\"text\", \"pointers\", \"keys\"}).")
@click.option("--timeout", type=click.FloatRange(1, 600), default=30.0, show_default=True,
              help="Seconds the exporter keeps retrying one session's push before it gives up.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr.")
def otel(logs: tuple[str, ...], out: Path | None, endpoint: str | None, headers: tuple[str, ...], trace_per: str,
         content: bool, rules: str | None, timeout: float, quiet: bool) -> None:
    """Sessions as OpenTelemetry traces under the GenAI semantic conventions:
    to a file (--out, OTLP/JSON) or pushed to Phoenix, Langfuse, Jaeger or any
    OTLP collector (--endpoint), or both.

    Turns are invoke_agent spans, steps internal spans, model calls chat
    spans (usage, finish reasons, time to first chunk, error.type), tool calls
    execute_tool spans with their approval and hooks as children, compactions
    spans with their summary call and replacements; failures and retries are
    events; a fork or subagent links to its parent session. Ids derive from
    the session id and seqs, times from the log: the same log gives the same
    bytes. No message text, arguments or results unless --content (always
    redacted). LOGs may be files, session folders or store roots; each
    session is one line of progress on stderr (-q: none). Exit 1 when a
    session's fold fails (its spans stop there), 2 when a log cannot be read
    or the endpoint refuses (one line saying why). Attribute names and a
    Langfuse example: docs/guide/otel.md.

    Example: dshreplay otel ~/.dsh/sessions --endpoint http://127.0.0.1:6006/v1/traces
    """
    if out is None and endpoint is None:
        raise UsageError("give --out FILE, --endpoint URL, or both")
    if rules is not None and not content:
        raise UsageError("--redact applies to --content: give --content too")
    pairs = dict(_header(h) for h in headers)
    if pairs and endpoint is None:
        raise UsageError("--header applies to --endpoint: give --endpoint too")
    from dshreplay.io._store import discover
    found = discover(logs)
    redactor = _redactor(rules) if content else None
    pusher = None
    if endpoint is not None:
        from dshreplay.traces._push import Pusher
        pusher = Pusher(endpoint, pairs, timeout)
    unreadable = partial = False
    sink = _Sink(out)
    try:
        for n, log in enumerate(found, 1):
            try:
                traces, stats = _session(log, redactor, trace_per == "turn")
            except DshReplayError as error:
                if error.path is None:
                    error.path = log
                say_error(error)
                unreadable = True
                continue
            from dshreplay._jsvalues import json_bytes
            from dshreplay.traces._otlp import request_json
            for trace in traces:
                sink.write(json_bytes(request_json(trace)) + b"\n")
            sent = pusher.push(traces) if pusher is not None else None
            if not quiet:
                count = sum(len(t.spans) for t in traces)
                where = "" if sent is None else f", pushed to {endpoint}"
                click.echo(f"dshreplay: [{n}/{len(found)}] {safe_text(log)}: {count} spans in "
                           f"{len(traces)} trace{'s' if len(traces) != 1 else ''}{where}", err=True)
            warn_torn_tail(log, stats.torn_tail)
            if stats.error is not None:
                say_answered_for(log, stats.error)
                partial = True
    finally:
        if pusher is not None:
            pusher.close()
        sink.close()
    if unreadable:
        sys.exit(EXIT_UNREADABLE)
    if partial:
        sys.exit(EXIT_FINDINGS)


class _Sink:
    """--out, written a line at a time as each session is done (None: no file)."""

    def __init__(self, out: Path | None) -> None:
        self.out = out
        self.fh: IO[bytes] | None = None
        if out is not None:
            try:
                self.fh = open(out, "wb")
            except OSError as error:
                raise OutputError(f"{out}: cannot write: {error.strerror or error}") from None

    def write(self, line: bytes) -> None:
        if self.fh is not None:
            try:
                self.fh.write(line)
            except OSError as error:
                raise OutputError(f"{self.out}: cannot write: {error.strerror or error}") from None

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()


def _redactor(rules: str | None) -> Any:
    from dshreplay.redaction.redactor import load_redactor
    return load_redactor(rules)


def _session(log: str, redactor: Any, per_turn: bool) -> tuple[list[Any], Any]:
    """The traces of one log (and its stats), with content read through `redactor` when given."""
    from dshreplay.session import Session
    from dshreplay.traces._otlp import otel_traces
    session = Session(log, options_of(quiet=True))
    spans = session.timeline()
    content = None
    if redactor is not None:
        from dshreplay.results.records import redacting
        from dshreplay.traces._content import content_of
        content = content_of(spans, redacting(session.source, redactor), redactor)
    return otel_traces(spans, content, per_turn), spans.stats
