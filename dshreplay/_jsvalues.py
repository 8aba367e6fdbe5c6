"""JSON values as dsh sees them, and as dshreplay shows them.

dsh is written in TypeScript: `1.0` is an integer there, `true` is not a
number, and safe integers stop at 2**53 - 1. The predicates here keep our
checks identical to dsh's on every parsed value.

A log value may be nested as deep as the parser reads (1,024 levels), where
Python's repr(), str() and == recurse past the interpreter's limit. Nothing
here recurses: `shown`/`as_text` are the one way a value is quoted in a
message or a cell, `as_key` the one way it keys a dict, `parse_count` the one
way a number written in text is read. One rule each, too: what a number is
(`is_number`), what a usable time is (`is_time`) and how one is written
(`utc_time`) and read (`parse_time`), and how a JSON pointer is written
(`json_pointer`) and read (`pointer_parts`), and how log text is shown to people
(`visible`, `json_visible`).
"""

from __future__ import annotations

import datetime
import json
import re
import sys
import unicodedata
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator, TypeAlias

JSONValue = Any  # a value parsed from a log (or a part of one): any JSON value, checked at run time
JSONObject = dict[str, Any]  # a JSON object parsed from a log (a record, its data)
# a JSON value as the library's answers hand it out (a model message, a call's outcome): typed, for callers
JSONData: TypeAlias = "None | bool | int | float | str | list[JSONData] | dict[str, JSONData]"

MAX_SAFE_INTEGER = 2**53 - 1
MISSING = object()  # a key absent from a record (JSON has no `undefined`)
MAX_DEPTH = 1024  # the deepest a parsed value nests: orjson refuses a line nested deeper


def is_number(value: JSONValue) -> bool:
    """A JSON number (a bool is none, as in JavaScript)."""
    t = type(value)
    return t is int or t is float


def is_safe_int(value: JSONValue) -> bool:
    t = type(value)
    number: float = value  # (typed for the comparisons below; checked by `t` first)
    if t is int:
        return -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER
    if t is float:
        return number.is_integer() and -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER
    return False


def is_event_seq(value: JSONValue) -> bool:
    """A non-negative safe integer, as dsh requires of seqs."""
    return is_safe_int(value) and value >= 0


MAX_TIME = 253402300799999  # 9999-12-31T23:59:59.999Z in epoch ms: the last moment ISO 8601 writes in 4 digits


def is_time(value: JSONValue) -> bool:
    """A usable event time: epoch milliseconds after 1970 (0 is the projected layout's
    "no time") up to the end of the year 9999. Every duration, time filter and shown
    time asks this one question; `utc_time` writes exactly these."""
    return is_number(value) and 0 < value <= MAX_TIME


