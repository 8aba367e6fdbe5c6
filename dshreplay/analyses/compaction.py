"""Moved: this tracker is `dshreplay.analyses.trackers.compaction`. This old path re-exports its public names for
one release."""

from __future__ import annotations

from dshreplay.analyses.trackers.compaction import BracketRecord, CompactionTracker, compaction_of

__all__ = ["BracketRecord", "CompactionTracker", "compaction_of"]
