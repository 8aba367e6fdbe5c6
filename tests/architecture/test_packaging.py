"""setup.cfg is the one place of the project's metadata and tool settings (pyproject.toml only
names the build backend; ruff reads ruff.toml), and the package it builds holds every subpackage
(a folder left out of its list is missing from a wheel, though an editable install still finds it)."""

from __future__ import annotations

import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETUP = configparser.ConfigParser()
SETUP.read(ROOT / "setup.cfg")


def _lines(section: str, key: str) -> list[str]:
    return [line.strip() for line in SETUP[section][key].splitlines() if line.strip()]


def test_every_package_folder_is_in_the_built_package():
    listed = set(_lines("options", "packages"))
    folders = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "dshreplay").rglob("__init__.py")}
    assert listed == folders | {"dshreplay.schema_files"}
    assert "dshreplay.schema_files = schemas" in _lines("options", "package_dir")


def test_the_settings_live_in_setup_cfg_alone():
    assert not (ROOT / "setup.py").exists() and not (ROOT / "pytest.ini").exists()
    assert not (ROOT / "mypy.ini").exists()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert "[project]" not in pyproject and "[tool." not in pyproject  # (the build backend only)
    assert SETUP["mypy"]["strict"] == "True"
    assert SETUP["tool:pytest"]["testpaths"] == "tests"
    assert _lines("options.entry_points", "console_scripts") == ["dshreplay = dshreplay.cli:main"]


def test_no_package_names_a_thing_as_one_of_its_modules():
    # importing a submodule sets it as an attribute of its package: a function of the package's
    # __init__ with the submodule's name is then replaced by the module (a second `dshreplay.cli._meter()`
    # in one process called the module: "'module' object is not callable")
    import ast
    clashes = {}
    for init in (ROOT / "dshreplay").rglob("__init__.py"):
        folder = init.parent
        modules = {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir()
                                                            if (p / "__init__.py").exists()}
        names = set()
        for node in ast.parse(init.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        if names & modules:
            clashes[folder.name] = sorted(names & modules)
    assert clashes == {}
