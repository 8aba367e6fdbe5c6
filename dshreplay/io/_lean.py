"""The reader's lean loop: the lines of a log that is regular, read with no more work than they need.

A regular line parses as a JSON object whose `type` is a string and whose written seq
(a packed row's `seq0`, checked exactly by `expand_row`) is its place, or that has none.
For these lines `LogReader.records()` needs none of its placement machinery (no record
is held, none is early, no line was skipped): `regular_records` gives their items
straight away, counting the records a `QuietRule` names without making anything of them,
and stops at the first line that is not regular, which it returns, unread, for the exact
path (`LogReader._placed`) to read from there on as it reads any line. So every finding,
location and fold failure is the exact path's: this loop only passes over what it would
pass over, in the same way (the differential test `tests/unit/test_reader_lean.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generator, Iterator

import orjson

from dshreplay._jsvalues import MISSING
from dshreplay.errors import LineError
from dshreplay.io._items import Event, Item, Quiet, QuietRule
from dshreplay.io._packed import ROW_TAGS, expand_row

if TYPE_CHECKING:
    from dshreplay.io._placement import Placement
    from dshreplay.io.reader import LogReader

Line = tuple[int, int, bytes]  # (line number, byte offset, bytes): a physical line


def regular_records(reader: LogReader, lines: Iterator[Line], p: Placement,
                    quiet: QuietRule | None) -> Generator[Item, None, Line | None]:
    """The items of the regular lines from `lines` on, as the exact path gives them; returns
    the first line that is not regular (None at the end), with `p` where that path starts."""
    loads, JSONDecodeError, row_tags, path = orjson.loads, orjson.JSONDecodeError, ROW_TAGS, reader.path
    kinds, fields = quiet if quiet is not None else (frozenset(), ())
    counting = quiet is not None
    seq, hushed, hushed_line, hushed_offset, hushed_end = p.seq, p.hushed, p.hushed_line, p.hushed_offset, \
        p.hushed_end
    last = None
    for line in lines:
        lineno, offset, raw = line
        try:
            rec = loads(raw)
        except JSONDecodeError:
            break
        if rec.__class__ is not dict:
            break
        kind = rec.get("type")
        if kind.__class__ is not str:
            break
        if kind in row_tags:
            try:
                run = expand_row(rec, kind, seq, lineno, path)
            except LineError:
                break
            if run.seq0 is None:
                p.mixed = True
            elif run.seq0 != seq:
                break
            last = raw
            if counting:
                if not hushed:
                    hushed_line, hushed_offset = lineno, offset
                hushed += run.count
                seq += run.count
                hushed_end = lineno
                continue
            run.offset = offset
            reader.raw = raw
            yield run
            seq += run.count
            continue
        written = rec.get("seq", MISSING)
        if written is MISSING:
            p.mixed = True
        elif written != seq or written.__class__ is bool:
            break
        last = raw
        if counting and kind in kinds and rec.keys().isdisjoint(fields):
            if not hushed:
                hushed_line, hushed_offset = lineno, offset
            hushed += 1
            seq += 1
            hushed_end = lineno
            continue
        if hushed:
            yield Quiet(seq - hushed, hushed, hushed_line, hushed_offset, hushed_end)
            hushed = 0
        reader.raw = raw
        yield Event(seq, kind, rec, lineno, None, offset)
        seq += 1
    else:
        line = None
    p.seq, p.hushed, p.hushed_line, p.hushed_offset, p.hushed_end = seq, hushed, hushed_line, hushed_offset, \
        hushed_end
    if line is None and last is not None:
        reader.final_newline = last.endswith(b"\n")
    return line
