"""Moved: this module is `dshreplay.bundle.verify`. This old path re-exports its public names for one release."""

from __future__ import annotations

from dshreplay.bundle.verify import (
    Verification,
    verify_export,
)

__all__ = [
    "verify_export",
    "Verification",
]
