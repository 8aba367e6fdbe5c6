"""The progress meter on a real terminal: every long command, any encoding, never an exit 70.

Each command runs in a child process whose stderr is a pseudo-terminal (so the meter is on), with
the meter's delay at 0 so that a small log shows its bar as a long one would after two seconds.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest

from dshreplay.core.driver import TICK
from dshreplay.testing.samples import LogBuilder

CHILD = ("import sys, dshreplay.cli._meter as p; p.DELAY = 0.0; "
         "from dshreplay.cli import main; sys.argv[0] = 'dshreplay'; main()")


def _on_a_terminal(*args, stdin=None, out=None) -> tuple[int, str, str]:
    """dshreplay ARGS with stderr on a pseudo-terminal: (exit code, stdout, what the terminal showed).
    Standard input and output are files (`stdin`: a path; `out`: where stdout goes)."""
    leader, follower = pty.openpty()
    with open(out, "w+b") as sink, open(stdin if stdin is not None else os.devnull, "rb") as source:
        proc = subprocess.Popen([sys.executable, "-c", CHILD, *map(str, args)], stdout=sink, stderr=follower,
                                stdin=source)
        os.close(follower)
        shown = bytearray()
        while True:  # (the terminal is read as the child writes, so it never blocks on a full terminal)
            try:
                data = os.read(leader, 65536)
            except OSError:  # (EIO: the child closed the terminal)
                break
            if not data:
                break
            shown += data
        os.close(leader)
        code = proc.wait(timeout=120)
        sink.seek(0)
        return code, sink.read().decode(), shown.decode(errors="replace")


@pytest.fixture(scope="module")
def zstd_log(tmp_path_factory):
    b = LogBuilder("metered")
    b.start_turn()
    b.start_step()
    for n in range(2 * TICK + 50):
        b.user(f"message {n}")
    b.end_turn()
    return b.write(tmp_path_factory.mktemp("logs") / "session.jsonl.zstd")


@pytest.mark.parametrize("command", [["stats"], ["inspect"], ["validate"], ["usage"], ["fold"]])
def test_a_zstd_log_read_on_a_terminal_shows_its_meter_and_answers(zstd_log, command, tmp_path):
    # the meter asked click for a bar of unknown length and raised: "internal error: TypeError:
    # iterable or length is required", exit 70, for any .jsonl.zstd log read for over two seconds
    code, out, shown = _on_a_terminal(*command, zstd_log, out=tmp_path / "out")
    assert code == 0, shown
    assert "internal error" not in shown and "Traceback" not in shown
    assert "session.jsonl.zstd" in shown and " read, " in shown  # the bar: the log's name, bytes read
    assert out.strip()


def test_a_zstd_log_on_standard_input_is_validated_on_a_terminal(zstd_log, tmp_path):
    code, out, shown = _on_a_terminal("validate", "-", stdin=zstd_log, out=tmp_path / "out")
    assert code == 0 and "internal error" not in shown, shown
    assert "<stdin>" in shown and " read, " in shown
    assert "ok" in out


def test_an_export_of_a_zstd_log_on_a_terminal_keeps_the_session(zstd_log, tmp_path):
    # export wrote the bundle without the session and gave it the verdict internal-error
    code, out, shown = _on_a_terminal("export", zstd_log, "--out", tmp_path / "b", "--no-default-redaction",
                                      "-j", 1, out=tmp_path / "out")
    assert code == 0 and "internal error" not in shown, shown
    assert "session.jsonl.zstd" in shown and " read, " in shown
    assert any((tmp_path / "b").rglob("messages.jsonl"))
