"""Append-only proof: a hash chain over a log's lines, with checkpoints.

An export records, for each input, the chain's head after its last line and
a checkpoint every 1,000 lines and at each turn end. `verify-export --grown`
recomputes the chain over the lines the export saw: a log that only grew
since keeps every checkpoint and the head (the lines after are reported as
appended); a log rewritten anywhere inside that prefix breaks the first
checkpoint after the change, and the per-line hashes of `events.csv` then
name the first line that differs.

The chain: h0 = SHA-256("dshreplay line chain v1"), h(n) = H(h(n-1) || line n),
lines as stored (with their newline; a `.zstd` log's decompressed lines), the
header and blank lines included, and the last line as far as the export read
it (a log being written may end inside a line). H is the bundle's hash of
input bytes (`evidence.InputHash`): SHA-256, or HMAC-SHA256 under the
evidence key when the export redacted.

A log that only grew is accepted from the first new byte: when the export
read a last line without its newline (a torn tail, or a line being written),
the bytes that complete it are appended bytes. What the bundle does not cover
(the lines, bytes and events after the exported prefix) is reported.

`--grown` proves more than the chain alone: the log must keep its encoding
(a plain log re-encoded as zstd has other bytes), a plain log's first bytes
must hash to the SHA-256 the export recorded (the exported bytes are a prefix
of today's), and a zstd log must hold nothing but frames of log text (a
skippable frame or a frame cut short would hide bytes the chain never sees).
A zstd log with a corrupt frame is chained over the lines before it, and the
chain's `unreadableFrom` says where and why reading stopped: `--grown` then asks
that reading stop at the same line today, and that the exported bytes be the
first bytes of today's log (their hash); bytes after the corrupt frame are
hidden from every reader, as a skippable frame's are.
Every value the manifest gives is checked before use: a malformed one is an
`EntryError` naming its JSON pointer, and every file is read as inputs are
(`sized_file`): a regular file, no further than the size it had when opened.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection

from dshreplay._jsvalues import MISSING, parse_count, shown
from dshreplay.analyses._render import counted
from dshreplay.core.driver import Observer, Record, Run
from dshreplay.errors import ReadError
from dshreplay.integrity._evidence import PLAIN_HASH, InputHash
from dshreplay.io.reader import LogReader, LogSource, line_events, shown_path, sized_file
from dshreplay.options import DEFAULT, Options

SEED = hashlib.sha256(b"dshreplay line chain v1").digest()
EVERY = 1000


class TurnEndLines(Observer):
    """The lines of the `turn/end` events of a pass (checkpoints of the chain)."""

    types = frozenset({"turn/end"})

    def begin(self, run: Run) -> None:
        self.lines: set[int] = set()

    def observe(self, record: Record) -> None:
        item: Any = record.item  # (an Event or a PackedRun: both have a line; the driver's Item on h28f)
        self.lines.add(item.line)


def line_chain(source: LogSource, marks: Collection[int] = frozenset(), every: int = EVERY,
               hasher: InputHash = PLAIN_HASH) -> dict[str, Any]:
    """The chain over every line of `source`, with checkpoints every `every` lines and at `marks`."""
    h, lines, size = SEED, 0, 0
    checkpoints: list[dict[str, Any]] = []
    link = hasher.link
    with source.reader() as reader:
        for lineno, _, raw in reader.readable_lines():
            h = link(h, raw)
            lines, size = lineno, size + len(raw)
            if lineno % every == 0 or lineno in marks:
                checkpoints.append({"line": lineno, "sha256": h.hex()})
        rest = unreadable_from(reader)
    return {"every": every, "lines": lines, "textBytes": size, "head": h.hex(), "checkpoints": checkpoints,
            "unreadableFrom": rest}


def unreadable_from(reader: LogReader) -> dict[str, Any] | None:
    """Where and why reading a log's text stopped before its end (a corrupt zstd frame:
    the chain covers the lines before it), as the manifest's `chain.unreadableFrom`."""
    rest = reader.unreadable_rest
    return None if rest is None else {"line": rest.line, "reason": rest.message}


SHA256_HEX = re.compile(r"[0-9a-f]{64}")
ENCODINGS = {"jsonl": "plain JSONL", "zstd": "zstd-compressed"}


