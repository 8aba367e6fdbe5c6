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
import sys
from itertools import accumulate, chain, count
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Union

import orjson

from dshreplay._jsvalues import MAX_SAFE_INTEGER, MISSING, JSONObject, JSONValue, is_number, is_safe_int, shown
from dshreplay.errors import ChangedError, FormatVersionError, LineError, ReadError, RestError
from dshreplay.io._container import Opened, open_input
from dshreplay.io._items import UNREADABLE_LINE, _json_kind, _json_reason, _not_json, _not_object
from dshreplay.io._lean import regular_records
from dshreplay.io._placement import MAX_BLANK_RUN, Placement
from dshreplay.io._source import _BLOCK, Extent, _Prepended, _read_bounded, _shrank, _Upto, open_regular
from dshreplay.options import DEFAULT, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINE, Options

__all__ = ["LogSource", "LogReader", "Event", "PackedRun", "PackedMember", "TornTail", "QuietRule", "read_log"]

# Where other modules import them from (each re-exported, "as" itself), though they live in items, packed, source:
from dshreplay.io._items import (  # noqa: E402, I001
    Event as Event, Fault as Fault, Fault_ as Fault_, Item as Item, Misplaced as Misplaced, Quiet as Quiet,
    QuietRule as QuietRule, TornTail as TornTail, UNREADABLE_REST as UNREADABLE_REST, fault_of as fault_of,
    line_problem as line_problem)
from dshreplay.io._packed import (  # noqa: E402
    MALFORMED_ROW as MALFORMED_ROW, ROW_TAGS as ROW_TAGS, PackedMember as PackedMember, PackedRun as PackedRun,
    expand_row as expand_row, line_events as line_events)
from dshreplay.io._source import (  # noqa: E402
    LOG_NAMES as LOG_NAMES, read_small_file as read_small_file, resolve_log_path as resolve_log_path,
    shown_path as shown_path, sized_file as sized_file)

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
FORMAT_VERSION = 0
MAX_FRAME_BYTES = 64 * 1024**2  # one frame is buffered until its checksum is verified
_ZSTD_FEED = 4096  # compressed bytes fed per call: bounds one call's output


