"""The folder an export writes, and never anything else of the user's.

`write_folder(out, build, ...)` is the one way a bundle reaches `--out`:

- `--out` is claimed before anything is built: created with an exclusive
  `os.mkdir`, or opened when it is there (an empty folder, or an old bundle
  that `--force` may replace), and held with an exclusive `flock` until the
  run ends. A second export to the same folder is refused in one line
  instead of silently replacing the first one's bundle (the kernel drops the
  lock when a process dies, so a crash never leaves the folder locked).
- `--out` may not be the current folder or one that holds it.
- The bundle is built in a staging folder beside `--out` (`.OUT.partial-*`)
  and swapped in by renames: the old bundle is moved aside
  (`.OUT.partial-old-*`), the new one renamed in, and the old one removed
  last. A failed rename puts the old bundle back. Any exception, and
  SIGINT, SIGTERM or SIGHUP (raised as `Interrupted` while the export runs),
  removes the staging folder; further signals wait until it is gone. So at
  every moment `--out` holds the old bundle whole or the new one complete.
- Files are written through `create` / `write_file` / `make_folder`, whose
  every OSError is an `OutputError` naming the file: a full disk is an error
  of the output, never taken for an unreadable input.
- Every folder and file is created with the process umask (0777 or 0666
  less the umask), the bundle's top folder too: who may read a bundle is the
  user's choice, made as for any file they write. (The evidence key, a
  secret, is made 0600 by `integrity.evidence`.)
"""

from __future__ import annotations

import errno
import io
import os
import secrets
import shutil
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Callable, Literal, TypeVar, Union, overload

from dshreplay.errors import Interrupted, OutputError, UsageError
from dshreplay.io.reader import shown_path

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

T = TypeVar("T")
Handler = Union[Callable[[int, Union[FrameType, None]], Any], int, signal.Handlers, None]  # (signal.getsignal's)


# -- writing files of the output ----------------------------------------------

WRITE_BUFFER = 1 << 16  # bytes an output file gathers before it writes them (8 KiB, io's default, writes 130 MB
# of an export's files in 16,000 calls, each a Python frame and a system call)


def output_error(exc: OSError, path: str | os.PathLike[str]) -> OutputError:
    return OutputError(exc.strerror or str(exc), path=shown_path(path))


class _OutputFile(io.FileIO):
    """A file of the output whose write errors are OutputErrors naming it."""

    def write(self, data: ReadableBuffer) -> int:
        try:
            return super().write(data)
        except OSError as exc:
            raise output_error(exc, self.name) from None


@overload
def create(path: Path, *, text: Literal[False] = False, newline: str | None = None) -> io.BufferedWriter: ...


@overload
def create(path: Path, *, text: Literal[True], newline: str | None = None) -> io.TextIOWrapper: ...


def create(path: Path, *, text: bool = False, newline: str | None = None) -> io.BufferedWriter | io.TextIOWrapper:
    """A new file of the output, for writing (text: UTF-8)."""
    try:
        raw = _OutputFile(path, "w")
    except OSError as exc:
        raise output_error(exc, path) from None
    buffered: io.BufferedWriter = io.BufferedWriter(raw, WRITE_BUFFER)
    return io.TextIOWrapper(buffered, encoding="utf-8", newline=newline) if text else buffered


def write_file(path: Path, data: bytes) -> None:
    with create(path) as fh:
        fh.write(data)


def make_folder(path: Path) -> None:
    """A new folder of the output (its parent must be there: a worker never recreates a
    staging folder that a cleanup removed)."""
    try:
        os.mkdir(path)
    except OSError as exc:
        raise output_error(exc, path) from None


# -- signals --------------------------------------------------------------------

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class _Signals:
    """While entered (in the main thread), SIGINT, SIGTERM and SIGHUP raise `Interrupted`;
    inside `held()` they wait, and the first is raised when it ends. A signal set to be
    ignored (as `nohup` does) stays ignored; the previous handlers come back on exit."""

    def __init__(self) -> None:
        self.previous: dict[int, Handler] = {}
        self.holding = 0
        self.pending: int | None = None

    def __enter__(self) -> _Signals:
        if threading.current_thread() is threading.main_thread():
            for signum in SIGNALS:
                if signal.getsignal(signum) in (signal.SIG_DFL, signal.default_int_handler):
                    self.previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.holding:
            self.pending = self.pending or signum
            return
        raise Interrupted(signum)

    @contextmanager
    def held(self) -> Iterator[None]:
        self.holding += 1
        try:
            yield
        finally:
            self.holding -= 1
        if not self.holding and self.pending is not None:
            signum, self.pending = self.pending, None
            raise Interrupted(signum)


# -- claiming --out ------------------------------------------------------------------

@dataclass
class _Claim:
    shown: str  # --out as given, for messages
    path: Path  # absolute, its parent resolved
    fd: int  # the folder, open and locked
    made: bool  # this run created it
    replaces: bool  # it holds an old bundle that --force replaces

    def close(self) -> None:
        os.close(self.fd)


def _absolute(out: Path) -> Path:
    """`out` made absolute with its parent's links resolved (`out` itself may not be a link)."""
    if out.name in ("", ".", ".."):
        return Path(os.path.realpath(out))
    return Path(os.path.realpath(out.parent)) / out.name


