"""Read a dsh session log as a stream: the header, then events in seq order.

Accepts a `.jsonl` file, a `.jsonl.zstd` file (detected by its magic bytes),
a session directory holding one of those, or `-` for standard input. Packed
chunk rows are expanded into their member `assistant/chunk` events, and every
event gets its seq from its position: this module is the only place where
seqs are assigned.

Where a runtime record's written seq is not its position (FORMAT.md section 3:
seqs are contiguous; dsh refuses such a log, and so does the fold: DSH-E101),
the reader places the record by what the next record says (see `Fault`), so
that one damaged line costs one finding and the correct lines after it keep
their own seqs.

The reader never writes: files are opened read-only and nothing is cached
on disk.
"""

from __future__ import annotations

import copy
import io
import os
import stat
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import accumulate, chain, count
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, NamedTuple, Union

import orjson

from dshreplay.errors import ChangedError, FormatVersionError, LineError, ReadError, RestError
from dshreplay.io.container import Opened, Parts, open_input
from dshreplay.jsvalues import (
    MAX_SAFE_INTEGER,
    MISSING,
    JSONObject,
    JSONValue,
    is_event_seq,
    is_number,
    is_safe_int,
    shown,
)
from dshreplay.options import DEFAULT, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINE, Options

__all__ = ["LogSource", "LogReader", "Event", "PackedRun", "PackedMember", "TornTail", "QuietRule", "read_log"]

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
FORMAT_VERSION = 0
ROW_TAGS = frozenset({"text-chunks", "reasoning-chunks", "tool-call-chunks"})
LOG_NAMES = ("session.jsonl", "session.jsonl.zstd")
MAX_BLANK_RUN = 100_000  # dsh never writes blank lines; a long run of them is an attack, not a log
MAX_FRAME_BYTES = 64 * 1024**2  # one frame is buffered until its checksum is verified
_BLOCK = 1 << 20  # plain text is read and split a block at a time
_ZSTD_FEED = 4096  # compressed bytes fed per call: bounds one call's output
UNREADABLE_LINE, MALFORMED_ROW = "DSH-E001", "DSH-E002"  # the finding codes of a line that cannot be read
UNREADABLE_REST = "DSH-E013"  # the finding code where the rest of a zstd log cannot be read
MAX_EARLY = 1000  # records held back to be given at their place (more: placed where they lie)


class Fault:
    """How a record's written seq disagrees with its place, as the reader placed it.

    The reader tells them apart by the next record's written seq: a correct line
    after a damaged one continues the numbering, so it says which reading holds.
    `Event.fault` is (kind, expected, following): `expected` is the seq the
    record's place called for (where dsh's fold stops), `following` the next
    record's written seq when it told the reader (a WRONG_SEQ), else None."""

    GAP = "gap"  # the seqs expected.. before it are missing: it keeps its written seq
    WRONG_SEQ = "wrong-seq"  # its written seq is wrong: it holds the expected seq's place
    EARLY = "early"  # it lies before its place: a Misplaced stands here, the record comes at its place
    REPEAT = "repeat"  # its place is behind (a repeated or moved line): a Misplaced, and nothing more
    RESUMED = "resumed"  # the first record after lines that could not be read: numbering goes on from it


class Event:
    """One session event after packed rows are expanded.

    `seq` is the event's position in the log (0-based, header excluded);
    `record` is the event object as stored (for a packed-row member, the
    event the row stands for); `line` is the 1-based physical line it came
    from; `row` names the packed-row tag for members, else None. `fault`,
    set only on a record whose written seq is not its place, is (Fault kind,
    the seq its place called for, the next record's seq): read it with `fault_of`.
    """

    __slots__ = ("seq", "type", "record", "line", "row", "offset", "fault")
    count = 1  # events this item stands for (a PackedRun stands for several)
    fault: Fault_  # (set only on a record the reader placed off its written seq)
    seq_pointer = "/seq"  # where the written seq is

    def __init__(self, seq: int, type_: JSONValue, record: JSONObject, line: int,
                 row: str | None = None, offset: int | None = None):
        self.seq = seq
        self.type = type_
        self.record = record
        self.line = line
        self.row = row
        self.offset = offset  # byte offset of its line in the (decompressed) text, when known

    @property
    def time(self) -> JSONValue:
        """Epoch ms; 0 where the projected layout leaves it out."""
        return self.record.get("time", 0)

    @property
    def end_line(self) -> int:
        """The physical line of the item's last event."""
        return self.line

    @property
    def data(self) -> JSONValue:
        return self.record.get("data")

    @property
    def declared_seq(self) -> JSONValue:
        """The seq written in the record, or MISSING in the projected layout."""
        return self.record.get("seq", MISSING)

    def __repr__(self) -> str:
        return f"Event(seq={self.seq}, type={shown(self.type)}, line={self.line})"


@dataclass(frozen=True)
class TornTail:
    """A crash-cut end of the log: not an event, reported, never repaired."""

    line: int  # physical line (plain) or first line of the lost frame (zstd)
    offset: int  # byte offset in the file where the lost bytes start
    size: int  # bytes lost
    encoding: str

    def to_json(self) -> dict[str, int]:
        return {"line": self.line, "offset": self.offset, "bytes": self.size}

    @classmethod
    def from_json(cls, value: JSONObject, encoding: str) -> TornTail:
        """A torn tail as `to_json` wrote it (a bundle's manifest keeps it so), with the log's encoding."""
        return cls(value["line"], value["offset"], value["bytes"], encoding)

    def describe(self) -> str:
        """The one way a torn tail is told (a warning, a finding, a fact of `inspect` and the report)."""
        what = "last line has no newline and does not parse" if self.encoding != "zstd" \
            else "last zstd frame is cut short"
        return f"torn tail: {what}; {self.size} bytes lost at byte offset {self.offset}"


def seed_length(header: JSONValue) -> int | None:
    """How many leading events a fork child inherited from its parent: the header's
    `seedLength` as dsh reads it, a non-negative safe integer (JSON `5.0` is the
    number 5 in JavaScript, so it is 5 here); None when the header has none or its
    value is no such number (5.5, -1, "5", true). Every check of the seed asks
    this one function (validate's DSH-E014, spills' inheritance, lineage)."""
    value: JSONValue = header.get("seedLength") if type(header) is dict else None
    return int(value) if is_safe_int(value) and value >= 0 else None


