"""Logs held inside another file: dsh's SQLite store and its web export ZIP.

A log argument names one by its file, told by its first bytes (never by its name):
`STORE.sqlite#SESSION_ID` is one session of a store, `export.zip` the export's root
session and `export.zip#subagents/ID` one subagent. `STORE.sqlite` alone is its only
session (a UsageError listing the ids when it holds several); `expand` gives every
session of either, for the commands that read many logs.

`open_input` turns such an argument into the text of the session's log (`Opened`),
which `LogSource` reads as it reads standard input; `pin_facts` says what an export
pins: the file's size and hash, the session, and (a ZIP) each media file's SHA-256.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Protocol

from dshreplay.errors import ReadError
from dshreplay.io._packed import expand_row
from dshreplay.io._source import open_regular, shown_path
from dshreplay.options import Options

__all__ = ["Opened", "split", "open_input", "expand", "pin_facts"]

_MAGIC = 16
SQLITE_MAGIC = b"SQLite format 3\x00"  # (kept here: telling a store or a ZIP from a log imports neither reader)
ZIP_MAGIC = b"PK\x03\x04"


class Hasher(Protocol):
    def new(self) -> Any: ...


@dataclass(frozen=True)
class Opened:
    """A session inside a store or a ZIP: how messages name it, its log's text, and its pin."""

    shown: str
    text: bytes
    pin: dict[str, Any] = field(default_factory=dict)
    file: str = ""  # the store or ZIP file itself


def _kind(path: str) -> str | None:
    """"sqlite" or "zip" for a regular file that begins as one, else None (a log, or not a file)."""
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as fh:
            head = fh.read(_MAGIC)
    except OSError:
        return None
    return "sqlite" if head == SQLITE_MAGIC else "zip" if head.startswith(ZIP_MAGIC) else None


def split(source: str | os.PathLike[str]) -> tuple[str, str | None, str] | None:
    """(file, fragment after `#` or None, kind) when `source` names a store or a ZIP, else None."""
    text = os.fspath(source)
    kind = _kind(text)
    if kind is not None:
        return text, None, kind
    at = text.find("#")
    while at > 0:
        kind = _kind(text[:at])
        if kind is not None:
            return text[:at], text[at + 1:], kind
        at = text.find("#", at + 1)
    return None


def open_input(source: str | os.PathLike[str], options: Options) -> Opened | None:
    """The session a log argument names inside a store or a ZIP; None for any other argument."""
    found = split(source)
    if found is None:
        return None
    path, fragment, kind = found
    shown = shown_path(path)
    if kind == "sqlite":
        from dshreplay.io._sqlitestore import Store, session_choice

        with Store(path, shown) as store:
            session_id = fragment if fragment is not None else session_choice(store.session_ids(), shown)
            session = store.session(session_id, options, expand_row)
        pin = {"kind": "dsh-sqlite-store", "session": session.id, "revision": session.revision,
               "incarnation": session.incarnation, "rows": session.rows}
        if session.torn_from is not None:
            pin["tornFromSeq"] = session.torn_from
        return Opened(f"{shown}#{session.id}", session.text, pin, path)
    from dshreplay.io._webzip import WebZip

    with WebZip(open_regular(path, shown), shown) as archive:
        name = archive.entry_name(fragment or "")
        text = archive.read(name, options.max_bytes)
        pin = {"kind": "dsh-web-export", "entry": name}
        if not fragment:
            pin["media"] = [m.to_json() for m in archive.media(options)]
    return Opened(shown if not fragment else f"{shown}#{fragment}", text, pin, path)


def expand(source: str) -> list[str] | None:
    """Every session a store or a ZIP holds, as log arguments (a store's sorted by id, a ZIP's
    root first); None for any other argument, or one that names a session already."""
    found = split(source)
    if found is None or found[1] is not None:
        return None
    path, _, kind = found

    if kind == "sqlite":
        from dshreplay.io._sqlitestore import Store

        with Store(path, shown_path(path)) as store:
            return [f"{source}#{session_id}" for session_id in store.session_ids()]
    from dshreplay.io._webzip import WebZip

    with WebZip(open_regular(path, shown_path(path)), shown_path(path)) as archive:
        return [source if not fragment else f"{source}#{fragment}" for fragment in archive.logs()]


def pin_facts(opened: Opened, hasher: Hasher) -> dict[str, Any]:
    """What an export pins of a session inside a store or a ZIP: the file, its size and hash
    (keyed as the bundle's input hashes are), and the session's own facts."""

    digest, size = hasher.new(), 0
    try:
        with open_regular(opened.file, shown_path(opened.file)) as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
                size += len(block)
    except OSError as exc:
        raise ReadError(f"cannot read: {exc.strerror or exc}", path=shown_path(opened.file)) from None
    return {"container": {**opened.pin, "file": shown_path(opened.file), "size": size, "sha256": digest.hexdigest()}}