def utc_time(ms: JSONValue) -> str | None:
    """Epoch milliseconds as an ISO 8601 UTC time, to the millisecond
    ("2026-07-06T15:36:05.492Z"); None for a value that is no usable time (`is_time`)."""
    if type(ms) is int:  # exactly, whatever its size (ms / 1000 can round the last digit)
        if not 0 < ms <= MAX_TIME:  # (is_time, for an int: an event's time is one, once per row of events.csv)
            return None
        # (events of one second share the second's text, and a millisecond's text is made once)
        return _second_text(ms // 1000) + _millis_text(ms % 1000)
    if not is_time(ms):
        return None
    moment = _EPOCH + datetime.timedelta(milliseconds=ms)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


@lru_cache(maxsize=4)
def _second_text(second: int) -> str:
    return (_EPOCH + datetime.timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%S")


@lru_cache(maxsize=1000)
def _millis_text(millis: int) -> str:
    return f".{millis:03d}Z"


def parse_time(text: str) -> datetime.datetime:
    """An ISO 8601 time ("2026-07-06T15:36:05Z", "2026-07-06 17:36+02:00"; UTC when
    it names no offset) as an aware UTC datetime. ValueError says why a text is
    none: not ISO 8601, or outside the years 1 to 9999 once in UTC."""
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, TypeError, AttributeError):
        raise ValueError("is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        return moment.replace(tzinfo=datetime.timezone.utc)
    try:
        return moment.astimezone(datetime.timezone.utc)
    except (OverflowError, ValueError):
        raise ValueError("is outside the years 1 to 9999 in UTC") from None


def epoch_ms(moment: datetime.datetime) -> int:
    """An aware datetime as whole epoch milliseconds (exact: no float rounding)."""
    return (moment - _EPOCH) // datetime.timedelta(milliseconds=1)


def json_pointer(parts: Iterable[object]) -> str:
    """A JSON pointer (RFC 6901) to the value reached by `parts` (keys and array
    indexes), each key escaped: "~" as "~0", "/" as "~1"."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def pointer_parts(pointer: str) -> list[str]:
    """The keys of a JSON pointer, unescaped ("/a~1b/~0" -> ["a/b", "~"]); "" -> []."""
    if not pointer:
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer[1:].split("/")]


def parse_count(text: JSONValue, maximum: int) -> int | None:
    """A whole number written in ASCII digits only, when it is at most
    `maximum`; None for anything else. The one parser of numbers in text
    (a size option, SOURCE_DATE_EPOCH, a spill note, a bundle's CSV):
    `str.isdigit()` accepts "²" and other scripts' digits, which int() then
    refuses or reads, and int() of thousands of digits raises, so the length
    is checked first."""
    if type(text) is not str or not re.fullmatch(_DIGITS, text) or maximum < 0:
        return None
    if len(text.lstrip("0")) > len(str(maximum)):
        return None
    value = int(text)
    return value if value <= maximum else None


_DIGITS = r"[0-9]+"  # (compiled by `re` on first use, and cached: not at start-up)


def js_equal(a: JSONValue, b: JSONValue) -> bool:
    """Deep equality over JSON values as dsh compares them (1 == 1.0, True != 1);
    iterative, so a value nested as deep as a parser allows compares too."""
    stack = [(a, b)]
    while stack:
        a, b = stack.pop()
        ta, tb = type(a), type(b)
        if ta is bool or tb is bool:
            same = ta is tb and a == b
        elif ta in (int, float) and tb in (int, float):
            same = a == b
        elif ta is dict and tb is dict:
            same = a.keys() == b.keys()
            if same:
                stack.extend((a[k], b[k]) for k in a)
        elif ta is list and tb is list:
            same = len(a) == len(b)
            if same:
                stack.extend(zip(a, b))
        else:
            same = ta is tb and a == b
        if not same:
            return False
    return True


@contextmanager
def nesting_room() -> Iterator[None]:
    """Room for a library routine that recurses once per level of a value
    (pickle.dumps, json.loads) to walk one as deep as the parser reads: the
    interpreter's recursion limit (1,000 by default) is lifted to several
    times MAX_DEPTH while it runs, then put back. The depth is bounded by the
    parser, so the stack is too; our own code walks values iteratively."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * MAX_DEPTH))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def js_same(a: JSONValue, b: JSONValue) -> bool:
    """`a === b` in JavaScript over parsed JSON values: arrays and objects are
    the same only when they are one value (two records never share one), so
    no comparison walks into them."""
    ta, tb = type(a), type(b)
    if ta in (list, dict) or tb in (list, dict):
        return a is b
    if ta is bool or tb is bool:
        return ta is tb and a == b
    return a == b if (ta in (int, float)) == (tb in (int, float)) else False


def js_length(value: JSONValue) -> int | None:
    """`value.length` in JavaScript: strings and arrays have one, other values do not."""
    if type(value) in (str, list):
        return len(value)
    return None


def dig(value: JSONValue, *keys: str | int, default: JSONValue = None) -> JSONValue:
    """value[k1][k2]... through objects (and arrays, for int keys); `default` when absent."""
    for key in keys:
        if type(value) is dict:
            value = value.get(key, MISSING)
        elif type(value) is list and type(key) is int and -len(value) <= key < len(value):
            value = value[key]
        else:
            return default
        if value is MISSING:
            return default
    return value


def json_bytes(value: JSONValue, *, sort_keys: bool = False) -> bytes:
    """A JSON value as compact JSON bytes: orjson's, or for a value orjson cannot
    write (nested deeper than it goes, text that is not UTF-8) an encoder of
    our own that goes to any depth and shows undecodable text as \\xNN."""
    import orjson
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except orjson.JSONEncodeError:
        return "".join(_json_pieces(value, sort_keys)).encode()


def shown(value: JSONValue, width: int | None = 60, *, quote: bool = True) -> str:
    """How a log value is shown to people, in a message or a table cell:
    compact JSON (a string in JSON quotes, or as it is when `quote` is False),
    cut to `width` characters with "..." (None: whole).

    Every message that quotes a log value goes through here: it never
    recurses (a value may be nested as deep as the parser allows, where
    repr() and str() overflow the stack) and its cost is bounded by `width`,
    not by the size of the value."""
    if type(value) is JsonKey:
        value = value.value
    if type(value) is str and not quote:
        text = value
    elif type(value) is int:  # (the common cell: a seq or a count)
        text = str(value)
    elif width is None:
        try:
            text = json_bytes(value).decode()
        except TypeError:
            text = f"<{type(value).__name__}>"
    else:
        text = "".join(_json_pieces(value, limit=width + 1))
    return text if width is None or len(text) <= width else text[:max(width - 3, 0)] + "..."


def as_text(value: JSONValue) -> str:
    """A log value in running text or a table cell, whole (the caller cuts the
    line): a string as it is, anything else as compact JSON. Never str() of a
    log value: it recurses as repr() does."""
    return shown(value, None, quote=False)


def _json_pieces(value: JSONValue, sort_keys: bool = False, limit: int | None = None) -> Iterator[str]:
    """Compact JSON text of `value`, piece by piece, with an explicit stack (any
    depth); pieces stop once `limit` characters are out (a long string is cut
    before it is encoded). A value that is no JSON value shows as <its type>."""
    encode = json.encoder.encode_basestring  # (ensure_ascii off, as orjson)

    def text(s: str) -> str:
        if limit is not None:
            s = s[:limit]
        return encode(s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))

    out = 0
    stack: list[JSONValue] = [value]  # values to write, and the text between them
    while stack and (limit is None or out < limit):
        item = stack.pop()
        if type(item) is _Raw:
            piece = item.text
        elif isinstance(item, str):
            piece = text(item)
        elif item is None or isinstance(item, bool):
            piece = "null" if item is None else "true" if item else "false"
        elif isinstance(item, (int, float)):
            piece = repr(float(item)) if isinstance(item, float) else int.__repr__(item)
        elif isinstance(item, dict):
            pairs = sorted(item.items()) if sort_keys else list(item.items())
            parts: list[JSONValue] = [_Raw("{")]
            for i, (k, v) in enumerate(pairs):
                parts += [_Raw(("," if i else "") + text(str(k)) + ":"), v]
            parts.append(_Raw("}"))
            stack.extend(reversed(parts))
            continue
        elif isinstance(item, (list, tuple)):
            parts = [_Raw("[")]
            for i, v in enumerate(item):
                parts += [_Raw(",")] if i else []
                parts.append(v)
            parts.append(_Raw("]"))
            stack.extend(reversed(parts))
            continue
        elif limit is not None:  # (a message: say what it is)
            piece = f"<{type(item).__name__}>"
        else:
            raise TypeError(f"not a JSON value: {type(item).__name__}")
        out += len(piece)
        yield piece


class _Raw:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class JsonKey:
    """A JSON array or object as a dict key: equal when their JSON text is
    (never equal to a string, so the id [1] and the id "[1]" stay apart)."""

    __slots__ = ("value", "text")

    def __init__(self, value: JSONValue) -> None:
        self.value = value
        self.text = json_bytes(value, sort_keys=False)

    def __eq__(self, other: object) -> bool:
        return type(other) is JsonKey and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"JsonKey({shown(self.value)})"


def as_key(value: JSONValue) -> JSONValue:
    """A JSON value usable as a dict key: itself when hashable (MISSING too: an absent
    value keys apart from null), else a JsonKey (lists, objects). Every dict keyed by
    a log value keys it here."""
    return value if type(value) in (str, int, float, bool, type(None)) or value is MISSING else JsonKey(value)


# -- log text shown to people ---------------------------------------------------------
# The one cleaning of log text for every terminal, table, CSV and page writer. A character
# is shown as itself when Python calls it printable (str.isprintable: letters, marks,
# numbers, punctuation, symbols, the ASCII space); every other one (C0 and C1 controls with
# ESC and CR, DEL, format characters such as the bidirectional controls, U+200B..U+200F,
# U+2060, U+FEFF and the tag characters U+E0000.., line and paragraph separators,
# surrogates, private-use and unassigned code points) is written as an escape, \xNN,
# \uNNNN or \UNNNNNNNN, the way a path's bytes that are not UTF-8 are (\xNN), so it can
# neither act on a terminal nor hide: distinct values print distinctly. Running text
# (`lines`) keeps its line breaks (CRLF as LF), tabs and space separators.

# Runs of characters that may need escaping: all but ASCII's printable ones and the blocks below,
# whose every character is printable (Latin, Greek, Cyrillic, CJK punctuation, kana, ideographs,
# Hangul, full-width forms; tests/unit/test_render.py checks it), so the per-character pass sees
# only the few characters around what it escapes. (compiled by `re` on first use, and cached)
PRINTABLE_BLOCKS = "\u00a1-\u00ac\u00ae-\u0377\u0400-\u052f\u3001-\u303f\u3041-\u3096\u30a1-\u30fa" \
                   "\u4e00-\u9fff\uac00-\ud7a3\uff01-\uff60"
_NOT_ASCII_PRINTABLE = f"[^ -~{PRINTABLE_BLOCKS}]+"
_NOT_ASCII_PRINTABLE_OR_BREAK = f"[^ -~\n\t{PRINTABLE_BLOCKS}]+"


def visible(text: str, *, lines: bool = False) -> str:
    """`text` with every character that is not printable escaped (see above); with `lines`,
    newlines (a CRLF as one), tabs and space separators (U+00A0, U+3000, ...) are kept."""
    if text.isprintable():
        return text  # the common case: nothing to escape
    if lines and "\r\n" in text:
        text = text.replace("\r\n", "\n")
    for c in _FREQUENT:  # (each replaced at C speed: colour codes can come every few characters)
        if c in text:
            text = text.replace(c, _escape(c))
    if text.isprintable() or lines and text.replace("\n", "").replace("\t", "").isprintable():
        return text
    return re.sub(_NOT_ASCII_PRINTABLE_OR_BREAK if lines else _NOT_ASCII_PRINTABLE,
                  lambda m: _visible_run(m.group(), lines), text)


_FREQUENT = "\x1b\r\x07\x00"  # ESC, CR, BEL, NUL


def json_visible(text: str) -> str:
    """JSON text with every character `visible(lines=True)` escapes written as a JSON escape
    (\\uNNNN, a surrogate pair past U+FFFF): the same JSON value, nothing a terminal acts on."""
    if text.isascii() and "\x7f" not in text or text.isprintable():
        return text
    return re.sub(_NOT_ASCII_PRINTABLE, lambda m: _visible_run(m.group(), True, _json_escape), text)


def _visible_run(run: str, lines: bool, escape: Callable[[str], str] | None = None) -> str:
    escape = escape or _escape
    if run.isprintable():
        return run
    if len(run) == 1:  # (a lone control: the common case)
        return run if lines and _kept_in_lines(run) else escape(run)
    return "".join(c if c.isprintable() or lines and _kept_in_lines(c) else escape(c) for c in run)


def _kept_in_lines(c: str) -> bool:
    return c == "\n" or c == "\t" or c > "\x7f" and unicodedata.category(c) == "Zs"


def _escape(c: str) -> str:
    n = ord(c)
    if 0xDC80 <= n <= 0xDCFF:  # a byte that is not UTF-8 (a path's, decoded with surrogateescape)
        n -= 0xDC00
    return f"\\x{n:02x}" if n < 0x100 else (f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}")


def _json_escape(c: str) -> str:
    n = ord(c)
    if n < 0x10000:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"



def elapsed_ms(later: object, earlier: object) -> int | float | None:
    """Milliseconds from one log time to another (None unless both are times)."""
    if isinstance(later, (int, float)) and isinstance(earlier, (int, float)) and is_time(later) and is_time(earlier):
        return later - earlier  # (is_time: a number, never a bool)
    return None
