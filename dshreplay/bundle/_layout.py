"""A bundle's layout, shared by the export that writes it and `verify-export` that reads it: the
root's file names, the format number, session folder names, the JSON every file is written as,
names pinned as bytes, and reading the manifest. It imports nothing that writes a bundle."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any

import orjson

from dshreplay._jsvalues import (
    json_bytes,
)
from dshreplay.bundle._jsonread import read_bundle_json
from dshreplay.errors import (
    ReadError,
    UsageError,
)
from dshreplay.io.reader import shown_path

__all__ = ["INDEX", "MANIFEST", "SIGNATURE", "OLD_SIGNATURE", "FORMAT", "dumps", "sha256_file", "folder_name",
           "pinned_path", "read_manifest"]

JSON_OPTS = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE


def dumps(value: Any) -> bytes:  # (JSON: the bundle's own values, or the log's)
    try:
        return orjson.dumps(value, option=JSON_OPTS)
    except orjson.JSONEncodeError:  # deeper than orjson writes, or text that is not UTF-8
        return json_bytes(value) + b"\n"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


INDEX, MANIFEST, SIGNATURE = "index.html", "manifest.json", "manifest.json.sig"  # (signature: when signed)
OLD_SIGNATURE = "manifest.sig"  # a signature of a bundle of format 1 or 2


ROOT_FILES = frozenset({INDEX, MANIFEST, SIGNATURE, OLD_SIGNATURE})  # no folder takes their names


UNLISTED = (MANIFEST, SIGNATURE, OLD_SIGNATURE)  # the files the manifest cannot list: itself, and its signature


WINDOWS_DEVICES = frozenset({"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$",
                             *(f"COM{n}" for n in range(10)), *(f"LPT{n}" for n in range(10))})


def folder_name(session_id: Any) -> str:  # (a session id as logged: any JSON value)
    """An injective, traversal-proof folder name for a session id.

    Letters, digits, `.`, `_` and `-` stay; every other character becomes
    `~XXXX` (or `~UXXXXXX` beyond the BMP); `.` and `..` are escaped too.
    Names longer than 120 characters keep 100 and add `~~` and a hash. A name
    that would be one of the files of the bundle's root (`ROOT_FILES`, in any
    case) or a Windows device name (`CON`, `nul.txt`, `COM1`), or that ends in a dot,
    has its first (or last) character escaped too.
    """
    raw = session_id if type(session_id) is str else json_bytes(session_id).decode()
    if raw == "":
        return "~~empty"
    if raw in (".", ".."):
        return "".join(f"~{ord(c):04X}" for c in raw)
    parts = []
    for ch in raw:
        if ch != "~" and (ch.isascii() and (ch.isalnum() or ch in "._-")):
            parts.append(ch)
        elif ord(ch) <= 0xFFFF:
            parts.append(f"~{ord(ch):04X}")
        else:
            parts.append(f"~U{ord(ch):06X}")
    name = "".join(parts)
    if name.lower() in ROOT_FILES or name.split(".")[0].upper() in WINDOWS_DEVICES:
        name = f"~{ord(name[0]):04X}" + name[1:]
    if name.endswith("."):
        name = name[:-1] + "~002E"
    if len(name) > 120:
        name = name[:100] + "~~" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return name


# manifest.json: "files" is a list of {path, size, sha256} (format 1, with no "format": a map path -> sha256);
# format 3 keeps a session's calls in calls.jsonl and messages.jsonl (format 2: calls/NNNN.json, messages/*.json);
# in format 4 every 100th call record builds on an earlier one instead of listing its whole request
# (bundle/_calls.py: checkpoints), so a surface that only grows no longer costs N²/200 message ids
FORMAT = 4


def _pinned(key: str, written: str, path: str | os.PathLike[str]) -> dict[str, str]:
    """`{KEY + "Bytes": base64}`: the bytes of a name that is not UTF-8 (the manifest's text
    shows them as \\xNN, which names another file), so verify-export finds the file again
    (`pinned_path`); nothing when the name is text, or when redaction masked any of it (its
    bytes would hold what was masked)."""
    raw = os.fsencode(path)
    if written != shown_path(path) or raw.decode("utf-8", "replace").encode() == raw:
        return {}
    return {key + "Bytes": base64.b64encode(raw).decode("ascii")}


def pinned_path(entry: dict[str, Any], key: str) -> str | None:
    """The path a session entry pins as bytes under KEY + "Bytes" (`_pinned`), as the file system
    names it; None when it pins none (or not as base64 of a path)."""
    value = entry.get(key + "Bytes")
    if type(value) is not str:
        return None
    try:
        raw = base64.b64decode(value, validate=True)
    except ValueError:
        return None
    return os.fsdecode(raw) if raw and b"\0" not in raw else None


def read_manifest(bundle: Path) -> tuple[bytes, dict[str, Any]]:
    """manifest.json's bytes and value, with its files (a list; a format 1 map) and sessions (a list)."""
    try:
        data, manifest = read_bundle_json(bundle / "manifest.json", "manifest.json")
    except ReadError as exc:
        raise UsageError(f"{shown_path(bundle)} has no readable manifest.json ({exc.message}): "
                         "not a dshreplay bundle") from None
    files = manifest.get("files") if type(manifest) is dict else None
    sessions = manifest.get("sessions") if type(manifest) is dict else None
    if type(files) not in (list, dict) or type(sessions) is not list:
        raise UsageError(f"{shown_path(bundle)}/manifest.json lacks its files and sessions: not a dshreplay bundle")
    assert isinstance(manifest, dict)  # (its files and sessions were read from it)
    return data, manifest
