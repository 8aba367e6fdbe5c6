"""The package's layers import only downwards, and the runtime never imports the test builder.

Layers, lowest first: the base modules (errors, jsvalues, options), io, core,
analyses, redaction, integrity, results, console, report and viewer, sql, bundle,
traces, output (old paths, re-exported for one release), the library facade (session), cli.
`testing` may use anything; nothing in the runtime may import it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "dshreplay"
LAYERS = [("errors", "_jsvalues", "options"), ("io",), ("core",), ("analyses",), ("redaction",), ("integrity",),
          ("results",), ("console",), ("report", "viewer"), ("sql",), ("bundle",), ("traces",), ("output",),
          ("session",), ("cli", "__main__")]
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def layer_of(module: str) -> str | None:
    """'dshreplay.core.driver' -> 'core'; the package itself -> None."""
    parts = module.split(".")
    return parts[1] if parts[0] == "dshreplay" and len(parts) > 1 else None


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every dshreplay import in a file, at any depth (lazy imports too)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "dshreplay":
                out += [(node.lineno, f"dshreplay.{alias.name}") for alias in node.names
                        if alias.name != "__version__"]
            else:
                out.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom) and node.level:
            out.append((node.lineno, "<relative>"))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
    return [(line, m) for line, m in out if m == "<relative>" or m.split(".")[0] == "dshreplay"]


def runtime_files():
    """Every runtime module (the package's own __init__, the entry point over all layers, aside)."""
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if p.relative_to(PACKAGE).parts[0] != "testing" and p != PACKAGE / "__init__.py")


def test_every_module_belongs_to_a_layer():
    for path in PACKAGE.rglob("*.py"):
        top = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        assert top in RANK or top in ("testing", "__init__", "schema_files"), f"{path}: in no layer"


@pytest.mark.parametrize("path", runtime_files(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_module_imports_only_its_own_layer_or_lower_ones(path):
    own = RANK[path.relative_to(PACKAGE).parts[0].removesuffix(".py")]
    for line, module in imports_of(path):
        assert module != "<relative>", f"{path.name}:{line}: use absolute imports"
        target = layer_of(module)
        assert target != "testing", f"{path.name}:{line}: runtime code imports {module}"
        if target is not None:
            assert RANK[target] <= own, f"{path.name}:{line}: {module} is a higher layer"


def test_the_layer_rule_catches_an_upward_import(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text("def f():\n    from dshreplay.session import Session\n")
    assert imports_of(bad) == [(2, "dshreplay.session")]
    assert RANK[layer_of("dshreplay.session")] > RANK["core"]


def type_only_lines(path: Path) -> set[int]:
    """The lines of the imports inside `if TYPE_CHECKING:` blocks: only mypy reads them."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            lines |= {n.lineno for stmt in node.body for n in ast.walk(stmt)
                      if isinstance(n, (ast.Import, ast.ImportFrom))}
    return lines


def test_no_import_cycle_between_modules():
    graph = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        typing_only = type_only_lines(path)  # (never imported at run time: no cycle; the layers still bind them)
        graph[name] = {m for line, m in imports_of(path) if m != "<relative>" and line not in typing_only}
    # only module-level imports make a cycle at import time; lazy ones are checked by layers above
    state: dict = {}

    def visit(node, stack):
        state[node] = "open"
        for nxt in graph.get(node, ()):
            nxt = nxt if nxt in graph else nxt.rsplit(".", 1)[0]
            if nxt == node or nxt not in graph or nxt == "dshreplay":
                continue
            assert state.get(nxt) != "open", "import cycle: " + " -> ".join([*stack, node, nxt])
            if nxt not in state:
                visit(nxt, [*stack, node])
        state[node] = "done"
    for node in sorted(graph):
        if node not in state:
            visit(node, [])
