"""Tables for terminals: columns laid out by display width (a CJK character or an emoji takes
two columns, a combining mark none), cells cut in the middle or at the end, free text wrapped,
and the terminal's width. Every text reporter lays its tables out here."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from dshreplay._jsvalues import as_text, visible
from dshreplay.analyses._render import clean, one_line

if TYPE_CHECKING:  # (validate's machinery is imported by the command that validates, not by every start)
    pass


WIDTH = 100  # human output reads well at this many columns


MAX_INDENT = 20  # a tree (lineage) is indented this many levels at most


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
    return _laid_out(cells, heads, widths, need, words, text_col, wrap, bool(titles))


def _laid_out(cells: list[list[str]], heads: list[list[str]], widths: list[int], need: list[int],
              words: dict[int, int], text_col: int | None, wrap: bool, titled: bool) -> str:
    """The table's text, its columns at `widths`: the cells of a column too narrow cut (keeping them
    distinct) or wrapped at their words, the text column cut or wrapped, headers over a dashed rule."""
    cols = len(widths)
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
    if titled:
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
    included, escaped (`_jsvalues.visible`), so distinct values print distinctly."""
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
