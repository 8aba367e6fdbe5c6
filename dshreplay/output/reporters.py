"""Reporters: turn report dataclasses into text for people or JSON for machines.

Library code returns reports; only reporters write to a stream. Every reporter
follows one interface, `Reporter`: one method per kind of answer.
"""

from __future__ import annotations

import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from dshreplay.analyses.render import TOOL_RESULT_WIRE_ROLE, clean, counted, json_size, message_text, one_line, role_of
from dshreplay.core.surface import numbered
from dshreplay.errors import DshReplayError, answered_for, answered_up_to, fails_at
from dshreplay.jsvalues import as_text, json_bytes, json_visible, shown, visible

if TYPE_CHECKING:  # (validate's machinery is imported by the command that validates, not by every start)
    from dshreplay.analyses.calls import Call, Request
    from dshreplay.analyses.compaction import BracketRecord
    from dshreplay.analyses.health import Health
    from dshreplay.analyses.lineage import Node
    from dshreplay.analyses.provenance import MessageProvenance, ShadowRecord, ViewDiff
    from dshreplay.analyses.query import EventRow, RawLine
    from dshreplay.analyses.spills import Spill
    from dshreplay.analyses.stats import SessionStats
    from dshreplay.analyses.transcript import Entry
    from dshreplay.analyses.validate import FileReport
    from dshreplay.core.driver import FoldReport
    from dshreplay.output.sqlindex import IndexReport
    from dshreplay.output.usage import UsageReport, UsageRow
    from dshreplay.output.verify import Verification

__all__ = ["Reporter", "TextReporter", "JsonReporter", "JsonLinesReporter", "CsvReporter", "HasJson", "json_text",
           "envelope_of", "answer_json", "fold_json", "health_facts", "files_json", "stats_json", "lineage_json",
           "exported_json",
           "render_table", "display_width"]


class HasJson(Protocol):
    """A row any JSON reporter writes: it has the JSON its command prints for it."""

    def to_json(self) -> dict[str, Any]: ...


NodeMessages = Sequence[tuple[int, Any]]  # (seq, derived message or None) per surface node

WIDTH = 100  # human output reads well at this many columns
MAX_INDENT = 20  # a tree (lineage) is indented this many levels at most


def error_json(error: DshReplayError) -> dict[str, Any]:
    """The error object of every `--json` output (see DshReplayError.to_json)."""
    return error.to_json()


def render_table(rows: Sequence[Sequence[object]], headers: Sequence[object] = (), width: int = WIDTH, *,
                 text_col: int | None = None, wrap: bool = False, show_headers: bool = True) -> str:
    """Left-aligned columns two spaces apart under a dashed rule (the look of tabulate's
    "simple" tables), fitted to `width` terminal columns by display width: a CJK
    character or an emoji takes two columns, a combining mark none (wcwidth).

    With room, each column is as wide as its widest cell and its header plus two.
    When the table is wider than `width`: the free-text column `text_col` is cut
    at its end (or wrapped onto more lines, with `wrap`) to what is left of the
    width, at least 20; headers lose their padding, long headers break onto a
    second line (at a space, "/" or camelCase hump); then the widest other columns are cut in the middle, down to
    6 columns (a header that holds a column wider breaks then), so ids and paths keep both ends and
    what tells them apart; if the table is still too
    wide, the text column goes below 20, down to its header (4 at least; wrapped, to its
    longest word up to 20, so notes wrap at words). A column of numbers and counts is never
    cut: another gives way. Nor is a column of words (`_WORDS`: seq lists, kinds, types,
    statuses, `replace 3..24`): it wraps at its commas, spaces and "/" down to its longest part.
    """
    if not rows:
        return ""
    titles = [str(h) for h in headers] if show_headers else []
    cols = max(len(titles), *(len(r) for r in rows))
    # the text column is cleaned whole only to be wrapped; cut, it is cleaned when cut (a text can be 100 MB)
    cells = [[whole(_dash(v)) if i != text_col else clean(_dash(v)) if wrap else _dash(v)
              for i, v in enumerate(r)] + [""] * (cols - len(r)) for r in rows]
    need = [max(_cell_width(r[i], wrap, width) if i == text_col else display_width(r[i]) for r in cells)
            for i in range(cols)]
    heads: list[list[str]] = [[h] for h in titles] + [[""]] * (cols - len(titles))
    floor = [max(map(display_width, h)) for h in heads]
    widths = [max(need[i], floor[i] + 2 if titles else 0) for i in range(cols)]
    numbers = {i for i in range(cols) if i != text_col and all(re.match(_NUMBER, r[i]) for r in cells)}
    words: dict[int, int] = {}  # a column of words, found when it must give way: its longest part
    checked: set[int] = set()

    def least(i: int) -> int:  # how narrow column i may go: an id or a path is cut in the middle to 6
        if i not in checked:
            checked.add(i)
            values = {r[i] for r in cells}
            if all(re.match(_WORDS, v) for v in values):
                words[i] = max(map(_least, values))
        return max(floor[i], words.get(i, 6))

    def total() -> int:
        return sum(widths) + 2 * (cols - 1)

    def fit_text() -> None:  # the text column takes what the others leave, 20 at least when it needs them
        if text_col is not None:
            widths[text_col] = 0
            room = max(width - total(), 20)
            widths[text_col] = max(min(need[text_col], room), floor[text_col])

    if total() > width:
        widths = [max(need[i], floor[i]) for i in range(cols)]
        fit_text()
        if total() > width and titles:
            for i in range(cols):
                if i != text_col and floor[i] > need[i] and len(heads[i]) == 1:
                    heads[i] = _break_header(heads[i][0])
                    floor[i] = max(map(display_width, heads[i]))
                    widths[i] = max(need[i], floor[i])
            fit_text()
        shrinkable = [i for i in range(cols) if i != text_col and i not in numbers]
        while total() > width and shrinkable:  # the widest gives one column at a time, in steps as long
            i = max(shrinkable, key=lambda c: widths[c])  # as it stays the widest (a 2 MB cell: one step)
            low = least(i)
            if widths[i] <= low:
                broken = _break_header(heads[i][0]) if titles and len(heads[i]) == 1 else []
                if broken and max(map(display_width, broken)) < floor[i]:  # its header held it: it breaks
                    heads[i], floor[i] = broken, max(map(display_width, broken))
                    continue
                shrinkable.remove(i)
                continue
            below = max((widths[c] for c in shrinkable if c != i), default=0)
            widths[i] -= max(min(widths[i] - max(below, low), total() - width), 1)
        fit_text()
        if text_col is not None and total() > width:  # the others are at their least: the text gives way too
            word = min(max(_least(r[text_col], r" ") for r in cells), 20) if wrap else 4
            widths[text_col] = max(widths[text_col] - (total() - width), floor[text_col], word)
        if total() > width and titles:  # (its numbers, words and text at their least do not fit)
            return _records(titles, cells, width, text_col, wrap, numbers, words)
    for i in range(cols):  # cut the values of a column that is too narrow, keeping them distinct
        if i in words:
            for r in cells:
                r[i] = "\n".join(_wrap_words(r[i], widths[i])) if display_width(r[i]) > widths[i] else r[i]
        elif i != text_col and need[i] > widths[i]:
            for r, value in zip(cells, _cut_column([r[i] for r in cells], widths[i])):
                r[i] = value
    if text_col is not None:
        w = widths[text_col]
        for r in cells:
            r[text_col] = "\n".join(_wrap(r[text_col], w)) if wrap else clip_end(one_line(r[text_col], w), w)
    lines = []
    if titles:
        depth = max(len(h) for h in heads)
        for n in range(depth):  # a one-line header stands on the last header line
            lines.append(_pad([h[n - depth + len(h)] if n >= depth - len(h) else "" for h in heads], widths))
        lines.append("  ".join("-" * w for w in widths))
    for row in cells:
        parts = [row[i].split("\n") if i == text_col and wrap or i in words else [row[i]] for i in range(cols)]
        for n in range(max(map(len, parts))):
            lines.append(_pad([p[n] if n < len(p) else "" for p in parts], widths))
    return "\n".join(lines)


