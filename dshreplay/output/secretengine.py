"""Moved to `dshreplay.redaction.engine` (this path re-exports it for one release)."""

from dshreplay.redaction.engine import CONFIG, LEFT_TO_OURS, MIN_ADDRESS_SPACE, OURS_KEYWORDS, Engine, unusable

__all__ = ["CONFIG", "LEFT_TO_OURS", "MIN_ADDRESS_SPACE", "OURS_KEYWORDS", "Engine", "unusable"]
