"""Moved to `dshreplay.redaction.redactor` (this path re-exports it for one release)."""

from dshreplay.redaction.redactor import MASK, ArgumentDeltas, Redactor, engine_off, load_redactor

__all__ = ["Redactor", "load_redactor", "MASK", "ArgumentDeltas", "engine_off"]  # (the last two: internal)
