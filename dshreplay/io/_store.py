"""Finding logs: files, session folders, store roots and flat folders of logs.

A session folder holds `session.jsonl` or `session.jsonl.zstd`; a store root
holds `<project>/<session>/session.jsonl[.zstd]`; a flat folder holds logs
named anything ending in `.jsonl` or `.jsonl.zstd`. Any mix of these is
walked; a folder that cannot be listed is returned as it is, so that reading
it reports why (never a silent skip).
"""

from __future__ import annotations

import os
from typing import Callable, Iterable

from dshreplay.errors import UsageError
from dshreplay.io._container import expand
from dshreplay.io.reader import LOG_NAMES

LOG_SUFFIXES = (".jsonl", ".jsonl.zstd")


def _noting(unreadable: list[str]) -> Callable[[OSError], None]:
    def note(error: OSError) -> None:
        unreadable.append(error.filename)
    return note


def discover(inputs: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Log paths (files or session folders) from every input, in input order, sorted within each.
    Standard input (`-`) is one log: given twice, the second would read nothing (UsageError)."""
    out: list[str] = []
    for item in inputs:
        path = os.fspath(item)
        if path == "-" and "-" in out:
            raise UsageError("standard input (-) is given twice: it holds one log, read once")
        if not os.path.isdir(path):
            out.extend(expand(path) or [path])  # a dsh SQLite store or web export ZIP: each session it holds
            continue
        if any(os.path.isfile(os.path.join(path, name)) for name in LOG_NAMES):
            out.append(path)  # a session folder
            continue
        found: list[str] = []
        unreadable: list[str] = []
        for folder, subfolders, files in os.walk(path, onerror=_noting(unreadable)):
            subfolders.sort()
            if any(name in files for name in LOG_NAMES):
                found.append(folder)
                subfolders[:] = []  # a session folder's own subfolders are not sessions
                continue
            found.extend(os.path.join(folder, name) for name in files
                         if name.endswith(LOG_SUFFIXES) and os.path.isfile(os.path.join(folder, name)))
        found.extend(unreadable)
        out.extend(sorted(found) or [path])  # nothing found: the folder itself, reported as unreadable
    return out


def log_files(paths: Iterable[str | os.PathLike[str]], command: str, why: str | None = None) -> list[str]:
    """`paths`, after a UsageError when one is standard input (`-`), for a command that reads
    log files only (`why`: what it does that standard input cannot give)."""
    out = [os.fspath(p) for p in paths]
    if "-" in out:
        raise UsageError(f"{command} reads log files, not standard input (-): " + (f"{why}; " if why else "")
                         + "save it to a file and give its path")
    return out