def _records(titles: list[str], cells: list[list[str]], width: int, text_col: int | None, wrap: bool,
             numbers: set[int], words: dict[int, int]) -> str:
    """A table too wide for `width` even cut (its numbers and counts alone take more): one record
    per row, a line per column, `header  value`, records a blank line apart (psql's expanded
    display). A value too long for its line is cut as the table cuts it: the text at its end (or
    wrapped, with `wrap`), an id or path in the middle; numbers stay whole, words wrap."""
    titles = titles + [""] * (len(cells[0]) - len(titles))
    label = min(max(map(display_width, titles)), max(width // 2, 4))
    room = max(width - label - 2, 6)
    lines: list[str] = []
    for n, row in enumerate(cells):
        if n:
            lines.append("")
        for i, (title, value) in enumerate(zip(titles, row)):
            if i == text_col:
                parts = _wrap(clean(value), room) if wrap else [clip_end(one_line(value, room), room)]
            elif i in numbers or display_width(value) <= room:
                parts = [value]
            elif i in words:
                parts = _wrap_words(value, room)
            else:
                parts = [_middle(value, room)]
            head = _middle(title, label) if display_width(title) > label else title
            lines.append(_pad([head, parts[0] if parts else ""], [label, room]))
            lines += [" " * (label + 2) + part for part in parts[1:]]
    return "\n".join(lines)


def _pad(cells: Sequence[str], widths: Sequence[int]) -> str:
    """Cells left-aligned in their columns, two spaces apart, padded by display width."""
    return "  ".join(c + " " * (w - display_width(c)) for c, w in zip(cells, widths)).rstrip()


# (this module's patterns are compiled by `re` on first use, and cached: not at start-up)
_NUMBER = r"-|[-+]?[0-9][0-9.,:/%]*\Z"  # a count, a seq, a range "4..18", "277/12356", or "-"


# a cell of words, never cut but wrapped at ", ", " " or after "/": numbers, seq lists ("26, 27, … 24 (17)"),
# kinds, types and statuses ("user/message", "log-only"), "replace 3..24"; its parts at most 24 columns
# and the whole at most 200 (a longer part is an id or a name, a longer cell a log's text: cut in the middle)
_PART = r"(?:[-+]?[0-9][0-9.:%]*|\([0-9]+\)|…|-|[a-z][a-z_-]*)"
_WORDS = rf"(?=.{{0,200}}\Z)(?=.{{0,24}}(?:, | |/|\Z)){_PART}(?:(?:, | |/)(?=.{{0,24}}(?:, | |/|\Z)){_PART})*\Z"
_BREAK = r"(?<=, )|(?<= )|(?<=/)"  # where a cell of words may break: after a comma's space, a space or a "/"


def _least(cell: str, breaks: str = _BREAK) -> int:
    """The width of the longest part of `cell` (what it takes wrapped at `breaks`)."""
    return max(display_width(part.rstrip()) for part in re.split(breaks, cell))


def _wrap_words(cell: str, width: int) -> list[str]:
    """A cell of words on lines of `width` columns, broken only where `_BREAK` allows."""
    lines = [""]
    for part in re.split(_BREAK, cell):
        if lines[-1] and display_width((lines[-1] + part).rstrip()) > width:
            lines[-1] = lines[-1].rstrip()
            lines.append("")
        lines[-1] += part
    lines[-1] = lines[-1].rstrip()
    return lines


_OWN_MARKS = str.maketrans("", "", "…·─└")  # the marks our tables add ("…" ends a cut cell): one column each


def _narrow(text: str) -> bool:
    """Whether every character of `text` takes one column for sure: ASCII and our own marks.
    (Then its width is its length, and wcwidth, 20 ms to import, is not needed: a table
    of ASCII text, cut with "…", is drawn without it.)"""
    return text.isascii() or text.translate(_OWN_MARKS).isascii()


def display_width(text: str) -> int:
    """How many terminal columns `text` takes: two for a wide (CJK) character or an emoji,
    none for a combining mark (wcwidth), one for the rest."""
    if _narrow(text):
        return len(text)
    from wcwidth import width
    return max(width(text), 0)


def clip_end(text: str, width: int) -> str:
    """`text` cut at its end to `width` columns, with "…" when cut."""
    if display_width(text) <= width:
        return text
    if width <= 1:
        return "…"[:max(width, 0)]
    return _columns(text, 0, width - 1) + "…"


def _columns(text: str, start: int, end: int) -> str:
    """The part of `text` in display columns [start, end) (a wide character split by a
    border becomes a space, so the part keeps its width)."""
    if _narrow(text):
        return text[start:end]
    from wcwidth import clip
    return clip(text, start, end)


def _cut_column(values: list[str], width: int) -> list[str]:
    """A column's values cut in the middle to `width`; where that makes two different
    values look alike, the start and end they all share give way to "…" first
    (`…headless-agent__c…`, `…acp-agent__error-f…`), so each keeps what tells it apart."""
    cut = [_middle(v, width) for v in values]
    distinct = set(values)
    if len(set(cut)) == len(distinct) or width < 5:
        return cut
    texts = sorted(v for v in distinct if display_width(v) > width)  # (the values that fit stay as they are)
    if len(texts) < 2:
        return cut
    prefix = len(os.path.commonprefix([texts[0], texts[-1]]))
    shortest = min(map(len, texts)) - prefix
    suffix = len(os.path.commonprefix([t[::-1] for t in texts]))
    suffix = min(suffix, max(shortest - 1, 0))
    out = []
    for v in values:
        if display_width(v) <= width:
            out.append(v)
            continue
        core = v[prefix:len(v) - suffix]
        room = width - bool(prefix) - bool(suffix)
        out.append(("…" if prefix else "") + _middle(core, room) + ("…" if suffix else ""))
    return out


def _cell_width(text: str, wrapped: bool, width: int) -> int:
    """The width a text cell asks for: its longest line, wrapped; else its one-line
    preview's, up to width + 1 (a text wider than the table is cut to what is left)."""
    if wrapped:
        return max(map(display_width, text.split("\n")))
    return display_width(one_line(text, width + 1))


def _break_header(header: str) -> list[str]:
    """A header on two lines, broken at the space, "/" or camelCase hump nearest its middle
    (or hyphenated, if it is one long word)."""
    cuts = [i for i in range(1, len(header)) if header[i - 1] in " /" or (header[i].isupper()
                                                                          and header[i - 1].islower())]
    if not cuts:  # one long word: hyphenated in the middle
        return [header] if len(header) < 8 else [header[:len(header) // 2] + "-", header[len(header) // 2:]]
    at = min(cuts, key=lambda i: abs(len(header) / 2 - i))
    return [header[:at].rstrip(), header[at:].lstrip()]


def _wrap(text: str, width: int) -> list[str]:
    """`text` wrapped to `width` display columns, its own line breaks kept."""
    out = []
    for para in text.split("\n"):
        if len(para) <= width and para.isprintable() and _narrow(para) and para == para.strip():
            out.append(para)  # (it fits as it is: what wrap gives, without importing wcwidth)
            continue
        out.extend(_wrapper(width).wrap(para) or [""])
    return out


@cache
def _wrapper(width: int) -> Any:
    """wcwidth's text wrapper (display widths, graphemes kept whole), breaking a word longer
    than a line in one pass: the stdlib's way, which wcwidth keeps, measures the rest of the
    word again for every line it fills (20,000 CJK characters took 18 s; now 0.1 s). The lines
    are the same (checked against wcwidth.wrap on random text)."""
    from wcwidth import iter_graphemes
    from wcwidth.textwrap import SequenceTextWrapper

    class Wrapper(SequenceTextWrapper):
        def _handle_long_word(self, reversed_chunks: list[str], cur_line: list[str], cur_len: int,
                              width: int) -> None:
            """The long word on top of `reversed_chunks` cut into the piece that fills this line
            (it may be empty: a wide character with no room left) and pieces of one line each
            (a character wider than a line alone on its own), put back for the lines to come."""
            pieces = self._pieces(reversed_chunks[-1], bool(cur_line), width - cur_len if width >= 1 else 1,
                                  max(width, 1))
            if pieces is None:
                super()._handle_long_word(reversed_chunks, cur_line, cur_len, width)
                return
            reversed_chunks.pop()
            cur_line.append(pieces[0])
            reversed_chunks.extend(reversed(pieces[1:]))

        def _pieces(self, word: str, line_used: bool, room: int, width: int) -> list[str] | None:
            """`word` cut at the last grapheme that fits in `room`, then in `width`; None where
            the stdlib's way differs from cutting once: a run of spaces (its rest goes at the
            next line's start), a character wider than a whole line after characters of no width."""
            if not word.strip():
                return None
            graphemes = list(iter_graphemes(word))
            pieces: list[str] = []
            first = used = 0
            for k, grapheme in enumerate(graphemes):
                size = self._width(grapheme)
                if used + size > room and (k > first or not pieces and line_used):
                    if used == 0 and k > first and (pieces or not line_used):
                        return None
                    pieces.append("".join(graphemes[first:k]))
                    first, used, room = k, 0, width
                used += size
            pieces.append("".join(graphemes[first:]))
            return pieces

    return Wrapper(width=width, break_long_words=True, break_on_hyphens=False)


def whole(text: str, limit: int = 10**6) -> str:
    """A file name, an id or a table cell on one line, never cut (below `limit` characters, a
    bound on the cost): every character that is not printable, line breaks and tabs
    included, escaped (`jsvalues.visible`), so distinct values print distinctly."""
    return visible(text) if len(text) <= limit else visible(text[:limit - 1]) + "…"


def _middle(text: str, width: int) -> str:
    """An id or a path cut in the middle to `width` columns: its start and its end
    stay (338e88fa…7d62b, acp-agent__…__session.jsonl), so distinct values stay distinct."""
    text = whole(text, 10_000)
    size = display_width(text)
    if size <= width:
        return text
    head = max((width - 1) // 3, 1)
    return _columns(text, 0, head) + "…" + _columns(text, size - (width - 1 - head), size)


def terminal_width() -> int:
    """The terminal's width ($COLUMNS first), 100 when the output is not a terminal: the rule
    of shutil.get_terminal_size for the columns, without importing shutil (with zlib, bz2
    and lzma: ~2 ms of a table's start-up)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0 and sys.__stdout__ is not None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return max(columns or WIDTH, 40)


def _dash(value: object) -> str:
    """A table cell for a log value: "-" for none, else the value (a string as it is)."""
    return "-" if value is None else as_text(value)


_C1 = "[\x80-\x9f]"  # C1 controls: a terminal may act on them, so JSON shows them escaped


def cell_json(value: object) -> Any:
    """A query result's cell as JSON: a time as ISO 8601 UTC text ("2026-07-06T15:36:05.190Z"),
    a day as "2026-07-06", a decimal as a number; lists and maps as they are."""
    import datetime
    import decimal
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value.isoformat(timespec="milliseconds") + "Z"
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, datetime.timedelta):
        return value.total_seconds() * 1000
    if isinstance(value, (list, tuple)):
        return [cell_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): cell_json(v) for k, v in value.items()}
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value


def cell_text(value: object) -> str:
    """A query result's cell in a table or CSV: as JSON gives it, text as it is, "-" for NULL."""
    value = cell_json(value)
    return "-" if value is None else value if type(value) is str else json_text(value)


class CsvReporter:
    """Query results as CSV (RFC 4180, a header row; NULL as an empty cell), every cell as a
    bundle's CSVs write it (`csvcells.csv_cell`: no formula, nothing a terminal acts on)."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout

    def query(self, columns: list[str], rows: Sequence[Sequence[object]]) -> None:
        import csv

        from dshreplay.output.csvcells import csv_cell
        writer = csv.writer(self.out, lineterminator="\n")
        writer.writerow([csv_cell(c) for c in columns])
        for row in rows:
            writer.writerow([csv_cell(cell_json(v)) for v in row])


def json_text(value: object, terminal: bool = False) -> str:
    """Compact JSON on one line: C1 control characters escaped, and text that
    is not UTF-8 (a path's undecodable bytes) shown as \\xNN. For a `terminal`, every
    character that text output escapes (bidirectional controls, U+2060, U+FEFF, tag
    characters, DEL, ...) written as a JSON escape too: the same JSON value, nothing the
    terminal acts on or hides. (Not for a pipe or a file: there JSON is written as before.)"""
    data = json_bytes(value)
    text = data.decode()
    if terminal:
        return json_visible(text)
    if b"\xc2" not in data:  # (every C1 character is \xc2\x80 to \xc2\x9f in UTF-8: most text is checked at once)
        return text
    return re.sub(_C1, lambda m: f"\\u{ord(m.group()):04x}", text) if re.search(_C1, text) else text


def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError, OSError):  # (a closed or unusual stream: not a terminal)
        return False


def envelope_of(failure: DshReplayError) -> dict[str, Any]:
    """What an answer for the events before the point where the fold fails is wrapped in (its
    `"answer"` added): the failure and the last seq answered."""
    return {"error": failure.to_json(), "answeredUpTo": answered_up_to(failure)}


def answer_json(value: object, partial: DshReplayError | None) -> object:
    """An answer as `--json` prints it: the value, or inside its envelope when it stops where
    the fold fails (`partial`)."""
    return value if partial is None else {**envelope_of(partial), "answer": value}


def fold_json(report: FoldReport) -> dict[str, Any]:
    """`fold --json`: the view at a seq (nodes, replacements, messages), or where the fold fails."""
    state = report.state
    if report.error is not None and state is None:  # no view: where the fold fails
        return {"error": error_json(report.error), "answeredUpTo": None, "answer": None}
    assert state is not None  # (a report without an error has its state)
    if report.error is not None:  # the fold holds, a node's message cannot be derived
        return {"seq": report.seq, "error": error_json(report.error),
                "nodes": [{"seq": seq, "message": None} for seq in state.nodes],
                "replacements": [r.to_json() for r in state.replacements], "messages": None}
    tail = report.torn_tail  # (a view of the whole log read up to a torn last line: it reaches no further)
    return {"seq": report.seq,
            "nodes": [{"seq": seq, "message": n} for seq, n, _ in numbered(report.node_messages or [])],
            "replacements": [r.to_json() for r in state.replacements],
            "messages": report.messages, "tornTail": None if tail is None else tail.to_json()}


def health_facts(health: Health) -> dict[str, Any]:
    """The health summary's own facts, without the envelope `Session.inspect`'s `to_json()`
    adds when the fold fails (a reporter adds it itself, when the command line sets one)."""
    from dshreplay.analyses.health import Health
    return Health.to_json(health)


def files_json(reports: Iterable[FileReport]) -> dict[str, Any]:
    """`validate --json`: one object per log (`FileReport.to_json`, called as such: the
    library's `Validation`, a FileReport, prints as this whole command)."""
    from dshreplay.analyses.validate import FileReport
    return {"files": [FileReport.to_json(r) for r in reports]}


def stats_json(stats: Iterable[SessionStats], total: SessionStats | None = None) -> dict[str, Any]:
    """`stats --json`: one object per session, and their total over several (`SessionStats.to_json`,
    called as such: the library's `Stats`, a SessionStats, prints as this whole command)."""
    from dshreplay.analyses.stats import SessionStats
    body: dict[str, Any] = {"sessions": [SessionStats.to_json(s) for s in stats]}
    if total is not None:
        body["total"] = SessionStats.to_json(total)
    return body


def lineage_json(roots: Iterable[Node], problems: list[str]) -> dict[str, Any]:
    """`lineage --json`: the session trees, and the problems of no single session."""
    return {"sessions": [r.to_json() for r in roots], "problems": problems}


def exported_json(out: Path | str, manifest: dict[str, Any], digest: str) -> dict[str, Any]:
    """`export --json`: where the bundle is, each session's manifest entry, the redaction
    counts, how many files the manifest lists, and the bundle digest."""
    return {"out": str(out), "sessions": manifest["sessions"], "redaction": manifest["redaction"],
            "files": len(manifest["files"]), "digest": digest}


class Reporter:
    """The one interface every reporter follows (`TextReporter`: tables for people;
    `JsonReporter`: one JSON value; `JsonLinesReporter`: one JSON object per line).

    The command line picks a reporter and hands it what the library returns: one
    method per kind of answer, each writing that whole answer to the reporter's
    stream. A reporter only shapes what it is given: it reads no log and derives no
    fact, so every format says the same thing. Numbers people see (calls, messages,
    turns) count from 1; seqs are event positions from 0.
    """

    def fold(self, report: FoldReport) -> None:
        """The model's view at a seq (`Session.fold`): its nodes, each with the number of its message."""
        raise NotImplementedError

    def validate(self, reports: list[FileReport]) -> None:
        """The findings of each log (`validate_log`)."""
        raise NotImplementedError

    def shadows(self, records: Sequence[ShadowRecord]) -> None:
        """Every replacement (`Session.shadows`)."""
        raise NotImplementedError

    def brackets(self, records: Sequence[BracketRecord]) -> None:
        """Every compaction bracket (`Session.brackets`)."""
        raise NotImplementedError

    def provenance(self, rows: Iterable[MessageProvenance]) -> None:
        """Where each model message came from (`Session.provenance`); rows are written as they come."""
        raise NotImplementedError

    def diff(self, diff: ViewDiff, text: str | None = None) -> None:
        """The model's view at one seq against another (`Session.diff`), or its unified `text` diff."""
        raise NotImplementedError

    def calls(self, calls: Sequence[Call]) -> None:
        """The model calls, each with its outcome (`Session.calls`)."""
        raise NotImplementedError

    def request(self, request: Request) -> None:
        """The exact request of one call, with its outcome, or the one built at a seq (`Session.request`)."""
        raise NotImplementedError

    def transcript(self, entries: Sequence[Entry], markdown: bool = False) -> None:
        """The conversation as it happened (`Session.transcript`); `markdown` for the text form."""
        raise NotImplementedError

    @contextmanager
    def event_rows(self) -> Iterator[Callable[[EventRow], None]]:
        """A sink for event rows (`Session.query(sink=...)`), each written as it is found."""
        raise NotImplementedError
        yield

    def lines(self, lines: Sequence[RawLine]) -> None:
        """Physical lines as stored (`Session.lines`)."""
        raise NotImplementedError

    def spills(self, spills: Sequence[Spill]) -> None:
        """The tool results dsh kept out of the model's view (`Session.spills`)."""
        raise NotImplementedError

    def inspect(self, health: Health) -> None:
        """The health summary (`Session.inspect`)."""
        raise NotImplementedError

    def stats(self, stats: Sequence[SessionStats], total: SessionStats | None = None) -> None:
        """Figures per session (`session_stats`), and their `total` over several."""
        raise NotImplementedError

    def lineage(self, roots: Sequence[Node], problems: list[str]) -> None:
        """The tree of parent and child sessions (`lineage`), and the problems of no single session."""
        raise NotImplementedError

    def verify(self, result: Verification) -> None:
        """What `verify_export` found in a bundle and did (a `verify.Verification`)."""
        raise NotImplementedError

    def exported(self, out: Path | str, manifest: dict[str, Any], digest: str) -> None:
        """What `export` wrote, and the bundle digest."""
        raise NotImplementedError

    def query(self, columns: list[str], rows: Sequence[Sequence[object]]) -> None:
        """The result of an SQL query on the index (`sqlindex.run_query`)."""
        raise NotImplementedError

    def indexed(self, report: IndexReport) -> None:
        """What one run of `index` did (`sqlindex.IndexReport`)."""
        raise NotImplementedError

    def usage(self, report: UsageReport) -> None:
        """Tokens, calls, failures, retries, compactions and cost by period, session or model (`usage.UsageReport`)."""
        raise NotImplementedError


class JsonReporter(Reporter):
    """One JSON value per answer: the shapes below (`fold_json`, `files_json`, ...), one place
    each, which the library's results give as their `to_json()` too."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stdout
        self.envelope: dict[str, Any] | None = None  # set when the answer is for a prefix: `envelope_of`
        self.terminal = _is_terminal(self.out)

    def json(self, value: object) -> str:
        """`value` as this reporter writes it: json_text, escaped for a terminal when it writes to one."""
        return json_text(value, self.terminal)

    def emit(self, value: object) -> None:
        if self.envelope is not None:
            value = {**self.envelope, "answer": value}
        self.out.write(self.json(value))
        self.out.write("\n")

    def fold(self, report: FoldReport) -> None:
        self.emit(fold_json(report))

    def validate(self, reports: list[FileReport]) -> None:
        self.emit(files_json(reports))

    def items(self, items: Iterable[HasJson]) -> None:
        """Any list of report objects with `to_json()`."""
        self.emit([item.to_json() for item in items])

    def shadows(self, records: Sequence[ShadowRecord]) -> None:
        self.items(records)

    def brackets(self, records: Sequence[BracketRecord]) -> None:
        self.items(records)

    def calls(self, calls: Sequence[Call]) -> None:
        self.items(calls)

    def spills(self, spills: Sequence[Spill]) -> None:
        self.items(spills)

    def provenance(self, rows: Iterable[MessageProvenance]) -> None:
        """Row by row: each row's origins are worked out as it is written, then dropped."""
        with self.event_rows() as sink:
            for row in rows:
                sink(row)

    @contextmanager
    def event_rows(self) -> Iterator[Callable[[HasJson], None]]:
        """A sink for rows (events, provenance), written as they come: one JSON array (inside the
        envelope, when one is set before the first row)."""
        out, first = self.out, [True]

        def head() -> str:
            return "[" if self.envelope is None else self.json(self.envelope)[:-1] + ',"answer":['

        def sink(row: HasJson) -> None:
            out.write((head() if first[0] else ",") + self.json(row.to_json()))
            first[0] = False
        yield sink
        out.write((head() if first[0] else "") + ("]\n" if self.envelope is None else "]}\n"))

    def lines(self, lines: Sequence[RawLine]) -> None:
        self.emit([line.to_json() for line in lines])

    def diff(self, diff: ViewDiff, text: str | None = None) -> None:
        body = diff.to_json()
        if text is not None:
            body["text"] = text
        self.emit(body)

    def request(self, request: Request) -> None:
        self.emit(request.to_json())

    def transcript(self, entries: Sequence[Entry], markdown: bool = False) -> None:
        self.emit([e.to_json() for e in entries])

    def inspect(self, health: Health) -> None:
        self.emit(health_facts(health))  # (the envelope, when set, is added here)

    def stats(self, stats: Sequence[SessionStats], total: SessionStats | None = None) -> None:
        self.emit(stats_json(stats, total))

    def lineage(self, roots: Sequence[Node], problems: list[str]) -> None:
        self.emit(lineage_json(roots, problems))

    def verify(self, result: Verification) -> None:
        self.emit({"bundle": str(result.bundle), "ok": result.ok, "format": result.format,
                   "generatedAt": result.generated_at, "sessions": result.sessions,
                   "manifestCheckedBy": result.manifest_checked_by, "bundleVerified": result.bundle_verified,
                   "inputsVerified": len(result.checked_inputs),
                   "differences": [d.to_json() for d in result.differences],
                   "inputs": [i.to_json() for i in result.inputs], "notChecked": result.not_checked,
                   "inputsNotChecked": result.unchecked_inputs(),
                   "inputsGrown": [{"input": g.path, "detail": g.problem} for g in result.grown()]})

    def exported(self, out: Path | str, manifest: dict[str, Any], digest: str) -> None:
        self.emit(exported_json(out, manifest, digest))

    def query(self, columns: list[str], rows: Sequence[Sequence[object]]) -> None:
        self.emit([dict(zip(columns, map(cell_json, row))) for row in rows])

    def indexed(self, report: IndexReport) -> None:
        self.emit(report.to_json())

    def usage(self, report: UsageReport) -> None:
        self.emit(report.to_json())


class JsonLinesReporter(JsonReporter):
    """One JSON object per line: a listing's rows (and a report's files or sessions), for `jq` and
    streaming. A listing answered for the events before a failure gives the envelope
    (`{"error", "answeredUpTo"}`) on its first line, then its rows, as `events` does.
    Nothing the JSON holds is left out: where a report has rows of several kinds
    (`stats`: sessions and their total; `lineage`: session trees and problems), each row
    names its kind first (`{"kind": "session", ...}`, `{"kind": "total", ...}`,
    `{"kind": "problem", "problem": TEXT}`; `usage`: its grouping, `{"kind": "day", "key": ...}`, then
    `total`, `unpricedModel` and `foldFailure`)."""

    def stats(self, stats: Sequence[SessionStats], total: SessionStats | None = None) -> None:
        body = stats_json(stats, total)
        self.emit([{"kind": "session", **s} for s in body["sessions"]]
                  + ([{"kind": "total", **body["total"]}] if "total" in body else []))

    def lineage(self, roots: Sequence[Node], problems: list[str]) -> None:
        self.emit([{"kind": "session", **r.to_json()} for r in roots]
                  + [{"kind": "problem", "problem": p} for p in problems])

    def usage(self, report: UsageReport) -> None:
        self.emit([{"kind": report.by, **r.to_json()} for r in report.rows]
                  + [{"kind": "total", **report.total.to_json()}]
                  + [{"kind": "unpricedModel", "model": m} for m in report.unpriced]
                  + [{"kind": "foldFailure", **f.to_json()} for f in report.fold_failures])

    def emit(self, value: object) -> None:
        if self.envelope is not None:  # a listing answered for a prefix: the envelope's line, then its rows
            if type(value) is list:
                self.out.write(self.json(self.envelope) + "\n")
            else:
                value = {**self.envelope, "answer": value}
        if type(value) is dict and len(value) <= 2:
            rows = next((value[k] for k in ("files", "sessions") if type(value.get(k)) is list), None)
            if rows is not None:
                value = rows
        for row in value if type(value) is list else [value]:
            self.out.write(self.json(row))
            self.out.write("\n")

    @contextmanager
    def event_rows(self) -> Iterator[Callable[[HasJson], None]]:
        """Rows one per line (after one line holding the envelope, when one is set
        before the first row)."""
        first = [True]

        def head() -> None:
            if first[0] and self.envelope is not None:
                self.out.write(self.json(self.envelope) + "\n")
            first[0] = False

        def sink(row: HasJson) -> None:
            head()
            self.out.write(self.json(row.to_json()) + "\n")
        yield sink
        head()


class TextReporter(Reporter):
    """Tables that fit `width` (the terminal's, 100 when not a terminal): long cells are
    cut, ids and paths in the middle so that distinct values stay distinct; `wide`
    prints every cell whole."""

    def __init__(self, out: TextIO | None = None, *, width: int | None = None, wide: bool = False) -> None:
        self.out = out or sys.stdout
        self.wide = wide
        self.width = 10**6 if wide else (width or terminal_width())

    def _tbl(self, rows: Sequence[Sequence[object]], headers: Sequence[str], text_col: int | None = None,
             show_headers: bool = True) -> str:
        return render_table(rows, headers, self.width, text_col=text_col, show_headers=show_headers)

    def _wtbl(self, rows: Sequence[Sequence[object]], headers: Sequence[str], wrap_col: int) -> str:
        return render_table(rows, headers, self.width, text_col=wrap_col, wrap=True)

    def _mid(self, text: str, width: int) -> str:
        return one_line(text, 10**6) if self.wide else _middle(text, width)

    def _cut(self, text: str, width: int) -> str:
        return one_line(text, 10**6) if self.wide else clip_end(one_line(text, width), width)

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def para(self, text: str) -> None:
        """Prose wrapped to the width."""
        self.line("\n".join(_wrap(text, min(self.width, 10**4))))

    def _item(self, text: str, lines: int = 8) -> None:
        """An indented item wrapped to the width (its further lines indented more), cut at its end
        past `lines` lines (a log can name a million tools)."""
        room = min(self.width, 10**4) - 4
        wrapped = _wrap(self._cut(text, room * lines), room)
        self.line("\n".join(("  " if n == 0 else "    ") + part for n, part in enumerate(wrapped)))

    def fold(self, report: FoldReport) -> None:
        if report.state is None or report.node_messages is None:
            return  # the error line on stderr says it all
        state = report.state
        replaced = {r.seq: r for r in state.replacements}
        rows: list[tuple[object, ...]] = []
        for seq, number, message in numbered(report.node_messages):
            event = state.events[seq]
            r = replaced.get(seq)
            op = f"replace {r.start}..{r.end}" if r else "append"
            if message is None:
                rows.append(("-", seq, role_of(event.type, None), op, 0, "(no message: empty content)"))
            else:
                rows.append((number, seq, role_of(event.type, message), op, json_size(message),
                             message_text(message)))
        if rows:
            self.line(self._tbl(rows, ["#", "seq", "role", "op", "bytes", "text"], text_col=5))
        at = "no events" if report.seq is None else f"seq {report.seq}"
        self.para(f"{counted(len(state.nodes), 'node')}, {counted(len(report.messages or ()), 'message')}, "
                  f"{counted(len(state.replacements), 'replacement')} at {at}")

    def validate(self, reports: list[FileReport]) -> None:
        from dshreplay.analyses.findings import ERROR, NOTICE, WARNING
        for report in reports:
            counts = ", ".join(counted(report.count(s), s) for s in (ERROR, WARNING, NOTICE))
            verdict = "UNREADABLE" if report.unreadable else ("ok" if report.ok else "FAILED")
            rest = f": {verdict}: {counted(report.events, 'event')}, {counts}"
            self.line(whole(report.path) + rest)  # (a file name is never cut: it is what the line is about)
            rows = [(f.severity, f.code, _dash(f.seq), _dash(f.line), f.pointer or "-",
                     self._cut(f.message, 2000)) for f in report.findings]
            if rows:
                self.line(self._wtbl(rows, ["severity", "code", "seq", "line", "pointer", "message"], 5))
            for code, n in sorted(report.omitted.items()):
                self.line(f"... and {n} more {code} findings (--all-findings lists them)")
            if report.omitted_records:
                self.line(f"... and {report.omitted_records} more records failing their schema "
                          "(DSH-E004/DSH-E005; --all-findings lists them)")
            self.line()
        total = {s: sum(r.count(s) for r in reports) for s in (ERROR, WARNING, NOTICE)}
        unreadable = sum(1 for r in reports if r.unreadable)
        failed = sum(1 for r in reports if not r.ok and not r.unreadable)
        self.para(f"{counted(len(reports), 'file')}: {len(reports) - failed - unreadable} ok, {failed} with "
                  f"errors, {unreadable} unreadable; {counted(total[ERROR], ERROR)}, "
                  f"{counted(total[WARNING], WARNING)}, {counted(total[NOTICE], NOTICE)}")

    # -- forensics ---------------------------------------------------------
    def shadows(self, records: Sequence[ShadowRecord]) -> None:
        rows = [(r.seq, r.kind, f"{r.start}..{r.end}", _seqs(r.shadowed_seqs), _dash(r.meter_seq),
                 _dash(r.tokens), _dash(r.compaction_id) or "-", _seqs(r.chain) or "-")
                for r in records]
        if rows:
            self.line(self._wtbl(rows, ["seq", "kind", "range", "shadowed", "meter", "tokens",
                                            "compactionId", "chain"], 3))
        self.line(counted(len(records), "replacement"))

    def brackets(self, records: Sequence[BracketRecord]) -> None:
        rows = [(_dash(b.compaction_id), _dash(b.start), _dash(b.end), b.status, _dash(b.turn),
                 _dash(b.summary_seq), _dash(b.replacement_seq),
                 self._cut("; ".join(b.anomalies + ([f"error: {_dash(b.error)}"] if b.error is not None else [])),
                          2000) or "-")
                for b in records]
        if rows:
            self.line(self._wtbl(rows, ["compactionId", "start", "end", "status", "turn", "summary",
                                            "replacement", "notes"], 7))
        self.line(counted(len(records), "compaction"))

    def provenance(self, rows: Iterable[MessageProvenance]) -> None:
        table = [(p.index, p.seq, str(p.type), _op(p.op), _seqs(p.sources) or "-",
                  _origins(p.origins) or "-", _spilled(p.spills)) for p in rows]
        if table:
            self.line(self._wtbl(table, ["#", "seq", "type", "op", "sources", "origins", "spilled"], 5))
        off = sum(1 for row in table if row[0] is None)  # (a row off the view has no message number)
        self.line(counted(len(table) - off, "message") + (f", {off} off the view" if off else ""))

    def diff(self, diff: ViewDiff, text: str | None = None) -> None:
        if text is not None:
            self.out.write(text)
            return
        self.para(f"model view at seq {diff.a} -> seq {diff.b}: {len(diff.kept)} kept, {len(diff.removed)} "
                  f"removed, {len(diff.added)} added")
        rows = [("removed", s, f"by replacement at seq {by}" if by is not None else "-")
                for s, by in diff.removed] + [("added", s, "-") for s in diff.added]
        if rows:
            self.line(self._tbl(rows, ["change", "seq", "note"]))

    def calls(self, calls: Sequence[Call]) -> None:
        from dshreplay.analyses.calls import outcome_text
        rows = []
        for c in calls:
            finish = one_line(outcome_text(c.outcome, c.error_code), 30) if c.kind == "main" else "-"
            usage = c.usage if type(c.usage) is dict else {}
            rows.append((_dash(c.call) if c.kind == "main" else c.kind, _dash(c.turn), _dash(c.step),
                         f"{c.first_chunk_seq}..{c.last_chunk_seq}", f"{_dash(c.provider)}/{_dash(c.model)}",
                         finish, _dash(usage.get("inputTokens")), _dash(usage.get("outputTokens")),
                         _dash(c.message_count)))
        if rows:
            self.line(self._wtbl(rows, ["call", "turn", "step", "chunks", "model", "outcome", "in",
                                            "out", "msgs"], 5))
        main = sum(1 for c in calls if c.kind == "main")
        self.line(counted(main, "model call") + (f", {len(calls) - main} auxiliary" if len(calls) > main else ""))

    def request(self, request: Request) -> None:
        config = request.header.get("config") if type(request.header) is dict else None
        title = f"call {request.call}" if request.call is not None else f"request at seq {request.at_seq}"
        any_tool = any(role_of(None, m) == "tool" for m in request.messages)
        self.para(f"{title}: turn {_dash(request.turn)}, step {_dash(request.step)}; messages as of seq "
                  f"{request.at_seq}; header from seq {_dash(request.header_seq)}"
                  + (f"; role tool: a tool result, sent as role {TOOL_RESULT_WIRE_ROLE}" if any_tool else ""))
        if request.call is not None:
            usage = request.usage if type(request.usage) is dict else {}
            from dshreplay.analyses.calls import outcome_text
            outcome = outcome_text(request.outcome, request.error_code)
            self.para(f"outcome: {one_line(outcome, 200)}; chunks {request.first_chunk_seq}..{request.last_chunk_seq}; "
                      f"usage in {_dash(usage.get('inputTokens'))} out {_dash(usage.get('outputTokens'))}")
        if type(config) is dict:
            self.line("config: " + self._cut(", ".join(f"{k}={_dash(v)}" for k, v in config.items()), self.width - 8))
        header = request.header if type(request.header) is dict else {}
        if type(header.get("system")) is str:
            self.line("system: " + self._cut(header["system"], self.width - 8))
        tools = header.get("tools")
        if type(tools) is list:
            names = [_dash(t.get("name") if type(t) is dict else t) for t in tools]
            self.line("tools: " + self._cut(", ".join(names), self.width - 7))
        rows = [(k, self._cut(role_of(None, m), 10), message_text(m)) for k, m in enumerate(request.messages, 1)]
        if rows:
            self.line(self._tbl(rows, ["#", "role", "text"], text_col=2))
        self.line(counted(len(request.messages), "message"))

    def transcript(self, entries: Sequence[Entry], markdown: bool = False,
                   quote: Callable[[Entry, str], tuple[str, str | None]] | None = None) -> None:
        """The conversation as text; with `markdown`, as Markdown that reads as
        plain text: log text only inside fences and code spans, never escaped.
        A message's every line is indented (`_indented`), so no log text starts a line
        that looks like a turn header or a marker, which start at the margin.
        `quote(entry, text)`, when given, says how much of a message's text to show
        and a note to add after it (None: none), as (text, note)."""
        for e in entries:
            if e.entry == "message":
                when = f" · {e.time}" if e.time else ""
                text = clean(e.text()).rstrip()
                note = None
                if quote is not None:
                    text, note = quote(e, text)
                if markdown:
                    self.line(f"### {markdown_label(self._cut(e.role or '?', 40))} · seq {e.seq}{when}")
                    self.line()
                    self.line(_fenced(_indented(text)))
                    if note is not None:
                        self.line(f"> {markdown_marker(note)}")
                else:
                    self.line(f"── {whole(e.role or '?')} · seq {e.seq}{when} ──")
                    self.line(_indented(text))
            else:
                marker = one_line(e.marker_text(), 10**4)  # (it quotes log values: codes, turn numbers)
                self.line(f"> {markdown_marker(marker)}" if markdown else marker)
                if e.entry == "replacement" and e.message is not None:
                    text = clean(e.text()).rstrip()
                    if markdown:
                        self.line()
                    self.line(_fenced(_indented(text)) if markdown else _indented(text))
            self.line()

    @contextmanager
    def event_rows(self, page: int = 5000) -> Iterator[Callable[[EventRow], None]]:
        """A sink for event rows, printed as tables of `page` rows (memory stays bounded)."""
        table: list[tuple[object, ...]] = []
        count = [0]
        headers = ["seq", "time", "type", "turn", "step", "surface", "text"]

        def flush() -> None:
            if table:
                self.line(self._tbl(table, headers, text_col=6, show_headers=count[0] <= page))
                table.clear()

        def sink(r: EventRow) -> None:
            table.append((r.seq, r.time[11:23] if r.time else "-", str(r.type), _dash(r.turn),
                          _dash(r.step), r.surface, self._cut(r.text, 200) or "-"))
            count[0] += 1
            if len(table) >= page:
                flush()
        yield sink
        flush()
        self.line(counted(count[0], "event"))

    def lines(self, lines: Sequence[RawLine]) -> None:
        """Physical lines as stored, each after its number, escaped for the terminal; a line that
        holds no record marked `!` after its number, and why it holds none said after them."""
        width = len(str(lines[-1].line)) if lines else 1
        problems = [(line.line, line.problem) for line in lines]
        for line, (_, problem) in zip(lines, problems):
            self.line(f"{line.line:>{width}}{'!' if problem else ' '} {line.escaped()}")
        for number, problem in problems:
            if problem:
                self.line(f"(line {number}: {problem})")

    def spills(self, spills: Sequence[Spill]) -> None:
        rows = [(s.seq, _dash(s.call_id), _dash(s.tool), s.omitted,
                 "-" if s.found is None else (f"{s.stored} bytes" if s.found else "missing"),
                 "yes" if s.inherited else "-", s.locator) for s in spills]
        if rows:
            self.line(self._tbl(rows, ["seq", "callId", "tool", "omitted", "stored", "inherited", "locator"]))
        self.line(counted(len(spills), "spilled result"))

    def inspect(self, health: Health) -> None:
        h = health_facts(health)
        head = h["header"]
        def fact(value: object) -> str:
            return self._cut(_dash(value), 80)
        facts = [("file", fact(h["path"])), ("encoding", h["encoding"]),
                 ("session id", fact(head["id"])), ("cwd", fact(head["cwd"])),
                 ("created", fact(head["createdAt"])), ("origin", fact(head["origin"])),
                 ("parent", fact(head["parentSession"])), ("seedLength", fact(head["seedLength"])),
                 ("events / lines", f"{h['events']} / {h['lines']}"),
                 ("turns / steps / calls", f"{h['turns']} / {h['steps']} / {h['calls']}"),
                 ("replacements", h["replacements"]), ("surface nodes", _dash(h["surfaceNodes"])),
                 ("torn tail", ("none" if h["error"] is None else "not read (past the failure)")
                  if health.index.torn_tail is None
                  else f"line {health.index.torn_tail.line}: {health.index.torn_tail.describe()}"),
                 ("fold", "ok" if h["error"] is None else fails_at(h["error"])),
                 ("last turn", _last_turn(h))]
        self.line(render_table(facts, (), self.width, text_col=1, wrap=True))
        if health.closers:
            self.line()
            self.line("dsh would close the interrupted turn with:")
            for c in health.closers:
                self.line(f"  {clean(c.describe())}")
        self.line()
        counts = list(h["countsByType"].items())
        self.line(self._tbl([(k, v) for k, v in counts], ["type", "events"]))


    def stats(self, stats: Sequence[SessionStats], total: SessionStats | None = None) -> None:
        rows: list[tuple[object, ...]] = []
        for s in [*stats, *([total] if total is not None else [])]:
            if s.unreadable:
                rows.append((s.path, "unreadable", "", "", "", "", "", "", "", ""))
                continue
            t = s.tokens
            tools = sum(v["calls"] for v in s.tools.values())
            errors = sum(v["errors"] for v in s.tools.values())
            rows.append((s.path, s.turns, s.steps, f"{s.calls}/{sum(s.failed_calls.values())}",
                         s.retries, f"{tools}/{errors}", f"{s.approvals['asked']}/{s.approvals['denied']}",
                         f"{s.compactions['summaries']}/{s.compactions['prunes']}",
                         f"{t['input']}/{t['output']}", f"{s.surface_now}/{s.appended}/{s.forgotten}"))
        self.line(self._tbl(rows, ["session", "turns", "steps", "call/fail", "retry", "tool/err", "ask/deny",
                                      "sum/prn", "tok in/out", "surface"]))
        self.para("call/fail: model calls/failed; tool/err: tool calls/failed; ask/deny: approvals asked/denied; "
                  "sum/prn: summaries/prunes; surface: messages the model sees now / ever appended / forgotten")
        for s in stats:
            if s.unreadable:
                continue
            self.line()
            self.line(whole(s.path))
            if s.error is not None:
                self._item(answered_for(s.error))
            if s.tools:
                self._item("tools: " + ", ".join(
                    f"{clean(name)} {v['calls']}" + (f" ({v['errors']} failed)" if v["errors"] else "")
                    for name, v in s.tools.items()))
            if s.failed_calls:
                self._item("failed calls: " + ", ".join(f"{code} {n}" for code, n in s.failed_calls.items()))
            if s.cancelled_calls:
                self._item(f"cancelled calls: {s.cancelled_calls}")
            if s.turn_endings:
                endings = Counter(s.turn_endings)
                self._item("turns ended: " + ", ".join(f"{n} {e}" for e, n in endings.items()))
            for k, v in s.times.items():
                if v:
                    self._item(f"{k}: median {v['medianMs']:.0f} ms, max {v['maxMs']:.0f} ms (n={v['count']})")

    def lineage(self, roots: Sequence[Node], problems: list[str]) -> None:
        for root in roots:
            for depth, node in root.walk():
                # indented up to MAX_INDENT levels; deeper ones say their depth (a line stays short)
                indent = "  " * min(depth, MAX_INDENT)
                branch = ("└─ " if depth else "") + (f"[{depth}] " if depth > MAX_INDENT else "")
                mark = "" if node.seed_checked is None else (" seed ok" if node.seed_checked else " SEED DIFFERS")
                rest = f" [{whole(as_text(node.origin or 'root'))}]{mark}"
                # the session id and the file name whole, on one line: they are what a reader looks
                # for (and greps for)
                self.line(indent + branch + whole(as_text(node.session_id)) + rest + "  " + whole(node.path))
                for problem in node.problems:
                    self.line(indent + "   ! " + self._cut(problem, self.width - len(indent) - 5))
        for problem in problems:
            self.line("! " + self._cut(problem, self.width - 2))

    def verify(self, result: Verification) -> None:
        self.line(f"bundle   format {shown(result.format, 20, quote=False)}, made "
                  f"{shown(result.generated_at, 40, quote=False)}, {counted(result.sessions, 'session')}")
        for i in result.inputs:
            size = "size unknown" if i.size is None else f"{i.size} bytes"
            told = i.status if not i.detail or i.status == "differs" else f"{i.status}: {i.detail}"
            self.line(f"input    {self._cut(i.input, 50)} ({size} at export): {one_line(told, 10**4)}")
        for d in result.differences:
            self.line(f"DIFFERS  {self._cut(d.path, 50)}: {d.problem}")
        for what in result.not_checked:
            self.line(f"not checked: {what}")
        self.line(f"{result.bundle}: {_verdict(result)}")

    def query(self, columns: list[str], rows: Sequence[Sequence[object]]) -> None:
        if columns:
            cells = [[cell_text(v) for v in row] for row in rows]
            self.line(self._tbl(cells, columns) if cells else "  ".join(columns))
        self.line(f"({counted(len(rows), 'row')})")

    def indexed(self, report: IndexReport) -> None:
        self.line(f"{whole(report.db)}: {counted(report.sessions, 'session')}; this run: {len(report.new)} new, "
                  f"{len(report.appended)} grown ({report.resumed} read from where they were indexed), "
                  f"{len(report.rewritten)} rewritten (indexed again whole), "
                  f"{report.unchanged} unchanged, {len(report.vanished)} vanished, "
                  f"{len(report.unreadable)} unreadable, {len(report.fold_failures)} whose fold fails")
        if report.parquet is not None:
            self.line(f"Parquet partitions in {whole(report.parquet)}")

    def usage(self, report: UsageReport) -> None:
        def cells(row: UsageRow) -> list[object]:
            failed = sum(row.failed.values())
            codes = ", ".join(f"{code} {n}" for code, n in sorted(row.failed.items()))
            tokens = row.tokens
            out = [row.key, len(row.sessions), row.calls, f"{failed} ({codes})" if failed else 0, row.retries,
                   row.compactions if report.by != "model" else "-", tokens["input"], tokens["output"],
                   tokens["cache_read"], tokens["cache_write"]]
            if report.priced:
                out.append("-" if row.cost is None else f"{row.cost:.4f}")
            return out
        headers = [report.by, "sessions", "calls", "failed", "retries", "compactions", "input", "output",
                   "cacheRead", "cacheWrite"] + (["cost"] if report.priced else [])
        if report.rows:
            self.line(self._tbl([cells(r) for r in report.rows] + [cells(report.total)], headers))
        else:
            self.line("no model calls")
        if report.unpriced:
            self.line("no price for: " + ", ".join(report.unpriced))

    def exported(self, out: Path | str, manifest: dict[str, Any], digest: str) -> None:
        rows = [(e.get("input", ""), e.get("folder") or "-", e.get("verdict"), e.get("events", "-"),
                 _redactions(e.get("redactions")))
                for e in manifest["sessions"]]
        self.line(self._tbl(rows, ["input", "folder", "verdict", "events", "redactions"]))
        red = manifest["redaction"]
        signed = type(manifest.get("integrity")) is dict and manifest["integrity"].get("signature") is not None
        shown = whole(str(out))
        self.para(f"wrote {counted(len(manifest['files']) + 1 + signed, 'file')} to {shown}; "
                  f"{counted(red['replacements'], 'redaction')}; "
                  f"open {shown}/index.html")
        self.line(f"bundle digest: {digest}")


def _verdict(result: Verification) -> str:
    """verify-export's last line: "verified" only when the manifest itself was checked."""
    if result.differences:
        return counted(len(result.differences), "difference")
    if not result.sessions:
        return "nothing checked: the bundle holds no session"
    inputs = result.checked_inputs
    every = len(inputs) == len(result.inputs)
    grew = sum(i.status == "grew" for i in inputs)
    since = f" ({grew} grew since)" if grew else ""
    told = ("every input matches it" if every else
            f"{len(inputs)} of {len(result.inputs)} inputs checked and matching") + since
    if not result.anchored:
        if not inputs:
            return "nothing checked: no digest or signature vouched for the manifest (give --digest or --public-key)"
        matched = ("every input matches the manifest" if every else
                   f"{len(inputs)} of {len(result.inputs)} inputs match the manifest") + since
        return (f"not verified: {matched}, but no digest or signature vouched for the bundle's own files, and a "
                "manifest rewritten with them matches too (give --digest or --public-key)")
    by = " and ".join(result.manifest_checked_by)
    if not inputs:
        return f"verified: every file matches the manifest, and the manifest its {by}; no input checked"
    return f"verified: every file matches the manifest, the manifest its {by}, and {told}"


def _redactions(counts: object) -> str:
    """A session's replacements, with the rules that made the most: "12 (GitHub Token 9, password
    assignment 3)"; "-" when it was not exported."""
    if type(counts) is not dict:
        return "-"
    top = sorted(counts["byRule"].items(), key=lambda kv: (-kv[1], kv[0]))
    rules = ", ".join(f"{rule} {n}" for rule, n in top[:3]) + (", ..." if len(top) > 3 else "")
    return f"{counts['replacements']} ({rules})" if rules else str(counts["replacements"])


def _last_turn(h: dict[str, Any]) -> str:
    """How the last turn ended, with where: "completed (turn 2, seq 40)", "error AUTH (turn 1, seq 9)";
    when the fold fails inside it, "unknown past seq S (turn 4, from seq 520)"."""
    if not h["turnEndings"]:
        return "no turn"
    last = h["turnEndings"][-1]
    where = f"turn {as_text(last['turn'])}, " + (f"seq {last['endSeq']}" if last["endSeq"] is not None
                                         else f"from seq {last['startSeq']}")
    ending = last["ending"]
    if last["endSeq"] is None and h["answeredUpTo"] is not None:
        ending = f"{ending} past seq {h['answeredUpTo']}"
    return one_line(f"{ending} ({where})", 80)


def _seqs(seqs: Iterable[int]) -> str:
    """Seqs in short, in their order: a run of three or more consecutive ones as `a..b`; past six
    parts the first three and the last; past six seqs their number."""
    seqs = list(seqs)
    parts: list[str] = []
    i = 0
    while i < len(seqs):
        j = i
        while j + 1 < len(seqs) and type(seqs[j]) is type(seqs[j + 1]) is int and seqs[j + 1] == seqs[j] + 1:
            j += 1
        parts += [f"{seqs[i]}..{seqs[j]}"] if j - i >= 2 else map(str, seqs[i:j + 1])
        i = j + 1
    text = ", ".join(parts) if len(parts) <= 6 else ", ".join(parts[:3]) + f", … {parts[-1]}"
    return text + (f" ({len(seqs)})" if len(seqs) > 6 else "")


def _op(op: object) -> str:
    if isinstance(op, tuple):
        return f"replace {op[0]}..{op[1]}"
    return one_line(_dash(op), 20)


def _origins(origins: Iterable[tuple[int, object]]) -> str:
    by_type: dict[object, list[int]] = {}
    for seq, kind in origins:
        by_type.setdefault(kind, []).append(seq)
    return "; ".join(f"{one_line(str(k), 100)}: {_seqs(v)}" for k, v in by_type.items())  # (a type is short)


def _spilled(spills: Sequence[Spill]) -> str:
    """A message's spill notes in short: the bytes dsh kept out of the model's view."""
    if not spills:
        return "-"
    return ", ".join(f"{s.omitted:,} B" + (" (inherited)" if s.inherited else "") for s in spills)


def _indented(text: str) -> str:
    """Log text in a transcript: each line (cleaned) after two spaces, an empty one left empty."""
    return "\n".join("  " + line if line else line for line in text.split("\n"))


def _fenced(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{text}\n{fence}"


def markdown_label(text: str) -> str:
    """A short log value (a role, a session id) for a Markdown heading: as is
    when it is a plain word, else as a code span, so it is shown and inert."""
    text = one_line(text, 200)
    return text if re.fullmatch(_PLAIN_LABEL, text) else _code_span(text)


def markdown_marker(marker: str) -> str:
    """A transcript marker (`[turn 1 ended: error AUTH at seq 11]`) for Markdown: as is when it
    holds nothing Markdown acts on, else as a code span (a log value in it could make a link)."""
    return marker if re.fullmatch(_PLAIN_MARKER, marker) else _code_span(marker)


def _code_span(text: str) -> str:
    """Text as an inert Markdown code span, its backticks outnumbered."""
    tick = "`"
    while tick in text:
        tick += "`"
    return f"{tick} {text} {tick}"


_PLAIN_LABEL = r"[A-Za-z0-9][A-Za-z0-9 ./:@-]*"
_PLAIN_MARKER = r"\[[A-Za-z0-9 .,:_/-]*\]"


def unified_text_diff(before: NodeMessages, after: NodeMessages, a: int, b: int) -> str:
    """A unified diff of two rendered model views ([(seq, message)] each)."""
    import difflib
    def render(node_messages: NodeMessages) -> list[str]:
        lines = []
        for seq, message in node_messages:
            if message is None:
                continue
            lines.append(f"== seq {seq} · {whole(role_of(None, message))} ==")
            lines.extend(_indented(clean(message_text(message))).split("\n"))  # (no log line passes for a head)
        return [line + "\n" for line in lines]
    return "".join(difflib.unified_diff(render(before), render(after), f"model view at seq {a}",
                                        f"model view at seq {b}"))

