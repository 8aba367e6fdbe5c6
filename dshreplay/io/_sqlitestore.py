"""dsh's SQLite session store (schema 17) read as logs, strictly read-only.

A store keeps every session of a host in one database file: a `sessions` row per
session (the header's fields as columns) and an `events` row per event or per packed
chunk run. One session's rows are turned into the text of its log in dsh's runtime
layout (the header line, then one line per row: a packed row as a `*-chunks` row with
`seq0`/`time0`), which the one reader reads as any log; so the fold, the analyses and
every surface are those of a log. Line N+1 of that text is the session's row N (the
header is line 1).

Rows are decoded exactly as dsh's read path does (`decodeEventRow`, `decodeRow`,
`scanRows`): `data` is JSON text, or a zstd frame stored as a BLOB (inflated under the
--max-line ceiling; a packed row's under dsh's 1 MiB); `surface_op` is JSON text;
`source_event_seqs` a varint list (`io.varint`); `ignorable = 0` marks a packed row.
A row that cannot be decoded, or that breaks the seqs' contiguity, makes the session
unloadable when it is at or before the last row holding a `turn/end` (a ReadError naming
the store, the session, the seq and the column); after it, it starts a torn tail (the
text ends in a line cut short that says so, and the reader reports it as any torn tail).

The database is opened with `mode=ro&immutable=1`: SQLite neither writes to it nor
creates `-wal`/`-shm` files beside it, and `query_only` is set besides.
"""

from __future__ import annotations

import os
import re
import sqlite3
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import quote

import orjson

from dshreplay.errors import LineError, ReadError, UsageError
from dshreplay.io._varint import VarintError, decode_seqs
from dshreplay.options import Options

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "Store", "StoreSession"]

APPLICATION_ID = 0x44534850  # "DSHP"
SCHEMA_VERSION = 17
PACKED = 0  # `ignorable` of a packed row
ROW_TAGS = frozenset({b"text-chunks", b"reasoning-chunks", b"tool-call-chunks"})
MIN_MEMBERS, MAX_MEMBERS = 3, 1024
MAX_PACKED_BYTES = 1 << 20
_SAFE = 2**53 - 1
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.IGNORECASE)
COLUMNS = {
    "persistence_state": ("singleton", "store_id"),
    "sessions": ("id", "version", "created_at", "cwd", "parent_session", "seed_length", "origin",
                 "delegation_depth", "agent_preset", "incarnation", "revision"),
    "events": ("session_id", "seq", "type", "time", "data", "source_event_seqs", "surface_op", "ignorable"),
}
_HEADER = (("version", "version"), ("id", "id"), ("createdAt", "created_at"), ("cwd", "cwd"),
           ("parentSession", "parent_session"), ("seedLength", "seed_length"), ("origin", "origin"),
           ("delegationDepth", "delegation_depth"), ("agentPreset", "agent_preset"))
_EVENTS = ("SELECT seq, type, time, data, typeof(data), source_event_seqs, typeof(source_event_seqs), surface_op, "
           "ignorable FROM events WHERE session_id = ? ORDER BY seq")


class _RowError(Exception):
    """Why one row cannot be decoded, and in which column."""

    def __init__(self, column: str, why: str) -> None:
        super().__init__(why)
        self.column = column
        self.why = why


@dataclass(frozen=True)
class StoreSession:
    """One session's text as a log, and what pins it: its id, `revision` (+1 per append or
    repair) and `incarnation`, the rows read and the seq a torn tail starts at (or None)."""

    id: str
    text: bytes
    revision: int
    incarnation: str
    rows: int
    torn_from: int | None


