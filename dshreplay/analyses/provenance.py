"""Moved: this tracker is `dshreplay.analyses.trackers.provenance`. This old path re-exports its public names for
one release."""

from __future__ import annotations

from dshreplay.analyses.trackers.provenance import (
    MessageProvenance,
    Replaced,
    ShadowRecord,
    ShadowTracker,
    ViewDiff,
    diff_states,
    message_provenance,
)

__all__ = [
    "MessageProvenance",
    "Replaced",
    "ShadowRecord",
    "ShadowTracker",
    "ViewDiff",
    "diff_states",
    "message_provenance",
]
