"""Moved to `dshreplay.redaction.decode` (this path re-exports it for one release)."""

from dshreplay.redaction.decode import (
    BASE64_GATE,
    MAX_BASE64,
    PERCENT_PATTERN,
    View,
    base64_runs,
    escapes_decoded,
    json_view,
    unescape,
    url_decoded,
    views,
)

__all__ = ["View", "views", "json_view", "unescape", "escapes_decoded", "url_decoded", "base64_runs",
           "PERCENT_PATTERN", "BASE64_GATE", "MAX_BASE64"]
