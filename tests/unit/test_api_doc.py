"""docs/guide/python.md: its examples run, from the repository root."""

from __future__ import annotations

import doctest
import os

from conftest import ROOT


def test_api_doc_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testfile(str(ROOT / "docs" / "guide" / "python.md"), module_relative=False,
                              optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 15
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in docs/guide/python.md failed"
    assert os.getcwd() == str(ROOT)
