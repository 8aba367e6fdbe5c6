"""Moved: this module is `dshreplay.results.listing`. This old path re-exports its public names for one release."""

from __future__ import annotations

from dshreplay.results.listing import (
    Fold,
    Rows,
)

__all__ = [
    "Rows",
    "Fold",
]
