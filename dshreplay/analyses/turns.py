"""Moved: this tracker is `dshreplay.analyses.trackers.turns`. This old path re-exports its public names for
one release."""

from __future__ import annotations

from dshreplay.analyses.trackers.turns import Span, TurnSpans, TurnTracker

__all__ = ["TurnTracker", "TurnSpans", "Span"]
