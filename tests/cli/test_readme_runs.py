"""The README cannot drift: every command of its tour runs as shown, its Python example runs, its
set-up commands are the ones CI runs, and it stays a guide (at most 250 lines). The samples of the
guides in docs/guide/ run as shown too.

Every ```console block of a page is run, in order, by one bash in a scratch folder holding a
link to `sample_logs/` (so the commands name the logs as the README does, and what they write lands
in the scratch folder). A line `$ CMD` is a command; the lines after it, up to the next command or
the end of the block, are what it prints (stdout and stderr, as a terminal shows them). In what is
shown, a line `...` stands for any number of lines left out, and `...` inside a line for any text
(a digest, a key's fingerprint: what changes from run to run).

Run `python tests/cli/test_readme_runs.py [PAGE]` to print what each command of README.md (or PAGE)
prints now.
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
GUIDES = sorted((ROOT / "docs" / "guide").glob("*.md"))
MARK = "\x1e"
SETUP = ["python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/dshreplay export "
         "sample_logs/audit-demo.jsonl --out audit-bundle --evidence-key audit-bundle.key --force",
         "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test,fleet,sign,sql]' && .venv/bin/pytest"]
TOOLS = ("ssh-keygen", "sha256sum", "jq")


def console_blocks(text: str) -> list[list[tuple[str, list[str]]]]:
    """The README's console blocks: each a list of (command, the lines shown after it)."""
    blocks = []
    for body in re.findall(r"^```console\n(.*?)^```$", text, re.M | re.S):
        block: list[tuple[str, list[str]]] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                block.append((line[2:], []))
            else:
                assert block, f"a console block starts with output, not a command: {line!r}"
                block[-1][1].append(line)
        blocks.append(block)
    return blocks


def run_commands(commands: list[str], folder: Path) -> list[str]:
    """What each command prints, run one after the other by one bash in `folder` (a `cd` carries over, and
    `$?` is the exit code of the command before)."""
    (folder / "sample_logs").symlink_to(ROOT / "sample_logs")
    script = ["__rc=0"]
    for number, command in enumerate(commands):
        script.append(f"printf '{MARK}{number}{MARK}\\n'; (exit $__rc); {{ {command}\n}} 2>&1; __rc=$?")
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin", "HOME": str(folder),
           "LC_ALL": "C.UTF-8", "PYTHONUNBUFFERED": "1", "TZ": "UTC"}
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300)
    parts = re.split(f"{MARK}\\d+{MARK}\n", done.stdout)
    assert parts[0] == "" and len(parts) == len(commands) + 1, done.stdout + done.stderr
    return parts[1:]


def shown_as(expected: list[str], printed: list[str]) -> bool:
    """Whether `printed` is what `expected` shows: equal line by line (trailing spaces aside), a line `...`
    standing for any lines, `...` inside a line for any text."""
    expected = [line.rstrip() for line in expected]
    printed = [line.rstrip() for line in printed]
    patterns = [re.compile(".*".join(map(re.escape, line.split("...")))) for line in expected]

    def match(e: int, p: int) -> bool:
        if e == len(expected):
            return p == len(printed)
        line = expected[e]
        if line == "...":
            return any(match(e + 1, q) for q in range(p, len(printed) + 1))
        if p == len(printed):
            return False
        return patterns[e].fullmatch(printed[p]) is not None and match(e + 1, p + 1)

    return match(0, 0)


def tour(page: Path = README) -> list[tuple[str, list[str]]]:
    return [step for block in console_blocks(page.read_text()) for step in block]


def check_runs_as_shown(page: Path, folder: Path) -> None:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"the tour's standard tools are missing: {', '.join(missing)}")
    steps = tour(page)
    printed = run_commands([command for command, _ in steps], folder)
    for (command, expected), output in zip(steps, printed):
        assert shown_as(expected, output.splitlines()), f"{page.name}: $ {command}\nshown:\n" + \
            "\n".join(expected) + "\nprinted:\n" + output


def test_every_command_of_the_tour_prints_what_the_readme_shows(tmp_path):
    commands = [command for command, _ in tour()]
    assert sum(command.startswith("dshreplay ") for command in commands) >= 10
    for job in ("request", "shadows", "validate", "diff", "export", "verify-export"):
        assert any(command.startswith(f"dshreplay {job} ") for command in commands), job
    check_runs_as_shown(README, tmp_path)


@pytest.mark.parametrize("page", [p for p in GUIDES if "```console" in p.read_text()], ids=lambda p: p.name)
def test_every_sample_of_a_guide_prints_what_it_shows(page, tmp_path):
    check_runs_as_shown(page, tmp_path)


def test_the_tour_checks_the_bundle_with_standard_tools_and_verify_export():
    commands = [command for command, _ in tour()]
    for tool in ("sha256sum manifest.json", "sha256sum -c", "ssh-keygen -Y verify", "dshreplay verify-export"):
        assert any(tool in command for command in commands), tool


def test_shown_as_reads_the_elision_marks():
    assert shown_as(["a", "...", "d"], ["a", "b", "c", "d"])
    assert shown_as(["a", "...", "b"], ["a", "b"])
    assert shown_as(["digest: sha256:..."], ["digest: sha256:00ff"])
    assert shown_as(["...  manifest.json"], ["00ff  manifest.json"])
    assert not shown_as(["...  manifest.json"], ["00ff  manifest.json.sig"])
    assert not shown_as(["a.c"], ["abc"])
    assert not shown_as(["a", "b"], ["a", "c"])
    assert not shown_as(["a"], ["a", "b"])
    assert not shown_as(["digest: sha1:..."], ["digest: sha256:00ff"])


def test_the_python_example_runs_as_shown(monkeypatch):
    monkeypatch.chdir(ROOT)  # (the example names the sample logs from the repository's folder)
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0, result


def test_the_setup_commands_are_on_the_first_screen_and_the_test_command_is_the_one_ci_runs():
    lines = README.read_text().splitlines()
    for command in SETUP:
        assert command in lines[:30], command
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert SETUP[1] in ci


def test_the_readme_is_a_guide_of_at_most_250_lines():
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    for job in ("What did the model see at call N?", "What did a compaction hide?",
                "Is this log intact, and where is it damaged?", "What changed between two seqs?",
                "Export an audit bundle and verify it with standard tools"):
        assert f". {job}\n" in text, job


if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as scratch:
        steps = tour(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else README)
        for (command, _), output in zip(steps, run_commands([c for c, _ in steps], Path(scratch))):
            sys.stdout.write(f"$ {command}\n{output}")
    os._exit(0)
