"""The forms a secret may be written in, undone before the redaction rules look for it.

One place for every decoder redaction uses: backslash escapes (JSON's, `\\u0067`,
`\\U0001F511`, `\\x67`, octal `\\147`, `\\n`, `\\'`...), URL encoding to any depth
(`%2567` is `%67` is `g`), and base64, standard or URL-safe, of text or of a binary
frame (msgpack, protobuf, a length prefix: the printable runs of its bytes). Escapes
and URL encoding are undone as a `View`: the decoded text, and where each of its
characters stands in the original, so a secret found in a view is masked in place,
as the escapes that wrote it; a base64 run is masked whole. Each decoder takes time
linear in its text (URL encoding to any depth too: one pass from the end); how many
of them are undone in turn, one inside another, is bounded by `redactor.MAX_LAYERS`.
"""

from __future__ import annotations

import binascii
import bisect
import re
from typing import Any, Iterable, Iterator

__all__ = ["View", "views", "json_view", "unescape", "escapes_decoded", "url_decoded", "base64_runs",
           "PERCENT_PATTERN", "BASE64_GATE", "MAX_BASE64"]

MIN_BASE64 = 16  # a run of base64 shorter than this hides no secret worth decoding for
MAX_BASE64 = 64 * 1024  # base64 runs longer than this (images, archives) are not decoded to look for secrets
MIN_PRINTABLE = 8  # the shortest printable run of a binary frame searched for a secret

Escape = tuple[int, int, str]  # (start, end, the one character it stands for)


class View:
    """A text with some of its stretches undone (each one gives one character), and where
    each character of it stands in the text: a span found in the view masks the escapes
    that wrote it."""

    def __init__(self, text: str, escapes: Iterable[Escape]) -> None:
        pieces: list[str] = []
        at, extra = 0, 0
        self._at: list[int] = []  # where each escape's character stands in the view
        self._extra: list[int] = []  # the characters escapes take beyond one, up to and with each
        for start, end, char in escapes:
            pieces += (text[at:start], char)
            self._at.append(start - extra)
            extra += end - start - 1
            self._extra.append(extra)
            at = end
        pieces.append(text[at:])
        self.text = "".join(pieces)

    def original(self, start: int, end: int) -> tuple[int, int]:
        return start + self._before(start), end + self._before(end)

    def _before(self, offset: int) -> int:
        n = bisect.bisect_left(self._at, offset)  # the escapes whose characters stand before `offset`
        return self._extra[n - 1] if n else 0


# -- backslash escapes: one table, one decoder --------------------------------------------

_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v", "a": "\a"}
_BACKSLASH = re.compile(r"\\(?:u[0-9a-fA-F]{4}|U(?:000[0-9a-fA-F]|0010)[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|[0-7]{1,3}"
                        r"|[nrtbfva\"'\\/])")
_JSON_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|[\"\\/bfnrt])")  # (JSON's own: inside a JSON string token)


def _unbackslash(match: re.Match[str]) -> str:
    body = match.group()[1:]
    if len(body) > 1 and body[0] in "uUx":
        return chr(int(body[1:], 16))
    if body[0] in "01234567":
        return chr(int(body, 8))
    return _SIMPLE.get(body, body)


def _escapes(pattern: re.Pattern[str], text: str) -> Iterator[Escape]:
    return ((m.start(), m.end(), _unbackslash(m)) for m in pattern.finditer(text))


def _backslash_view(text: str) -> View | None:
    if "\\" not in text or _BACKSLASH.search(text) is None:
        return None
    return View(text, _escapes(_BACKSLASH, text))


def json_view(content: str) -> View | None:
    """The inside of a JSON string token as a view (None when it holds no escape)."""
    if "\\" not in content:
        return None
    return View(content, _escapes(_JSON_ESCAPE, content))


