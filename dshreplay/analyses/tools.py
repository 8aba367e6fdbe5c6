"""Moved: the tool-call tracker is `dshreplay.analyses.toolcalls`, the hook tracker
`dshreplay.analyses.hooks`. This old path re-exports their public names for one release."""

from __future__ import annotations

from dshreplay.analyses.hooks import HookRun
from dshreplay.analyses.toolcalls import Approval, Closer, ToolCall, ToolLedger, ToolTracker

__all__ = ["ToolCall", "Approval", "HookRun", "Closer", "ToolTracker", "ToolLedger"]
