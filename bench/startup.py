"""Start-up of dshreplay commands on a 10-event log, against a bare `import orjson`.

A script that runs dshreplay over 10,000 small logs pays the start-up each time:
this measures it. Every command runs in its own process, in interleaved rounds
(each round runs every command once), and each figure is the median (and the
minimum) of the process's CPU time (user + system) over the rounds, with the
ratio to the bare `python -c "import orjson"` of the same rounds. The goal for
`fold` is 60 ms CPU. With --importtime, `python -X importtime` shows the
modules each command imported that cost it most (the least of 5 runs). With
--against SRC (a checkout's root that holds a `dshreplay/` folder, such as
`git worktree add /tmp/main main` makes), every dshreplay command also runs
from SRC in the same rounds, so the table compares the two same-run. Each package is found by
PYTHONPATH, from a scratch folder (not the current one), and compiled first.
With --instructions, each command also runs once under valgrind's callgrind,
which counts the instructions it executed: a figure other work on a shared
machine does not change (skipped with a note when valgrind is not there).

    python bench/startup.py [--rounds 21] [--importtime 12] [--against SRC] [--instructions]
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import compile_package, run_once  # noqa: E402

EVENTS = 10


REPO = Path(__file__).resolve().parent.parent


def commands(log: Path, scratch: Path, against: Path | None = None) -> list[tuple[str, list[str], Path | None]]:
    """(name, argv, the source root its dshreplay is taken from) of every measured command."""
    py = sys.executable
    dsh = [py, "-m", "dshreplay"]
    runs = [
        ("fold", ["fold", str(log)]),
        ("fold --json", ["fold", str(log), "--json"]),
        ("validate", ["validate", str(log)]),
        ("export", ["export", str(log), "--out", str(scratch / "bundle"), "--force",
                    "--timestamp", "2026-01-01T00:00:00Z", "--evidence-key", str(scratch / "evidence.key")]),
    ]
    sources = [(REPO, "")] + ([(against, f" [{against.name}]")] if against is not None else [])
    return [("python (no imports)", [py, "-c", "pass"], None),
            ("python -c 'import orjson' (baseline)", [py, "-c", "import orjson"], None)] + [
        (f"dshreplay {name}{tag}", dsh + args, root) for name, args in runs for root, tag in sources]


def small_log(path: Path) -> Path:
    """A 10-event log as bench/make_log.py writes them (in a child: this process stays small)."""
    script = (f"import sys\nsys.path.insert(0, {str(Path(__file__).resolve().parent)!r})\n"
              "import make_log\nmake_log.main([sys.argv[1], sys.argv[2]])\n")
    subprocess.run([sys.executable, "-c", script, str(EVENTS), str(path)], check=True)
    return path


def once(argv: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run, output discarded."""
    wall, cpu, _ = run_once(argv)
    return cpu, wall


def measure(cmds: list[tuple[str, list[str], Path | None]], rounds: int) -> dict[str, dict]:
    """Every command once per round, the rounds interleaved; medians and minima."""
    cpu: dict[str, list[float]] = {name: [] for name, _, _ in cmds}
    wall: dict[str, list[float]] = {name: [] for name, _, _ in cmds}
    for _ in range(rounds):
        for name, argv, root in cmds:
            with package_from(root):
                c, w = once(argv)
            cpu[name].append(c)
            wall[name].append(w)
    return {name: {"cpu": statistics.median(cpu[name]), "cpu_min": min(cpu[name]),
                   "wall": statistics.median(wall[name]), "wall_min": min(wall[name])} for name, _, _ in cmds}


@contextmanager
def package_from(root: Path | None) -> Iterator[None]:
    """The child processes started inside take dshreplay from `root` (PYTHONPATH; they run in a
    scratch folder, so the current folder does not come first); None: no change."""
    if root is None:
        yield
        return
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(root)
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before


