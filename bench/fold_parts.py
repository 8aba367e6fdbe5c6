"""Where `dshreplay fold --json` spends its time beyond the parse, layer by layer.

Each layer does what the one before it does and more, in-process, on the same log:

    import    Python and the modules `fold --json` imports, nothing read
    parse     the bare parse: `for line in f: orjson.loads(line)` (the ratios' baseline: what
              this layer adds to the import)
    lines     the reader's own lines (split a block at a time, each with its number and
              offset), each parsed
    records   `LogReader.records()` as the fold reads them (`counted_only`): the lean loop's
              checks, packed rows checked exactly, the items it gives
    pass      `run_pass` with no observer: the driver and the fold of every item
    command   the whole `dshreplay fold --json LOG > /dev/null`, in its own process

Each figure is the least CPU time (user + system) over the rounds, interleaved; "added"
is what a layer costs over the one before it (import's and command's over nothing). With
--instructions, each layer also runs once under valgrind's callgrind, which counts the
instructions it executed: a figure the load of a shared machine does not move (the
in-process layers include the import, so their "added" counts are read as the times are).

    python bench/fold_parts.py LOG [--rounds 3] [--instructions]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

LAYERS = ("import", "parse", "lines", "records", "pass", "command")
PREVIOUS = {"import": None, "parse": "import", "lines": "parse", "records": "lines", "pass": "records",
            "command": "import"}  # what each layer's "added" is counted over


def layer(name: str, log: str) -> dict[str, int]:
    """Run one in-process layer over `log`; what it counted."""
    import orjson

    from dshreplay.core.driver import STOP, run_pass
    from dshreplay.core.surface import counted_only
    from dshreplay.io.reader import LogSource

    counts: dict[str, int] = {}
    if name == "parse":
        with open(log, "rb") as fh:
            for line in fh:
                orjson.loads(line)
    elif name == "lines":
        with LogSource(log).reader() as reader:
            for _, _, raw in reader.physical_lines():
                orjson.loads(raw)
        counts["lines"] = reader.lines
    elif name == "records":
        with LogSource(log).reader() as reader:
            for item in reader.records(None, counted_only):
                kind = type(item).__name__
                counts[kind] = counts.get(kind, 0) + 1
    elif name == "pass":
        run = run_pass(LogSource(log), (), on_fold_error=STOP)
        counts["events"] = run.event_count or 0
    return counts


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def argv_of(name: str, log: str) -> list[str]:
    if name == "command":
        return [sys.executable, "-m", "dshreplay", "fold", "--json", log]
    return [sys.executable, __file__, log, "--layer", name]


def timed(name: str, log: str, told: dict[str, str]) -> float:
    start = _cpu()
    proc = subprocess.run(argv_of(name, log), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=True)
    told[name] = proc.stderr.strip()
    return _cpu() - start


def instructions(argv: list[str]) -> float | None:
    """Millions of instructions one run executes (callgrind's count), or None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True)
    found = [line for line in proc.stderr.splitlines() if "Collected :" in line]
    return int(found[-1].split(":")[-1]) / 1e6 if found else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--layer", choices=LAYERS, help=argparse.SUPPRESS)  # (one layer, in this process)
    args = parser.parse_args(argv)
    if args.layer is not None:
        counts = layer(args.layer, args.log)
        if counts:
            print(" ".join(f"{k}={v:,}" for k, v in sorted(counts.items())), file=sys.stderr)
        return 0
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # (compiled once: start-up is measured as users run it)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(__file__).parents[1] / "dshreplay")],
                   stdout=subprocess.DEVNULL, check=False)
    best = {name: float("inf") for name in LAYERS}
    told: dict[str, str] = {}  # what each layer counted
    for _ in range(args.rounds):
        for name in LAYERS:
            best[name] = min(best[name], timed(name, args.log, told))
    counted = {name: instructions(argv_of(name, args.log)) for name in LAYERS} if args.instructions else {}
    parse = best["parse"] - best["import"]
    print(f"{'layer':<10}{'CPU s':>8}{'added':>9}{'vs parse':>10}"
          + (f"{'M instr':>10}{'added':>9}" if counted else ""))
    for name in LAYERS:
        previous = PREVIOUS[name]
        added = best[name] - (best[previous] if previous else 0.0)
        row = f"{name:<10}{best[name]:>8.2f}{added:>9.2f}{added / parse:>9.2f}x"
        mine = counted.get(name)
        if mine is not None:
            row += f"{mine:>10.0f}{mine - (counted.get(previous) or 0.0) if previous else mine:>9.0f}"
        print(row)
    print(f"(fold --json: {best['command'] / best['parse']:.2f}x the parse layer, both run as scripts)")
    print("; ".join(f"{name}: {text}" for name, text in told.items() if text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
