"""Moved: the tool-call tracker is `dshreplay.analyses.trackers.toolcalls`, the hook tracker
`dshreplay.analyses.trackers.hooks`. This old path re-exports their public names for one release."""

from __future__ import annotations

from dshreplay.analyses.trackers.hooks import HookRun
from dshreplay.analyses.trackers.toolcalls import Approval, Closer, ToolCall, ToolLedger, ToolTracker

__all__ = ["ToolCall", "Approval", "HookRun", "Closer", "ToolTracker", "ToolLedger"]
