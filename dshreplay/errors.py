"""Exception types raised by the dshreplay library.

Every error carries where it happened (file, physical line, event seq) so a
front end can print one precise line without a traceback.
"""

from __future__ import annotations


class DshReplayError(Exception):
    """Base class: a defect found in a log, located by file, line and seq."""

    kind = "error"

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 seq: int | None = None, pointer: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.seq = seq
        self.pointer = pointer

    def __reduce__(self):
        # picklable for process pools and Dask workers, keyword fields included
        return (_rebuild, (type(self), self.message, dict(self.__dict__)))

    def where(self) -> str:
        """`file: line L, seq S, pointer` (the parts that are known; "" when none is)."""
        place = ", ".join(p for p in (f"line {self.line}" if self.line is not None else None,
                                      f"seq {self.seq}" if self.seq is not None else None,
                                      self.pointer or None) if p)
        return ": ".join(p for p in (self.path, place) if p)

    def __str__(self) -> str:
        where = self.where()
        return f"{where}: {self.message}" if where else self.message


class ReadError(DshReplayError):
    """The log cannot be read: missing file, bad encoding, unparsable line, corrupt zstd."""

    kind = "read"


class FormatVersionError(ReadError):
    """The header names a format version this build does not read."""

    kind = "version"


class FoldError(DshReplayError):
    """The surface fold rejected an event (dsh would refuse to load the log)."""

    kind = "fold"

    def __init__(self, message: str, *, code: str, **where) -> None:
        super().__init__(message, **where)
        self.code = code


class DeriveError(DshReplayError):
    """The fold succeeded but a surface node yields no usable model message."""

    kind = "derive"


class UsageError(DshReplayError):
    """The request does not fit the log (for example a seq beyond its end)."""

    kind = "usage"


class OutputError(DshReplayError):
    """An output cannot be written (a full disk, a file too large, a read-only folder):
    an error of the output, never a verdict on the input being read."""

    kind = "output"


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP arrived while an output was being written: raised
    (as Ctrl-C raises KeyboardInterrupt) so that the writer's cleanups run."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _rebuild(cls, message, state):
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error