def is_sha256(value: object) -> bool:
    """A SHA-256 as the export writes it: 64 lowercase hex digits."""
    return type(value) is str and SHA256_HEX.fullmatch(value) is not None


def is_count(value: object) -> bool:
    """A byte, line or message count: a non-negative integer (not a boolean)."""
    return type(value) is int and value >= 0


class EntryError(Exception):
    """A value of a manifest entry that is not what an export writes."""

    def __init__(self, pointer: str, expected: str, value: object) -> None:
        got = "nothing" if value is MISSING else shown(value, 60)
        super().__init__(f"{pointer}: expected {expected}, got {got}")
        self.pointer = pointer


def _field(obj: object, pointer: str, key: str, ok: Callable[[Any], bool], expected: str) -> Any:
    value = obj.get(key, MISSING) if type(obj) is dict else MISSING
    if value is MISSING or not ok(value):
        raise EntryError(f"{pointer}/{key}", expected, value)
    return value


@dataclass(frozen=True)
class Exported:
    """What an export recorded of one input, each value checked: its bytes
    (size, hash), its encoding, and the chain over its lines (line count,
    bytes of text, head, checkpoints by line)."""

    size: int
    sha256: str
    encoding: str
    lines: int
    text_bytes: int
    head: str
    checkpoints: dict[int, str]
    unreadable_from: tuple[int, str] | None = None  # (line, why): where the export's reading stopped

    @classmethod
    def of(cls, entry: dict[str, Any], where: str) -> Exported:
        """The facts of the manifest entry at JSON pointer `where`; EntryError names the first bad one."""
        size = _field(entry, where, "size", is_count, "a byte count")
        sha256 = _field(entry, where, "sha256", is_sha256, "a SHA-256 in hex")
        encoding = _field(entry, where, "encoding", lambda v: type(v) is str and v in ENCODINGS, '"jsonl" or "zstd"')
        chain = _field(entry, where, "chain", lambda v: type(v) is dict, "the chain over the log's lines (an object)")
        at = f"{where}/chain"
        lines = _field(chain, at, "lines", lambda v: is_count(v) and v > 0, "a line count (1 or more)")
        text_bytes = _field(chain, at, "textBytes", lambda v: is_count(v) and v >= lines,
                            f"a byte count of the text (at least {lines})")
        head = _field(chain, at, "head", is_sha256, "a SHA-256 in hex")
        listed = _field(chain, at, "checkpoints", lambda v: type(v) is list, "an array of checkpoints")
        checkpoints: dict[int, str] = {}
        last = 0
        for n, point in enumerate(listed):
            line = _field(point, f"{at}/checkpoints/{n}", "line", _line_between(last, lines),
                          f"a line number after {last} and at most {lines}")
            checkpoints[line] = _field(point, f"{at}/checkpoints/{n}", "sha256", is_sha256, "a SHA-256 in hex")
            last = line
        rest = chain.get("unreadableFrom")  # (absent in bundles made before it was recorded: none)
        if rest is not None:
            at = f"{at}/unreadableFrom"
            if type(rest) is not dict:
                raise EntryError(at, 'null or where reading stopped ({"line", "reason"})', rest)
            rest = (_field(rest, at, "line", lambda v: is_count(v) and v > lines, f"a line number after {lines}"),
                    _field(rest, at, "reason", lambda v: type(v) is str, "why the rest cannot be read (text)"))
        return cls(size, sha256, encoding, lines, text_bytes, head, checkpoints, rest)


def _line_between(after: int, most: int) -> Callable[[object], bool]:
    """A test of a checkpoint's line: after the one before, within the chain's lines."""
    return lambda value: type(value) is int and after < value <= most


@dataclass(frozen=True)
class Appended:
    """What a log holds after the text an export read: the bundle does not cover it."""

    offset: int  # the first new byte, in the text (a zstd log's decompressed bytes)
    first_line: int  # the line it is on
    lines: int  # that line and the lines after it
    size: int  # bytes
    events: int  # the events those bytes hold (or complete)
    completes_line: bool  # the export read `first_line` without its end: the first bytes complete it

    def describe(self) -> str:
        first, last = self.first_line, self.first_line + self.lines - 1
        if not self.completes_line:
            what = f"lines {first}..{last}"
        else:
            what = f"the rest of line {first}" + (f" and lines {first + 1}..{last}" if last > first else "")
        return f"{what} appended ({self.size} bytes, {counted(self.events, 'event')})"

    def to_json(self) -> dict[str, Any]:
        return {"fromByte": self.offset, "fromLine": self.first_line, "lines": self.lines, "bytes": self.size,
                "events": self.events, "completesLine": self.completes_line}


