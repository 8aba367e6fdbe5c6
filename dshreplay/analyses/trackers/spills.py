"""Spilled tool output: results dsh moved out of the transcript.

dsh keeps an oversized tool result out of the model's context: the model
gets a preview and a note "(Omitted N bytes. Full formatted result stored at:
PATH. ...)". `Spills` finds every such note in appended tool results, with the
call it answers; a fork child's spills inside its seed are marked inherited.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from dshreplay._jsvalues import MAX_SAFE_INTEGER, parse_count
from dshreplay.analyses.trackers.toolcalls import ToolTracker
from dshreplay.core.driver import Observer, Record, Run
from dshreplay.io.reader import seed_length

__all__ = ["Spill", "Spills"]

NOTE = re.compile(r"\(Omitted ([0-9]+) bytes\. Full formatted result stored at: (.+?)\. ")


@dataclass
class Spill:
    """One spilled tool result."""

    seq: int
    call_id: Any  # the result's source.callId, as logged
    tool: Any  # its call's tool name, as logged
    omitted: int  # bytes left out of the model's view
    locator: str  # where dsh stored the full result
    inherited: bool  # inside a fork child's seed (the parent's spill)
    stored: int | None = None  # the stored file's size, when found under the spill root
    found: bool | None = None  # None: not looked for

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "callId": self.call_id, "tool": self.tool, "omittedBytes": self.omitted,
                "locator": self.locator, "inherited": self.inherited, "found": self.found,
                "storedBytes": self.stored,
                "sizeMatches": None if self.stored is None else self.stored >= self.omitted}


class Spills(Observer):
    """Collects the spill notes of appended tool results, each with its call's tool."""

    requires = (ToolTracker,)
    types = frozenset({"tool/result"})

    def begin(self, run: Run) -> None:
        self.seed = seed_length(run.header) or 0
        self.tools: ToolTracker = run.get(ToolTracker)
        self.spills: list[Spill] = []

    def observe(self, record: Record) -> None:
        item = record.item
        if item.record.get("surfaceOp") != "append":
            return
        data = item.record.get("data")
        message = data.get("message") if type(data) is dict else None
        if type(message) is not dict:
            return
        call_id = (message.get("source") or {}).get("callId") if type(message.get("source")) is dict else None
        call = self.tools.call_at(item.seq)
        for text in _texts(message.get("content")):
            for omitted, locator in notes(text):
                self.spills.append(Spill(item.seq, call_id, None if call is None else call.tool,
                                         omitted, locator, item.seq < self.seed))


def notes(text: str) -> Iterator[tuple[int, str]]:
    """(bytes omitted, locator) of each spill note in a tool result's text. dsh
    writes the count as a JavaScript number: a count past 2**53 - 1 is no
    note of dsh's, and is not read as one."""
    for match in NOTE.finditer(text):
        omitted = parse_count(match.group(1), MAX_SAFE_INTEGER)
        if omitted is not None:
            yield omitted, match.group(2)


def _texts(content: Any, depth: int = 0) -> Iterator[str]:
    """Every text of a result's content blocks (results nest results; 20 levels at most)."""
    if type(content) is str:
        yield content
    elif type(content) is list and depth < 20:
        for block in content:
            if type(block) is dict:
                if type(block.get("text")) is str:
                    yield block["text"]
                yield from _texts(block.get("content"), depth + 1)


def look_up(spills: list[Spill], root: Path | None) -> None:
    """Whether each spill's stored file is there: at its locator, or under `root`
    by the locator's last two parts or its name."""
    for spill in spills:
        where = Path(spill.locator)
        candidates = [where] + ([root / where.parent.name / where.name, root / where.name] if root else [])
        spill.found = False
        for candidate in candidates:
            try:
                if candidate.is_file():
                    spill.found, spill.stored = True, os.path.getsize(candidate)
                    break
            except OSError:
                continue
