"""CSV cells that a spreadsheet will not run and a terminal will not act on: the one
rule for every CSV dshreplay writes (a bundle's `events.csv`, `tools.csv`,
`approvals.csv`, and `sql --csv`)."""

from __future__ import annotations

from typing import Any

from dshreplay._jsvalues import json_bytes
from dshreplay.analyses._render import clean

_FORMULA_START = ("=", "+", "-", "@", "\t")
_RISKY_START = frozenset("=+-@\t \ufeff")  # (a spreadsheet skips leading spaces and a BOM)


def csv_cell(value: Any) -> str | int:
    """A CSV cell that a spreadsheet will not run as a formula: line breaks as spaces, every
    other character that is not printable escaped (`render.clean`), and a cell that would
    start a formula (`=`, `+`, `-`, `@`, a tab, also behind spaces) after a `'`."""
    t = type(value)
    if t is str and value.isprintable():  # the common case: nothing to replace or escape
        text = value
    elif value is None:
        return ""
    elif t is int:
        if value >= 0:
            return int(value)
        text = str(value)
    else:
        text = value if t is str else json_bytes(value).decode()
        text = clean(text.replace("\r", " ").replace("\n", " "))
    if text and text[0] in _RISKY_START and text.lstrip(" \ufeff")[:1] in _FORMULA_START:
        text = "'" + text
    return str(text)
