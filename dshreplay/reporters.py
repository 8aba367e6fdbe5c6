"""Reporters: turn report dataclasses into text for people or JSON for machines.

Library code returns reports; only reporters write to a stream.
"""

from __future__ import annotations

import sys
from typing import TextIO

import orjson
from tabulate import tabulate

from .api import FoldReport
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
