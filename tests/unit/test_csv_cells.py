"""CSV cells of a bundle: a cell a spreadsheet would run as a formula is quoted, whatever
its type, and the cells a column repeats are worked out once."""

from __future__ import annotations

import pytest

from dshreplay.bundle._csvfile import CsvFile
from dshreplay.console._csvcells import csv_cell


@pytest.mark.parametrize("value, cell", [
    (7, 7), (0, 0), (None, ""), (-5, "'-5"), ("=1+1", "'=1+1"), (" =x", "' =x"), ("\t=x", "'\t=x"),
    (" \ufeff@x", " \\ufeff@x"),  # (a BOM is shown escaped, as every format character is: no formula then)
    ("\x1b]52;c;aGk=\x07\x9b2J\rx", "\\x1b]52;c;aGk=\\x07\\x9b2J x"),
    ("a\nb", "a b"), ({"k": "=v"}, '{"k":"=v"}'), (["-"], '["-"]'), ("plain", "plain"), ("", ""),
])
def test_a_cell_never_starts_a_formula(value, cell):
    assert csv_cell(value) == cell


def test_a_cell_s_csv_text_is_what_the_csv_module_writes_in_a_row(tmp_path):
    import csv
    import io
    sheet = CsvFile(tmp_path / "x.csv", ["a"])
    values = ["-x", "-x", "y", -1, None, 3, "", 'say "hi", then', "a,b", "=1,2", {"k": [1, 2]}, "x\ny"]
    texts = [sheet.text(v) for v in values]
    assert texts == ["'-x", "'-x", "y", "'-1", "", "3", "", '"say ""hi"", then"', '"a,b"', '"\'=1,2"',
                     '"{""k"":[1,2]}"', "x y"]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow([csv_cell(v) for v in values])
    assert ",".join(texts) + "\n" == out.getvalue()
    assert sheet.texts == {"-x": "'-x", "y": "y", "": "", 'say "hi", then': '"say ""hi"", then"', "a,b": '"a,b"',
                           "=1,2": '"\'=1,2"', "x\ny": "x y"}
    sheet.close()


@pytest.mark.parametrize("cell, text", [
    ("plain words", "plain words"), ("'=x", "'=x"), ("a,b", '"a,b"'), ('say "hi"', '"say ""hi"""'), (5, "5"),
    ("tab\there", "tab\there"), ("ünï", "ünï"), (",", '","'), ('"', '""""'),
])
def test_a_cell_is_quoted_only_where_the_csv_module_quotes_it(tmp_path, cell, text):
    """(A cell is a csv_cell: never a line end. Most are written as they are, without the csv module.)"""
    import csv
    import io
    sheet = CsvFile(tmp_path / "x.csv", ["a"])
    assert sheet.cell(cell) == text
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow([cell, "next"])  # (in a row, as events.csv writes it)
    assert out.getvalue() == f"{text},next\n"
    sheet.close()
