"""The results of questions a whole-log summary answers (`Session.validate`, `Session.stats`)
and of the entry points that take many logs (`dshreplay.lineage`, `dshreplay.export`): each
prints as its command does (`to_json()` is the command's `--json`, byte for byte).

A question of one log whose command takes many (`validate`, `stats`) prints as that command
given this one log (`{"files": [...]}`, `{"sessions": [...]}`); the log's own object stays
what the base class's `to_json` gives (`FileReport.to_json(result)`). They live apart from
`results.listing`: they import the validator and its schemas, which `fold` never loads.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any, NamedTuple

from dshreplay.analyses.lineage import Node
from dshreplay.analyses.stats import SessionStats
from dshreplay.analyses.validate import FileReport
from dshreplay.errors import answered_for
from dshreplay.results._shapes import exported_json, files_json, lineage_json, stats_json

__all__ = ["Validation", "Stats", "Lineage", "Exported"]


def _fields_of(base: type[Any], value: Any) -> dict[str, Any]:
    """The dataclass fields of `value` (a `base`) by name: the result subclass's constructor
    arguments (they are shared, not copied)."""
    return {f.name: getattr(value, f.name) for f in fields(base)}


class Validation(FileReport):
    """`Session.validate`: one log's verdict (a `FileReport`: its fields; `FileReport.to_json(v)`
    is the log's own object), printable as `validate LOG --json`: `{"files": [that object]}`."""

    @classmethod
    def of(cls, report: FileReport) -> Validation:
        return cls(**_fields_of(FileReport, report))

    def to_json(self) -> dict[str, Any]:
        """As `validate LOG --json` prints it."""
        return files_json([self])

    def __repr__(self) -> str:
        if self.unreadable is not None:
            return f"<Validation {self.path!r}: unreadable: {self.unreadable.message}>"
        verdict = "ok" if self.ok else "errors"
        stopped = "" if self.stopped is None else f"; reading stopped at line {self.stopped.line}"
        return f"<Validation {self.path!r}: {self.events} events, {len(self.findings)} findings, {verdict}{stopped}>"


class Stats(SessionStats):
    """`Session.stats`: one session's figures (a `SessionStats`: its fields;
    `SessionStats.to_json(s)` is the session's own object), printable as `stats LOG --json`:
    `{"sessions": [that object]}`."""

    @classmethod
    def of(cls, figures: SessionStats) -> Stats:
        return cls(**_fields_of(SessionStats, figures))

    def to_json(self) -> dict[str, Any]:
        """As `stats LOG --json` prints it."""
        return stats_json([self])

    def __repr__(self) -> str:
        head = f"<Stats {self.path!r}: {self.events} events, {self.turns} turns, {self.calls} calls"
        if self.error is None:
            return head + ">"
        return head + ("; unreadable>" if self.unreadable else f"; {answered_for(self.error)}>")


class Lineage(NamedTuple):
    """`dshreplay.lineage`: the session trees and the problems of no single session (unpack it
    as `roots, problems = ...`), printable as `lineage PATHS --json`."""

    roots: list[Node]
    problems: list[str]

    def to_json(self) -> dict[str, Any]:
        """As `lineage PATHS --json` prints it."""
        return lineage_json(self.roots, self.problems)

    def __repr__(self) -> str:
        sessions = sum(1 for root in self.roots for _ in root.walk())
        return f"<Lineage: {len(self.roots)} roots, {sessions} sessions, {len(self.problems)} problems>"


class Exported(dict[str, Any]):
    """`dshreplay.export`: the manifest the bundle holds (this dict, as manifest.json has it),
    where the bundle is (`out`) and its digest (`digest`: "sha256:" and `sha256sum manifest.json`,
    what `verify-export --digest` takes), printable as `export ... --json`."""

    def __init__(self, manifest: dict[str, Any], out: Path, digest: str) -> None:
        super().__init__(manifest)
        self.out = out
        self.digest = digest

    def to_json(self) -> dict[str, Any]:
        """As `export ... --json` prints it."""
        return exported_json(self.out, self, self.digest)

    def __repr__(self) -> str:
        return (f"<Exported {str(self.out)!r}: {len(self['sessions'])} sessions, {len(self['files'])} files, "
                f"digest {self.digest}>")
