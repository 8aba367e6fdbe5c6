"""Regenerate docs/cli.md from the commands' own --help text.

Run: python scripts/make_cli_reference.py   (a test fails when it is stale)
"""

from __future__ import annotations

import sys
from pathlib import Path

from click.testing import CliRunner

from dshreplay.cli import cli

TARGET = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def reference() -> str:
    runner = CliRunner()
    parts = ["# dshreplay command reference", "",
             "Generated from `--help` by `python scripts/make_cli_reference.py`; do not edit.", ""]
    for args in [[]] + [[name] for name in sorted(cli.commands)]:
        result = runner.invoke(cli, args + ["--help"], prog_name="dshreplay", terminal_width=100)
        title = " ".join(["dshreplay", *args])
        parts += [f"## {title}", "", "```", result.stdout.rstrip(), "```", ""]
    return "\n".join(parts)


def main() -> int:
    TARGET.parent.mkdir(exist_ok=True)
    TARGET.write_text(reference())
    print(TARGET)
    return 0


if __name__ == "__main__":
    sys.exit(main())