def unescape(quoted: str) -> str:
    """The text of a Python repr or JSON string literal's inside (a cut-off escape is kept as it is)."""
    if "\\" not in quoted:
        return quoted
    # JSON writes characters past U+FFFF as two escaped surrogates: join them
    return _BACKSLASH.sub(_unbackslash, quoted).encode("utf-16-le", "surrogatepass").decode("utf-16-le",
                                                                                           "surrogatepass")


_JSON_UNESCAPES = ((b'\\"', b'"'), (b"\\/", b"/"), *((b"\\" + k.encode(), _SIMPLE[k].encode()) for k in "nrtbf"))
_U_ESCAPE = re.compile(rb"\\u([0-9a-fA-F]{4})")


def escapes_decoded(data: bytes) -> bytes:
    """A text (UTF-8) with its backslash escapes undone once. The escapes JSON writes are undone
    quickly (escaped backslashes set aside as NUL, which JSON text never holds raw, the other
    escapes replaced, then the backslashes back); a text with any other (`\\x67`, `\\147`, `\\'`)
    goes through the one decoder of every escape."""
    if b"\0" not in data:
        if data.count(b"\\") == data.count(b'\\"'):  # every backslash escapes a quote (JSON text in a string): the
            return data.replace(b'\\"', b'"')  # only escapes, none of them an escaped backslash's second half
        fast = data.replace(b"\\\\", b"\0")
        for escape, char in _JSON_UNESCAPES:
            if escape in fast:
                fast = fast.replace(escape, char)
        if b"\\u" in fast:
            fast = _U_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)).encode("utf-8", "surrogatepass"), fast)
        if b"\\" not in fast:
            return fast.replace(b"\0", b"\\")
    text = data.decode("utf-8", "surrogatepass")
    return _BACKSLASH.sub(_unbackslash, text).encode("utf-8", "surrogatepass")


# -- URL encoding, to any depth -----------------------------------------------------------

PERCENT_PATTERN = rb"%[0-7][0-9A-Fa-f]"  # (ASCII: what a secret is written in)
_PERCENT = re.compile(PERCENT_PATTERN.decode())
_PERCENT_RUN = re.compile(r"%[%0-9A-Fa-f]{2,}")  # (only `%` and hex digits can make an escape, undone or not)
_HEX = "0123456789abcdefABCDEF"


def _url_escapes(text: str) -> Iterator[Escape]:
    for run in _PERCENT_RUN.finditer(text):
        yield from _undone(run.group(), run.start())


def _undone(run: str, at: int) -> list[Escape]:
    """A run of `%` and hex digits (at `at`) with its URL escapes undone until none is left
    (`%252541` gives `%2541`, `%41`, `A`), in one pass from its end: an escape is undone
    when its `%` is reached, its two characters then as undone as they will ever be (no
    two escapes overlap, so the order in which they are undone does not change the result).
    Each character left stands for a stretch of the run: (start, end, character) of those
    that stand for more than themselves."""
    stack: list[tuple[str, int]] = []  # (character, where its stretch starts), the run's first character last
    for i in range(len(run) - 1, -1, -1):
        char = run[i]
        while char == "%" and len(stack) >= 2 and stack[-1][0] in "01234567" and stack[-2][0] in _HEX:
            char = chr(int(stack[-1][0] + stack[-2][0], 16))
            del stack[-2:]
        stack.append((char, i))
    escapes = []
    end = len(run)
    for char, start in stack:  # (from the run's end)
        if end - start > 1:
            escapes.append((at + start, at + end, char))
        end = start
    escapes.reverse()
    return escapes


def _url_view(text: str) -> View | None:
    if "%" not in text or _PERCENT.search(text) is None:
        return None
    return View(text, _url_escapes(text))


def url_decoded(data: bytes) -> bytes:
    """A text (UTF-8) with its URL encoding undone to any depth."""
    view = _url_view(data.decode("latin-1"))  # (an escape undone is ASCII: the other bytes stay as they are)
    return data if view is None else view.text.encode("latin-1")


