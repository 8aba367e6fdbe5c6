"""verify-export's view of a session read from a dsh SQLite store or web export ZIP.

The export pinned the session's log text (its size, hash and line chain, as for any log)
and the file holding it (`container` in its manifest entry). To check it again, the
session is read from that file as at export and its text put in a private temporary file,
which the usual checks (exact bytes; with --grown, only appended lines) then read.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from dshreplay.io.reader import LogSource
from dshreplay.options import Options

__all__ = ["container_session"]


@contextmanager
def container_session(entry: dict[str, Any], given: str, inputs: Path | None, options: Options,
                      find: Callable[[str, Path | None], Path | None],
                      differs: Callable[[str], None]) -> Iterator[Path | None]:
    """The session's text now, in a temporary file (None when its store or ZIP is not found);
    `find` locates the file as verify-export locates any input. An export ZIP's media files
    are checked against the ones pinned: each that changed, went or came is told to `differs`."""
    pin = entry.get("container")
    file = pin.get("file") if type(pin) is dict else None
    if type(file) is not str or not given.startswith(file):
        yield None
        return
    target = find(file, inputs)
    if target is None:
        yield None
        return
    fragment = given[len(file):]
    source = LogSource(os.fspath(target) + fragment, options)
    assert source.data is not None and source.container is not None  # (a session in a store or a ZIP: read whole)
    if type(pin) is dict and "media" in pin:
        for problem in media_changes(pin["media"], source.container.pin.get("media", [])):
            differs(problem)
    with tempfile.TemporaryDirectory(prefix="dshreplay-verify-") as folder:
        copy = Path(folder) / "session.jsonl"
        copy.write_bytes(source.data)
        yield copy


def media_changes(pinned: Any, now: list[dict[str, Any]]) -> list[str]:
    """How an export ZIP's media files differ from the ones its export pinned."""
    if type(pinned) is not list or not all(type(m) is dict for m in pinned):
        return ["the manifest's media list is not a list of files"]
    before = {m.get("path"): m.get("sha256") for m in pinned}
    after = {m["path"]: m["sha256"] for m in now}
    return ([f"media file {name} changed" for name in sorted(set(before) & set(after), key=str)
             if before[name] != after[name]]
            + [f"media file {name} is gone" for name in sorted(set(before) - set(after), key=str)]
            + [f"media file {name} was added" for name in sorted(set(after) - set(before), key=str)])