class Store:
    """One store, opened read-only and immutable; its identity checked as dsh checks it
    (application id, `user_version` 17, the three tables and their columns)."""

    def __init__(self, path: str, shown: str) -> None:
        self.path = path
        self.shown = shown
        uri = "file:" + quote(os.path.abspath(path)) + "?mode=ro&immutable=1"
        try:
            self.db = sqlite3.connect(uri, uri=True, check_same_thread=False)
        except sqlite3.Error as exc:
            raise ReadError(f"cannot open the SQLite store: {exc}", path=shown) from None
        self.db.text_factory = bytes
        try:
            self.db.execute("PRAGMA query_only = 1")
            self._check_identity()
        except sqlite3.Error as exc:
            self.db.close()
            raise ReadError(f"cannot read the SQLite store: {exc}", path=shown) from None
        except BaseException:
            self.db.close()
            raise

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_identity(self) -> None:
        application_id = self.db.execute("PRAGMA application_id").fetchone()[0]
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if application_id != APPLICATION_ID:
            raise ReadError(f"not a dsh session store: application id {application_id}, expected {APPLICATION_ID} "
                            "(dsh's \"DSHP\")", path=self.shown)
        if version != SCHEMA_VERSION:
            raise ReadError(f"dsh session store of schema version {version}: dshreplay reads schema "
                            f"{SCHEMA_VERSION}, as dsh does (no migration)", path=self.shown)
        for table, columns in COLUMNS.items():
            found = tuple(r[1].decode("utf-8", "replace") if type(r[1]) is bytes else r[1]
                          for r in self.db.execute(f"PRAGMA table_info({table})"))
            if found != columns:
                raise ReadError(f"the store's {table} table has columns ({', '.join(found) or 'none'}), "
                                f"dsh's schema 17 has ({', '.join(columns)})", path=self.shown)

    def session_ids(self) -> list[str]:
        """Every session the store holds (a `sessions` row each), sorted."""
        try:
            ids = [_text(r[0], "sessions.id") for r in self.db.execute("SELECT id FROM sessions ORDER BY id")]
        except (sqlite3.Error, _RowError) as exc:
            raise ReadError(f"cannot list the store's sessions: {exc}", path=self.shown) from None
        return ids

    def session(self, session_id: str, options: Options, expand_row: Callable[..., Any]) -> StoreSession:
        """The session's text as a log (ReadError when dsh could not load it either); `expand_row`
        is the reader's one check of a packed row."""
        shown = f"{self.shown}#{session_id}"
        try:
            row = self.db.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None:
                orphan = self.db.execute("SELECT 1 FROM events WHERE session_id = ? LIMIT 1",
                                         (session_id,)).fetchone()
                known = self.session_ids()
                why = ("its events rows have no sessions row, so dsh does not see it" if orphan else
                       "the store holds " + (", ".join(known) if len(known) <= 20 else f"{len(known)} sessions"))
                raise ReadError(f"no session {session_id!r} in the store: {why}", path=shown)
            header, revision, incarnation = _header(dict(zip(COLUMNS["sessions"], row)), shown)
            lines = [orjson.dumps(header) + b"\n"]
            size = len(lines[0])
            rows = self.db.execute(_EVENTS, (session_id,)).fetchall()
        except sqlite3.Error as exc:
            raise ReadError(f"cannot read the store: {exc}", path=shown) from None
        torn_from = None
        committed = _last_turn_end(rows, options, expand_row)
        expected = 0
        names: dict[bytes, bytes] = {}  # a type's bytes -> its JSON string (a handful of types per session)
        loads, decode_error = orjson.loads, orjson.JSONDecodeError
        for index, raw in enumerate(rows):
            seq, kind, time, data, data_type, sources, _, surface, ignorable = raw
            if ignorable is None and data_type == b"text" and seq == expected and kind in names \
                    and type(time) is int and -_SAFE <= time <= _SAFE:
                try:  # (the common row, checked as _line checks it: a type seen before, JSON text)
                    loads(data)
                    tail = _TAIL if sources is None and surface is None else _surface_tail(raw)
                except (decode_error, _RowError):
                    pass  # (_line says why)
                else:
                    line = b'{"type":%s,"seq":%d,"time":%d,"data":%s%s' % (names[kind], seq, time, data, tail)
                    size += len(line)
                    lines.append(line)
                    expected += 1
                    continue
            try:
                line, count = _line(raw, options, expand_row)
                if ignorable is None:
                    names.setdefault(kind, orjson.dumps(kind.decode()))
                if seq != expected:
                    raise _RowError("events.seq", f"seq {expected} is missing (this row starts at seq {seq})")
            except _RowError as exc:
                if index <= committed:
                    raise ReadError(f"corrupt session log: invalid committed physical row at seq {seq}: {exc.why}",
                                    path=shown, seq=seq, pointer=exc.column) from None
                torn_from = seq
                lines.append(f"torn tail: the rows from seq {seq} on cannot be read ({exc.column}: {exc.why})"
                             .encode())
                break
            size += len(line)
            if size > options.max_bytes:
                raise _too_big(options, shown, seq)
            lines.append(line)
            expected += count
        if size > options.max_bytes:  # (the common rows are counted, and checked here)
            raise _too_big(options, shown, None)
        return StoreSession(session_id, b"".join(lines), revision, incarnation, len(rows), torn_from)


