"""Exception types raised by the dshreplay library.

Every error carries where it happened (file, physical line, event seq) so a
front end can print one precise line without a traceback.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DshReplayError", "ReadError", "LineError", "FormatVersionError", "FoldError", "NoViewError",
           "DeriveError", "UsageError", "FilterError", "OutputError", "Interrupted", "fails_at", "answered_for",
           "answered_up_to"]


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

    def __reduce__(self) -> tuple[Any, ...]:
        # picklable for process pools and Dask workers, keyword fields included
        return (_rebuild, (type(self), self.message, dict(self.__dict__)))

    def where(self) -> str:
        """`file: line L, seq S, pointer` (the parts that are known; "" when none is)."""
        return ": ".join(p for p in (self.path, self._place()) if p)

    def _place(self) -> str:
        return ", ".join(p for p in (f"line {self.line}" if self.line is not None else None,
                                     f"seq {self.seq}" if self.seq is not None else None,
                                     self.pointer or None) if p)

    def __str__(self) -> str:
        where = self.where()
        return f"{where}: {self.message}" if where else self.message

    def within(self) -> str:
        """The error without its file (`line L, seq S, pointer: message`), for a record that
        names the file apart (a bundle's manifest entry)."""
        place = self._place()
        return f"{place}: {self.message}" if place else self.message

    def to_json(self) -> dict[str, Any]:
        """The error object every `--json` output uses: stage, seq, line, pointer, message
        (and `code`, the finding code, for a fold error or a damaged line)."""
        body: dict[str, Any] = {"stage": self.kind, "seq": self.seq, "line": self.line, "pointer": self.pointer,
                "message": self.message}
        code = getattr(self, "code", None)
        if code is not None:
            body["code"] = code
        return body


class ReadError(DshReplayError):
    """The log cannot be read: missing file, bad encoding, unparsable line, corrupt zstd."""

    kind = "read"


class RestError(ReadError):
    """The rest of a zstd log cannot be read (a corrupt frame): the lines before it can.
    A pass reads it as a `LineError` (DSH-E013) where the readable
    part ends, so every question gets the answer it gets where the fold fails."""


class ChangedError(ReadError):
    """The log changed while it was read: it shrank below the size it had when first opened,
    or another file took its place. What was read of it is no log's: nothing of it is reported."""


class LineError(ReadError):
    """One line cannot be read as a record (not JSON, not an object, a malformed packed row),
    in a log whose header could be read. `code` is its finding code (DSH-E001 or DSH-E002;
    DSH-E013 where the rest of the log cannot be read).
    A pass treats it as the place where the fold fails, as dsh does (it refuses the log)."""

    def __init__(self, message: str, *, code: str, **where: Any) -> None:
        super().__init__(message, **where)
        self.code = code


class FormatVersionError(ReadError):
    """The header names a format version this build does not read."""

    kind = "version"


class FoldError(DshReplayError):
    """The surface fold rejected an event (dsh would refuse to load the log).

    What a pass that goes on past it (validate) does next: `skipped` (the event is
    skipped for surface purposes) or not (a seq out of place: the fold takes the event
    where the reader placed it), in words in `after`. `caused_by` is the seq of an
    earlier defect this one follows from (an event that never joined the surface)."""

    kind = "fold"
    skipped = True
    after = "event skipped for surface purposes"
    caused_by: int | None = None

    def __init__(self, message: str, *, code: str | None, **where: Any) -> None:
        super().__init__(message, **where)
        self.code = code


class NoViewError(FoldError):
    """A question needs the model's view past the point where the fold fails: there is
    none. `failure` is that point's error (a FoldError, or the LineError of a line that
    cannot be read), or its `to_json()` as a bundle keeps it; `to_json()` describes it.
    The message says what was asked and where the fold fails: `no answer: the model's
    view at seq 900: the fold fails at seq 487 (...)`."""

    def __init__(self, what: str, failure: DshReplayError | dict[str, Any], *, path: str | None = None) -> None:
        facts = failure if isinstance(failure, dict) else failure.to_json()
        super().__init__(f"no answer: {what}: {fails_at(facts)}", code=facts.get("code"), path=path,
                         line=facts.get("line"), seq=facts.get("seq"), pointer=facts.get("pointer"))
        self.failure = facts
        self.kind = facts.get("stage") or "fold"

    def where(self) -> str:
        return self.path or ""

    def to_json(self) -> dict[str, Any]:
        return dict(self.failure)


class DeriveError(DshReplayError):
    """The fold succeeded but a surface node yields no usable model message."""

    kind = "derive"


class UsageError(DshReplayError):
    """The request does not fit the log (for example a seq beyond its end)."""

    kind = "usage"


class FilterError(UsageError):
    """An event filter that can match nothing, or cannot be read: an unknown type family,
    a type without its family, a bad time, a turn past the last, a time filter on a log
    without times. The message names the fix; the command line exits 2 (a usage error)."""


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


def fails_at(error: DshReplayError | dict[str, Any]) -> str:
    """Where and why the fold fails, from the error (or its `to_json()`): `the fold fails at
    seq 487 (DSH-E101, line 490, /seq: seq 488 is not contiguous; expected 487: ...)`."""
    e = error if isinstance(error, dict) else error.to_json()
    where = ", ".join(str(p) for p in (e.get("code"), None if e.get("line") is None else f"line {e['line']}",
                                       e.get("pointer")) if p)
    return f"the fold fails at seq {e.get('seq')} ({where}: {e.get('message')})"


def answered_up_to(failure: DshReplayError | dict[str, Any] | None) -> int | None:
    """The last seq an answer reaches when the fold fails at `failure` (a DshReplayError or its
    `to_json()`): the seq before it (-1: none); None when there is no failure (a whole answer),
    or it names no seq."""
    if failure is None:
        return None
    seq = failure.get("seq") if isinstance(failure, dict) else failure.seq
    return seq - 1 if type(seq) is int else None


def answered_for(error: DshReplayError | dict[str, Any]) -> str:
    """The one sentence every answer cut short by a failed fold carries: `answered for seqs
    0..486 only: the fold fails at seq 487 (...)`."""
    seq = error.get("seq") if isinstance(error, dict) else error.seq
    span = f"seqs 0..{seq - 1}" if type(seq) is int and seq > 0 else "no seq"
    return f"answered for {span} only: {fails_at(error)}"


def _rebuild(cls: type[DshReplayError], message: str, state: dict[str, Any]) -> DshReplayError:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error
