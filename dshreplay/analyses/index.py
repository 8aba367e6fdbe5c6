"""Moved: `LogIndex` and `build_index` are in `dshreplay.analyses.trackers.logindex`. This old path
re-exports them for one release."""

from __future__ import annotations

from dshreplay.analyses.trackers.logindex import LogIndex, build_index

__all__ = ["LogIndex", "build_index"]