def open_regular(path: str | os.PathLike[str], shown: str) -> BinaryIO:
    """Open a regular file read-only; a FIFO, a device or a folder is refused
    (without blocking on a FIFO): "-" is the way to read a pipe."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ReadError(f"cannot open: {exc.strerror or exc}", path=shown) from None
    try:
        kind = os.fstat(fd).st_mode
        if not stat.S_ISREG(kind):
            what = "a folder" if stat.S_ISDIR(kind) else "a pipe" if stat.S_ISFIFO(kind) else "a device or socket"
            raise ReadError(f"is {what}, not a regular file (use - to read standard input)", path=shown)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return open(fd, "rb")  # (the file owns fd from here, and closes it if this fails: never closed twice)


def read_small_file(path: str | os.PathLike[str], limit: int, what: str) -> bytes:
    """A regular file of at most `limit` bytes (rules, a manifest), read whole;
    anything else is a ReadError naming `what`."""
    shown = shown_path(path)
    with open_regular(path, shown) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise ReadError(f"{what} is larger than {limit} bytes", path=shown)
    return data


class _Upto(io.RawIOBase):
    """The first `left` bytes of a file just opened, and exactly those: a file that ends before
    them shrank while it was read (a ChangedError naming `shown`). Read from the file's raw
    stream straight into the caller's buffer (a block is copied once, not twice)."""

    def __init__(self, fh: BinaryIO, left: int, shown: str = "") -> None:
        self.fh = fh  # (kept: the raw stream is its, and closes with it)
        self.raw: Any = getattr(fh, "raw", fh)
        self.left = self.size = left
        self.shown = shown

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:  # (a writable buffer: memoryview or bytearray)
        if self.left <= 0:
            return 0
        with memoryview(buffer) as view, view.cast("B") as octets:
            n = self.raw.readinto(octets[:min(len(octets), self.left)])
        if not n:
            raise ChangedError(_shrank(self.size - self.left, self.size), path=self.shown)
        self.left -= n
        return int(n)

    def close(self) -> None:
        self.fh.close()
        super().close()

    def beyond(self) -> bool:
        """Whether the file holds more than the size it gave (it grew, or it is a /proc file)."""
        return bool(self.fh.read(1))


@contextmanager
def sized_file(path: str | os.PathLike[str], shown: str) -> Iterator[tuple[io.BufferedReader[_Upto], int]]:
    """A file opened as every input is (`open_regular`: a regular file, never a
    pipe or a device, never blocking) and read no further than the size it had
    when opened: a /proc file says 0 bytes and would never end, and a log being
    written to is read as it was. Yields the stream and that size (the
    stream's `raw.beyond()` tells whether there was more)."""
    with open_regular(path, shown) as fh:
        size = os.fstat(fh.fileno()).st_size
        yield io.BufferedReader(_Upto(fh, size, shown), 1 << 20), size


def _shrank(now: int, then: int) -> str:
    return (f"shrank while it was read: {now} bytes, where it held {then} when first opened (truncated or "
            "rewritten meanwhile: read it again once nothing rewrites it)")


@dataclass(frozen=True)
class Extent:
    """A log file as first opened: its size then (every pass reads exactly that many bytes) and
    which file it was (device, inode)."""

    size: int
    device: int
    inode: int


def resolve_log_path(source: str | os.PathLike[str]) -> Path:
    """Map a session directory to its log file; leave file paths as they are."""
    path = Path(source)
    if path.is_dir():
        try:
            os.listdir(path)
        except OSError as exc:
            raise ReadError(f"cannot list the folder: {exc.strerror or exc}", path=shown_path(path)) from None
        found = [path / name for name in LOG_NAMES if (path / name).is_file()]
        if not found:
            raise ReadError("directory holds no session.jsonl or session.jsonl.zstd", path=shown_path(path))
        if len(found) > 1:
            raise ReadError("directory holds both session.jsonl and session.jsonl.zstd; "
                            "dsh never writes both: name the file to read", path=shown_path(path))
        return found[0]
    return path


class LogSource:
    """Where one log's bytes come from, and how to read them: a file or a session
    folder (`path`), standard input ("-", held in memory so it can be read again),
    or bytes. `reader()` gives a fresh reader at the start of the log each time.

    `options` gives the ceilings (max_bytes, max_line); `transform(value,
    raw_line)` is applied to every parsed line (redaction).
    """

    def __init__(self, source: LogInput, options: Options = DEFAULT, *, transform: Transform | None = None) -> None:
        self.options = options
        self.transform = transform
        self.data: bytes | None = None
        self.file: Path | None = None
        self._extent: list[Extent] = []  # (a file's, fixed at its first open; shared with `transformed` copies)
        self.container: Opened | None = None  # a session inside a dsh SQLite store or web export ZIP
        if isinstance(source, (str, os.PathLike)) and str(source) != "-" \
                and (opened := open_input(source, options, PARTS)) is not None:
            self.path, self.data, self.container = opened.shown, opened.text, opened
        elif isinstance(source, (bytes, bytearray)):
            self.path = "<bytes>"
            self.data = bytes(source)
        elif isinstance(source, (str, os.PathLike)) and str(source) == "-":
            self.path = "<stdin>"
            self.data = _read_bounded(sys.stdin.buffer, options.max_bytes, self.path)
        elif isinstance(source, (str, os.PathLike)):
            self.file = resolve_log_path(source)
            self.path = shown_path(self.file)
        else:
            raise TypeError(f"a log is a path, \"-\" or bytes, not {type(source).__name__}")

    def transformed(self, transform: Transform | None) -> LogSource:
        """The same log, read through `transform` (standard input is not read again)."""
        source = copy.copy(self)
        source.transform = transform
        return source

    def reader(self) -> LogReader:
        options = self.options
        if self.data is not None:
            return LogReader(io.BufferedReader(io.BytesIO(self.data)), name=self.path,
                             max_bytes=options.max_bytes, max_line=options.max_line, transform=self.transform)
        stream = self.open()
        try:
            return LogReader(stream, name=self.path, max_bytes=options.max_bytes, max_line=options.max_line,
                             transform=self.transform, own=True)
        except BaseException:
            stream.close()
            raise

    def open(self) -> io.BufferedReader:
        """The log file's bytes, read as every input is (`open_regular`) and exactly as far as
        its size when this source first opened it: every pass over the source (the parse, the
        file's hash, the line chain) reads the same bytes, whatever is appended meanwhile. A file
        that shrank below that size, or another file put in its place, is a ReadError."""
        if self.container is not None:  # (a session in a store or a ZIP: its text, read whole when opened)
            return io.BufferedReader(io.BytesIO(self.data or b""))
        assert self.file is not None  # (a source is bytes, or a file)
        fh = open_regular(self.file, self.path)
        try:
            now = os.fstat(fh.fileno())
            if not self._extent:
                self._extent.append(Extent(now.st_size, now.st_dev, now.st_ino))
            fixed = self._extent[0]
            if (now.st_dev, now.st_ino) != (fixed.device, fixed.inode):
                raise ChangedError("was replaced by another file while it was read (read it again once nothing "
                                   "rewrites it)", path=self.path)
            if now.st_size < fixed.size:
                raise ChangedError(_shrank(now.st_size, fixed.size), path=self.path)
        except BaseException:
            fh.close()
            raise
        return io.BufferedReader(_Upto(fh, fixed.size, self.path))

    @property
    def size(self) -> int | None:
        """The bytes every pass reads: standard input's, or a file's size when first opened
        (None until then)."""
        if self.data is not None:
            return len(self.data)
        return self._extent[0].size if self._extent else None


