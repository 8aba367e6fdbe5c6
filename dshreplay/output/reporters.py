"""Moved: this module is `dshreplay.console.reporters`. This old path re-exports its public names for one release."""

from __future__ import annotations

from dshreplay.console.reporters import (
    REPORTERS,
    CsvReporter,
    HasJson,
    JsonLinesReporter,
    JsonReporter,
    Reporter,
    TextReporter,
    answer_json,
    display_width,
    envelope_of,
    exported_json,
    files_json,
    fold_json,
    health_facts,
    json_text,
    lineage_json,
    render_table,
    reporter_for,
    stats_json,
)

__all__ = [
    "Reporter",
    "TextReporter",
    "JsonReporter",
    "JsonLinesReporter",
    "CsvReporter",
    "HasJson",
    "json_text",
    "envelope_of",
    "answer_json",
    "fold_json",
    "health_facts",
    "files_json",
    "stats_json",
    "lineage_json",
    "exported_json",
    "render_table",
    "display_width",
    "REPORTERS",
    "reporter_for",
]
