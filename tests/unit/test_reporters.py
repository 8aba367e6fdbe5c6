"""Every reporter follows the one documented interface, `console.reporters.Reporter`."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from dshreplay.console.reporters import JsonLinesReporter, JsonReporter, Reporter, TextReporter

ANSWERS = sorted(name for name, _ in inspect.getmembers(Reporter, inspect.isfunction) if not name.startswith("_"))


def test_the_interface_names_every_kind_of_answer_and_documents_each():
    assert ANSWERS == ["brackets", "calls", "diff", "event_rows", "exported", "fold", "indexed", "inspect", "lineage",
                       "lines", "provenance", "query", "request", "shadows", "spills", "stats", "transcript", "usage",
                       "validate", "verify"]
    assert all(getattr(Reporter, name).__doc__ for name in ANSWERS)


@pytest.mark.parametrize("reporter", [TextReporter, JsonReporter, JsonLinesReporter])
def test_every_reporter_gives_every_answer_with_the_interface_signature(reporter):
    assert issubclass(reporter, Reporter)
    for name in ANSWERS:
        own = getattr(reporter, name)
        assert own is not getattr(Reporter, name), f"{reporter.__name__} leaves {name} to the interface"
        wanted = _shape(getattr(Reporter, name))
        assert _shape(own)[:len(wanted)] == wanted, (reporter.__name__, name)


def _shape(method) -> list:
    """What a caller relies on: each parameter's kind and whether it may be left out."""
    return [(p.kind, p.default is p.empty) for p in inspect.signature(method).parameters.values()]


def test_the_command_line_asks_reporters_only_what_the_interface_declares():
    source = "".join(p.read_text() for p in (Path(__file__).resolve().parents[2] / "dshreplay" / "cli").glob("*.py"))
    asked = set(re.findall(r"\breporter(?:_for\([^)]*\))?\.([a-z_]+)\(", source))
    assert asked and asked <= set(ANSWERS), asked - set(ANSWERS)