def seed_length(header: JSONValue) -> int | None:
    """How many leading events a fork child inherited from its parent: the header's
    `seedLength` as dsh reads it, a non-negative safe integer (JSON `5.0` is the
    number 5 in JavaScript, so it is 5 here); None when the header has none or its
    value is no such number (5.5, -1, "5", true). Every check of the seed asks
    this one function (validate's DSH-E014, spills' inheritance, lineage)."""
    value: JSONValue = header.get("seedLength") if type(header) is dict else None
    return int(value) if is_safe_int(value) and value >= 0 else None


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
                and (opened := open_input(source, options)) is not None:
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
        placement = Placement(self, self._first_seq)
        lines: Iterator[tuple[int, int, bytes]] = self._lines
        if self.transform is None and self._align:  # (the lean loop, while the lines are regular)
            first = yield from regular_records(self, lines, placement, quiet)
            lines = chain((first,), lines) if first is not None else iter(())
        yield from self._placed(placement, recover, quiet, lines)
        yield from self._ended(placement, recover)

    def _placed(self, p: Placement, recover: Callable[[LineError], None] | None,
                quiet: QuietRule | None, lines: Iterator[tuple[int, int, bytes]]) -> Iterator[Item]:
        """The records of `lines`, in order (the exact path of `records()`): each line parsed,
        a line that holds no record reported, each record placed (`Placement`)."""
        loads, transform = orjson.loads, self.transform
        JSONDecodeError = orjson.JSONDecodeError
        path = self.path
        align = self._align
        row_tags = ROW_TAGS
        kinds, surface_fields = quiet if quiet is not None else (frozenset(), ())
        last: bytes | None = None
        for lineno, offset, raw in lines:
            try:
                rec = loads(raw)
            except JSONDecodeError as exc:
                if p.hushed:
                    yield p.quiet_run()
                if not raw.strip():
                    p.blank(lineno)
                    continue
                p.blanks = 0
                if p.held is not None:
                    yield from p.place(MISSING)
                if not raw.endswith(b"\n"):
                    # a complete zstd frame whose text ends without a newline is a torn line, not a torn frame
                    if self.torn_tail is None:  # (a zstd frame cut short said so already)
                        self.torn_tail = TornTail(line=lineno, offset=offset, size=len(raw), encoding="jsonl")
                    self.lines = lineno
                    return
                p.unreadable(LineError(_not_json(raw, exc), code=UNREADABLE_LINE, path=path, line=lineno,
                                       seq=p.seq), recover)
                continue
            p.blanks = 0
            last = raw
            if quiet is not None and rec.__class__ is dict and p.held is None and p.resync is None \
                    and not p.early and p.counted(rec, kinds, surface_fields, lineno, offset):
                continue
            if p.hushed:
                yield p.quiet_run()
            if type(rec) is not dict:
                if p.held is not None:
                    yield from p.place(MISSING)
                p.unreadable(LineError(_not_object(rec), code=UNREADABLE_LINE, path=path, line=lineno,
                                       seq=p.seq), recover)
                continue
            if transform is not None:
                rec = transform(rec, raw)
            tag = rec.get("type")
            if p.held is not None:
                yield from p.follow(rec)
            resumed = p.resumed(rec) if p.resync is not None else None
            if type(tag) is not str:
                tag = None  # not a type name; the validator reports it
            elif tag in row_tags:
                yield from self._row(p, rec, tag, lineno, offset, raw, resumed, recover)
                continue
            item = Event(p.seq, tag, rec, lineno, None, offset)
            if resumed is not None:
                item.fault = (Fault.RESUMED, resumed, None)
            elif align:
                written = rec.get("seq", MISSING)
                if written is MISSING:
                    p.mixed = True
                elif written != p.seq or type(written) is bool:
                    p.held = (item, raw, written)
                    continue
            self.raw = raw
            yield item
            p.seq += 1
            if p.early:
                yield from p.release(None)
        if self.torn_tail is None and last is not None:
            self.final_newline = last.endswith(b"\n")

    def _row(self, p: Placement, rec: JSONObject, tag: str, lineno: int, offset: int, raw: bytes,
             resumed: int | None, recover: Callable[[LineError], None] | None) -> Iterator[Item]:
        """A packed row's run, checked exactly (a malformed one is a line that holds no record)."""
        try:
            item = expand_row(rec, tag, p.seq, lineno, self.path)
        except LineError as error:
            p.unreadable(error, recover)
            return
        item.offset = offset
        if resumed is not None:
            item.fault = (Fault.RESUMED, resumed, None)
        elif self._align and item.seq0 is None:
            p.mixed = True
        elif self._align and item.seq0 != p.seq:
            p.held = (item, raw, item.seq0)
            return
        self.raw = raw
        yield item
        p.seq += item.count
        if p.early:
            yield from p.release(None)

    def _ended(self, p: Placement, recover: Callable[[LineError], None] | None) -> Iterator[Item]:
        """What the end of the lines gives: the last Quiet run, the held and early records
        at their places, and where the rest of a zstd log cannot be read."""
        if p.hushed:
            yield p.quiet_run()
        if p.held is not None:
            yield from p.place(MISSING)
        if p.early:
            yield from p.release(p.seq + 2 * MAX_SAFE_INTEGER)
        self.event_count = p.seq
        rest = self.unreadable_rest
        if rest is not None:  # (what follows cannot be read: the readable part ends here, as at a bad line)
            unreadable = LineError(f"the rest of the log cannot be read: {rest.message}", code=UNREADABLE_REST,
                                   path=self.path, line=rest.line, seq=p.seq)
            if recover is None:
                raise unreadable
            recover(unreadable)


def read_log(source: str | os.PathLike[str] | BinaryIO, **kwargs: Any) -> tuple[JSONObject, list[Event]]:
    """Convenience: the header and every event of a small log, as a list."""
    with LogReader(source, **kwargs) as reader:
        return reader.header, list(reader.events())


LogInput = Union[str, "os.PathLike[str]", bytes, bytearray]  # what a LogSource reads: a path, "-" or the log's bytes
Transform = Callable[[JSONValue, bytes], JSONValue]  # applied to every parsed line with its raw bytes (redaction)
