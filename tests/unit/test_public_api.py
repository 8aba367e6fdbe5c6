"""The public modules declare their names (`__all__`), every one exists, and docs/api.md
documents each, module by module; every other module is internal, by name."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

import dshreplay

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "api.md").read_text().split("\n## Public names\n", 1)[-1]
PUBLIC = ["dshreplay", "dshreplay.session", "dshreplay.errors", "dshreplay.options", "dshreplay.io.reader",
          "dshreplay.core.driver", "dshreplay.core.surface", "dshreplay.core.progress", "dshreplay.analyses.query",
          "dshreplay.analyses.turns", "dshreplay.analyses.calls", "dshreplay.analyses.provenance",
          "dshreplay.analyses.compaction", "dshreplay.analyses.tools", "dshreplay.analyses.validate",
          "dshreplay.analyses.findings", "dshreplay.analyses.index", "dshreplay.analyses.stats",
          "dshreplay.analyses.transcript", "dshreplay.analyses.spills", "dshreplay.analyses.lineage",
          "dshreplay.analyses.health", "dshreplay.output.reporters", "dshreplay.output.results",
          "dshreplay.output.inspection", "dshreplay.output.summaries", "dshreplay.output.records",
          "dshreplay.output.rows",
          "dshreplay.output.redact", "dshreplay.output.bundle", "dshreplay.output.verify"]
INTERNAL = {"dshreplay.__main__", "dshreplay.jsvalues", "dshreplay.analyses.render", "dshreplay.analyses.rules",
            "dshreplay.analyses.schemas", "dshreplay.core.fleet", "dshreplay.core.mapper", "dshreplay.core.parallel",
            "dshreplay.core.passstate", "dshreplay.io.store", "dshreplay.io.items", "dshreplay.io.lean", "dshreplay.io.packed",
            "dshreplay.io.placement", "dshreplay.io.source", "dshreplay.output.bundlecalls",
            "dshreplay.output.bundlejson", "dshreplay.output.callrecords", "dshreplay.output.chain",
            "dshreplay.output.csvcells", "dshreplay.output.evidence", "dshreplay.output.htmlreport",
            "dshreplay.output.reportview",
            "dshreplay.output.outfolder", "dshreplay.output.secretrules", "dshreplay.output.encodings",
            "dshreplay.output.secretengine", "dshreplay.output.signers", "dshreplay.output.signing",
            "dshreplay.output.sqldoc", "dshreplay.output.sqlindex",
            "dshreplay.output.usage", "dshreplay.cli", "dshreplay.testing"}


def documented(module: str) -> set[str]:
    """The names api.md's list (its section "Public names") gives for `module`: the code spans of its item."""
    item = re.search(rf"^- `{re.escape(module)}`: (.*?)(?=^- `|^\Z|\Z)", DOC, re.M | re.S)
    assert item is not None, f"docs/api.md lists no `{module}` under Public names"
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", item.group(1)))


@pytest.mark.parametrize("module", PUBLIC)
def test_a_public_module_declares_names_that_exist_and_are_documented(module):
    mod = importlib.import_module(module)
    names = mod.__all__
    assert len(names) == len(set(names)), f"{module}: a name twice in __all__"
    assert [n for n in names if not hasattr(mod, n)] == []
    assert sorted(set(names) - documented(module)) == []


def test_every_module_is_public_or_internal_by_name():
    package = ROOT / "dshreplay"
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
               for p in package.rglob("*.py")}
    undecided = {m for m in modules - set(PUBLIC) if not any(m == i or m.startswith(i + ".") for i in INTERNAL)
                 and m.count(".") > 0 and not m.endswith(("analyses", "core", "io", "output"))}
    assert undecided == set()


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
