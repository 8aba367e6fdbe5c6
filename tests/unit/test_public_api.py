"""The public modules declare their names (`__all__`), every one exists, and docs/guide/python.md
documents each, module by module; every other module is internal, by name."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import dshreplay

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "guide" / "python.md").read_text().split("\n## Public names\n", 1)[-1]
PUBLIC = [
    "dshreplay",
    "dshreplay.session",
    "dshreplay.errors",
    "dshreplay.options",
    "dshreplay.io.reader",
    "dshreplay.core.driver",
    "dshreplay.core.surface",
    "dshreplay.core.progress",
    "dshreplay.analyses.query",
    "dshreplay.analyses.trackers.turns",
    "dshreplay.analyses.trackers.calls",
    "dshreplay.analyses.trackers.provenance",
    "dshreplay.analyses.trackers.compaction",
    "dshreplay.analyses.trackers.toolcalls",
    "dshreplay.analyses.trackers.hooks",
    "dshreplay.analyses.tools",
    "dshreplay.analyses.validate",
    "dshreplay.analyses.findings",
    "dshreplay.analyses.trackers.logindex",
    "dshreplay.analyses.index",
    "dshreplay.analyses.stats",
    "dshreplay.analyses.transcript",
    "dshreplay.analyses.spans",
    "dshreplay.analyses.trackers.spills",
    "dshreplay.analyses.lineage",
    "dshreplay.analyses.health",
    "dshreplay.console.reporters",
    "dshreplay.results.listing",
    "dshreplay.results.inspection",
    "dshreplay.results.summaries",
    "dshreplay.results.records",
    "dshreplay.sql.rows",
    "dshreplay.redaction.redactor",
    "dshreplay.redaction.redactor",
    "dshreplay.output.redact",
    "dshreplay.output.reporters",
    "dshreplay.output.results",
    "dshreplay.output.inspection",
    "dshreplay.output.summaries",
    "dshreplay.output.records",
    "dshreplay.output.rows",
    "dshreplay.output.bundle",
    "dshreplay.output.verify",
    "dshreplay.bundle.export",
    "dshreplay.bundle.verify",
    "dshreplay.analyses.turns",
    "dshreplay.analyses.calls",
    "dshreplay.analyses.compaction",
    "dshreplay.analyses.provenance",
    "dshreplay.analyses.spills",
]
# internal, by name: a module whose name starts with "_" (and dshreplay.testing, the builder of sample
# logs and fixtures); every other module is public, declares its names and is documented
PRIVATE_PACKAGES = ("dshreplay.testing",)


def documented(module: str) -> set[str]:
    """The names api.md's list (its section "Public names") gives for `module`: the code spans of its item."""
    item = re.search(rf"^- `{re.escape(module)}`: (.*?)(?=^- `|^\Z|\Z)", DOC, re.M | re.S)
    assert item is not None, f"docs/guide/python.md lists no `{module}` under Public names"
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", item.group(1)))


@pytest.mark.parametrize("module", PUBLIC)
def test_a_public_module_declares_names_that_exist_and_are_documented(module):
    mod = importlib.import_module(module)
    names = mod.__all__
    assert len(names) == len(set(names)), f"{module}: a name twice in __all__"
    assert [n for n in names if not hasattr(mod, n)] == []
    assert sorted(set(names) - documented(module)) == []


PACKAGES = ("analyses", "trackers", "redaction", "core", "io", "output", "integrity", "results", "console", "report",
            "sql",
            "bundle")


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split(".")[1:]) or module.startswith(PRIVATE_PACKAGES)


def test_a_module_is_private_by_its_name_and_every_other_one_is_public_and_documented():
    package = ROOT / "dshreplay"
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
               for p in package.rglob("*.py")}
    packages = {".".join(p.parent.relative_to(ROOT).parts) for p in package.rglob("__init__.py")}
    public = {m for m in modules - packages if not _private(m)} | {"dshreplay"}
    assert public == set(PUBLIC)


def test_the_private_rule_reads_names():
    assert _private("dshreplay.io._lean") and _private("dshreplay._jsvalues") and _private("dshreplay.cli._view")
    assert not _private("dshreplay.io.reader") and not _private("dshreplay.output.redact")


# old public paths a module moved from -> where it went; each re-exports the same objects for one release
MOVED = {"dshreplay.analyses.tools": ("dshreplay.analyses.trackers.toolcalls", "dshreplay.analyses.trackers.hooks"),
         "dshreplay.analyses.index": ("dshreplay.analyses.trackers.logindex",),
         **{f"dshreplay.analyses.{m}": (f"dshreplay.analyses.trackers.{m}",)
            for m in ("turns", "calls", "compaction", "provenance", "spills")},
         **{f"dshreplay.output.{old}": (new,) for old, new in (
             ("reporters", "dshreplay.console.reporters"), ("results", "dshreplay.results.listing"),
             ("inspection", "dshreplay.results.inspection"), ("summaries", "dshreplay.results.summaries"),
             ("records", "dshreplay.results.records"), ("rows", "dshreplay.sql.rows"),
             ("redact", "dshreplay.redaction.redactor"), ("bundle", "dshreplay.bundle.export"),
             ("verify", "dshreplay.bundle.verify"))}}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_moved_public_module_re_exports_the_same_objects_from_its_new_home(old):
    mod = importlib.import_module(old)
    homes = [importlib.import_module(m) for m in MOVED[old]]
    for name in mod.__all__:
        [home] = [h for h in homes if name in h.__all__]
        assert getattr(mod, name) is getattr(home, name), f"{old}.{name}"
    assert sorted(mod.__all__) == sorted(set(mod.__all__) & {n for h in homes for n in h.__all__})
    assert mod.__doc__.startswith("Moved:")


def test_the_session_module_exports_its_own_names_only():
    import dshreplay.session
    assert "Path" not in dshreplay.session.__all__
    namespace: dict = {}
    exec("from dshreplay.session import *", namespace)  # noqa: S102 - what a star import gives
    assert sorted(k for k in namespace if not k.startswith("__")) == sorted(dshreplay.session.__all__)


def test_the_package_gives_its_entry_points_lazily():
    from dshreplay.analyses.query import EventFilter
    from dshreplay.errors import FilterError
    assert dshreplay.EventFilter is EventFilter and dshreplay.FilterError is FilterError
    assert set(dshreplay.__all__) <= set(dir(dshreplay))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        dshreplay.nothing  # noqa: B018
