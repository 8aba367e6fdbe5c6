"""Moved: this tracker is `dshreplay.analyses.trackers.spills`. This old path re-exports its public names for
one release."""

from __future__ import annotations

from dshreplay.analyses.trackers.spills import Spill, Spills

__all__ = ["Spill", "Spills"]
