"""Run `python -m dshreplay` in a child process under resource limits.

Every hardening case runs the real command line in a child limited in address
space and CPU time, so a regression fails fast instead of filling the
machine. `attack` runs a command to its end; `spawn` starts one that a test
then signals or races; `on_terminal` runs one whose stdout is a pseudo-terminal.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from dshreplay._jsvalues import json_bytes

HEADER = {"type": "session", "version": 0, "id": "attack", "createdAt": 1783352165190, "delegationDepth": 0}


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float

    def one_line(self) -> str:
        """The stderr line (exactly one, no traceback)."""
        lines = self.stderr.splitlines()
        assert len(lines) == 1 and "Traceback" not in self.stderr, self.stderr
        return lines[0]


def _limits(mem_mb: int, seconds: int, file_size: int | None):
    """The child's limits; `file_size` caps every file it writes (RLIMIT_FSIZE, with SIGXFSZ
    ignored, so a write past it fails with EFBIG as a full disk fails with ENOSPC)."""
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
        if file_size is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # (a test runner may ignore some)
            signal.signal(signum, signal.SIG_DFL)
    return apply


def _argv(args) -> list:
    return [sys.executable, "-m", "dshreplay", *[a if isinstance(a, bytes) else str(a) for a in args]]


def attack(*args, mem_mb: int = 400, seconds: int = 20, stdin=None, env=None, cwd=None,
           file_size: int | None = None) -> Outcome:
    """dshreplay ARGS in a child limited to `mem_mb` of address space and `seconds` of CPU."""
    start = time.perf_counter()
    proc = subprocess.run(_argv(args), preexec_fn=_limits(mem_mb, seconds, file_size), capture_output=True,
                          timeout=seconds * 3, stdin=stdin, env={**os.environ, **(env or {})}, cwd=cwd)
    elapsed = time.perf_counter() - start
    assert "internal error" not in proc.stderr.decode(errors="replace"), proc.stderr
    assert elapsed < seconds, f"took {elapsed:.1f} s"
    return Outcome(proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace"),
                   elapsed)


def spawn(*args, mem_mb: int = 400, seconds: int = 20, stdin=None, env=None, cwd=None) -> subprocess.Popen:
    """dshreplay ARGS started in a child under the same limits; `finish` waits for it."""
    return subprocess.Popen(_argv(args), preexec_fn=_limits(mem_mb, seconds, None), stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **(env or {})},
                            cwd=cwd)


def finish(proc: subprocess.Popen, seconds: int = 20) -> Outcome:
    """The outcome of a child from `spawn`, which must end within `seconds`."""
    start = time.perf_counter()
    stdout, stderr = proc.communicate(timeout=seconds)
    assert b"internal error" not in stderr, stderr
    return Outcome(proc.returncode, stdout.decode(errors="replace"), stderr.decode(errors="replace"),
                   time.perf_counter() - start)


def on_terminal(*args, mem_mb: int = 400, seconds: int = 20, env=None, cwd=None) -> Outcome:
    """dshreplay ARGS under the limits of `attack`, its stdout a pseudo-terminal in raw mode
    (the bytes it writes arrive as written: no CR added before a newline), 100 columns wide."""
    import pty
    import tty
    master, slave = pty.openpty()
    tty.setraw(slave)
    start = time.perf_counter()
    proc = subprocess.Popen(_argv(args), preexec_fn=_limits(mem_mb, seconds, None), stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=subprocess.PIPE, env={**os.environ, "COLUMNS": "100", **(env or {})},
                            cwd=cwd)
    os.close(slave)
    out = bytearray()
    while True:  # (read while it writes: a terminal holds only a few kilobytes)
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    stderr = proc.stderr.read() if proc.stderr else b""
    proc.wait(timeout=seconds * 3)
    assert b"internal error" not in stderr, stderr
    return Outcome(proc.returncode, out.decode(errors="replace"), stderr.decode(errors="replace"),
                   time.perf_counter() - start)


def lines(*records) -> bytes:
    return b"".join(json_bytes(r) + b"\n" for r in records)
