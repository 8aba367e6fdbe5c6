"""Time and peak memory of dshreplay commands against a bare orjson parse.

Every figure comes from one run on the same file; each command runs in its
own process (best of --repeat; export, which takes minutes, once), and ratios
are to the bare parse: wall time, and CPU time (user and system, the
command's worker processes included). For export also the bundle's files per
session and its size against the log's.

    python bench/run.py bench/out/400k.jsonl [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

BARE_PARSE = ("import orjson, sys\n"
              "loads = orjson.loads\n"
              "with open(sys.argv[1], 'rb') as fh:\n"
              "    for line in fh:\n"
              "        loads(line)\n")


ZSTD_STREAM_PARSE = ("import io, orjson, sys, zstandard\n"
                     "raw = open(sys.argv[1], 'rb')\n"
                     "text = io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw, "
                     "read_across_frames=True))\n"
                     "for line in text:\n"
                     "    orjson.loads(line)\n")


def measure(argv: list[str], repeat: int) -> tuple[float, float, float]:
    """Best wall time (s), the peak RSS (MB) and the best CPU time (s: user and system, its
    waited-for children included) of a command, output discarded."""
    best_time, peak, best_cpu = float("inf"), 0.0, float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {err.strip()}")
        best_time = min(best_time, elapsed)
        best_cpu = min(best_cpu, usage.ru_utime + usage.ru_stime)
        peak = max(peak, usage.ru_maxrss / 1024)
    return best_time, peak, best_cpu


def commands(log: Path, middle: int | None, scratch: Path | None = None) -> list[tuple[str, list[str]]]:
    py = sys.executable
    cmds = [("orjson parse (baseline)", [py, "-c", BARE_PARSE, str(log)])]
    if log.suffix == ".zstd":
        cmds = [("zstandard stream + orjson parse (baseline)", [py, "-c", ZSTD_STREAM_PARSE, str(log)])]
    elif shutil.which("jq"):
        cmds.append(("jq -c .", ["sh", "-c", f"jq -c . '{log}' >/dev/null"]))
    dsh = [py, "-m", "dshreplay"]
    cmds.append(("dshreplay fold --json", dsh + ["fold", str(log), "--json"]))
    if middle is not None:
        cmds.append(("dshreplay fold --at <middle>", dsh + ["fold", str(log), "--at", str(middle), "--json"]))
        cmds.append(("dshreplay diff <middle> <end>",
                     dsh + ["diff", str(log), "--from", str(middle), "--to", str(2 * middle - 1), "--json"]))
    cmds.append(("dshreplay validate", dsh + ["validate", str(log)]))
    cmds.append(("dshreplay validate --jobs 1", dsh + ["validate", "--jobs", "1", str(log)]))
    cmds.append(("dshreplay request --list", dsh + ["request", str(log), "--list", "--json"]))
    if scratch is not None:
        cmds.append(("dshreplay export", dsh + ["export", str(log), "--out", str(scratch / "bundle"), "--force",
                                                "--timestamp", "2026-01-01T00:00:00Z"]))
        cmds.append(("dshreplay export --no-default-redaction",
                     dsh + ["export", str(log), "--out", str(scratch / "plain-bundle"), "--force",
                            "--timestamp", "2026-01-01T00:00:00Z", "--no-default-redaction"]))
    return cmds


def count_events(log: Path) -> int:
    """The log's events, counted in a child process: on Linux a child starts with its parent's peak
    RSS as its own, so this process must stay small for the children's figures to be theirs."""
    script = ("import sys\nfrom dshreplay.io.reader import LogReader\n"
              "with LogReader(sys.argv[1]) as reader:\n    print(sum(1 for _ in reader.events()))\n")
    return int(subprocess.run([sys.executable, "-c", script, str(log)], capture_output=True, text=True,
                              check=True).stdout)


def compile_package() -> None:
    """Write dshreplay's bytecode, as an installed package has it (pip compiles on install;
    an editable checkout under PYTHONDONTWRITEBYTECODE would recompile on every start).
    (Found, not imported: this process stays small, see `count_events`.)"""
    import compileall
    import importlib.util
    compileall.compile_dir(str(Path(importlib.util.find_spec("dshreplay").origin).parent), quiet=1)


IDENTICAL_UP_TO = 150_000  # logs up to this many events are exported twice, to compare the bundles