def views(text: str) -> Iterator[View]:
    """The text with its backslash escapes undone, and with its URL encoding undone to any
    depth, when it holds any."""
    for view in (_backslash_view(text), _url_view(text)):
        if view is not None:
            yield view


# -- base64 ---------------------------------------------------------------------------------

_BASE64_TEXT = re.compile(r"[A-Za-z0-9+/_-]{" + str(MIN_BASE64) + r",}={0,2}")
_BASE64_BYTES = re.compile(_BASE64_TEXT.pattern.encode())
# where a run of base64 worth decoding may stand (the rules' Gate): a run of MIN_BASE64 characters or more that
# holds an upper case letter (first, in its first 16 characters, or after them), or whose first 16 characters
# are upper case letters, digits and signs (a letter or digit first). A run of lower case letters (words, names,
# paths: `deepseek-official`) is left out, as `base64_runs` drops it: base64 mixes cases, its letters carrying
# its bytes' bits
_B64 = rb"[A-Za-z0-9+/_-]"
BASE64_GATE = (rb"(?:^|[^A-Za-z0-9+/_-])(?:[A-Z]" + _B64 + rb"{15}|" + _B64 + rb"(?:"
               + b"|".join(_B64 + b"{%d}[A-Z]" % k + _B64 + b"{%d}" % (14 - k) for k in range(15))
               + rb"|" + _B64 + rb"{15,}[A-Z])|[A-Z0-9][A-Z0-9+/_-]{15})")
_URLSAFE = bytes.maketrans(b"-_", b"+/")
_PRINTABLE = re.compile(rb"[\t\n\r\x20-\x7e]{%d,}" % MIN_PRINTABLE)


def base64_runs(text: str | bytes) -> Iterator[tuple[int, int, str]]:
    """The runs of base64 (standard or URL-safe) in a text (str or UTF-8 bytes), decoded:
    (start, end, decoded text). A run of text gives its text; one of binary (a msgpack,
    protobuf or length-prefixed frame) gives its printable runs of MIN_PRINTABLE characters
    or more, a line each; a run with none (a hash, an image) is left alone. A run that gives
    nothing whole is tried in its parts between `/` (a path: `/home/<base64>/<base64>.log`)."""
    runs: Iterator[Any] = _BASE64_BYTES.finditer(text) if isinstance(text, bytes) else _BASE64_TEXT.finditer(text)
    for run in runs:
        body = run.group()
        raw = body if type(body) is bytes else body.encode("ascii")
        plain = _decoded(raw)
        if plain is not None:
            yield run.start(), run.end(), plain
        elif b"/" in raw and len(raw) <= MAX_BASE64:
            at = run.start()
            for part in raw.split(b"/"):
                plain = _decoded(part) if len(part) >= MIN_BASE64 else None
                if plain is not None:
                    yield at, at + len(part), plain
                at += len(part) + 1


def _decoded(raw: bytes) -> str | None:
    """A run of base64 decoded, as `base64_runs` gives it (None: nothing to look at)."""
    if len(raw) > MAX_BASE64 or raw.islower() or raw.isupper():  # (words, names, paths: base64 of text
        return None  # mixes cases, as its first character of four takes a letter's high bits)
    core = raw.rstrip(b"=")
    if (b"-" in core or b"_" in core) and (b"+" in core or b"/" in core) or len(core) % 4 == 1:
        return None
    try:
        decoded = binascii.a2b_base64(core.translate(_URLSAFE) + b"=" * (-len(core) % 4), strict_mode=True)
    except (binascii.Error, ValueError):
        return None
    try:
        plain = decoded.decode("utf-8")
    except UnicodeDecodeError:
        plain = ""
    if plain and plain.replace("\n", "").replace("\r", "").replace("\t", "").isprintable():
        return plain
    printable = _PRINTABLE.findall(decoded)
    return "\n".join(part.decode("ascii") for part in printable) if printable else None
