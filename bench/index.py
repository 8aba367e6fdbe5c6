"""The SQL index on a generated store: first index, re-index after appending to 10% of the
sessions, and `usage --by day`, each as CPU time (the command and its worker processes)
against a bare orjson parse of the bytes it read, measured in the same run.

    python bench/index.py bench/out/store [--sessions 2000] [--events 1000] [--jobs 2]

The store holds SESSIONS logs of about EVENTS events each (2,000 x 1,000: about 2M events),
spread over 30 days; the appended 10% each get about a tenth more events (whole turns, so
each grown log is a valid log that starts with every byte of the one indexed).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_log import generate  # noqa: E402

DAY = 86_400_000
CREATED = 1783352165190
BARE_PARSE = ("import orjson, sys\n"
              "loads = orjson.loads\n"
              "for path in sys.argv[1:]:\n"
              "    with open(path, 'rb') as fh:\n"
              "        for line in fh:\n"
              "            loads(line)\n")
BARE_PARSE_TAIL = ("import orjson, sys\n"
                   "loads = orjson.loads\n"
                   "for arg in sys.argv[1:]:\n"
                   "    path, start = arg.rsplit(':', 1)\n"
                   "    with open(path, 'rb') as fh:\n"
                   "        fh.seek(int(start))\n"
                   "        for line in fh:\n"
                   "            loads(line)\n")


def log_bytes(n: int, events: int) -> bytes:
    return b"".join(generate(events, seed=n, session_id=f"bench-{n:05d}", created_at=CREATED + (n % 30) * DAY))


def build(root: Path, sessions: int, events: int) -> list[Path]:
    paths = []
    for n in range(sessions):
        folder = root / f"project-{n % 10}" / f"s{n:05d}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "session.jsonl"
        path.write_bytes(log_bytes(n, events))
        paths.append(path)
    return paths


def cpu(argv: list[str]) -> tuple[float, float, int]:
    """(CPU seconds of the command and every process it waited for, wall seconds, exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, argv[:4]))}... failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return used, wall, proc.returncode


def parse_cpu(paths: list[str], script: str = BARE_PARSE) -> float:
    total = 0.0
    for start in range(0, len(paths), 500):  # (command lines of a bounded length)
        total += cpu([sys.executable, "-c", script, *paths[start:start + 500]])[0]
    return total


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    if args.root.exists():
        shutil.rmtree(args.root)
    store, db = args.root / "store", args.root / "index.duckdb"
    start = time.perf_counter()
    paths = build(store, args.sessions, args.events)
    size = sum(p.stat().st_size for p in paths)
    events = sum(sum(1 for _ in open(p, "rb")) - 1 for p in paths)  # (lines: packed rows count once)
    print(f"store: {args.sessions} sessions, {events} lines after the headers, {size / 1e6:.0f} MB "
          f"(generated in {time.perf_counter() - start:.0f} s)")
    dshreplay = [sys.executable, "-m", "dshreplay"]
    bare = parse_cpu([str(p) for p in paths])
    rows = []
    first = cpu([*dshreplay, "index", str(store), "--db", str(db), "-j", str(args.jobs), "-q"])
    rows.append(("first index", first, bare, "the whole store"))

    grown = paths[::10]
    offsets = []
    for n, path in zip(range(0, args.sessions, 10), grown):
        old = path.stat().st_size
        longer = log_bytes(n, args.events + args.events // 10)
        with open(path, "ab") as fh:
            fh.write(longer[old:])
        offsets.append(f"{path}:{old}")
    appended = sum(p.stat().st_size for p in grown) - sum(int(o.rsplit(":", 1)[1]) for o in offsets)
    again = cpu([*dshreplay, "index", str(store), "--db", str(db), "-j", str(args.jobs), "-q"])
    bare_all = parse_cpu([str(p) for p in paths])
    bare_grown = parse_cpu([str(p) for p in grown])
    bare_tail = parse_cpu(offsets, BARE_PARSE_TAIL)
    rows.append(("re-index, 10% grown", again, bare_all, "the whole store (every log is hashed)"))
    rows.append(("  (same run)", again, bare_grown, "the grown logs, whole (their chains are checked)"))
    rows.append(("  (same run)", again, bare_tail, f"the appended bytes only ({appended / 1e6:.1f} MB: what is "
                                                   "parsed)"))
    usage_db = cpu([*dshreplay, "usage", "--db", str(db), "--by", "day"])
    rows.append(("usage --by day --db", usage_db, bare_all, "the whole store"))
    usage_logs = cpu([*dshreplay, "usage", str(store), "--by", "day", "-j", str(args.jobs), "-q"])
    rows.append(("usage --by day (logs)", usage_logs, bare_all, "the whole store"))
    print(f"{'step':24} {'CPU s':>8} {'wall s':>8} {'bare parse CPU s':>17} {'ratio':>7}  bare parse of")
    for name, (used, wall, _), base, what in rows:
        print(f"{name:24} {used:8.1f} {wall:8.1f} {base:17.2f} {used / base:7.1f}  {what}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"index database: {db.stat().st_size / 1e6:.0f} MB; jobs: {args.jobs}; the largest process's peak "
          f"RSS: {peak:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
