"""Opening what is read, safely: regular files only (never a pipe or a device, never
blocking), read no further than their size when first opened (`sized_file`, `Extent`),
small files bounded (`read_small_file`), session folders mapped to their log, and paths
shown as text that prints anywhere (`shown_path`). Nothing here writes.
"""

from __future__ import annotations

import io
import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from dshreplay.errors import ChangedError, ReadError

LOG_NAMES = ("session.jsonl", "session.jsonl.zstd")
_BLOCK = 1 << 20  # plain text is read and split a block at a time


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
