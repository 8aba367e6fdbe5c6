"""Progress: the driver tells a meter how far it read; the command line draws it on a terminal only."""

from __future__ import annotations

import io
import pickle

from dshreplay.core.driver import TICK, run_pass
from dshreplay.core.progress import BYTES, LOGS, Meter
from dshreplay.io.reader import LogSource
from dshreplay.options import Options
from dshreplay.testing.samples import LogBuilder


class Recorder(Meter):
    def __init__(self) -> None:
        self.calls: list = []

    def start(self, total, unit, label) -> None:
        self.calls.append(("start", total, unit, label))

    def advance(self, done, unit) -> None:
        self.calls.append(("advance", done, unit))

    def finish(self, unit) -> None:
        self.calls.append(("finish", unit))


def test_a_pass_tells_its_meter_the_bytes_it_read_of_the_log(tmp_path):
    b = LogBuilder("progress")
    b.start_turn()
    b.start_step()
    for n in range(2 * TICK + 10):
        b.user(f"message {n}")
    b.end_turn()
    log = b.write(tmp_path / "log.jsonl")
    meter = Recorder()
    run_pass(LogSource(log, Options(progress=meter)))
    size = log.stat().st_size
    assert meter.calls[0] == ("start", size, BYTES, str(log))
    assert meter.calls[-1] == ("finish", BYTES)
    offsets = [c[1] for c in meter.calls if c[0] == "advance" and c[2] == BYTES]
    assert len(offsets) == 2  # one report every TICK records
    with open(log, "rb") as fh:  # each report is the byte offset of a line start: the records before it
        lines = fh.readlines()
    starts = {sum(map(len, lines[:n])) for n in range(len(lines))}
    assert offsets[0] < offsets[1] < size and set(offsets) <= starts


def test_without_a_meter_a_pass_tells_nobody(tmp_path):
    b = LogBuilder("quiet")
    b.user("a")
    assert Options().progress is None
    run_pass(LogSource(b.write(tmp_path / "log.jsonl")))  # (nothing to assert but that it runs: no meter)


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_terminal_bar_shows_only_after_its_delay_with_bytes_read_and_rate():
    from dshreplay.cli._meter import TerminalMeter
    out, clock = Tty(), Clock()
    meter = TerminalMeter(out, delay=2.0, clock=clock)
    meter.start(10 * 1024**2, BYTES, "big.jsonl")
    clock.now += 1.0
    meter.advance(1024**2, BYTES)
    assert out.getvalue() == ""  # a short run shows nothing
    clock.now += 3.0  # 4 s in: 5 MB read
    meter.advance(5 * 1024**2, BYTES)
    shown = out.getvalue()
    assert "big.jsonl" in shown and "50%" in shown and "5.0 MB read, 1.2 MB/s" in shown
    meter.finish(BYTES)
    assert out.getvalue().endswith("\n")


def test_while_many_logs_are_counted_the_pass_over_each_is_not_shown():
    from dshreplay.cli._meter import TerminalMeter
    out, clock = Tty(), Clock()
    meter = TerminalMeter(out, delay=0.0, clock=clock)
    meter.start(3, LOGS, "logs")
    meter.start(1000, BYTES, "one.jsonl")  # a log's own pass, inside the count
    clock.now += 1
    meter.advance(500, BYTES)
    meter.finish(BYTES)
    assert out.getvalue() == ""
    meter.advance(1, LOGS)
    assert "1/3" in out.getvalue() and "one.jsonl" not in out.getvalue()
    meter.finish(LOGS)


def test_a_log_name_on_the_bar_shows_its_escapes_escaped():
    # click.unstyle took ANSI sequences out of the label and left a C1 CSI and U+202E raw
    from dshreplay.cli._meter import TerminalMeter
    out, clock = Tty(), Clock()
    meter = TerminalMeter(out, delay=0.0, clock=clock)
    meter.start(1000, BYTES, "a\x1b[0m\x9b2J\u202e.jsonl")
    clock.now += 1
    meter.advance(500, BYTES)
    assert "a\\x1b[0m\\x9b2J\\u202e.jsonl" in out.getvalue()
    assert not any(c in out.getvalue() for c in ("a\x1b", "\x9b", "\u202e"))  # (the bar's own escapes aside)
    meter.finish(BYTES)


def test_a_meter_sent_to_a_worker_process_arrives_as_none():
    from dshreplay.cli._meter import TerminalMeter
    options = Options(progress=TerminalMeter(Tty()))
    assert pickle.loads(pickle.dumps(options)).progress is None


def test_a_run_of_unknown_length_shows_bytes_read_without_percent():
    # a zstd log's length is unknown: click's bar was asked for neither a length nor an iterable and
    # raised "iterable or length is required" (exit 70 in stats, inspect, validate, usage on a terminal)
    from dshreplay.cli._meter import TerminalMeter
    out, clock = Tty(), Clock()
    meter = TerminalMeter(out, delay=2.0, clock=clock)
    meter.start(None, BYTES, "big.jsonl.zstd")
    clock.now += 4.0
    meter.advance(5 * 1024**2, BYTES)
    shown = out.getvalue()
    assert "big.jsonl.zstd" in shown and "5.0 MB read, 1.2 MB/s" in shown and "%" not in shown
    meter.advance(6 * 1024**2, BYTES)
    assert "6.0 MB read, 1.5 MB/s" in out.getvalue()
    meter.finish(BYTES)
    assert out.getvalue().endswith("\n")