@dataclass(frozen=True)
class Growth:
    """How a log compares with what an export saw."""

    status: str  # "same", "grew", "shorter", "rewritten" or "hidden"
    detail: str
    first_line: int | None = None  # rewritten: the first line that differs (when known)
    between: tuple[int, int] | None = None  # rewritten: the lines between the last good checkpoint and the broken one
    appended: Appended | None = None  # grew: what the bundle does not cover

    @property
    def accepted(self) -> bool:
        """Whether `--grown` accepts the log: the exported bytes are all still there, and only log text was added."""
        return self.status in ("same", "grew")


def check_growth(path: Path, exported: Exported, events_csv: Path | None = None,
                 options: Options = DEFAULT, hasher: InputHash = PLAIN_HASH) -> Growth:
    """Compare the log at `path` with what the export saw; `events_csv` (the
    bundle's, checked against the manifest) names the first rewritten line.
    `hasher` is the bundle's hash of input bytes."""
    shown = shown_path(path)
    with sized_file(path, shown) as (stream, _):
        reader = LogReader(stream, name=shown, max_bytes=options.max_bytes, max_line=options.max_line)
        if reader.encoding != exported.encoding:
            return Growth("rewritten", f"the log was {ENCODINGS[exported.encoding]} at export and is "
                                       f"{ENCODINGS[reader.encoding]} now: its bytes changed")
        growth = _follow_chain(reader, exported, hasher)
        if growth.status in ("same", "grew"):
            growth = _past_the_rest(reader, exported, growth, lambda: _bytes_after_the_rest(path, exported, hasher))
    if growth.between is not None:
        return _rewritten(path, *growth.between, events_csv, options, hasher)
    return growth


def _follow_chain(reader: LogReader, exported: Exported, hasher: InputHash) -> Growth:
    """Recompute the chain over the text the export read (its first `exported.lines`
    lines, the last as far as `exported.text_bytes`) and measure what follows."""
    total, expected, link = exported.lines, exported.checkpoints, hasher.link
    plain = exported.encoding == "jsonl"
    prefix, taken = hasher.new(), 0  # a plain log's first `exported.size` bytes
    h, last_good, reached = SEED, 0, 0
    new_lines, new_bytes, new_events, inside_line = 0, 0, 0, False
    for lineno, offset, raw in reader.readable_lines():
        if plain and taken < exported.size:
            part = raw[:exported.size - taken]
            prefix.update(part)
            taken += len(part)
        if lineno > total:
            new_lines, new_bytes, new_events = new_lines + 1, new_bytes + len(raw), new_events + line_events(raw)
            continue
        if lineno == total and offset + len(raw) > exported.text_bytes:  # the export read this line in part
            read = raw[:max(exported.text_bytes - offset, 0)]
            new_lines, new_bytes, inside_line = 1, len(raw) - len(read), True
            new_events = line_events(raw) - line_events(read)
            raw = read
        h = link(h, raw)
        reached = lineno
        want = expected.get(lineno) if lineno < total else exported.head
        if want is None:
            continue
        if h.hex() != want:
            return Growth("rewritten", "", between=(last_good + 1, lineno))
        last_good = lineno
    if reached < total:
        rest = reader.unreadable_rest
        return Growth("shorter", f"the log has {reached} lines, fewer than the {total} the export saw" if rest is None
                      else f"the log can be read for {reached} lines, fewer than the {total} the export read: "
                           f"line {rest.line}: {rest.message}")
    hidden = _hidden(reader)
    if hidden:
        return Growth("hidden", hidden)
    if plain and (taken < exported.size or prefix.hexdigest() != exported.sha256):
        return Growth("rewritten", f"the log's first {exported.size} bytes are not the ones exported (their "
                                   f"{hasher.label} differs from the manifest's), though its lines match the chain")
    if not new_bytes:
        return Growth("same", "unchanged")
    appended = Appended(exported.text_bytes, total if inside_line else total + 1, new_lines, new_bytes,
                        max(new_events, 0), inside_line)
    return Growth("grew", appended.describe(), appended=appended)


