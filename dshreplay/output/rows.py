"""Moved: this module is `dshreplay.sql.rows`. This old path re-exports its public names for one release."""

from __future__ import annotations

from dshreplay.sql.rows import (
    TABLES,
    Column,
    Indexed,
    Row,
    index_log,
    log_key,
    log_path,
)

__all__ = [
    "TABLES",
    "Column",
    "Indexed",
    "Row",
    "index_log",
    "log_key",
    "log_path",
]
