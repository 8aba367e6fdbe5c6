"""Moved: this module is `dshreplay.bundle.export`. This old path re-exports its public names for one release."""

from __future__ import annotations

from dshreplay.bundle.export import (
    ExportOptions,
    export_bundle,
    read_manifest,
)

__all__ = [
    "export_bundle",
    "ExportOptions",
    "read_manifest",
]
