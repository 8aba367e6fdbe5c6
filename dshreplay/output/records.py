"""Moved: this module is `dshreplay.results.records`. This old path re-exports its public names for one release."""

from __future__ import annotations

from dshreplay.results.records import (
    COLUMNS,
    Redaction,
    records_table,
    redacting,
)

__all__ = [
    "Redaction",
    "COLUMNS",
    "redacting",
    "records_table",
]