def _past_the_rest(reader: LogReader, exported: Exported, growth: Growth,
                   same_stop: Callable[[], Growth]) -> Growth:
    """How a log whose readable lines match the chain compares past them, when either the
    export or today's reading stopped at a rest that cannot be read (`growth` when neither
    did; `same_stop` when both stopped at the same line)."""
    now, then = reader.unreadable_rest, exported.unreadable_from
    if then is None:
        return growth if now is None else Growth(
            "hidden", f"the log's text cannot be read from line {now.line} ({now.message}): bytes were added "
                      "that no reader can read")
    if now is None or now.line != then[0] or growth.status != "same":
        return Growth("rewritten", f"the export could not read the log from line {then[0]} ({then[1]}); it now "
                                   f"{'reads on' if now is None else f'stops at line {now.line}'}: the bytes "
                                   "there changed")
    return same_stop()


def _bytes_after_the_rest(path: Path, exported: Exported, hasher: InputHash) -> Growth:
    """A log whose text is read to the line the export's reading stopped at, and no further:
    its first bytes are the exported ones, or it was rewritten; bytes after them are hidden."""
    digest, taken = hasher.new(), 0
    with sized_file(path, shown_path(path)) as (stream, size):
        while taken < exported.size:
            block = stream.read(min(1 << 20, exported.size - taken))
            if not block:
                break
            digest.update(block)
            taken += len(block)
    line, why = exported.unreadable_from or (0, "")
    if taken < exported.size or digest.hexdigest() != exported.sha256:
        return Growth("rewritten", f"the log's first {exported.size} bytes are not the ones exported (their "
                                   f"{hasher.label} differs from the manifest's), though its readable lines match "
                                   "the chain")
    return Growth("hidden", f"the exported bytes are all still there, and {size - exported.size} bytes were "
                            f"appended after the rest the export could not read (from line {line}: {why}): bytes "
                            "hidden from every reader")


def _hidden(reader: LogReader) -> str:
    """What a zstd log holds that decodes to no log text ("" when nothing)."""
    if reader.textless_frame is not None:
        offset, size = reader.textless_frame
        return (f"the zstd frame at byte offset {offset} holds {size} bytes that decode to no log text "
                "(a skippable frame): bytes hidden from every reader")
    tail = reader.torn_tail if reader.encoding == "zstd" else None
    if tail is not None:
        return (f"the log ends in {tail.size} bytes at byte offset {tail.offset} that decode to no log text "
                "(a zstd frame cut short)")
    return ""


def _rewritten(path: Path, low: int, high: int, events_csv: Path | None, options: Options,
               hasher: InputHash) -> Growth:
    """The first differing line between two checkpoints, from events.csv's per-line hashes."""
    known: dict[int, str] = {}
    if events_csv is not None:
        try:
            known = _line_hashes(events_csv, low, high)
        except (OSError, csv.Error, UnicodeDecodeError, ReadError):
            known = {}
    if known:
        shown = shown_path(path)
        with sized_file(path, shown) as (stream, _):
            reader = LogReader(stream, name=shown, max_bytes=options.max_bytes, max_line=options.max_line)
            for lineno, _, raw in reader.physical_lines():
                if lineno > high:
                    break
                if lineno in known and hasher.hex(raw) != known[lineno]:
                    return Growth("rewritten", f"rewritten inside the exported prefix: line {lineno} differs",
                                  lineno)
    return Growth("rewritten", f"rewritten inside the exported prefix, within lines {low}..{high}")


def _line_hashes(events_csv: Path, low: int, high: int) -> dict[int, str]:
    """events.csv's hash of each raw line from `low` to `high`."""
    known: dict[int, str] = {}
    with sized_file(events_csv, shown_path(events_csv)) as (stream, _):
        text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
        for row in csv.DictReader(text):
            line = parse_count(row.get("line"), high)
            if line is not None and low <= line and row.get("rawSha256"):
                known.setdefault(line, row["rawSha256"])
    return known
