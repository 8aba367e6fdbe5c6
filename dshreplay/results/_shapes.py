"""The `--json` shape of every answer, one function each: what a result's `to_json()` gives
and what the JSON reporters print. An answer that stops where the fold fails is wrapped in one
envelope (`{"error", "answeredUpTo", "answer"}`). Nothing here writes to a stream."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dshreplay.core.surface import numbered
from dshreplay.errors import DshReplayError, answered_up_to

if TYPE_CHECKING:  # (validate's machinery is imported by the command that validates, not by every start)
    from dshreplay.analyses.health import Health
    from dshreplay.analyses.lineage import Node
    from dshreplay.analyses.stats import SessionStats
    from dshreplay.analyses.validate import FileReport
    from dshreplay.core.driver import FoldReport


class HasJson(Protocol):
    """A row any JSON reporter writes: it has the JSON its command prints for it."""

    def to_json(self) -> dict[str, Any]: ...


def error_json(error: DshReplayError) -> dict[str, Any]:
    """The error object of every `--json` output (see DshReplayError.to_json)."""
    return error.to_json()


def envelope_of(failure: DshReplayError) -> dict[str, Any]:
    """What an answer for the events before the point where the fold fails is wrapped in (its
    `"answer"` added): the failure and the last seq answered."""
    return {"error": failure.to_json(), "answeredUpTo": answered_up_to(failure)}


def answer_json(value: object, partial: DshReplayError | None) -> object:
    """An answer as `--json` prints it: the value, or inside its envelope when it stops where
    the fold fails (`partial`)."""
    return value if partial is None else {**envelope_of(partial), "answer": value}


def fold_json(report: FoldReport) -> dict[str, Any]:
    """`fold --json`: the view at a seq (nodes, replacements, messages), or where the fold fails."""
    state = report.state
    if report.error is not None and state is None:  # no view: where the fold fails
        return {"error": error_json(report.error), "answeredUpTo": None, "answer": None}
    assert state is not None  # (a report without an error has its state)
    if report.error is not None:  # the fold holds, a node's message cannot be derived
        return {"seq": report.seq, "error": error_json(report.error),
                "nodes": [{"seq": seq, "message": None} for seq in state.nodes],
                "replacements": [r.to_json() for r in state.replacements], "messages": None}
    tail = report.torn_tail  # (a view of the whole log read up to a torn last line: it reaches no further)
    return {"seq": report.seq,
            "nodes": [{"seq": seq, "message": n} for seq, n, _ in numbered(report.node_messages or [])],
            "replacements": [r.to_json() for r in state.replacements],
            "messages": report.messages, "tornTail": None if tail is None else tail.to_json()}


def health_facts(health: Health) -> dict[str, Any]:
    """The health summary's own facts, without the envelope `Session.inspect`'s `to_json()`
    adds when the fold fails (a reporter adds it itself, when the command line sets one)."""
    from dshreplay.analyses.health import Health
    return Health.to_json(health)


def files_json(reports: Iterable[FileReport]) -> dict[str, Any]:
    """`validate --json`: one object per log (`FileReport.to_json`, called as such: the
    library's `Validation`, a FileReport, prints as this whole command)."""
    from dshreplay.analyses.validate import FileReport
    return {"files": [FileReport.to_json(r) for r in reports]}


def stats_json(stats: Iterable[SessionStats], total: SessionStats | None = None) -> dict[str, Any]:
    """`stats --json`: one object per session, and their total over several (`SessionStats.to_json`,
    called as such: the library's `Stats`, a SessionStats, prints as this whole command)."""
    from dshreplay.analyses.stats import SessionStats
    body: dict[str, Any] = {"sessions": [SessionStats.to_json(s) for s in stats]}
    if total is not None:
        body["total"] = SessionStats.to_json(total)
    return body


def lineage_json(roots: Iterable[Node], problems: list[str]) -> dict[str, Any]:
    """`lineage --json`: the session trees, and the problems of no single session."""
    return {"sessions": [r.to_json() for r in roots], "problems": problems}


def exported_json(out: Path | str, manifest: dict[str, Any], digest: str) -> dict[str, Any]:
    """`export --json`: where the bundle is, each session's manifest entry, the redaction
    counts, how many files the manifest lists, and the bundle digest."""
    return {"out": str(out), "sessions": manifest["sessions"], "redaction": manifest["redaction"],
            "files": len(manifest["files"]), "digest": digest}