def _claim(out: Path, force: bool, check_old: Callable[[Path, str], None]) -> _Claim:
    shown = shown_path(out)
    if out.is_symlink():
        raise UsageError(f"--out {shown} is a symbolic link: refusing to write through it")
    path = _absolute(out)
    try:
        cwd = Path(os.path.realpath(os.getcwd()))
    except OSError:
        cwd = None
    if cwd is not None and (path == cwd or path in cwd.parents):
        raise UsageError(f"--out {shown} is the current folder or holds it: give the bundle a folder of its own "
                         "(such as --out ./bundle)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"--out {shown}: cannot make its parent folder: {exc.strerror or exc}") from None
    try:
        os.mkdir(path)
        made = True
    except FileExistsError:
        made = False
    except OSError as exc:
        raise OutputError(f"--out {shown}: cannot make the folder: {exc.strerror or exc}") from None
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise UsageError(f"--out {shown} exists and is not a folder ({exc.strerror or exc})") from None
    try:
        _lock(fd, shown)
        if not os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False)):
            raise UsageError(f"--out {shown} was replaced while this export claimed it: run it again")
        replaces = not made and bool(os.listdir(fd))
        if replaces and not force:
            raise UsageError(f"--out {shown} is not empty (use --force to replace a previous bundle)")
        if replaces:
            check_old(path, shown)
    except BaseException:
        os.close(fd)
        raise
    return _Claim(shown, path, fd, made, replaces)


def _lock(fd: int, shown: str) -> None:
    """An exclusive lock on the claimed folder, or a UsageError when another export holds it.
    (Where the system or the file system has no flock, exports to one folder are not serialised.)"""
    try:
        import fcntl
    except ImportError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise UsageError(f"--out {shown} is being written by another dshreplay export: wait for it to end, "
                         "or write elsewhere") from None
    except OSError as exc:
        if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL):
            raise OutputError(f"--out {shown}: cannot lock it: {exc.strerror or exc}") from None


# -- staging and the swap -------------------------------------------------------------

def _beside(claim: _Claim, kind: str) -> Path:
    """A new folder beside `--out` (`.OUT.KIND-XXXXXXXX`), made as `--out` is: with the process
    umask (tempfile.mkdtemp's are 0700, and the staging folder becomes the bundle's top folder)."""
    for _ in range(100):
        path = claim.path.parent / f".{claim.path.name}.{kind}-{secrets.token_hex(4)}"
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(errno.EEXIST, "no free name for a folder beside it", str(claim.path))


def _swap(claim: _Claim, staging: Path) -> Path | None:
    """Rename `staging` to `--out`, the old bundle moved aside first; returns where it is
    (None: there was none). A failed rename puts the old bundle back."""
    aside = None
    if claim.replaces:
        aside = _beside(claim, "partial-old")
        try:
            os.rename(claim.path, aside)  # (over the empty folder just made: the name is ours)
        except BaseException:
            os.rmdir(aside)
            raise
    try:
        os.rename(staging, claim.path)
    except BaseException:
        if aside is not None:
            os.rename(aside, claim.path)
        raise
    return aside


def write_folder(out: Path, build: Callable[[Path], T], *, force: bool,
                 check_old: Callable[[Path, str], None]) -> T:
    """`build(staging)` fills a staging folder, which then replaces `out` (see the module's
    docstring). `check_old(path, shown)` raises a UsageError when the old content of a
    non-empty `out` may not be replaced (only with `force`). Signals wait while a folder
    is made or renamed, so that each is known to the cleanup the moment it exists."""
    with _Signals() as signals:
        claim = staging = aside = None
        try:
            with signals.held():
                claim = _claim(out, force, check_old)
                staging = _beside(claim, "partial")
            result = build(staging)
            with signals.held():
                aside = _swap(claim, staging)
                staging = None
                if aside is not None:
                    shutil.rmtree(aside, ignore_errors=True)
                    aside = None
            return result
        except BaseException as exc:
            if claim is None:
                raise
            with signals.held():  # a second signal waits until the staging folder is gone
                for folder in (staging, aside):
                    if folder is not None:
                        shutil.rmtree(folder, ignore_errors=True)
                if claim.made:
                    try:
                        os.rmdir(claim.path)  # (only while empty: never the new bundle)
                    except OSError:
                        pass
            if isinstance(exc, (OSError, OutputError)):
                raise _as_output_error(exc, claim, staging) from None
            raise
        finally:
            if claim is not None:
                claim.close()


def _as_output_error(exc: OSError | OutputError, claim: _Claim, staging: Path | None) -> OutputError:
    """One line: the file as it would have been in `--out`, the system's reason, and what was kept."""
    if isinstance(exc, OutputError):
        path, reason = exc.path, exc.message
    else:
        path, reason = (shown_path(exc.filename) if exc.filename else None), exc.strerror or str(exc)
    if path is not None and staging is not None and path.startswith(shown_path(staging)):
        path = claim.shown.rstrip("/") + path[len(shown_path(staging)):]
    kept = f"the old bundle in {claim.shown} is kept" if claim.replaces else "no bundle was written"
    return OutputError(f"{reason}; {kept}", path=path)
