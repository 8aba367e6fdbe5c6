"""Moved: this module is `dshreplay.results.summaries`. This old path re-exports its public names for one release."""

from __future__ import annotations

from dshreplay.results.summaries import (
    Exported,
    Lineage,
    Stats,
    Validation,
)

__all__ = [
    "Validation",
    "Stats",
    "Lineage",
    "Exported",
]
