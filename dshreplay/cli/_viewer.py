"""The view command: one self-contained HTML page that steps through a session seq by seq.

Each module of `dshreplay.cli` holds a family of commands and is imported only
when one of them runs (or the help lists them): see `cli.COMMANDS`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from dshreplay.cli import EXIT_FINDINGS, open_log, safe_text, say_answered_for
from dshreplay.cli._flags import DshCommand, log_argument, run_of
from dshreplay.errors import UsageError
from dshreplay.io.reader import shown_path


@click.command(cls=DshCommand)
@log_argument
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE.html",
              help="The page to write (default: the log's name with .view.html, in the current folder; "
                   "- for standard output).")
@click.option("--redacted", is_flag=True,
              help="Mask secrets as export does, with its default rules (docs/reference/redaction.md).")
@click.option("--redact", "rules", type=click.Path(dir_okay=False),
              help="A JSON rules file, as export's --redact: its rules and the default ones (implies --redacted).")
def view(log: str, out: Path | None, redacted: bool, rules: str | None) -> None:
    """Write one HTML page that steps through the session: the model's view at
    every seq, exactly as `fold --at S` gives it, with a timeline and the events.

    Drag the slider or use the arrow keys (one event), Page Up and Page Down
    (the previous or next model call, compaction or failure), Home and End;
    the address ends in #seq=S, so a link opens the page at that point. Each
    node of the view is an element with data-seq (its seq) and data-view
    ("in", or "hidden" for a node a replacement took off, shown struck
    through beside that replacement); the page's body carries data-at (the
    seq shown). The page holds no link to anything outside it and runs only
    its own inline script. When the fold fails, the page stops there with
    the reason (exit 1). The last line says the page's size and how it
    compares with the log's message text (docs/guide/view.md).

    Example: dshreplay view sample_logs/compaction.jsonl --out compaction.html
    """
    from dshreplay.results.records import redacting, redactor_for
    from dshreplay.viewer._html import page_title, render_view
    from dshreplay.viewer._model import build_view
    session = open_log(log)
    target = out if out is not None else Path(_default_name(session.path))
    _refuse_input(target, session.path)
    redactor = redactor_for(rules if rules is not None else True) if redacted or rules is not None else None
    source = redacting(session.source, redactor) if redactor is not None else session.source
    page = build_view(source, title="")
    page.title = page_title(page.index.header.get("id"))  # (the header as read: redacted with the log)
    session.torn_tail = page.index.torn_tail
    data = render_view(page).encode()
    where = _write(target, data)
    text = page.changes.text_bytes
    ratio = f"{len(data) / text:.2f}x the {text:,} bytes of message text" if text else "the log has no message text"
    views = page.index.event_count  # (the events before the failure, when the fold fails)
    span = f"the view at seqs 0..{views - 1}" if views else "no events"
    failed = "" if page.failure is None else f" (the fold fails at seq {page.failure.seq})"
    click.echo(f"wrote {safe_text(where)}: {len(data):,} bytes ({ratio}); {span}{failed}", err=where == "-")
    if page.failure is not None:
        say_answered_for(session.path, page.failure)
        run_of().exit = EXIT_FINDINGS


def _default_name(path: str) -> str:
    if path == "-":
        return "view.html"
    name = os.path.basename(os.path.normpath(path))
    for suffix in (".zstd", ".jsonl"):
        name = name.removesuffix(suffix)
    return f"{name}.view.html"


def _refuse_input(target: Path, log: str) -> None:
    """dshreplay never writes to what it reads."""
    if str(target) == "-" or log == "-":
        return
    try:
        same = target.exists() and os.path.samefile(target, log)
    except OSError:
        same = False
    if same:
        raise UsageError(f"--out {shown_path(target)} is the log itself: give another file")


def _write(target: Path, data: bytes) -> str:
    """Write the page (whole or not at all); returns how it is named."""
    if str(target) == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return "-"
    from dshreplay.bundle._outfolder import output_error
    temp = target.with_name(f".{target.name}.tmp{os.getpid()}")
    try:
        temp.write_bytes(data)
        os.replace(temp, target)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise output_error(exc, target) from None
    return shown_path(target)
