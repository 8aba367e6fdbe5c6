"""The kinds of values the command line takes, each parsed in one place.

A `click.ParamType` turns the text of an option into its value or fails with
the one usage line that says what was wanted; the library's own parsers
(`options.parse_size`, `_jsvalues.parse_time`) hold the rules, these only
word the error for the command line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from dshreplay._jsvalues import epoch_ms, parse_time, shown
from dshreplay.options import parse_size

if TYPE_CHECKING:  # (click 8.2 made ParamType generic in its value; click 8.1, also supported, cannot subscript it)
    _Int = click.ParamType[int, Any]
    _Codes = click.ParamType[frozenset[str], Any]
    _Lines = click.ParamType[tuple[int, int], Any]
else:
    _Int = _Codes = _Lines = click.ParamType

__all__ = ["CODES", "LINE_RANGE", "SEQ", "SIZE", "TIME", "CodesType", "LineRangeType", "SeqType", "SizeType",
           "TimeType"]


class SizeType(_Int):
    """A size such as 1M or 512k, in bytes (`options.parse_size`)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_size(value)
        except ValueError as exc:
            self.fail(f"{shown(value, 40)}: {exc}", param, ctx)


class SeqType(_Int):
    """An event's seq: a whole number from 0 (ASCII digits)."""

    name = "seq"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        text = value.strip() if isinstance(value, str) else ""
        if not (text.isascii() and text.isdigit()):
            self.fail(f"{shown(value, 40)} is not a seq (a whole number from 0)", param, ctx)
        return int(text)


class CodesType(_Codes):
    """Finding codes or prefixes of them, comma-separated (DSH-E1,DSH-W), each one that
    names at least one code of `analyses.findings.CODES`."""

    name = "codes"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> frozenset[str]:
        if isinstance(value, frozenset):
            return value
        codes = frozenset(c.strip().upper() for c in str(value).split(",") if c.strip())
        if not codes:
            self.fail("give one or more codes or prefixes, comma-separated", param, ctx)
        from dshreplay.analyses.findings import CODES as KNOWN
        for code in sorted(codes):
            if not any(known.startswith(code) for known in KNOWN):
                import difflib  # (only for a bad code: `fold` starts without it)
                close = difflib.get_close_matches(code, list(KNOWN), n=1, cutoff=0.0)
                self.fail(f"{code} is no finding code or prefix of one (the closest is {close[0]}; all are in "
                          "docs/reference/findings.md)", param, ctx)
        return codes


class TimeType(_Int):
    """An ISO 8601 time (UTC unless it names an offset) as epoch milliseconds."""

    name = "time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        try:
            return epoch_ms(parse_time(value))
        except ValueError as exc:
            self.fail(f"{shown(value, 40)} {exc} (such as 2026-07-06T15:36:05Z)", param, ctx)


class LineRangeType(_Lines):
    """Physical lines A-B (or one line, A) as (A, B)."""

    name = "lines"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> tuple[int, int]:
        if isinstance(value, tuple):
            return value
        first, _, last = str(value).strip().partition("-")
        if not (first.isascii() and first.isdigit() and (last or first).isascii() and (last or first).isdigit()):
            self.fail(f"{value!r} is not a line range such as 480-490 (or one line, 482)", param, ctx)
        return int(first), int(last or first)


SIZE, SEQ, CODES, TIME, LINE_RANGE = SizeType(), SeqType(), CodesType(), TimeType(), LineRangeType()
