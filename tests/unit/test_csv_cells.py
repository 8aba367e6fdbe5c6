"""CSV cells of a bundle: a cell a spreadsheet would run as a formula is quoted, whatever
its type, and the cells a column repeats are worked out once."""

from __future__ import annotations

import pytest

from dshreplay.output.bundle import CsvFile, csv_cell


@pytest.mark.parametrize("value, cell", [
    (7, 7), (0, 0), (None, ""), (-5, "'-5"), ("=1+1", "'=1+1"), (" \ufeff@x", "' \ufeff@x"), ("\t=x", "'\t=x"),
    ("a\nb", "a b"), ({"k": "=v"}, '{"k":"=v"}'), (["-"], '["-"]'), ("plain", "plain"), ("", ""),
])
def test_a_cell_never_starts_a_formula(value, cell):
    assert csv_cell(value) == cell


def test_a_remembered_cell_is_the_cell(tmp_path):
    sheet = CsvFile(tmp_path / "x.csv", ["a"])
    assert [sheet.cell(v) for v in ("-x", "-x", "y", -1, None)] == ["'-x", "'-x", "y", "'-1", ""]
    assert sheet.cells == {"-x": "'-x", "y": "y"}
    sheet.close()
