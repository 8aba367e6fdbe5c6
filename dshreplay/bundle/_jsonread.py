"""Reading a bundle's JSON: whole files (the manifest, a format 2 call record or stored
message) and the lines of its JSON Lines files (calls.jsonl, messages.jsonl), each
bounded before a byte of it is parsed.

Every JSON value of a bundle is read whole and parsed whole, so both are bounded
first. A parsed value costs up to ~120 bytes of memory (30 times the 3 bytes of
`{},`); a real manifest holds one value per ~26 bytes (the corpus' 179 sessions:
833 KB, 32,000 values). 2,000,000 values is a real manifest of ~50 MB (~11,000
sessions of the corpus' kind, ~300,000 files) and at most ~250 MB of memory; 64 MiB
of bytes leaves room for long strings (paths, ids) beyond that. A line of a JSON
Lines file has the same bounds.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import orjson

from dshreplay.errors import ReadError
from dshreplay.io.reader import read_small_file, shown_path, sized_file

MAX_JSON_BYTES = 64 * 1024**2
MAX_JSON_VALUES = 2_000_000
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


def read_bundle_json(path: Path, what: str) -> tuple[bytes, object]:
    """A JSON file of a bundle, read as every input is (a regular file, never a
    pipe or a device), at most MAX_JSON_BYTES long and parsed only when it holds
    at most MAX_JSON_VALUES values (counted first, in one pass over its bytes).
    Returns its bytes and its value; anything else is a ReadError naming it."""
    data = read_small_file(path, MAX_JSON_BYTES, what)
    return data, parse_bundle_json(data, what, shown_path(path))


def parse_bundle_json(data: bytes, what: str, where: str, line: int | None = None) -> Any:
    """The value of JSON text of a bundle (a file's bytes, or one line's), parsed only when
    it holds at most MAX_JSON_VALUES values; else a ReadError naming `where` (and `line`)."""
    if _value_count(data) > MAX_JSON_VALUES:
        raise ReadError(f"{what} holds more than {MAX_JSON_VALUES:,} JSON values, more than a bundle dshreplay "
                        "writes: not parsed", path=where, line=line)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ReadError(f"{what} is not valid JSON: {exc}", path=where, line=line) from None


def bundle_lines(path: Path, what: str) -> Iterator[tuple[int, bytes]]:
    """The lines of a JSON Lines file of a bundle (line number from 1, bytes without
    the newline), read as every input is and no further than its size when opened; a
    line longer than MAX_JSON_BYTES is a ReadError (nothing past the bound is held)."""
    shown = shown_path(path)
    with sized_file(path, shown) as (fh, _):
        number = 0
        readline = fh.readline
        while True:
            line = readline(MAX_JSON_BYTES + 1)
            if not line:
                return
            number += 1
            if len(line) > MAX_JSON_BYTES:
                raise ReadError(f"a line of {what} is longer than {MAX_JSON_BYTES} bytes", path=shown, line=number)
            yield number, line[:-1] if line.endswith(b"\n") else line


def _value_count(data: bytes) -> int:
    """At most how many values and keys a JSON text holds: one per `,` `:` `[` `{`,
    and one more. When that is too many, those inside strings are left out (a
    second pass with the strings blanked: a long string full of commas is one
    value), unless the text holds over a million quotes: blanking costs ~200
    bytes a string, and no manifest export writes has that many strings and
    still too many of those characters outside them."""
    def count(text: bytes) -> int:
        return text.count(b",") + text.count(b":") + text.count(b"[") + text.count(b"{") + 1
    rough = count(data)
    if rough <= MAX_JSON_VALUES or data.count(b'"') > MAX_JSON_VALUES // 2:
        return rough
    return count(_JSON_STRING.sub(b'""', data))
