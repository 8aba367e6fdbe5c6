"""Regenerate the generated docs: docs/cli.md (from --help), docs/findings.md, docs/redaction.md and docs/sql.md.

Run: python scripts/make_docs.py   (a test fails when either is stale)
"""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner

from dshreplay.analyses.findings import findings_doc
from dshreplay.cli import cli
from dshreplay.output.sqldoc import sql_doc
from dshreplay.redaction.secretrules import redaction_doc

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def reference() -> str:
    runner = CliRunner()
    parts = ["# dshreplay command reference", "",
             "Generated from `--help` by `python scripts/make_docs.py`; do not edit.", ""]
    commands = [[]]
    for name in sorted(cli.commands):
        commands.append([name])
        sub = getattr(cli.commands[name], "commands", None)
        commands.extend([name, child] for child in sorted(sub or {}))
    for args in commands:
        result = runner.invoke(cli, args + ["--help"], prog_name="dshreplay", terminal_width=100)
        title = " ".join(["dshreplay", *args])
        parts += [f"## {title}", "", "```", result.stdout.rstrip(), "```", ""]
    return "\n".join(parts)


def _kinds() -> list[tuple[str, list[str]]]:
    """The reference list of secret kinds the tests plant, each with the default rules that mask its
    secret in its sample (none: it is not masked)."""
    from dshreplay.redaction.redactor import load_redactor
    sys.path.insert(0, str(ROOT))
    from tests.secret_kinds import KINDS
    redactor = load_redactor(None)
    found = []
    for kind, sample, secret in KINDS:
        counting = redactor.for_calls(())
        counting.counting = True
        masked = counting.string(sample)
        found.append((kind, [] if secret in masked else list(counting.by_rule)))
    return found


def generated() -> dict[Path, str]:
    return {DOCS / "cli.md": reference(), DOCS / "findings.md": findings_doc(),
            DOCS / "redaction.md": redaction_doc(_kinds()), DOCS / "sql.md": sql_doc()}


def main() -> int:
    DOCS.mkdir(exist_ok=True)
    for path, text in generated().items():
        path.write_text(text)
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
