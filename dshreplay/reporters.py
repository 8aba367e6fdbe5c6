"""Reporters: turn report dataclasses into text for people or JSON for machines.

Library code returns reports; only reporters write to a stream.
"""

from __future__ import annotations

import sys
from typing import TextIO

import orjson
from tabulate import tabulate

from .api import FoldReport
from .findings import ERROR, NOTICE, WARNING
from .validate import FileReport
from .render import json_size, message_text, one_line, role_of

WIDTH = 100  # human output reads well at this many columns


def error_json(error) -> dict:
    return {"stage": error.kind, "seq": error.seq, "line": error.line, "pointer": error.pointer,
            "message": error.message}


def _table(rows, headers, text_col: int | None = None, width: int = WIDTH) -> str:
    """A tabulate table whose free-text column is cut so the table fits `width`."""
    if text_col is not None and rows:
        # tabulate pads each header by 2 and separates columns by 2 spaces
        fixed = sum(max(len(str(h)) + 2, *(len(str(r[i])) for r in rows)) + 2
                    for i, h in enumerate(headers) if i != text_col)
        room = max(width - fixed, 20)
        rows = [tuple(one_line(str(v), room) if i == text_col else v for i, v in enumerate(r))
                for r in rows]
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)


def _wrapped_table(rows, headers, wrap_col: int, width: int = WIDTH) -> str:
    """A table whose free-text column wraps so the table fits `width`."""
    if not rows:
        return ""
    fixed = sum(max(len(str(h)) + 2, *(len(str(r[i])) for r in rows)) + 2
                for i, h in enumerate(headers) if i != wrap_col)
    room = max(width - fixed, 24)
    widths = [None] * len(headers)
    widths[wrap_col] = room
    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True,
                    maxcolwidths=widths)


def _tail(path: str, width: int) -> str:
    """A path cut from the left to `width` characters (its end says most)."""
    path = one_line(path, 10_000)
    return path if len(path) <= width else "…" + path[len(path) - width + 1:]


def _dash(value) -> str:
    return "-" if value is None else str(value)


class JsonReporter:
    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def emit(self, value) -> None:
        self.out.write(orjson.dumps(value).decode())
        self.out.write("\n")

    def fold(self, report: FoldReport) -> None:
        if report.error is not None:
            body = {"seq": report.seq, "error": error_json(report.error)}
            if report.state is not None:
                body.update(nodes=list(report.state.nodes),
                            replacements=[r.to_json() for r in report.state.replacements],
                            messages=None)
            self.emit(body)
            return
        state = report.state
        self.emit({"seq": report.seq, "nodes": list(state.nodes),
                   "replacements": [r.to_json() for r in state.replacements],
                   "messages": report.messages})


    def validate(self, reports: list[FileReport]) -> None:
        self.emit({"files": [r.to_json() for r in reports]})


class TextReporter:
    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def fold(self, report: FoldReport) -> None:
        if report.state is None or report.node_messages is None:
            return  # the error line on stderr says it all
        state = report.state
        replaced = {r.seq: r for r in state.replacements}
        rows = []
        for pos, (seq, message) in enumerate(report.node_messages):
            event = state.events[seq]
            r = replaced.get(seq)
            op = f"replace {r.start}..{r.end}" if r else "append"
            if message is None:
                rows.append((pos, seq, role_of(event.type, None), op, 0, "(no message: empty content)"))
            else:
                rows.append((pos, seq, role_of(event.type, message), op, json_size(message),
                             message_text(message)))
        if rows:
            self.line(_table(rows, ["#", "seq", "role", "op", "bytes", "text"], text_col=5))
        at = "no events" if report.seq is None else f"seq {report.seq}"
        self.line(f"{len(state.nodes)} nodes, {len(report.messages)} messages, "
                  f"{len(state.replacements)} replacements at {at}")

    def validate(self, reports: list[FileReport]) -> None:
        for report in reports:
            counts = ", ".join(f"{report.count(s)} {s}s" for s in (ERROR, WARNING, NOTICE))
            verdict = "UNREADABLE" if report.unreadable else ("ok" if report.ok else "FAILED")
            rest = f": {verdict}: {report.events} events, {counts}"
            self.line(_tail(report.path, WIDTH - len(rest)) + rest)
            rows = [(f.severity, f.code, _dash(f.seq), _dash(f.line), one_line(f.pointer or "-", 28),
                     one_line(f.message, 2000)) for f in report.findings]
            if rows:
                self.line(_wrapped_table(rows, ["severity", "code", "seq", "line", "pointer", "message"], 5))
            self.line()
        total = {s: sum(r.count(s) for r in reports) for s in (ERROR, WARNING, NOTICE)}
        unreadable = sum(1 for r in reports if r.unreadable)
        failed = sum(1 for r in reports if not r.ok and not r.unreadable)
        self.line(f"{len(reports)} files: {len(reports) - failed - unreadable} ok, {failed} with errors, "
                  f"{unreadable} unreadable; {total[ERROR]} errors, {total[WARNING]} warnings, "
                  f"{total[NOTICE]} notices")
