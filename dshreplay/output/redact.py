"""Moved: this module is `dshreplay.redaction.redactor`. This old path re-exports its public names for one release."""

from __future__ import annotations

from dshreplay.redaction.redactor import (
    MASK,
    Redactor,
    load_redactor,
)

__all__ = [
    "Redactor",
    "load_redactor",
    "MASK",
]
