"""The bundle's CSV files, written row by row, every cell neutralised against formulas."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Iterable

from dshreplay.bundle._outfolder import create
from dshreplay.console._csvcells import csv_cell


class CsvFile:
    """A CSV file written row by row, every cell neutralised against formulas."""

    def __init__(self, path: Path, header: list[str]) -> None:
        self.fh = create(path, text=True, newline="")
        self.writer = csv.writer(self.fh, lineterminator="\n")
        self.writer.writerow(header)
        self.texts: dict[Any, str] = {}  # short log strings met before -> their cells' CSV text
        self._cell = io.StringIO()  # one cell's CSV text is written here (`cell`), by one writer made once
        self._cell_writer = csv.writer(self._cell, lineterminator="")

    def row(self, values: Iterable[Any]) -> None:
        self.writer.writerow([csv_cell(v) for v in values])

    def text(self, value: Any) -> str:
        """The CSV text of `csv_cell(value)` inside a row, as `row` writes it (quoted when it
        holds a comma, a quote or a line end); remembered for the short strings a column
        repeats (types, ops, ids). A row of such texts joined by commas is what `row` writes,
        without a list of cells to make and collect."""
        if value is None:
            return ""
        if type(value) is int and value >= 0:
            return str(value)
        known = self.texts.get(value) if type(value) is str else None
        if known is None:
            cell = csv_cell(value)
            known = self.cell(cell) if cell != "" else ""
            if type(value) is str and len(value) <= 64 and len(self.texts) < 4096:
                self.texts[value] = known
        return known

    def cell(self, cell: str | int) -> str:
        """A cell (a csv_cell) as the CSV text of part of a row, quoted as the csv module quotes it
        (by one writer for every cell: a writer and a buffer made per cell cost more than the cell).
        Text the writer would not quote (no delimiter, quote or line end; not empty) is its own CSV text."""
        if type(cell) is str and cell and "," not in cell and '"' not in cell and "\n" not in cell \
                and "\r" not in cell:  # (the characters for which the csv module quotes: QUOTE_MINIMAL)
            return cell
        out = self._cell
        out.seek(0)
        out.truncate()
        self._cell_writer.writerow((cell,))
        return out.getvalue()

    def close(self) -> None:
        self.fh.close()


def write_csv(path: Path, header: list[str], rows: Iterable[Iterable[Any]]) -> None:
    out = CsvFile(path, header)
    for row in rows:
        out.row(row)
    out.close()
