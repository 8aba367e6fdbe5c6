"""Older bundle layouts, made from a bundle export writes today, for the tests that
check that `verify-export` and `request --bundle` still read them.

Format 2 (dshreplay before format 3) kept each session's call records as
`calls/NNNN.json` (pretty-printed, one file per call, without the call's provider
and model) and every stored message as `messages/<sha256>.json`, named by the
SHA-256 of the file's bytes (its compact JSON and a newline); its manifest says
`"format": 2`, has no `integrity` member, and its input hashes are plain SHA-256 (make
the bundle with `--no-default-redaction`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import orjson

WRITTEN = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE  # how export writes a JSON file


def to_format_2(bundle: Path) -> None:
    """Rewrite a format 3 bundle in place as export wrote it in format 2 (manifest included)."""
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    for entry in manifest["sessions"]:
        if entry.get("folder"):
            _session_to_format_2(bundle / entry["folder"])
    files = sorted(p for p in bundle.rglob("*") if p.is_file() and p.name not in ("manifest.json", "manifest.sig"))
    manifest["format"] = 2
    manifest.pop("integrity", None)  # (format 3's RFC 8785 form, keyed hashes and SSH signatures came after)
    manifest["files"] = [{"path": p.relative_to(bundle).as_posix(), "size": p.stat().st_size,
                          "sha256": hashlib.sha256(p.read_bytes()).hexdigest()} for p in files]
    (bundle / "manifest.json").write_bytes(orjson.dumps(manifest, option=WRITTEN))


def _session_to_format_2(folder: Path) -> None:
    renamed = {}  # format 3 key -> format 2 name
    (folder / "messages").mkdir()
    for line in (folder / "messages.jsonl").read_bytes().splitlines():
        stored = json.loads(line)
        data = line[len(b'{"sha256":"') + 64 + len(b'","message":'):-1] + b"\n"
        renamed[stored["sha256"]] = name = hashlib.sha256(data).hexdigest()
        (folder / "messages" / f"{name}.json").write_bytes(data)
    (folder / "calls").mkdir()
    for line in (folder / "calls.jsonl").read_bytes().splitlines():
        record = json.loads(line)
        del record["provider"], record["model"]
        record["header"] = renamed.get(record["header"])
        if "messages" in record:
            record["messages"] = [renamed[d] for d in record["messages"]]
        if record["response"].get("message") is not None:
            record["response"]["message"] = renamed[record["response"]["message"]]
        (folder / "calls" / f"{record['call']:04d}.json").write_bytes(orjson.dumps(record, option=WRITTEN))
    (folder / "calls.jsonl").unlink()
    (folder / "messages.jsonl").unlink()
