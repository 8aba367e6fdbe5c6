"""Write dsh SQLite session stores (schema 17) from logs, as dsh's backend writes them.

For tests and the benchmark: the schema, identity pragmas and WAL mode of dsh's store,
chunk runs packed into `*-chunks` rows (3..1,024 members, at most 1 MiB of JSON, never
across an append of `batch` events), `data` as JSON text below 4,096 bytes and a zstd
frame (level 3, content size, no checksum) at or above it when smaller, and
`source_event_seqs` as dsh's varint list. Not dsh's code: dsh's own stores (the
corpus) are what the reader is proved on; these let tests make any store they need.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from typing import Any, Iterable

import orjson

from dshreplay.io._varint import encode_seqs

__all__ = ["SCHEMA", "write_store", "create_store"]

SCHEMA = """
CREATE TABLE persistence_state (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  store_id  TEXT NOT NULL
) STRICT;
CREATE TABLE sessions (
  id               TEXT PRIMARY KEY,
  version          INTEGER NOT NULL,
  created_at       INTEGER NOT NULL,
  cwd              TEXT,
  parent_session   TEXT,
  seed_length      INTEGER,
  origin           TEXT,
  delegation_depth INTEGER,
  agent_preset     TEXT,
  incarnation      TEXT NOT NULL,
  revision         INTEGER NOT NULL
) STRICT;
CREATE TABLE events (
  session_id        TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq               INTEGER NOT NULL,
  type              TEXT NOT NULL,
  time              INTEGER NOT NULL,
  data              ANY NOT NULL,
  source_event_seqs ANY,
  surface_op        TEXT,
  ignorable         INTEGER CHECK (ignorable IS NULL OR ignorable IN (0, 1)),
  PRIMARY KEY (session_id, seq)
) STRICT;
"""
_TAGS = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks", "tool-call-delta": "tool-call-chunks"}
_HEADER = (("id", "id"), ("version", "version"), ("created_at", "createdAt"), ("cwd", "cwd"),
           ("parent_session", "parentSession"), ("seed_length", "seedLength"), ("origin", "origin"),
           ("delegation_depth", "delegationDepth"), ("agent_preset", "agentPreset"))
MAX_MEMBERS, MAX_BYTES = 1024, 1 << 20


def create_store(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """An empty store as dsh creates one (identity, schema, WAL)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(f"PRAGMA application_id = {0x44534850}")
    db.execute("PRAGMA user_version = 17")
    db.executescript(SCHEMA)
    db.execute("INSERT INTO persistence_state VALUES (1, ?)", (str(uuid.uuid4()),))
    return db


def write_store(path: str | os.PathLike[str], sessions: Iterable[tuple[dict[str, Any], list[dict[str, Any]]]],
                *, batch: int | None = None) -> None:
    """Store each (header, runtime-layout events) session, one append per `batch` events
    (None: one append per session)."""
    db = create_store(path)
    for header, events in sessions:
        db.execute("BEGIN")
        db.execute("INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                   (*(header.get(key) for _, key in _HEADER), str(uuid.uuid4()), 1))
        step = batch or max(len(events), 1)
        for start in range(0, len(events), step):
            for row in _rows(events[start:start + step]):
                db.execute("INSERT INTO events VALUES (?,?,?,?,?,?,?,?)", (header["id"], *row))
        db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def _rows(events: list[dict[str, Any]]) -> Iterable[tuple[Any, ...]]:
    run: list[dict[str, Any]] = []
    for event in events:
        kind = _delta(event)
        if kind is not None and run and _continues(run[-1], event, kind):
            run.append(event)
            continue
        yield from _flush(run)
        run = [event] if kind is not None else []
        if kind is None:
            yield _scalar(event)
    yield from _flush(run)


def _delta(event: dict[str, Any]) -> str | None:
    if event.get("type") != "assistant/chunk" or event.keys() != {"type", "seq", "time", "data"}:
        return None
    chunk = event["data"].get("chunk", {}) if type(event["data"]) is dict else {}
    kind = chunk.get("type")
    if kind in ("text-delta", "reasoning-delta") and chunk.keys() == {"type", "index", "text"}:
        return str(kind)
    if kind == "tool-call-delta" and chunk.keys() in ({"type", "index", "id", "argumentsDelta"},
                                                      {"type", "index", "id", "name", "argumentsDelta"}):
        return "tool-call-delta"
    return None


def _continues(previous: dict[str, Any], event: dict[str, Any], kind: str) -> bool:
    a, b = previous["data"], event["data"]
    if _delta(previous) != kind or event["seq"] != previous["seq"] + 1:
        return False
    if (a["turn"], a["step"], a["chunk"]["index"]) != (b["turn"], b["step"], b["chunk"]["index"]):
        return False
    return kind != "tool-call-delta" or (a["chunk"]["id"], a["chunk"].get("name", ...)) == \
        (b["chunk"]["id"], b["chunk"].get("name", ...))


def _flush(run: list[dict[str, Any]]) -> Iterable[tuple[Any, ...]]:
    offset = 0
    while len(run) - offset >= 3:
        size = min(len(run) - offset, MAX_MEMBERS)
        while size >= 3 and len(_packed(run[offset:offset + size])) > MAX_BYTES:
            size -= 1
        if size < 3:
            yield _scalar(run[offset])
            offset += 1
            continue
        members = run[offset:offset + size]
        first = members[0]
        tag = _TAGS[first["data"]["chunk"]["type"]]
        yield first["seq"], tag, first["time"], _data(_packed(members)), None, None, 0
        offset += size
    for event in run[offset:]:
        yield _scalar(event)


def _packed(members: list[dict[str, Any]]) -> bytes:
    first = members[0]["data"]
    chunk = first["chunk"]
    body: dict[str, Any] = {"turn": first["turn"], "step": first["step"], "index": chunk["index"],
                            "dt": [b["time"] - a["time"] for a, b in zip(members, members[1:])]}
    if chunk["type"] == "tool-call-delta":
        body["id"] = chunk["id"]
        if "name" in chunk:
            body["name"] = chunk["name"]
        body["args"] = [m["data"]["chunk"]["argumentsDelta"] for m in members]
    else:
        body["texts"] = [m["data"]["chunk"]["text"] for m in members]
    return orjson.dumps(body)


def _scalar(event: dict[str, Any]) -> tuple[Any, ...]:
    sources = event.get("sourceEventSeqs")
    op = event.get("surfaceOp")
    return (event["seq"], event["type"], event["time"], _data(orjson.dumps(event["data"])),
            None if sources is None else encode_seqs(sources), None if op is None else orjson.dumps(op).decode(),
            1 if event.get("ignorable") is True else None)


def _data(text: bytes) -> str | bytes:
    if len(text) < 4096:
        return text.decode()
    import zstandard
    frame = zstandard.ZstdCompressor(level=3, write_content_size=True, write_checksum=False).compress(text)
    return frame if len(frame) < len(text) else text.decode()