def _read_bounded(stream: BinaryIO, limit: int, shown: str) -> bytes:
    """All of a stream (standard input is held in memory to be read again), at most `limit` bytes."""
    parts: list[bytes] = []
    size = 0
    while True:
        part = stream.read(min(_BLOCK, limit + 1 - size))
        if not part:
            return b"".join(parts)
        parts.append(part)
        size += len(part)
        if size > limit:
            raise ReadError(f"more than {limit} bytes (the --max-bytes ceiling; a pipe with no end?)", path=shown)


def shown_path(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> str:
    """A path as text that prints anywhere: bytes that are not UTF-8 shown as \\xNN."""
    text = os.fsdecode(path)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace") \
        if any("\udc80" <= c <= "\udcff" for c in text) else text


class LogReader:
    """Stream one log. Iterate `events()` once; `header` is available first.

    After `events()` is exhausted, `torn_tail` tells whether a crash cut the
    end, `event_count` how many events were read, `lines` how many physical
    lines, and `final_newline` whether the last record ended with a newline.
    """

    def __init__(self, source: str | os.PathLike[str] | BinaryIO, *, max_bytes: int | None = None,
                 name: str | None = None, transform: Transform | None = None,
                 window: tuple[int, int, int, int] | None = None, max_line: int = DEFAULT_MAX_LINE,
                 own: bool = False):
        # transform(value, raw_line) -> value, applied to every parsed line
        self.max_bytes = max_bytes if max_bytes is not None else DEFAULT_MAX_BYTES
        self.transform = transform  # applied to every parsed line (header included), e.g. redaction
        self.max_line = max_line
        self._own = own  # (close a stream handed over: LogSource.reader's)
        if isinstance(source, (str, os.PathLike)) and str(source) == "-":
            self.path = name or "<stdin>"
            self._fh: BinaryIO = sys.stdin.buffer
        elif isinstance(source, (str, os.PathLike)):
            path = resolve_log_path(source)
            self.path = name or shown_path(path)
            self._fh = open_regular(path, self.path)
            self._own = True
        else:
            self.path = name or str(getattr(source, "name", "<stream>"))
            self._fh = source
        self._fh = self._fh if isinstance(self._fh, io.BufferedReader) else self._fh
        magic = self._peek(4)
        self.encoding = "zstd" if magic == ZSTD_MAGIC else "jsonl"
        self.torn_tail: TornTail | None = None
        self.textless_frame: tuple[int, int] | None = None  # (offset, bytes) of the first zstd frame with no text
        self.raw: bytes | None = None  # the line of the record just yielded
        self.event_count = 0
        self.unreadable_rest: RestError | None = None  # where a zstd log's text stops being readable
        self.missing = 0  # seqs below event_count that no line holds (gaps in the written seqs)
        self.lines = 0
        self.final_newline = True
        self._header: JSONObject | None = None
        self._header_line = 0
        self.header_text = b""  # (the header's line as written: its numbers exactly, `signing.exact_integers`)
        self.body_offset: int | None = None  # where the line after the header starts
        self._started = False
        self.closed = False
        self._first_seq = 0
        self._align = window is None  # (a window numbers its records from 0: it cannot place them)
        if window is not None:
            # (start, end, seq, line): the records in bytes start..end of plain
            # text, starting with event `seq` on line `line + 1`; no header
            start, end, self._first_seq, first_line = window
            self._fh.seek(start)
            self._lines = self._plain_lines(start, first_line, end)
            self._header = {}
        else:
            self._lines = self._zstd_lines() if self.encoding == "zstd" else self._plain_lines()

    # -- context manager -------------------------------------------------
    def close(self) -> None:
        """Close the file (when the reader opened it) and let go of the text read ahead."""
        self.closed = True
        self._lines = iter(())
        if self._own:
            self._fh.close()

    def __enter__(self) -> LogReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- physical layer --------------------------------------------------
    def _peek(self, n: int) -> bytes:
        fh = self._fh
        if isinstance(fh, io.BufferedReader):
            return fh.peek(n)[:n]
        head = fh.read(n)
        self._fh = io.BufferedReader(_Prepended(head, fh))
        return head

    def _plain_lines(self, offset: int = 0, lineno: int = 0,
                     end: int | None = None) -> Iterator[tuple[int, int, bytes]]:
        """(line number, byte offset, line) of every physical line, up to byte `end`."""
        return chain.from_iterable(self._split(self._plain_chunks(offset, end), offset, lineno))

    def _plain_chunks(self, offset: int, end: int | None) -> Iterator[bytes]:
        read = self._fh.read
        while True:
            want = _BLOCK if end is None else min(_BLOCK, end - offset)
            chunk = read(want) if want > 0 else b""
            if not chunk:
                return
            offset += len(chunk)
            yield chunk

    def _zstd_lines(self) -> Iterator[tuple[int, int, bytes]]:
        return chain.from_iterable(self._split(self._readable_text(), 0, 0))

    def _readable_text(self) -> Iterator[bytes]:
        """`zstd_text` up to where the rest cannot be read (`unreadable_rest` then says why)."""
        try:
            yield from self.zstd_text()
        except RestError as exc:
            self.unreadable_rest = exc

    def _or_raise(self, lines: Iterator[tuple[int, int, bytes]]) -> Iterator[tuple[int, int, bytes]]:
        """The lines, then the RestError of a rest that cannot be read (for the readers of bytes)."""
        yield from lines
        if self.unreadable_rest is not None:
            raise self.unreadable_rest

    def _split(self, chunks: Iterable[bytes], offset: int, lineno: int) -> Iterator[Iterable[tuple[int, int, bytes]]]:
        """Blocks of (line number, offset, line) from text arriving in chunks of any size.

        Splits at most `_BLOCK` bytes at a time (a frame of tiny lines costs
        one block's list, not the frame's), carries a line that spans chunks
        as a list of its parts (each byte copied once), and refuses a line
        longer than `max_line` (a line with no end: /dev/zero, a bomb)."""
        parts: list[bytes] = []  # the start of a line that has no newline yet
        carried = 0
        limit = self.max_line
        for chunk in chunks:
            for start in range(0, len(chunk), _BLOCK):
                piece = chunk[start:start + _BLOCK] if len(chunk) > _BLOCK else chunk
                last = piece.rfind(b"\n")
                if last < 0:
                    parts.append(piece)
                    carried += len(piece)
                    if carried > limit:
                        raise self._too_long(lineno + 1)
                    continue
                if parts:
                    first = piece.find(b"\n") + 1
                    line = b"".join([*parts, piece[:first]])
                    parts, carried = [], 0
                    if len(line) > limit:
                        raise self._too_long(lineno + 1)
                    lineno += 1
                    yield ((lineno, offset, line),)
                    offset += len(line)
                    body = piece[first:last + 1]
                else:
                    body = piece[:last + 1] if last + 1 < len(piece) else piece
                if body:
                    lines = io.BytesIO(body).readlines()
                    if limit < _BLOCK and max(map(len, lines)) > limit:
                        too_long = next(i for i, x in enumerate(lines) if len(x) > limit)
                        raise self._too_long(lineno + 1 + too_long)
                    yield zip(count(lineno + 1), accumulate(map(len, lines), initial=offset), lines)
                    lineno += len(lines)
                    offset += len(body)
                if last + 1 < len(piece):
                    parts.append(piece[last + 1:])
                    carried = len(parts[0])
        if parts:
            lineno += 1
            yield ((lineno, offset, b"".join(parts)),)
        self.lines = lineno

    def _too_long(self, line: int) -> ReadError:
        return ReadError(f"a line longer than {self.max_line} bytes (a line with no end?); "
                         "dsh writes one event per line: raise --max-line to read it", path=self.path, line=line)

    def zstd_text(self) -> Iterator[bytes]:
        """The decompressed text of a zstd log, frame by frame, each frame's
        text given only once its checksum is verified. A frame cut short at the
        end is a torn tail; errors name the line they are on. The first frame
        that decodes to no text (a skippable frame: bytes that are no part of the
        log, which dsh never writes) is kept in `textless_frame`."""
        import zstandard

        dctx = zstandard.ZstdDecompressor()
        fh = self._fh
        obj = None
        frame_start = 0  # compressed offset of the frame being decoded
        fed = 0  # compressed bytes handed to decoders so far
        frame_out: list[bytes] = []
        frame_size = 0
        total_out = 0
        lineno = 0  # newlines in the committed frames
        while True:
            chunk = fh.read(_ZSTD_FEED)
            if not chunk:
                break
            data = chunk
            while data:
                if obj is None:
                    obj = dctx.decompressobj()
                    frame_start = fed
                try:
                    out = obj.decompress(data)
                except zstandard.ZstdError as exc:
                    raise RestError(f"corrupt zstd data in the frame at byte offset {frame_start}: {exc}",
                                    path=self.path, line=lineno + 1) from None
                if out:
                    frame_out.append(out)
                    frame_size += len(out)
                    total_out += len(out)
                    if total_out > self.max_bytes:
                        raise ReadError(f"decompressed text exceeds the {self.max_bytes}-byte ceiling "
                                        "(a decompression bomb, or a log that needs a larger --max-bytes)",
                                        path=self.path, line=lineno + 1)
                    if frame_size > MAX_FRAME_BYTES:
                        raise ReadError(f"the zstd frame at byte offset {frame_start} decompresses to more "
                                        f"than {MAX_FRAME_BYTES} bytes; dsh writes small append batches "
                                        "(a decompression bomb?)", path=self.path, line=lineno + 1)
                if obj.eof:
                    rest = obj.unused_data
                    fed += len(data) - len(rest)
                    data = rest
                    obj = None
                    if not frame_size and self.textless_frame is None:
                        self.textless_frame = (frame_start, fed - frame_start)
                    for text in frame_out:
                        lineno += text.count(b"\n")
                        yield text
                    frame_out, frame_size = [], 0
                else:
                    fed += len(data)
                    data = b""
        if obj is not None:
            # A frame that began but never finished: the crash cut it short.
            self.torn_tail = TornTail(line=lineno + 1, offset=frame_start, size=fed - frame_start,
                                      encoding="zstd")

    def physical_lines(self) -> Iterator[tuple[int, int, bytes]]:
        """(line number, byte offset, bytes with their newline) of every line of the
        (decompressed) text, header and blank lines included; instead of `records()`.
        A rest that cannot be read raises its RestError after the lines before it."""
        lines = self.readable_lines()
        return self._or_raise(lines) if self.encoding == "zstd" else lines

    def readable_lines(self) -> Iterator[tuple[int, int, bytes]]:
        """`physical_lines` up to where the rest cannot be read, without raising:
        `unreadable_rest` then says where and why reading stopped."""
        if self._started or self._header is not None:
            raise RuntimeError("physical_lines() reads a fresh reader, instead of header and records")
        self._started = True
        return self._lines

    # -- logical layer ---------------------------------------------------
    @property
    def header(self) -> JSONObject:
        """The parsed header line (reads it on first access)."""
        if self._header is None:
            self._header = self._read_header()
        return self._header

    @property
    def header_line(self) -> int:
        self.header  # noqa: B018 - ensure read
        return self._header_line

    def _read_header(self) -> JSONObject:
        blanks = 0
        for lineno, offset, raw in self._lines:
            if not raw.strip():
                blanks += 1
                if blanks > MAX_BLANK_RUN:
                    raise ReadError(f"more than {MAX_BLANK_RUN} blank lines before the header: not a dsh log",
                                    path=self.path, line=lineno)
                continue
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise ReadError(f"header line is not valid JSON: {_json_reason(raw, exc)}",
                                path=self.path, line=lineno) from None
            if self.transform is not None:
                value = self.transform(value, raw)
            if type(value) is not dict or value.get("type") != "session":
                got = f"type {shown(value.get('type'))}" if type(value) is dict else _json_kind(value)
                raise ReadError(f"first record must be the session header (type \"session\"), got {got}",
                                path=self.path, line=lineno)
            version = value.get("version", MISSING)
            if version is not MISSING and not (is_number(version) and version == FORMAT_VERSION):
                raise FormatVersionError(
                    f"format version {shown(version, 40)} not supported: "
                    f"dshreplay reads format version {FORMAT_VERSION}", path=self.path, line=lineno)
            self._header_line = lineno
            self.header_text = raw
            self.body_offset = offset + len(raw)
            return value
        if self.unreadable_rest is not None:
            raise self.unreadable_rest
        if self.torn_tail is not None:
            raise ReadError(f"no complete header: {self.torn_tail.describe()}", path=self.path)
        raise ReadError("empty log: no session header", path=self.path)

    def resume(self, header: JSONObject, header_line: int, lines: int, seq: int) -> None:
        """Read on after line `lines`, a prefix read before (whose header is `header`, on
        `header_line`, and which held events 0..seq-1): its lines are passed over unparsed,
        and `records()` gives the records after it, from seq `seq`. (The caller has proved the
        prefix unchanged: `integrity.chain.check_growth`.) ReadError when the log is shorter."""
        if self._started or self._header is not None:
            raise RuntimeError("resume() starts a fresh reader")
        reached = 0
        for reached, _, _ in self._lines:
            if reached == lines:
                break
        if reached != lines and self.unreadable_rest is not None:
            raise self.unreadable_rest
        if reached != lines:
            raise ReadError(f"the log has {reached} lines, fewer than the {lines} read before", path=self.path)
        self._header, self._header_line, self._first_seq = header, header_line, seq

    def events(self, recover: Callable[[LineError], None] | None = None) -> Iterator[Event]:
        """Yield every event in seq order, packed rows expanded into their members.

        See `records()` for `recover`.
        """
        for item in self.records(recover):
            if type(item) is PackedRun:
                yield from item.members()
            elif type(item) is not Misplaced:
                yield item  # type: ignore[misc]  # (an Event: PackedRun and Misplaced are the others)

    def records(self, recover: Callable[[LineError], None] | None = None,
                quiet: QuietRule | None = None) -> Iterator[Item]:
        """Yield each stored record as an Event, or a PackedRun for a packed row.

        A PackedRun stands for `count` consecutive `assistant/chunk` events
        (seqs `seq` .. `last_seq`); hot paths handle it whole instead of
        member by member. A bad line (not JSON, not an object, a malformed packed row) raises
        LineError, unless `recover` is given: then the error is handed to it,
        the line is skipped and assumed to hold one event, and reading goes
        on. In the runtime layout the next good record's written seq tells
        how many events the skipped lines really held, and numbering resumes
        from it (that record's `fault` is RESUMED).

        A runtime record whose written seq is not its place is placed once the
        next record's written seq is known (see `Fault`): a GAP or a WRONG_SEQ
        record is given with its `fault` set; a record that holds no event where
        it lies (REPEAT, EARLY) comes as a `Misplaced` (count 0), and an EARLY
        record is given again at its place.

        `quiet` is for a pass that reads no record of most types (the fold alone): a
        `QuietRule` naming the records nobody needs given (the fold only counts them,
        and no observer reads them). Such records that are at their place are parsed
        and checked as any other, then counted: each run of them comes as one `Quiet`
        item, not a record each.
        """
        if self._started:
            raise RuntimeError("a LogReader's events can be iterated only once")
        self._started = True
        self.header  # noqa: B018 - the header comes first
        loads, transform = orjson.loads, self.transform
        JSONDecodeError = orjson.JSONDecodeError
        path = self.path
        seq = self._first_seq
        align = self._align
        last = b"\n"
        resync = None  # seq of the first event lost to a skipped line
        blanks = 0
        row_tags = ROW_TAGS
        held: tuple[Event | PackedRun, bytes, JSONValue] | None = None  # (item, raw, written seq) of a record not
        # at its place, until the next one is read
        early: dict[int, tuple[Event | PackedRun, bytes]] = {}  # seq -> (item, raw): records read before their place
        mixed = False  # a record without a written seq was read: seqs are positions (FORMAT.md section 3), so a
        # written seq that disagrees is wrong where it lies and numbers nothing after it

        def place(following: JSONValue) -> Iterator[Item]:
            """Give the held record, now that the next record's written seq is known."""
            nonlocal seq, held
            assert held is not None
            item, raw, written_value = held
            held = None
            expected, count = seq, item.count
            after = _as_seq(following)
            written = _as_seq(written_value)
            if written is not None and written >= expected + 1_000_000:
                written = None  # (no log jumps so far: a damaged number)
            if written is None or after == expected + count or mixed:  # the numbering goes on from its place
                item.fault = (Fault.WRONG_SEQ, expected, after)
                self.raw = raw
                yield item
                seq = expected + count
            elif written > expected and after == expected and len(early) < MAX_EARLY:
                item.seq = written
                early[written] = (item, raw)
                self.raw = raw
                yield Misplaced(item, expected, Fault.EARLY)
            elif written > expected:  # (the next line goes on from it, or says nothing clear: its seq holds)
                yield from release(written)
                item.fault = (Fault.GAP, seq, None)
                item.seq = written
                self.raw = raw
                yield item
                self.missing += written - seq
                seq = written + count
            else:
                item.seq = written
                self.raw = raw
                yield Misplaced(item, expected, Fault.REPEAT)
            if early:
                yield from release(None)

        def release(before: int | None) -> Iterator[Item]:
            """Give the early records whose place has come (and, with `before`, those
            that come before that seq: the seqs between are missing)."""
            nonlocal seq
            while early:
                first = min(early)
                if first > seq and (before is None or first >= before):
                    return
                item, raw = early.pop(first)
                self.raw = raw
                if first < seq:  # its place went by (a wrong seq took it)
                    yield Misplaced(item, seq, Fault.REPEAT)
                    continue
                if first > seq:
                    item.fault = (Fault.GAP, seq, None)
                    self.missing += first - seq
                yield item
                seq = first + item.count

        item: Event | PackedRun
        hushed = hushed_line = hushed_offset = hushed_end = 0  # events counted into the Quiet run that ends
        # before this line, and the lines where it starts and ends
        given, surface_fields = quiet if quiet is not None else (frozenset(), ())
        for lineno, offset, raw in self._lines:
            try:
                rec = loads(raw)
            except JSONDecodeError as exc:
                if hushed:
                    yield Quiet(seq - hushed, hushed, hushed_line, hushed_offset, hushed_end)
                    hushed = 0
                if not raw.strip():  # a blank line: dsh writes none; a long run of them is refused
                    blanks += 1
                    if blanks > MAX_BLANK_RUN:
                        raise ReadError(f"more than {MAX_BLANK_RUN} blank lines in a row: not a dsh log",
                                        path=path, line=lineno, seq=seq) from None
                    continue
                blanks = 0
                if held is not None:
                    yield from place(MISSING)
                if not raw.endswith(b"\n"):
                    # a complete zstd frame whose text ends without a newline is a torn line, not a torn frame
                    if self.torn_tail is None:  # (a zstd frame cut short said so already)
                        self.torn_tail = TornTail(line=lineno, offset=offset, size=len(raw), encoding="jsonl")
                    self.lines = lineno
                    break
                error = LineError(_not_json(raw, exc), code=UNREADABLE_LINE,
                                  path=path, line=lineno, seq=seq)
                if recover is None:
                    raise error from None
                recover(error)
                resync = seq if resync is None else resync
                seq += 1
                continue
            blanks = 0
            last = raw
            if quiet is not None and rec.__class__ is dict and held is None and resync is None and not early:
                kind = rec.get("type")
                if kind.__class__ is str and kind not in given and rec.keys().isdisjoint(surface_fields):
                    if kind not in row_tags:
                        written = rec.get("seq", MISSING)
                        if written is MISSING:
                            mixed = True
                        counted = written is MISSING or (written == seq and written.__class__ is not bool)
                    else:  # a packed row, checked exactly: counted whole when at its place
                        try:
                            run = expand_row(rec, kind, seq, lineno, path)
                            mixed = mixed or run.seq0 is None
                            counted = run.count if run.seq0 is None or run.seq0 == seq else 0
                        except LineError:
                            counted = 0  # (read again below, where its error is raised or recovered)
                    if counted:  # (at its place)
                        if not hushed:
                            hushed_line, hushed_offset = lineno, offset
                        hushed += counted
                        seq += counted
                        hushed_end = lineno
                        continue
            if hushed:
                yield Quiet(seq - hushed, hushed, hushed_line, hushed_offset, hushed_end)
                hushed = 0
            if type(rec) is not dict:
                if held is not None:
                    yield from place(MISSING)
                error = LineError(_not_object(rec), code=UNREADABLE_LINE,
                                  path=path, line=lineno, seq=seq)
                if recover is None:
                    raise error
                recover(error)
                resync = seq if resync is None else resync
                seq += 1
                continue
            if transform is not None:
                rec = transform(rec, raw)
            tag = rec.get("type")
            if held is not None:
                following = _written(rec)
                mixed = mixed or following is MISSING
                yield from place(following)
            resumed = resync
            if resync is not None:
                written = _written(rec)
                if type(written) is int and resync <= written < seq + 1_000_000:
                    seq = written
                resync = None
            if type(tag) is not str:
                tag = None  # not a type name; the validator reports it
            elif tag in row_tags:
                try:
                    item = expand_row(rec, tag, seq, lineno, path)
                except LineError as error:
                    if recover is None:
                        raise
                    recover(error)
                    resync = seq
                    seq += 1
                    continue
                item.offset = offset
                if resumed is not None:
                    item.fault = (Fault.RESUMED, resumed, None)
                elif align and item.seq0 is None:
                    mixed = True
                elif align and item.seq0 != seq:
                    held = (item, raw, item.seq0)
                    continue
                self.raw = raw
                yield item
                seq += item.count
                if early:
                    yield from release(None)
                continue
            item = Event(seq, tag, rec, lineno, None, offset)
            if resumed is not None:
                item.fault = (Fault.RESUMED, resumed, None)
            elif align:
                written = rec.get("seq", MISSING)
                if written is MISSING:
                    mixed = True
                elif written != seq or type(written) is bool:
                    held = (item, raw, written)
                    continue
            self.raw = raw
            yield item
            seq += 1
            if early:
                yield from release(None)
        else:
            if self.torn_tail is None:
                self.final_newline = last.endswith(b"\n")
        if hushed:
            yield Quiet(seq - hushed, hushed, hushed_line, hushed_offset, hushed_end)
        if held is not None:
            yield from place(MISSING)
        if early:
            yield from release(seq + 2 * MAX_SAFE_INTEGER)
        self.event_count = seq
        rest = self.unreadable_rest
        if rest is not None:  # (what follows cannot be read: the readable part ends here, as at a bad line)
            unreadable = LineError(f"the rest of the log cannot be read: {rest.message}", code=UNREADABLE_REST,
                                   path=path, line=rest.line, seq=seq)
            if recover is None:
                raise unreadable
            recover(unreadable)


def _written(rec: JSONObject) -> JSONValue:
    """A record's written seq (a packed row's `seq0`), or MISSING."""
    tag = rec.get("type")
    return rec.get("seq0" if type(tag) is str and tag in ROW_TAGS else "seq", MISSING)


def _as_seq(value: JSONValue) -> int | None:
    """A written seq as an int (JSON numbers: 5.0 is 5), or None when it is no event seq."""
    if type(value) is int and value >= 0:
        return value
    if type(value) is float and value >= 0 and value.is_integer() and value <= MAX_SAFE_INTEGER:
        return int(value)
    return None


def fault_of(item: object) -> Fault_ | None:
    """(Fault kind, expected seq, following seq) of a record the reader placed off its written seq, or None."""
    return getattr(item, "fault", None)


class Misplaced:
    """A stored record that holds no event where it lies: it repeats a seq whose place
    is behind (REPEAT), or it comes before its place (EARLY: the record is given again
    there). `count` is 0: the fold rejects it (DSH-E101 at `fault[1]`), nothing else sees it."""

    __slots__ = ("item", "seq", "fault")
    count = 0

    def __init__(self, item: Event | PackedRun, expected: int, kind: str) -> None:
        self.item = item
        self.seq = item.seq  # its written seq (for an EARLY record, the seq it is given at later)
        self.fault: Fault_ = (kind, expected, None)

    type = property(lambda self: self.item.type)
    line = property(lambda self: self.item.line)
    end_line = property(lambda self: self.item.line)
    row = property(lambda self: self.item.row)
    offset = property(lambda self: self.item.offset)
    time = property(lambda self: self.item.time)
    declared_seq = property(lambda self: self.item.declared_seq)
    seq_pointer = property(lambda self: self.item.seq_pointer)

    @property
    def record(self) -> JSONObject:
        return self.item.record

    @property
    def data(self) -> JSONValue:
        return self.record.get("data")

    def members(self) -> list[PackedMember]:
        return []

    def __repr__(self) -> str:
        return f"Misplaced(seq={self.seq}, fault={self.fault!r}, line={self.line})"


class _Prepended(io.RawIOBase):
    """A non-seekable stream with bytes already read put back in front."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:  # (a writable buffer: memoryview or bytearray)
        if self._head:
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(b))
        n = len(data)
        b[:n] = data
        return n


def line_problem(raw: bytes) -> str | None:
    """Why one line (its bytes, newline or not) holds no record, as the reader says it where it
    meets it; None for a line that parses as a JSON object, or a blank one (no record, no damage)."""
    if not raw.strip():
        return None
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return _not_json(raw, exc)
    return None if type(rec) is dict else _not_object(rec)


def _not_json(raw: bytes, exc: Exception) -> str:
    return f"line is not valid JSON: {_json_reason(raw, exc)}"


def _not_object(rec: object) -> str:
    return f"record must be a JSON object, got {_json_kind(rec)}"


def _json_kind(value: object) -> str:
    return {list: "an array", str: "a string", int: "a number", float: "a number",
            bool: "a boolean", type(None): "null"}.get(type(value), type(value).__name__)


def _json_reason(raw: bytes, exc: Exception) -> str:
    if raw.startswith(b"\xef\xbb\xbf"):
        return "starts with a UTF-8 byte-order mark"
    text = str(exc)
    return text.split(": line")[0] if ": line" in text else text


# -- packed chunk rows ----------------------------------------------------

def _all_safe_ints(values: list[JSONValue]) -> bool:
    """Every value a safe integer (plain ints checked at once by their extremes)."""
    if not values:
        return True
    if set(map(type, values)) == _INT:
        ints: list[int] = values  # (every one an int, as the test says)
        return -MAX_SAFE_INTEGER <= min(ints) and max(ints) <= MAX_SAFE_INTEGER
    return all(map(is_safe_int, values))


_INT = frozenset({int})


def _malformed(tag: str, why: str, path: str, line: int, seq: int) -> LineError:
    return LineError(f"malformed {tag} row: {why}", code=MALFORMED_ROW, path=path, line=line, seq=seq)


def expand_row(rec: JSONObject, tag: str, seq: int, line: int, path: str) -> PackedRun:
    """Validate one packed row exactly as dsh does; return it as a run of events.

    `seq` is the position of the first member. A runtime row's `seq0` is kept
    as each member's written seq (`seq0 + k`), so the fold's contiguity rule
    sees a mismatch the same way it would for plain events.
    """
    keys = rec.keys()
    if keys == _RUNTIME_ROW:
        seq0, time0 = rec["seq0"], rec["time0"]
        if not (type(seq0) is int and 0 <= seq0 <= MAX_SAFE_INTEGER) and not is_event_seq(seq0):
            raise _malformed(tag, "seq0 must be a non-negative safe integer", path, line, seq)
        if not (type(time0) is int and -MAX_SAFE_INTEGER <= time0 <= MAX_SAFE_INTEGER) and not is_safe_int(time0):
            raise _malformed(tag, "time0 must be a safe integer", path, line, seq)
    elif "seq0" in rec or "time0" in rec:
        raise _malformed(tag, "envelope must be exactly {type, seq0, time0, data}", path, line, seq)
    elif keys != _PROJECTED_ROW:
        raise _malformed(tag, "envelope must be exactly {type, data} (projected) or "
                              "{type, seq0, time0, data} (runtime)", path, line, seq)
    else:
        seq0, time0 = None, 0
    data = rec["data"]
    if type(data) is not dict:
        raise _malformed(tag, "data must be an object", path, line, seq)
    if tag == "tool-call-chunks":
        with_name = data.keys() == _NAMED_TOOL_ROW
        if not with_name and data.keys() != _TOOL_ROW:
            raise _malformed(tag, "data must be exactly {turn, step, index, id, name?, dt, args}",
                             path, line, seq)
        if type(data["id"]) is not str or (with_name and type(data["name"]) is not str):
            raise _malformed(tag, "id (and name when present) must be strings", path, line, seq)
        payload = data["args"]
        key = "args"
    else:
        if data.keys() != _TEXT_ROW:
            raise _malformed(tag, "data must be exactly {turn, step, index, dt, texts}", path, line, seq)
        payload = data["texts"]
        key = "texts"
    turn, step, index = data["turn"], data["step"], data["index"]
    if not (type(turn) is int and type(step) is int and type(index) is int) \
            and not (is_number(turn) and is_number(step) and is_number(index)):
        raise _malformed(tag, "turn/step/index must be numbers", path, line, seq)
    if type(payload) is not list or not payload or not _all_strings(payload):
        raise _malformed(tag, f"{key} must be a non-empty array of strings", path, line, seq)
    dt = data["dt"]
    if type(dt) is not list:
        raise _malformed(tag, "dt must be an array of safe integers", path, line, seq)
    # the common case in one sum: plain ints whose magnitudes, with time0's, stay safe (then every
    # gap and every member's time is a safe integer); else each is checked
    plain = type(time0) is int and (not dt or set(map(type, dt)) == _INT) \
        and abs(time0) + sum(map(abs, dt)) <= MAX_SAFE_INTEGER
    if not plain and not _all_safe_ints(dt):
        raise _malformed(tag, "dt must be an array of safe integers", path, line, seq)
    n = len(payload)
    if len(dt) != n - 1:
        raise _malformed(tag, f"dt has {len(dt)} gaps for {n} members (want one fewer)", path, line, seq)
    if seq0 is not None and not (type(seq0) is int and seq0 + n - 1 <= MAX_SAFE_INTEGER) \
            and not is_safe_int(seq0 + n - 1):
        raise _malformed(tag, "member seqs must stay safe integers", path, line, seq)
    if not plain and not _all_safe_ints(list(accumulate(dt, initial=time0))):
        raise _malformed(tag, "member times must stay safe integers", path, line, seq)
    return PackedRun(seq, tag, data, seq0, rec, line, time0, n)


def line_events(raw: bytes) -> int:
    """How many events one physical line holds, as `records()` counts them: none for
    a blank line or a last line cut short (no newline, not JSON), a packed row's
    members, one for any other line (a bad one too: it is assumed to hold one)."""
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return 0 if not raw.strip() or not raw.endswith(b"\n") else 1
    tag = rec.get("type") if type(rec) is dict else None
    if type(tag) is str and tag in ROW_TAGS:
        try:
            return expand_row(rec, tag, 0, 0, "").count
        except LineError:
            return 1
    return 1


def _all_strings(values: list[JSONValue]) -> bool:
    try:
        "".join(values)  # checks every item is a string, in C
    except TypeError:
        return False
    return True


_RUNTIME_ROW = frozenset({"type", "seq0", "time0", "data"})
_PROJECTED_ROW = frozenset({"type", "data"})
_TEXT_ROW = frozenset({"turn", "step", "index", "dt", "texts"})
_TOOL_ROW = frozenset({"turn", "step", "index", "id", "dt", "args"})
_NAMED_TOOL_ROW = frozenset({"turn", "step", "index", "id", "name", "dt", "args"})


class _RowView:
    """What a packed run and each of its members tell about their row."""

    __slots__ = ()
    seq_pointer = "/seq0"  # where a row's written seq is

    @property
    def _of(self) -> PackedRun:
        raise NotImplementedError

    @property
    def row_data(self) -> JSONObject:
        """The packed row's `data` (turn, step, index, dt, texts/args)."""
        return self._of.data

    @property
    def row_record(self) -> JSONObject:
        """The whole packed row as stored."""
        return self._of.stored


class PackedRun(_RowView):
    """The `count` assistant/chunk events one packed row stands for: the row's
    tag (`row`), `data`, written `seq0` (None in the projected layout) and
    record (`stored`), which its members share."""

    __slots__ = ("seq", "count", "line", "row", "time0", "data", "seq0", "stored", "offset", "fault")
    offset: int | None
    fault: Fault_
    type = "assistant/chunk"
    index_in_row = 0

    def __init__(self, seq: int, tag: str, data: JSONObject, seq0: int | float | None, stored: JSONObject,
                 line: int, time0: int | float, count: int) -> None:
        self.seq = seq
        self.count = count
        self.line = line
        self.row = tag
        self.time0 = time0
        self.data = data
        self.seq0 = seq0
        self.stored = stored

    @property
    def _of(self) -> PackedRun:
        return self

    @property
    def last_seq(self) -> int:
        return self.seq + self.count - 1

    @property
    def record(self) -> JSONObject:
        """The whole packed row as stored (as `row_record`)."""
        return self.stored

    @property
    def time(self) -> int | float:
        """The first member's time."""
        return self.time0

    @property
    def end_line(self) -> int:
        return self.line

    @property
    def declared_seq(self) -> JSONValue:
        """The row's written `seq0`, or MISSING in the projected layout."""
        seq0 = self.seq0
        return MISSING if seq0 is None else seq0

    @property
    def times(self) -> list[int | float]:
        """Each member's time: time0 plus the gaps before it; in the projected layout, which
        has no times, none (0, as for every other event of that layout), whatever its gaps."""
        if self.seq0 is None:
            return [0] * self.count
        return list(accumulate(self.data["dt"], initial=self.time0))

    @property
    def last_time(self) -> int | float:
        """The last member's time (0 in the projected layout)."""
        return self.time0 + sum(self.data["dt"]) if self.seq0 is not None else 0

    def members(self) -> list[PackedMember]:
        times, seq, line = self.times, self.seq, self.line
        return [PackedMember(seq + k, self, k, line, times[k]) for k in range(self.count)]

    def __repr__(self) -> str:
        return f"PackedRun(seq={self.seq}, count={self.count}, row={shown(self.row)}, line={self.line})"


class PackedMember(_RowView, Event):
    """An `assistant/chunk` event stored inside a packed row.

    Its record is built only when someone asks for it: the fold needs just
    the seq, so expanding large rows stays cheap.
    """

    __slots__ = ("_run", "_k", "_record", "_time")

    def __init__(self, seq: int, run: PackedRun, k: int, line: int, time: int | float) -> None:
        self.seq = seq
        self.type = "assistant/chunk"
        self.line = line
        self.row = run.row
        self._time = time
        self._run = run
        self._k = k
        self._record: JSONObject | None = None

    @property
    def _of(self) -> PackedRun:
        return self._run

    @property
    def time(self) -> int | float:
        return self._time

    @property
    def index_in_row(self) -> int:
        return self._k

    @property
    def declared_seq(self) -> JSONValue:
        seq0 = self._run.seq0
        return MISSING if seq0 is None else seq0 + self._k

    @property
    def record(self) -> JSONObject:  # type: ignore[override]  # (built from its row on demand: never assigned)
        if self._record is None:
            self._record = self._build()
        return self._record

    def _build(self) -> JSONObject:
        run, k = self._run, self._k
        data = run.data
        if run.row == "text-chunks":
            chunk = {"type": "text-delta", "index": data["index"], "text": data["texts"][k]}
        elif run.row == "reasoning-chunks":
            chunk = {"type": "reasoning-delta", "index": data["index"], "text": data["texts"][k]}
        elif "name" in data:
            chunk = {"type": "tool-call-delta", "index": data["index"], "id": data["id"],
                     "name": data["name"], "argumentsDelta": data["args"][k]}
        else:
            chunk = {"type": "tool-call-delta", "index": data["index"], "id": data["id"],
                     "argumentsDelta": data["args"][k]}
        body = {"turn": data["turn"], "step": data["step"], "chunk": chunk}
        if run.seq0 is None:
            return {"type": "assistant/chunk", "data": body}
        return {"type": "assistant/chunk", "seq": run.seq0 + k, "time": self.time, "data": body}


def read_log(source: str | os.PathLike[str] | BinaryIO, **kwargs: Any) -> tuple[JSONObject, list[Event]]:
    """Convenience: the header and every event of a small log, as a list."""
    with LogReader(source, **kwargs) as reader:
        return reader.header, list(reader.events())


class QuietRule(NamedTuple):
    """The records a pass only counts (`LogReader.records(quiet=...)`): those whose type
    is a string not in `given` and that carry none of `fields` at the top level. The
    pass that asks says which (the fold: `core.surface.counted_only`); the reader
    applies it to every parsed record, inline (this is the hottest line of a fold)."""

    given: frozenset[str]
    fields: tuple[str, ...]


class Quiet:
    """`count` consecutive events at their places (from seq `seq`, on lines `line` ..
    `end_line`) that the pass asked not to be given one by one (`records(quiet=...)`):
    each line was parsed and checked (a packed row exactly, as always), then its events
    counted. Like a packed run, the fold takes them whole: it counts them off the surface
    (`row` says they hold no record of their own)."""

    __slots__ = ("seq", "count", "line", "offset", "end_line")
    type: JSONValue = None  # (several types, none that anybody reads)
    row = "quiet"
    time = 0
    declared_seq = MISSING  # (each was at its place: the reader checked its written seq)
    seq_pointer = "/seq"
    record: JSONObject = {}  # (no record is kept)

    def __init__(self, seq: int, count: int, line: int, offset: int, end_line: int) -> None:
        self.seq = seq
        self.count = count
        self.line = line
        self.offset = offset
        self.end_line = end_line  # the line of its last event

    def __repr__(self) -> str:
        return f"Quiet(seq={self.seq}, count={self.count}, line={self.line})"


PARTS = Parts(open_regular, shown_path, expand_row)  # what io.container takes from this module
Item = Union[Event, PackedRun, Misplaced, Quiet]  # what `LogReader.records()` gives
Fault_ = tuple[str, int, Union[int, None]]  # (Fault kind, expected seq, following seq): an item's `fault`
LogInput = Union[str, "os.PathLike[str]", bytes, bytearray]  # what a LogSource reads: a path, "-" or the log's bytes
Transform = Callable[[JSONValue, bytes], JSONValue]  # applied to every parsed line with its raw bytes (redaction)
