"""What `Session`'s questions return: answers that print as the command line does
(`results.summaries` holds those that need the validator, stats or lineage).

Each result's `to_json()` is the value the matching command prints with
`--json` (`json_text(result.to_json())` is its line, byte for byte): the
shapes are the JSON reporter's (`console.reporters`), one place each; a list
answered only up to where the fold fails is wrapped in the same envelope
(`{"error", "answeredUpTo", "answer"}`). Their reprs say what they hold in
one line, never the records.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, TypeVar

from dshreplay._jsvalues import shown
from dshreplay.core.driver import FoldReport
from dshreplay.errors import DshReplayError, answered_for
from dshreplay.results._shapes import HasJson, answer_json, fold_json

__all__ = ["Rows", "Fold"]


Item = TypeVar("Item", bound=HasJson)  # a row of an answer: it has the JSON its command prints for it


class Rows(list[Item]):
    """A listing (calls, shadows, brackets, tools, spills, transcript entries, provenance
    rows, event rows, lines): a list of its rows, with `partial`, the failure it stops at
    when answered only for the events before the point where the fold fails (None: whole)."""

    def __init__(self, rows: list[Item] | tuple[Item, ...], what: str,
                 partial: DshReplayError | None = None) -> None:
        super().__init__(rows)
        self.what = what  # what a row is, in the plural ("calls", "events")
        self.partial = partial

    def to_json(self) -> object:
        """The rows as the command's `--json` prints them (in their envelope when partial)."""
        return answer_json([row.to_json() for row in self], self.partial)

    def __repr__(self) -> str:
        head = f"<{len(self)} {self.what}"
        if self:
            head += f": {_brief(self[0])}" + (f" ... {_brief(self[-1])}" if len(self) > 1 else "")
        return head + ("" if self.partial is None else f"; {answered_for(self.partial)}") + ">"


def _brief(row: object) -> str:
    """A row in a few words: its seq, line or number when it has one."""
    for name in ("seq", "first_chunk_seq", "line", "call_id", "compaction_id"):
        value = getattr(row, name, None)
        if value is not None:
            return f"{name.replace('_', ' ')} {shown(value, 40, quote=False)}"
    return type(row).__name__


@dataclass(repr=False)
class Fold(FoldReport):
    """`Session.fold`: the model's view at a seq (a `FoldReport`), printable as `fold --json`."""

    @classmethod
    def of(cls, report: FoldReport) -> Fold:
        return cls(**{f.name: getattr(report, f.name) for f in fields(FoldReport)})

    def to_json(self) -> dict[str, Any]:
        """As `fold --json` prints it."""
        return fold_json(self)

    def __repr__(self) -> str:
        if self.state is None:
            why = "no view" if self.error is None else str(self.error.message)
            return f"<Fold {self.path!r}: {why}>"
        messages = "no messages" if self.messages is None else f"{len(self.messages)} messages"
        error = "" if self.error is None else f"; {self.error.kind} error at seq {self.error.seq}"
        return (f"<Fold {self.path!r} at seq {self.seq}: {len(self.state.nodes)} nodes, {messages}, "
                f"{len(self.state.replacements)} replacements{error}>")
