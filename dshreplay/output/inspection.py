"""Moved: this module is `dshreplay.results.inspection`. This old path re-exports its public names for one release."""

from __future__ import annotations

from dshreplay.results.inspection import (
    Inspection,
)

__all__ = [
    "Inspection",
]
