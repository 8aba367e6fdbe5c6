"""Time and peak memory of dshreplay commands and their peers against a bare orjson parse.

Every figure comes from one run on the same file: the commands run in
interleaved rounds (each round runs every command once, each in its own
process; export, which takes minutes, in the first round only), and each
figure is the median (and the minimum) over the rounds of the process's wall
time and CPU time (user + system, its child processes included), with its
peak RSS; ratios are to the bare parse's median in the same rounds. The peers
run in the same rounds: `jq -c .` and dsh's own fold in node
(`../shared/peers/dsh-fold.mjs` beside the repository: parse + foldSurface +
message projection), each skipped with a note when it is not there. Start-up
runs in the same rounds too: `fold` of a tiny log (a user message, a tool round, an answer) beside a bare
`python -c "import orjson"` (its ratio is to the parse of the big log, like
every row's: read its seconds).

    python bench/make_log.py 1000000 bench/out/1m.jsonl
    python bench/make_log.py 1000000 bench/out/1m-emoji.jsonl --emoji
    python bench/run.py bench/out/1m.jsonl bench/out/1m-emoji.jsonl [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DSH_FOLD = REPO.parent / "shared" / "peers" / "dsh-fold.mjs"  # dsh's own fold, bundled (see its README)

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


def run_once(argv: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system, reaped children included) and peak RSS (MB)
    of one run of a command, its output discarded."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode(errors="replace")  # (read first: a full pipe would block the child)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {err.strip()[:2000]}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def measure_rounds(cmds: list[tuple[str, list[str]]], rounds: int, once: frozenset = frozenset()) -> dict:
    """Every command once per round, the rounds interleaved (a command in `once`: the
    first round only). name -> {wall, wall_min, cpu, cpu_min, rss, runs}: medians, minima
    and the peak RSS over the rounds."""
    runs: dict[str, list] = {name: [] for name, _ in cmds}
    for round_ in range(rounds):
        for name, argv in cmds:
            if round_ == 0 or name not in once:
                runs[name].append(run_once(argv))
    out = {}
    for name, rows in runs.items():
        walls, cpus, rss = zip(*rows)
        out[name] = {"wall": statistics.median(walls), "wall_min": min(walls), "cpu": statistics.median(cpus),
                     "cpu_min": min(cpus), "rss": max(rss), "runs": len(rows)}
    return out


def peers(log: Path) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """jq and dsh's own fold on `log`, and a note for each that cannot run here."""
    cmds, notes = [], []
    zstd = log.suffix == ".zstd"
    if zstd:
        notes.append("jq -c .: not run on a zstd log (jq reads text)")
    elif shutil.which("jq"):
        cmds.append(("jq -c .", ["jq", "-c", ".", str(log)]))
    else:
        notes.append("jq -c .: skipped, jq is not installed")
    node = shutil.which("node")
    if node is None:
        notes.append("dsh's own fold (node): skipped, node is not installed")
    elif not DSH_FOLD.is_file():
        notes.append(f"dsh's own fold (node): skipped, {DSH_FOLD} is not there")
    elif zstd and not shutil.which("zstd"):
        notes.append("dsh's own fold (node): skipped on a zstd log, the zstd command is not installed")
    else:
        cmds.append(("dsh's own fold (node)", [node, str(DSH_FOLD), str(log), *(["--zstd=cli"] if zstd else [])]))
    return cmds, notes


def commands(log: Path, middle: int | None, scratch: Path | None = None) -> tuple[list, list[str]]:
    """(name, argv) of every command measured on `log` (the baseline first), and the notes
    on peers that cannot run."""
    py = sys.executable
    if log.suffix == ".zstd":
        cmds = [("zstandard stream + orjson parse (baseline)", [py, "-c", ZSTD_STREAM_PARSE, str(log)])]
    else:
        cmds = [("orjson parse (baseline)", [py, "-c", BARE_PARSE, str(log)])]
    others, notes = peers(log)
    cmds += others
    dsh = [py, "-m", "dshreplay"]
    cmds.append(("dshreplay fold --json", dsh + ["fold", str(log), "--json"]))
    if middle is not None:
        cmds.append(("dshreplay fold --at <middle>", dsh + ["fold", str(log), "--at", str(middle), "--json"]))
        cmds.append(("dshreplay diff <middle> <end>",
                     dsh + ["diff", str(log), "--from", str(middle), "--to", str(2 * middle - 1), "--json"]))
    cmds.append(("dshreplay request --list", dsh + ["request", str(log), "--list", "--json"]))
    cmds.append(("dshreplay validate --jobs 1", dsh + ["validate", "--jobs", "1", str(log)]))
    cmds.append(("dshreplay validate", dsh + ["validate", str(log)]))
    if scratch is not None:
        cmds.append(("dshreplay export", dsh + ["export", str(log), "--out", str(scratch / "bundle"), "--force",
                                                "--timestamp", "2026-01-01T00:00:00Z",
                                                "--evidence-key", str(scratch / "evidence.key")]))
        cmds.append(("dshreplay export --no-default-redaction",
                     dsh + ["export", str(log), "--out", str(scratch / "plain-bundle"), "--force",
                            "--timestamp", "2026-01-01T00:00:00Z", "--no-default-redaction"]))
    return cmds, notes


