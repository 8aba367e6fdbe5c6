"""Save every command's output over a set of logs, to diff before and after a change.

    python scripts/goldens.py OUT_DIR [LOG_DIR ...]

LOG_DIR defaults to sample_logs/ and ../shared/corpus/upstream (when present). Each
(log, command) pair writes one file holding the exit code, stdout and stderr; each
log's bundle is exported with a fixed --timestamp and listed file by file; the
index's tables are dumped row by row. Run it on the old code and the new, then
`diff -r OLD NEW`: a refactoring that changes behaviour shows up there.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

from dshreplay.cli import cli as main

ROOT = Path(__file__).resolve().parent.parent
STAMP = "2026-01-01T00:00:00Z"
# One evidence key for every run on this machine (made by the first), so keyed hashes compare.
KEY = str(Path(tempfile.gettempdir()) / "dshreplay-goldens.key")

PER_LOG = {
    "fold": ["fold", "--json"],
    "fold.txt": ["fold", "--wide"],
    "inspect": ["inspect", "--json"],
    "inspect.txt": ["inspect", "--wide"],
    "request-list": ["request", "--list", "--all", "--json"],
    "request-call1": ["request", "--call", "1", "--json"],
    "provenance": ["provenance", "--json"],
    "shadows": ["shadows", "--json"],
    "brackets": ["brackets", "--json"],
    "spills": ["spills", "--json"],
    "events": ["events", "--json"],
    "events.txt": ["events", "--wide"],
    "transcript.json": ["transcript", "--format", "json", "--reasoning"],
    "transcript.md": ["transcript", "--format", "markdown"],
    "stats": ["stats", "--json"],
    "stats.txt": ["stats", "--wide"],
    "usage": ["usage", "--json"],
    "validate": ["validate", "--json", "--all-findings"],
    "validate.txt": ["validate", "--wide"],
    "lineage": ["lineage", "--json"],
    "diff": ["diff", "--from", "1", "--to", "999999", "--json"],
    "diff.txt": ["diff", "--from", "1", "--to", "999999", "--text"],
}


def logs(dirs: list[Path]) -> list[Path]:
    found: list[Path] = []
    for d in dirs:
        found += sorted(p for p in d.iterdir()
                        if p.name.endswith((".jsonl", ".jsonl.zstd")) and p.is_file())
    return found


def run(runner: CliRunner, args: list[str]) -> str:
    result = runner.invoke(main, args, catch_exceptions=True)
    err = result.stderr if result.stderr_bytes is not None else ""
    text = f"exit {result.exit_code}\n--- stdout\n{result.stdout}--- stderr\n{err}"
    return text.replace(str(ROOT), "ROOT")


def tree(folder: Path) -> str:
    lines = []
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            rel = p.relative_to(folder)
            lines.append(f"=== {rel}\n{p.read_bytes().decode('utf-8', 'replace')}")
    return "\n".join(lines)


def dump_index(db: Path) -> str:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    out = []
    for (name,) in con.execute("select table_name from information_schema.tables "
                               "order by table_name").fetchall():
        cols = [c[0] for c in con.execute(f'select * from "{name}" limit 0').description]
        rows = con.execute(f'select * from "{name}" order by all').fetchall()
        out.append(f"=== {name} {cols}")
        out += [json.dumps(r, default=str) for r in rows]
    con.close()
    return "\n".join(out)


def main_(out: Path, dirs: list[Path]) -> None:
    runner = CliRunner()
    out.mkdir(parents=True, exist_ok=True)
    os.environ["COLUMNS"] = "120"
    for log in logs(dirs):
        name = f"{log.parent.name}__{log.name}"
        for key, args in PER_LOG.items():
            (out / f"{name}.{key}").write_text(run(runner, [*args, str(log)]))
        with tempfile.TemporaryDirectory() as tmp:
            bundle = Path(tmp) / "b"
            text = run(runner, ["export", "-q", "--evidence-key", KEY, "--timestamp", STAMP, "--out", str(bundle),
                                str(log)])
            text = text.replace(tmp, "TMP")
            (out / f"{name}.export").write_text(text + (tree(bundle).replace(tmp, "TMP")
                                                        if bundle.exists() else ""))
    for d in dirs:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "i.duckdb"
            text = run(runner, ["index", "-q", "--evidence-key", KEY, "--messages", "--db", str(db), str(d)])
            text = text.replace(tmp, "TMP")
            (out / f"{d.name}.index").write_text(
                text + (dump_index(db).replace(tmp, "TMP").replace(str(ROOT), "ROOT") if db.exists() else ""))
            text = run(runner, ["usage", "--json", "--db", str(db)])
            (out / f"{d.name}.usage-db").write_text(text.replace(tmp, "TMP"))
        for key in ("stats", "validate", "lineage"):
            (out / f"{d.name}.all.{key}").write_text(
                run(runner, [key, "--json", "-q", str(d)]))


if __name__ == "__main__":
    target = Path(sys.argv[1])
    given = [Path(a) for a in sys.argv[2:]]
    if not given:
        given = [ROOT / "sample_logs"]
        corpus = ROOT.parent / "shared" / "corpus" / "upstream"
        if corpus.is_dir():
            given.append(corpus)
    main_(target, given)
