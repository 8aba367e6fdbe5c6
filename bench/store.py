"""A session read from a dsh SQLite store against the same session's JSONL log.

Writes a log of EVENTS events (bench/make_log.py) and a store holding that session
(dshreplay.testing.sqlitestore, one append per --batch events), then runs
`dshreplay fold --json` and `dshreplay validate --jobs 1` on each in interleaved rounds
(bench/run.py's measure): the goal is a store session within 1.2x of its log.

    python bench/store.py 200000 [--rounds 5] [--batch 64]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_log import generate  # noqa: E402
from run import measure_rounds  # noqa: E402

from dshreplay.io.reader import LogReader  # noqa: E402
from dshreplay.testing.sqlitestore import write_store  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"


def make(events: int, batch: int) -> tuple[Path, Path]:
    OUT.mkdir(parents=True, exist_ok=True)
    log, store = OUT / f"store-{events}.jsonl", OUT / f"store-{events}-b{batch}.sqlite"
    if not log.exists():
        with open(log, "wb") as fh:
            for chunk in generate(events):
                fh.write(chunk)
    if not store.exists():
        with LogReader(log) as reader:
            header = {k: v for k, v in reader.header.items() if k != "type"}
            records = [event.record for event in reader.events()]
        write_store(store, [(header, records)], batch=batch)
    return log, store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("events", type=int)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64, help="events per append (dsh batches by a 200 ms window)")
    args = parser.parse_args(argv)
    log, store = make(args.events, args.batch)
    dsh = [sys.executable, "-m", "dshreplay"]
    cmds = [(f"fold --json {kind}", dsh + ["fold", str(path), "--json"]) for kind, path in
            (("log", log), ("store", store))]
    cmds += [(f"validate --jobs 1 {kind}", dsh + ["validate", "--jobs", "1", str(path)]) for kind, path in
             (("log", log), ("store", store))]
    got = measure_rounds(cmds, args.rounds)
    print(f"{args.events} events, {log.stat().st_size} bytes of log, store in appends of {args.batch}; "
          f"median CPU seconds of {args.rounds} interleaved rounds")
    for command in ("fold --json", "validate --jobs 1"):
        a, b = got[f"{command} log"]["cpu"], got[f"{command} store"]["cpu"]
        print(f"{command:18}  log {a:7.3f}  store {b:7.3f}  store/log {b / a:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