TINY_LOG = ("import sys\nfrom dshreplay.testing.samples import LogBuilder\n"
            "b = LogBuilder()\nb.start_turn()\nb.start_step()\nb.user('hi')\n"
            "b.tool_round('bash', '{\"cmd\": \"ls\"}', 'a.txt')\nb.end_step()\nb.start_step()\n"
            "b.assistant('done', finish='stop')\nb.end_step()\nb.end_turn()\n"
            "open(sys.argv[1], 'wb').write(b.to_bytes())\n")


def startup_commands(scratch: Path) -> list[tuple[str, list[str]]]:
    """Start-up: a bare `import orjson`, and `fold` of a tiny log (written in a child process)."""
    tiny = scratch / "tiny.jsonl"
    subprocess.run([sys.executable, "-c", TINY_LOG, str(tiny)], check=True)
    return [("start-up: python -c 'import orjson'", [sys.executable, "-c", "import orjson"]),
            ("start-up: dshreplay fold (tiny log)", [sys.executable, "-m", "dshreplay", "fold", str(tiny)])]


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


def run(logs: list[Path], rounds: int, export: bool = True, only: tuple[str, ...] | None = None
        ) -> tuple[list[dict], list[str]]:
    """Measure every command on every log; one dict per (log, command), and the notes on
    peers that could not run. The export row also gives the bundle's size and, for small
    logs, whether a second export with the same --timestamp wrote the same bytes."""
    import tempfile
    compile_package()
    results, all_notes = [], []
    for log in logs:
        events = count_events(log)
        with tempfile.TemporaryDirectory(prefix="dshreplay-bench-") as scratch:
            scratch = Path(scratch)
            cmds, notes = commands(log, events // 2, scratch if export else None)
            cmds = [c for k, c in enumerate(cmds) if k == 0 or only is None or c[0] in only]  # (0: the parse)
            if only is None:
                cmds += startup_commands(scratch)
            all_notes += [f"{log.name}: {note}" for note in notes]
            once = frozenset({"dshreplay export", "dshreplay export --no-default-redaction"})
            measured = measure_rounds(cmds, rounds, once)
            bundle = scratch / "bundle"
            size = _in_child(TREE_SIZE, bundle) if bundle.exists() else None
            per_session = _in_child(MOST_FILES, bundle) if bundle.exists() else None
            identical = None
            if size is not None and events <= IDENTICAL_UP_TO:
                argv = dict(cmds)["dshreplay export"]
                again = scratch / "again"
                subprocess.run([*argv[:argv.index("--out") + 1], str(again), *argv[argv.index("--out") + 2:]],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
                identical = _in_child(TREE_DIGEST, bundle) == _in_child(TREE_DIGEST, again)
        base = measured[cmds[0][0]]
        for name, _ in cmds:
            m = measured[name]
            row = {"log": log.name, "events": events, "mb": log.stat().st_size / 1e6, "command": name,
                   "seconds": m["wall"], "seconds_min": m["wall_min"], "cpu": m["cpu"], "cpu_min": m["cpu_min"],
                   "ratio": m["wall"] / base["wall"], "cpu_ratio": m["cpu"] / base["cpu"], "rss": m["rss"],
                   "runs": m["runs"]}
            if name == "dshreplay export":
                row.update(bundle_mb=size / 1e6, bundle_ratio=size / log.stat().st_size, identical=identical,
                           files_per_session=per_session)
            results.append(row)
    return results, all_notes


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
    from dshreplay.console._table import render_table
    rows = [(r["log"], f"{r['mb']:.0f}", f"{r['bundle_mb']:.0f}", f"{r['bundle_ratio']:.2f}x",
             str(r["files_per_session"]), f"{r['cpu_ratio']:.1f}x", f"{r['ratio']:.1f}x", f"{r['rss']:.0f}",
             {True: "yes", False: "NO", None: "-"}[r["identical"]]) for r in results if "bundle_mb" in r]
    return render_table(rows, ["log", "log MB", "bundle MB", "bundle / log", "files / session", "CPU vs parse",
                               "wall vs parse", "peak RSS MB", "byte-identical rerun"], 10**6)


def table(results: list[dict]) -> str:
    from dshreplay.console._table import render_table
    rows = [(r["log"], f"{r['events']:,}", f"{r['mb']:.0f}", r["command"], f"{r['seconds']:.2f}",
             f"{r['seconds_min']:.2f}", f"{r['cpu']:.2f}", f"{r['cpu_min']:.2f}", f"{r['ratio']:.2f}x",
             f"{r['cpu_ratio']:.2f}x", f"{r['rss']:.0f}") for r in results]
    return render_table(rows, ["log", "events", "MB", "command", "wall s", "min", "CPU s", "min",
                               "wall vs parse", "CPU vs parse", "peak RSS MB"], 10**6)


def legend(rounds: int, notes: list[str]) -> str:
    """What the table's figures are, and the peers that did not run."""
    return "\n".join([f"(medians and minima of {rounds} interleaved rounds, export once; ratios: medians to the "
                      "bare parse's in the same rounds; CPU includes child processes)", *notes])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", type=Path)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (medians and minima over them)")
    parser.add_argument("--no-export", action="store_true", help="skip the export measurement")
    args = parser.parse_args(argv)
    results, notes = run(args.logs, args.rounds, not args.no_export)
    print(table(results))
    print(legend(args.rounds, notes))
    if not args.no_export:
        print()
        print(bundle_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