def run(logs: list[Path], repeat: int, export: bool = True, only: tuple[str, ...] | None = None) -> list[dict]:
    """Measure every command on every log (`only`: those named, and the baseline); one dict
    per (log, command). The export row also gives the bundle's size, its files per session
    and, for small logs, whether a second export with the same --timestamp wrote the same bytes."""
    import tempfile
    compile_package()
    results = []
    for log in logs:
        events = count_events(log)
        with tempfile.TemporaryDirectory(prefix="dshreplay-bench-") as scratch:
            scratch = Path(scratch)
            wanted = commands(log, events // 2, scratch if export else None)
            wanted = [c for k, c in enumerate(wanted) if k == 0 or only is None or c[0] in only]
            measured = [(name, *measure(argv, 1 if name.startswith("dshreplay export") else repeat), argv)
                        for name, argv in wanted]
            bundle = scratch / "bundle"
            size = _in_child(TREE_SIZE, bundle) if bundle.exists() else None
            per_session = _in_child(MOST_FILES, bundle) if bundle.exists() else None
            identical = None
            if size is not None and events <= IDENTICAL_UP_TO:
                argv = next(a for n, *_, a in measured if n == "dshreplay export")
                again = scratch / "again"
                subprocess.run([*argv[:argv.index("--out") + 1], str(again), *argv[argv.index("--out") + 2:]],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
                identical = _in_child(TREE_DIGEST, bundle) == _in_child(TREE_DIGEST, again)
        base_time, base_cpu = measured[0][1], measured[0][3]
        for name, seconds, mem, cpu, _ in measured:
            row = {"log": log.name, "events": events, "mb": log.stat().st_size / 1e6,
                   "command": name, "seconds": seconds, "ratio": seconds / base_time, "rss": mem,
                   "cpu": cpu, "cpu_ratio": cpu / base_cpu}
            if name == "dshreplay export":
                row.update(bundle_mb=size / 1e6, bundle_ratio=size / log.stat().st_size, identical=identical,
                           files_per_session=per_session)
            results.append(row)
    return results


TREE_SIZE = ("import os, sys\n"
             "print(sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(sys.argv[1]) for f in fs))\n")
MOST_FILES = ("import os, sys\n"  # the most files a session's folder holds (a bundle's root holds two more)
              "print(max([sum(len(fs) for _, _, fs in os.walk(e.path)) for e in os.scandir(sys.argv[1]) "
              "if e.is_dir()] or [0]))\n")
TREE_DIGEST = ("import hashlib, os, sys\n"  # one digest of every file's path and bytes, in path order
               "h = hashlib.sha256()\n"
               "for path in sorted(os.path.join(d, f) for d, _, fs in os.walk(sys.argv[1]) for f in fs):\n"
               "    h.update(os.path.relpath(path, sys.argv[1]).encode() + b'\\0')\n"
               "    with open(path, 'rb') as fh:\n"
               "        h.update(hashlib.file_digest(fh, 'sha256').digest())\n"
               "print(h.hexdigest())\n")


def _in_child(script: str, path: Path):
    """What `script` prints for `path`, run in a child process (this one stays small)."""
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout) if out.stdout.strip().isdigit() else out.stdout.strip()


def bundle_table(results: list[dict]) -> str:
    """Export against its goals (at most 30 files per session, a bundle at most 1.5x the log,
    CPU time at most 15x the bare parse's, peak RSS at most 400 MB)."""
    from dshreplay.output.reporters import render_table
    rows = [(r["log"], f"{r['mb']:.0f}", f"{r['bundle_mb']:.0f}", f"{r['bundle_ratio']:.2f}x",
             str(r["files_per_session"]), f"{r['cpu_ratio']:.1f}x", f"{r['ratio']:.1f}x", f"{r['rss']:.0f}",
             {True: "yes", False: "NO", None: "-"}[r["identical"]]) for r in results if "bundle_mb" in r]
    return render_table(rows, ["log", "log MB", "bundle MB", "bundle / log", "files / session", "CPU vs parse",
                               "wall vs parse", "peak RSS MB", "byte-identical rerun"], 10**6)


def table(results: list[dict]) -> str:
    from dshreplay.output.reporters import render_table
    rows = [(r["log"], f"{r['events']:,}", f"{r['mb']:.0f}", r["command"], f"{r['seconds']:.2f}",
             f"{r['ratio']:.2f}x", f"{r['cpu']:.2f}", f"{r['cpu_ratio']:.2f}x", f"{r['rss']:.0f}") for r in results]
    return render_table(rows, ["log", "events", "MB", "command", "seconds", "vs parse", "CPU s", "CPU vs parse",
                               "peak RSS MB"], 10**6)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-export", action="store_true", help="skip the export measurement")
    args = parser.parse_args(argv)
    results = run(args.logs, args.repeat, not args.no_export)
    print(table(results))
    if not args.no_export:
        print()
        print(bundle_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
