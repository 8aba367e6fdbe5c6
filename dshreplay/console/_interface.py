"""The reporter interface (`Reporter`: one method per kind of answer) and the JSON text every
machine reporter writes (`json_text`, and query cells as JSON: `cell_json`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from dshreplay._jsvalues import json_bytes, json_visible

if TYPE_CHECKING:  # (validate's machinery is imported by the command that validates, not by every start)
    from dshreplay.analyses.health import Health
    from dshreplay.analyses.lineage import Node
    from dshreplay.analyses.query import EventRow, RawLine
    from dshreplay.analyses.stats import SessionStats
    from dshreplay.analyses.trackers.calls import Call, Request
    from dshreplay.analyses.trackers.compaction import BracketRecord
    from dshreplay.analyses.trackers.provenance import MessageProvenance, ShadowRecord, ViewDiff
    from dshreplay.analyses.trackers.spills import Spill
    from dshreplay.analyses.transcript import Entry
    from dshreplay.analyses.validate import FileReport
    from dshreplay.core.driver import FoldReport
    from dshreplay.results._reports import IndexReport, UsageReport, Verification


_C1 = "[\x80-\x9f]"  # C1 controls: a terminal may act on them, so JSON shows them escaped


def cell_json(value: object) -> Any:
    """A query result's cell as JSON: a time as ISO 8601 UTC text ("2026-07-06T15:36:05.190Z"),
    a day as "2026-07-06", a decimal as a number; lists and maps as they are."""
    import datetime
    import decimal
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value.isoformat(timespec="milliseconds") + "Z"
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, datetime.timedelta):
        return value.total_seconds() * 1000
    if isinstance(value, (list, tuple)):
        return [cell_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): cell_json(v) for k, v in value.items()}
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    return value


def cell_text(value: object) -> str:
    """A query result's cell in a table or CSV: as JSON gives it, text as it is, "-" for NULL."""
    value = cell_json(value)
    return "-" if value is None else value if type(value) is str else json_text(value)


def json_text(value: object, terminal: bool = False) -> str:
    """Compact JSON on one line: C1 control characters escaped, and text that
    is not UTF-8 (a path's undecodable bytes) shown as \\xNN. For a `terminal`, every
    character that text output escapes (bidirectional controls, U+2060, U+FEFF, tag
    characters, DEL, ...) written as a JSON escape too: the same JSON value, nothing the
    terminal acts on or hides. (Not for a pipe or a file: there JSON is written as before.)"""
    data = json_bytes(value)
    text = data.decode()
    if terminal:
        return json_visible(text)
    if b"\xc2" not in data:  # (every C1 character is \xc2\x80 to \xc2\x9f in UTF-8: most text is checked at once)
        return text
    return re.sub(_C1, lambda m: f"\\u{ord(m.group()):04x}", text) if re.search(_C1, text) else text


def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError, OSError):  # (a closed or unusual stream: not a terminal)
        return False


class Reporter:
    """The one interface every reporter follows (`TextReporter`: tables for people;
    `JsonReporter`: one JSON value; `JsonLinesReporter`: one JSON object per line).

    The command line picks a reporter and hands it what the library returns: one
    method per kind of answer, each writing that whole answer to the reporter's
    stream. A reporter only shapes what it is given: it reads no log and derives no
    fact, so every format says the same thing. Numbers people see (calls, messages,
    turns) count from 1; seqs are event positions from 0.
    """

    def fold(self, report: FoldReport) -> None:
        """The model's view at a seq (`Session.fold`): its nodes, each with the number of its message."""
        raise NotImplementedError

    def validate(self, reports: list[FileReport]) -> None:
        """The findings of each log (`validate_log`)."""
        raise NotImplementedError

    def shadows(self, records: Sequence[ShadowRecord]) -> None:
        """Every replacement (`Session.shadows`)."""
        raise NotImplementedError

    def brackets(self, records: Sequence[BracketRecord]) -> None:
        """Every compaction bracket (`Session.brackets`)."""
        raise NotImplementedError

    def provenance(self, rows: Iterable[MessageProvenance]) -> None:
        """Where each model message came from (`Session.provenance`); rows are written as they come."""
        raise NotImplementedError

    def diff(self, diff: ViewDiff, text: str | None = None) -> None:
        """The model's view at one seq against another (`Session.diff`), or its unified `text` diff."""
        raise NotImplementedError

    def calls(self, calls: Sequence[Call]) -> None:
        """The model calls, each with its outcome (`Session.calls`)."""
        raise NotImplementedError

    def request(self, request: Request) -> None:
        """The exact request of one call, with its outcome, or the one built at a seq (`Session.request`)."""
        raise NotImplementedError

    def transcript(self, entries: Sequence[Entry], markdown: bool = False) -> None:
        """The conversation as it happened (`Session.transcript`); `markdown` for the text form."""
        raise NotImplementedError

    @contextmanager
    def event_rows(self) -> Iterator[Callable[[EventRow], None]]:
        """A sink for event rows (`Session.query(sink=...)`), each written as it is found."""
        raise NotImplementedError
        yield

    def lines(self, lines: Sequence[RawLine]) -> None:
        """Physical lines as stored (`Session.lines`)."""
        raise NotImplementedError

    def spills(self, spills: Sequence[Spill]) -> None:
        """The tool results dsh kept out of the model's view (`Session.spills`)."""
        raise NotImplementedError

    def inspect(self, health: Health) -> None:
        """The health summary (`Session.inspect`)."""
        raise NotImplementedError

    def stats(self, stats: Sequence[SessionStats], total: SessionStats | None = None) -> None:
        """Figures per session (`session_stats`), and their `total` over several."""
        raise NotImplementedError

    def lineage(self, roots: Sequence[Node], problems: list[str]) -> None:
        """The tree of parent and child sessions (`lineage`), and the problems of no single session."""
        raise NotImplementedError

    def verify(self, result: Verification) -> None:
        """What `verify_export` found in a bundle and did (a `verify.Verification`)."""
        raise NotImplementedError

    def exported(self, out: Path | str, manifest: dict[str, Any], digest: str) -> None:
        """What `export` wrote, and the bundle digest."""
        raise NotImplementedError

    def query(self, columns: list[str], rows: Sequence[Sequence[object]]) -> None:
        """The result of an SQL query on the index (`sqlindex.run_query`)."""
        raise NotImplementedError

    def indexed(self, report: IndexReport) -> None:
        """What one run of `index` did (`sqlindex.IndexReport`)."""
        raise NotImplementedError

    def usage(self, report: UsageReport) -> None:
        """Tokens, calls, failures, retries, compactions and cost by period, session or model (`usage.UsageReport`)."""
        raise NotImplementedError