def _too_big(options: Options, shown: str, seq: int | None) -> ReadError:
    return ReadError(f"the session's text exceeds the {options.max_bytes}-byte ceiling (a log that needs a larger "
                     "--max-bytes)", path=shown, seq=seq)


def _text(value: Any, column: str) -> str:
    if type(value) is not bytes:
        raise _RowError(column, f"must be text, got {type(value).__name__}")
    try:
        return value.decode()
    except UnicodeDecodeError as exc:
        raise _RowError(column, f"is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None


def _header(row: dict[str, Any], shown: str) -> tuple[dict[str, Any], int, str]:
    """The session's header line, as dsh's `rowToMeta` gives it (NULL columns absent), after
    dsh's `decodeSessionRow` checks."""
    try:
        values = {k: _text(v, f"sessions.{k}") if type(v) is bytes else v for k, v in row.items() if v is not None}
    except _RowError as exc:
        raise ReadError(f"stored session row: {exc.column} {exc.why}", path=shown, pointer=exc.column) from None
    cwd, origin, incarnation = values.get("cwd"), values.get("origin"), values.get("incarnation")
    for column, wrong, rule in (("cwd", cwd is not None and not cwd.startswith("/"), "must be absolute"),
                                ("origin", origin is not None and origin != "subagent", "must be subagent or null"),
                                ("incarnation", type(incarnation) is not str or not _UUID.fullmatch(incarnation),
                                 "must be a UUID")):
        if wrong:
            raise ReadError(f"stored session {column} {rule} (dsh refuses the row), got {values.get(column)!r}",
                            path=shown, pointer=f"sessions.{column}")
    header: dict[str, Any] = {"type": "session"}
    header.update((key, values[column]) for key, column in _HEADER if column in values)
    return header, int(values.get("revision", 0)), str(values["incarnation"])


def _last_turn_end(rows: list[Any], options: Options, expand_row: Callable[..., Any]) -> int:
    """The index of the last row that decodes and holds a `turn/end` (-1: none); a packed row
    holds only chunks, so only scalar `turn/end` rows are decoded."""
    for index in range(len(rows) - 1, -1, -1):
        raw = rows[index]
        if raw[1] == b"turn/end" and raw[8] != PACKED:
            try:
                _line(raw, options, expand_row)
            except _RowError:
                continue
            return index
    return -1


def _line(raw: Any, options: Options, expand_row: Callable[..., Any]) -> tuple[bytes, int]:
    """One row as a line of the log and the events it holds; _RowError when dsh's
    `decodeEventRow`/`decodeRow` would refuse it."""
    seq, kind, time, data, data_type, sources, sources_type, surface, ignorable = raw
    name = _text(kind, "events.type")
    if not name:
        raise _RowError("events.type", "must not be empty")
    if seq < 0:
        raise _RowError("events.seq", "must be non-negative")
    if type(time) is not int or abs(time) > 2**53 - 1:
        raise _RowError("events.time", "must be a safe integer")
    if ignorable == PACKED:
        if kind not in ROW_TAGS:
            raise _RowError("events.type", f"malformed {name} storage row: packed discriminator requires a chunk tag")
        if sources is not None or surface is not None:
            raise _RowError("events.surface_op" if surface is not None else "events.source_event_seqs",
                            f"malformed {name} storage row: packed surface fields must be null")
        text = _data(data, data_type, min(MAX_PACKED_BYTES, options.max_line), packed=True)
        if len(text) > MAX_PACKED_BYTES:
            raise _RowError("events.data", f"malformed {name} storage row: data exceeds {MAX_PACKED_BYTES} UTF-8 bytes")
        body = _json(text, "events.data")
        line = b'{"type":"%s","seq0":%d,"time0":%d,"data":%s}\n' % (kind, seq, time, text)
        return line, _members(name, body, seq, time, expand_row)
    text = _data(data, data_type, options.max_line, packed=False)
    _json(text, "events.data")
    head = b'{"type":%s,"seq":%d,"time":%d,"data":%s' % (orjson.dumps(name), seq, time, text)
    return head + _surface_tail(raw), 1


_TAIL = b"}\n"  # the end of a row's line with neither surface field nor ignorable


def _surface_tail(raw: Any) -> bytes:
    """The end of a scalar row's line after its data: its sourceEventSeqs, surfaceOp and ignorable,
    checked as dsh's `decodeEventRow` checks them."""
    sources, sources_type, surface, ignorable = raw[5], raw[6], raw[7], raw[8]
    parts = []
    if sources_type != b"null":
        if sources_type != b"blob":
            raise _RowError("events.source_event_seqs", "stored source_event_seqs must be a blob or null")
        try:
            parts += [b',"sourceEventSeqs":', orjson.dumps(decode_seqs(sources))]
        except VarintError as exc:
            raise _RowError("events.source_event_seqs",
                            f"malformed source_event_seqs storage value: {exc.why} at byte {exc.offset}") from None
    if surface is not None:
        _json(surface, "events.surface_op")
        parts += [b',"surfaceOp":', surface]
    if ignorable == 1:
        parts.append(b',"ignorable":true')
    parts.append(_TAIL)
    return b"".join(parts)


def _members(name: str, body: Any, seq: int, time: int, expand_row: Callable[..., Any]) -> int:
    """How many events a packed row holds, after the one check of a packed row (the reader's),
    and the member bounds dsh's SQLite codec adds."""
    try:
        run = expand_row({"type": name, "seq0": seq, "time0": time, "data": body}, name, seq, 0, "")
    except LineError as exc:
        raise _RowError("events.data", exc.message) from None
    if not MIN_MEMBERS <= run.count <= MAX_MEMBERS:
        key = "args" if name == "tool-call-chunks" else "texts"
        raise _RowError("events.data", f"malformed {name} storage row: {key} must contain "
                                       f"{MIN_MEMBERS}..{MAX_MEMBERS} strings")
    return int(run.count)


def _data(data: Any, data_type: bytes, limit: int, *, packed: bool) -> bytes:
    """A `data` column's JSON text: TEXT as it is, a BLOB inflated (a zstd frame, at most
    `limit` bytes), then strict UTF-8."""
    if data_type == b"text":
        text: bytes = data
    elif data_type == b"blob":
        text = _inflate(data, limit, packed)
    else:
        raise _RowError("events.data", f"stored data must be a string or blob, got {data_type.decode()}")
    try:
        text.decode()
    except UnicodeDecodeError as exc:
        raise _RowError("events.data", f"is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    return text


def _inflate(blob: bytes, limit: int, packed: bool) -> bytes:
    import zstandard

    if blob[:4] != b"\x28\xb5\x2f\xfd":
        raise _RowError("events.data", "BLOB is not a zstd frame")
    try:
        size = zstandard.frame_content_size(blob)
    except zstandard.ZstdError as exc:
        raise _RowError("events.data", f"corrupt zstd frame: {exc}") from None
    if size > limit:
        if packed:
            raise _RowError("events.data", f"zstd frame holds {size} bytes, over the {limit}-byte bound"
                                           " of a packed row")
        raise _RowError("events.data", f"zstd frame holds {size} bytes, over the {limit}-byte --max-line ceiling")
    try:
        if size < 0:
            return bytes(zstandard.ZstdDecompressor().decompress(blob, max_output_size=limit))
        inflater = zstandard.ZstdDecompressor().decompressobj()
        text = inflater.decompress(blob)
    except zstandard.ZstdError as exc:
        raise _RowError("events.data", f"corrupt zstd frame: {exc}") from None
    if not inflater.eof or inflater.unused_data or len(text) != size:
        raise _RowError("events.data", "corrupt zstd frame: cut short, or followed by other bytes")
    return bytes(text)


def _json(text: bytes, column: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise _RowError(column, f"is not valid JSON: {str(exc).split(': line')[0]}") from None


def session_choice(ids: list[str], shown: str) -> str:
    """The only session of a store, for a command that reads one; a UsageError listing the ids otherwise."""
    if len(ids) == 1:
        return ids[0]
    if not ids:
        raise UsageError(f"{shown} holds no session", path=None)
    listed = ", ".join(ids[:20]) + (f", ... ({len(ids)} in all)" if len(ids) > 20 else "")
    raise UsageError(f"{shown} holds {len(ids)} sessions: name one as {shown}#SESSION_ID ({listed})")
