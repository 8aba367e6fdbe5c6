"""pyproject.toml is the one place of the project's metadata and tool settings, and the package it
builds holds every subpackage (a folder left out of its list is missing from a wheel, though an
editable install still finds it)."""

from __future__ import annotations

try:
    import tomllib
except ModuleNotFoundError:  # (Python 3.10)
    import tomli as tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_package_folder_is_in_the_built_package():
    listed = set(PROJECT["tool"]["setuptools"]["packages"])
    folders = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "dshreplay").rglob("__init__.py")}
    assert listed == folders | {"dshreplay.schema_files"}
    assert PROJECT["tool"]["setuptools"]["package-dir"]["dshreplay.schema_files"] == "schemas"


def test_the_settings_live_in_pyproject_alone():
    assert not (ROOT / "setup.cfg").exists() and not (ROOT / "setup.py").exists()
    assert not (ROOT / "pytest.ini").exists() and not (ROOT / "mypy.ini").exists()
    assert PROJECT["tool"]["mypy"]["strict"] is True
    assert PROJECT["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]
    assert PROJECT["project"]["scripts"] == {"dshreplay": "dshreplay.cli:main"}
