"""Moved: this tracker is `dshreplay.analyses.trackers.calls`. This old path re-exports its public names for
one release."""

from __future__ import annotations

from dshreplay.analyses.trackers.calls import Call, CallTracker, Outcome, Request

__all__ = ["Call", "Request", "CallTracker", "Outcome"]
