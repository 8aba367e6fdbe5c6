"""The model calls of an export bundle, as `request --bundle` shows them.

`session_folder` finds the session folder a command reads: the folder given,
or the one session folder of a bundle's root (several: a usage error that
lists them). `listed_calls` and `bundle_request` give the call records of
`bundle.calls` in the shapes the reporters print for a log (`Request`,
and rows with a `Call`'s fields), so a bundle's calls are shown as tables,
or as JSON, as the log's are.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dshreplay._jsvalues import shown
from dshreplay.analyses.trackers.calls import Request
from dshreplay.bundle._calls import CALLS, calls_from_bundle, request_from_bundle
from dshreplay.bundle._jsonread import read_bundle_json
from dshreplay.errors import DshReplayError, ReadError, UsageError
from dshreplay.io.reader import shown_path

__all__ = ["ListedCall", "bundle_request", "listed_calls", "session_folder"]

MANIFEST = "manifest.json"


def session_folder(path: Path) -> Path:
    """`path` when it is a session folder of a bundle (it holds calls.jsonl, or calls/ of
    format 2); the one session folder the bundle's manifest names when `path` is a bundle's
    root; else a UsageError saying which folder to give."""
    if os.path.lexists(path / CALLS) or os.path.lexists(path / "calls"):
        return path
    if not os.path.lexists(path / MANIFEST):
        raise UsageError(f"{shown_path(path)} is neither an export bundle (no {MANIFEST}) nor a session folder "
                         f"of one (no {CALLS})")
    _, manifest = read_bundle_json(path / MANIFEST, "the manifest")
    sessions = manifest.get("sessions") if type(manifest) is dict else None
    folders: list[str] = [s["folder"] for s in (sessions if type(sessions) is list else ())
                          if type(s) is dict and type(s.get("folder")) is str]
    for folder in folders:
        if folder in ("", ".", "..") or "/" in folder or "\\" in folder:  # (a bundle's folders are its own)
            raise ReadError(f"the manifest names the session folder {shown(folder, 60)}, which is no folder of "
                            "the bundle (the bundle is damaged)", path=shown_path(path / MANIFEST))
    if len(folders) == 1:
        return path / folders[0]
    if not folders:
        raise UsageError(f"the bundle {shown_path(path)} holds no session folder (no input could be read)")
    raise UsageError(f"the bundle {shown_path(path)} holds {len(folders)} sessions: give one of its session "
                     "folders, " + ", ".join(shown_path(path / f) for f in folders))


@dataclass(frozen=True)
class ListedCall:
    """A call of a bundle's listing with the fields the reporters show of a `Call`; its JSON is
    the record as the bundle keeps it (without the finish reason's object)."""

    call: int
    turn: object
    step: object
    first_chunk_seq: object
    last_chunk_seq: object
    provider: object
    model: object
    outcome: object
    error_code: object
    usage: object
    message_count: object
    row: dict[str, Any]  # (the listed record: JSON values as the bundle holds them)
    kind: str = "main"  # (a bundle records the main-loop calls only)

    def to_json(self) -> dict[str, Any]:
        return self.row


def listed_calls(folder: Path) -> list[ListedCall]:
    """The calls of a session folder (`request --bundle DIR --list`)."""
    return [ListedCall(r["call"], r["turn"], r["step"], r["firstChunkSeq"], r["lastChunkSeq"], r["provider"],
                       r["model"], r["outcome"], r["errorCode"], r["usage"], r["messageCount"], r)
            for r in calls_from_bundle(folder)]


def bundle_request(folder: Path, call: int) -> Request:
    """The request of call `call` rebuilt from a session folder (its `to_json()` is byte for byte
    what `request LOG --call N --json` prints for the redacted log). A call the folder does not
    hold is a UsageError that says which calls it holds."""
    try:
        r = request_from_bundle(folder, call)
    except UsageError as exc:  # (the folder holds no record of that call)
        raise UsageError(f"{exc.message}{_calls_held(folder)}") from None
    return Request(r["call"], r["turn"], r["step"], r["firstChunkSeq"], r["atSeq"], r["headerSeq"], r["header"],
                   r["messages"], r["lastChunkSeq"], r["outcome"], r["errorCode"], r["usage"], r["tornTail"])


def _calls_held(folder: Path) -> str:
    """": it holds calls 1..7" (or the numbers, when some are missing); "" when the records
    cannot be listed (a damaged folder: the call asked for is not there either way)."""
    try:
        calls = [record["call"] for record in calls_from_bundle(folder)]
    except DshReplayError:
        return ""
    if not calls:
        return ": it holds no call"
    if calls == list(range(calls[0], calls[-1] + 1)):
        return f": it holds calls {calls[0]}..{calls[-1]}" if len(calls) > 1 else f": it holds call {calls[0]}"
    return ": it holds calls " + ", ".join(map(str, calls))