def instructions(argv: list[str]) -> float | None:
    """Millions of instructions one run executes (callgrind's count), or None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    return int(found[1]) / 1e6 if found else None


_IMPORT_LINE = re.compile(r"import time:\s*(\d+) \|\s*(\d+) \|( *)(\S.*)")


def top_imports(argv: list[str], top: int, runs: int = 5) -> list[tuple[int, int, str]]:
    """(self µs, cumulative µs, module) of the `top` imports with the largest
    cumulative time that no other measured import contains (the top level),
    each the minimum over `runs` runs (one run's figures move with the machine's load)."""
    best: dict[str, tuple[int, int]] = {}
    for _ in range(runs):
        proc = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], capture_output=True, text=True)
        for line in proc.stderr.splitlines():
            m = _IMPORT_LINE.match(line)
            if m and len(m[3]) <= 3:  # a module imported at the top, or directly by one
                name = ("  " if len(m[3]) == 3 else "") + m[4]
                own, total = best.get(name, (int(m[1]), int(m[2])))
                best[name] = (min(own, int(m[1])), min(total, int(m[2])))
    rows = [(own, total, name) for name, (own, total) in best.items()]
    return sorted(rows, key=lambda r: -r[1])[:top]


BASELINE = "python -c 'import orjson' (baseline)"


def table(results: dict[str, dict]) -> str:
    base = results[BASELINE]["cpu"]
    counted = all("instructions" in r for r in results.values())
    rows = [(name, f"{r['cpu'] * 1000:.0f}", f"{r['cpu_min'] * 1000:.0f}", f"{r['cpu'] / base:.2f}x",
             f"{r['wall'] * 1000:.0f}") + ((f"{r['instructions']:.0f}",
                                            f"{r['instructions'] / results[BASELINE]['instructions']:.2f}x")
                                           if counted else ()) for name, r in results.items()]
    head = ("command (10-event log)", "CPU ms median", "CPU ms min", "vs import orjson", "wall ms median") + (
        ("M instructions", "vs import orjson") if counted else ())
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    fmt = "  ".join(f"{{:<{widths[0]}}}" if i == 0 else f"{{:>{w}}}" for i, w in enumerate(widths))
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths))] + [fmt.format(*r) for r in rows])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21, help="runs of every command, interleaved")
    parser.add_argument("--importtime", type=int, metavar="N", default=0,
                        help="also show each dshreplay command's N costliest imports (python -X importtime)")
    parser.add_argument("--instructions", action="store_true",
                        help="also count each command's instructions once, under valgrind (callgrind)")
    parser.add_argument("--against", type=Path, metavar="SRC",
                        help="also run every command with the dshreplay of this checkout root, in the same rounds")
    args = parser.parse_args(argv)
    compile_package()
    if args.against is not None:
        if not (args.against / "dshreplay" / "__init__.py").is_file():
            parser.error(f"{args.against}: holds no dshreplay/ package")
        compileall.compile_dir(str(args.against / "dshreplay"), quiet=1)
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="dshreplay-startup-") as scratch:
        scratch = Path(scratch)
        os.chdir(scratch)  # (the current folder comes first on a child's path: not this checkout's)
        cmds = commands(small_log(scratch / "session.jsonl"), scratch, args.against)
        load = os.getloadavg()[0]
        results = measure(cmds, args.rounds)
        for name, command, root in cmds if args.instructions else ():
            with package_from(root):
                count = instructions(command)
            if count is None:
                print("(no valgrind here: instructions not counted)")
                break
            results[name]["instructions"] = count
        print(table(results))
        print(f"({args.rounds} interleaved rounds; load average {load:.2f} before, {os.getloadavg()[0]:.2f} after, "
              f"on {os.cpu_count()} cores: other work on the machine raises every figure, the ratios less)")
        for name, command, root in cmds:
            if args.importtime and root is not None:
                print(f"\n{name}: costliest imports (self µs, cumulative µs)")
                with package_from(root):
                    for own, total, module in top_imports(command, args.importtime):
                        print(f"  {own:>7} {total:>8}  {module}")
        os.chdir(here)
    return 0


if __name__ == "__main__":
    sys.exit(main())
