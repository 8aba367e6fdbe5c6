"""Sizes a reader can hold: no module over 700 lines, no function over 100 lines, no package folder
of more than 14 modules, over the whole package.

ALLOWED lists what is still being split, each with why; it only shrinks: an entry that no longer
exceeds its limit fails too, so it is taken off the list when its split lands.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "dshreplay"
MODULE_LINES, FUNCTION_LINES, FOLDER_MODULES = 700, 100, 14

# "module" (lines), "module:function" (lines), "folder/" (modules): still being split (#36)
ALLOWED = {
}


def _moved(path: Path) -> bool:
    """An old public path kept for one release: it only re-exports a moved module's names (its docstring
    says "Moved:"; tests/unit/test_public_api.py checks it re-exports the same objects). It goes with
    the next release, so a folder is not counted bigger for it."""
    return (ast.get_docstring(ast.parse(path.read_text())) or "").startswith("Moved:")


def oversized(package: Path = PACKAGE) -> dict[str, int]:
    """What exceeds its limit, by ALLOWED's keys, with its size."""
    found: dict[str, int] = {}
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package).as_posix()
        source = path.read_text()
        if (lines := len(source.splitlines())) > MODULE_LINES:
            found[name] = lines
        for node in ast.walk(ast.parse(source, name)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno is not None
                if (lines := node.end_lineno - node.lineno + 1) > FUNCTION_LINES:
                    found[f"{name}:{node.name}"] = lines
    for folder in sorted({p.parent for p in package.rglob("*.py")}):
        if (modules := sum(not _moved(p) for p in folder.glob("*.py"))) > FOLDER_MODULES:
            found[folder.relative_to(package).as_posix() + "/"] = modules
    return found


def test_no_module_function_or_folder_exceeds_its_limit_but_those_being_split():
    found = oversized()
    assert {k: v for k, v in found.items() if k not in ALLOWED} == {}


def test_the_allow_list_only_shrinks():
    assert sorted(set(ALLOWED) - set(oversized())) == [], "split: take it off ALLOWED"


def test_the_limits_are_measured_as_said(tmp_path):
    body = "".join(f"    x = {i}\n" for i in range(99))
    (tmp_path / "a.py").write_text(f"def fits():\n{body}\n\ndef too_long():\n{body}    x = 99\n")
    (tmp_path / "b.py").write_text("x = 1\n" * 701)
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(15):
        (folder / f"m{i}.py").write_text("")
    assert oversized(tmp_path) == {"a.py:too_long": 101, "b.py": 701, "many/": 15}
