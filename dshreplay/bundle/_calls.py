"""A bundle's model calls: each main-loop call's request and response, written by
export in two JSON Lines files per session, read back by `request --bundle`.

    calls.jsonl     one call record per line, in call order (each line starts `{"call":N,`)
    messages.jsonl  every message and request header the calls use (and every tool result
                    transcript.md quotes), once each, in the order first used:
                    `{"sha256":"<hex>","message":<JSON>}`, where <hex> is the SHA-256 of
                    the bytes of <JSON> as they stand in the line (from byte 88 of the
                    line to the byte before its closing `}`)

A call record: `call`, `turn`, `step`, `provider`, `model`, `firstChunkSeq`, `atSeq` (the
seq its messages are as of), `headerSeq` and `header` (the SHA-256 of the request header
in force), `messageCount`, and its request messages as SHA-256s: `messages`, after the
first `messagesFrom.first` messages of call `messagesFrom.call`, or all of them where
`messagesFrom` is null (a call that shares no first message with the call it builds on);
then its `response`. A call builds on the call before it, except a checkpoint (calls 1,
101, 201, ...: call 100m + 1), which builds on checkpoint m - lowbit(m) (m with its
lowest set bit cleared, as in a Fenwick tree): a request is rebuilt from at most 99 +
log2(m) records, and a surface that only grows costs N log N message ids in all, where
listing every 100th request whole (format 3) cost N²/200. A call sent
after the point where the fold fails has `"view": null`, the `reason` and the `failure`
instead of messages. Both files read directly in duckdb (`read_json_auto`), pandas
(`read_json(lines=True)`) and `jq -c`.

Format 2 bundles (read only) held the same records as `calls/NNNN.json` and the
messages as `messages/<sha256>.json` (the SHA-256 of the file's bytes, newline included).
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
from collections import deque
from pathlib import Path
from typing import Any, Iterator, Union

from dshreplay._jsvalues import MISSING, json_bytes, shown, utc_time
from dshreplay.analyses._render import counted, message_text, one_line, role_of
from dshreplay.analyses._surfacelooks import SurfaceLooks
from dshreplay.analyses.trackers.calls import Call, CallTracker
from dshreplay.bundle._jsonread import bundle_lines, parse_bundle_json, read_bundle_json
from dshreplay.bundle._outfolder import create
from dshreplay.console._interface import json_text
from dshreplay.core.driver import Observer, Record, Run
from dshreplay.core.surface import derive_message
from dshreplay.errors import DeriveError, NoViewError, ReadError, UsageError, fails_at
from dshreplay.integrity._chain import is_count, is_sha256
from dshreplay.io.reader import shown_path

CALLS, MESSAGES = "calls.jsonl", "messages.jsonl"
FULL_REQUEST_EVERY = 100  # every 100th call record is a checkpoint (see the module's docstring)
MAX_CHAIN = FULL_REQUEST_EVERY + 64  # records a request may be rebuilt from: 99 in a block, 63 checkpoints
MAX_CALL_VIEWS = 200  # calls whose model view is drawn in report.html (every call is in calls.jsonl)
PREVIEW = 160

_KEY, _VALUE = b'{"sha256":"', b'","message":'
MESSAGE_AT = len(_KEY) + 64 + len(_VALUE)  # where a line of messages.jsonl holds the stored bytes
_CALL_LINE = re.compile(rb'\{"call":(0|[1-9][0-9]{0,17}),')


def checkpoint_base(call: int) -> int | None:
    """The call a checkpoint builds on (call 100m + 1 builds on checkpoint m - lowbit(m)); None
    for call 1 and for a call that is no checkpoint."""
    m, rest = divmod(call - 1, FULL_REQUEST_EVERY)
    return None if rest or m == 0 else (m & (m - 1)) * FULL_REQUEST_EVERY + 1


def _checkpoint_chain(call: int) -> set[int]:
    """The checkpoints a request of `call` may build on, beyond the 100 calls before it."""
    out, base = set(), checkpoint_base(call - (call - 1) % FULL_REQUEST_EVERY)
    while base is not None:
        out.add(base)
        base = checkpoint_base(base)
    return out


# -- writing ---------------------------------------------------------------------------------

class MessageStore:
    """messages.jsonl: values stored once each, keyed by the SHA-256 of their stored bytes."""

    def __init__(self, path: Path) -> None:
        self.fh = create(path)
        self.known: set[str] = set()

    def put(self, value: Any) -> str:  # (a JSON value of the log)
        data = json_text(value).encode()
        digest = hashlib.sha256(data).hexdigest()
        if digest not in self.known:
            self.known.add(digest)
            self.fh.write(b"".join((_KEY, digest.encode(), _VALUE, data, b"}\n")))
        return digest

    def close(self) -> None:
        self.fh.close()


class CallRecords(Observer):
    """calls.jsonl and messages.jsonl of a session: one record per main-loop call, its request
    (the header and the ids of its messages in the store) and its response (the assistant
    message, finish, error code, usage, chunk times). A record is complete once the call is
    answered (or at the end); records are written in call order as soon as every call before
    them is, so only those waiting for an earlier one are held, as bytes."""

    requires = (CallTracker,)
    types = frozenset({"assistant/chunk", "assistant/message"})

    def __init__(self, folder: Path, store: MessageStore, failure: dict[str, Any] | None = None) -> None:
        self.folder, self.store = folder, store  # (the store is the session's: the transcript stores in it too)
        self.failure = failure  # where the fold fails: calls sent after it get no model view

    def begin(self, run: Run) -> None:
        self.calls = run.get(CallTracker)
        self.fh = create(self.folder / CALLS)
        self.order: deque[int] = deque()  # call numbers in the order their records are written
        self.done: dict[int, bytes] = {}  # call number -> its complete record's line, not yet written
        self.views: list[dict[str, Any]] = []
        self.pending: dict[int, tuple[Call, dict[str, Any]]] = {}  # call number -> (Call, record)
        self.starts: list[tuple[int, int]] = []  # (first chunk seq, call number) of the pending calls, in order
        self.fold = run.fold
        self.digests: dict[int, str | None] = {}  # surface node -> its message's digest (None: no message)
        self.previous: list[str] = []  # the previous call's request message ids
        self.looks = SurfaceLooks(run.fold)  # the surface it was sent, followed from call to call
        self.id_counts = [0]  # how many of those ids the surface's first n nodes gave, n = 0..len(looks.nodes)
        self.replacements = -1  # how many replacements the fold had made then (-1: no request to build on)
        self.checkpoints: dict[int, tuple[list[str], int]] = {}  # checkpoint call -> (its request's ids, the
        # fold's replacements then), for those a later checkpoint may build on
        self.previews: dict[str, tuple[str, str]] = {}  # message id -> (role, preview), for the report's views
        self.header: tuple[Any, str | None] = (None, None)  # the request header last stored, and its id

    def _head(self, number: int, first: int, call: Call, header: Any) -> dict[str, Any]:
        if header is not self.header[0]:  # (a header stays in force for many calls: stored once, hashed once)
            self.header = (header, None if header is None else self.store.put(header))
        return {"call": number, "turn": call.turn, "step": call.step, "provider": None, "model": None,
                "firstChunkSeq": first, "atSeq": first - 1,
                "headerSeq": call.header_seq, "header": self.header[1]}

    def opened(self, call: Call, header: Any) -> None:
        number, first = call.call, call.first_chunk_seq
        assert number is not None and first is not None  # (a main-loop call, opened by its first chunk)
        if self.failure is not None and first - 1 >= self.failure["seq"]:
            self._no_view(number, first, call, header)
            return
        fold = self.fold  # (at the call's first chunk, a log-only event: the surface it was sent)
        for replacement in fold.replacements[max(0, self.replacements):]:
            for seq in replacement.shadowed_seqs:  # (off the surface for good)
                self.digests.pop(seq, None)
        nodes, tail = self.looks.look()  # the previous request's first nodes still there, the nodes after them
        id_counts, digests = self.id_counts, self.digests
        del id_counts[nodes + 1:]
        same = id_counts[nodes]  # the previous request's first ids, still this one's
        added = self._ids(tail)
        for seq in tail:
            id_counts.append(id_counts[-1] + (type(digests[seq]) is str))
        ids = self.previous  # (changed in place, in time for what changed: a stored record holds a copy of it)
        kept = same + _common_prefix(ids[same:], added)
        del ids[same:]
        ids += added
        self.replacements = len(fold.replacements)
        base, shared = number - 1, kept
        checkpoint = number % FULL_REQUEST_EVERY == 1
        if checkpoint:  # builds on an earlier checkpoint (see the module's docstring)
            base, shared = self._checkpoint(number, ids)
        record = {**self._head(number, first, call, header), "messageCount": len(ids),
                  "messagesFrom": None if shared == 0 else {"call": base, "first": shared},
                  "messages": ids[:] if shared == 0 else ids[shared:], "response": {}}
        full = kept == 0 or checkpoint  # (the report's view of a checkpoint shows its whole request)
        self.previous = ids
        self._opened(number, call, record)
        if len(self.views) < MAX_CALL_VIEWS:
            self.views.append({"call": call.call, "turn": call.turn, "step": call.step,
                               "firstChunkSeq": call.first_chunk_seq, "headerSeq": call.header_seq,
                               "header": header, "count": len(ids), "kept": 0 if full else kept,
                               "messages": [self.previews[d] for d in (ids if full else ids[kept:])]})
        if len(self.views) >= MAX_CALL_VIEWS:
            self.previews.clear()

    def _checkpoint(self, number: int, ids: list[str]) -> tuple[int, int]:
        """(the call checkpoint `number` builds on, how many of its first messages it shares);
        keeps this checkpoint's ids for the later ones that may build on it (and only those)."""
        base = checkpoint_base(number)
        kept = 0
        if base is not None and base in self.checkpoints:
            before, replacements = self.checkpoints[base]
            kept = len(before) if replacements == self.replacements else _common_prefix(before, ids)
        self.checkpoints[number] = (ids[:], self.replacements)  # (a copy: `ids` is extended in place)
        keep = {number, *_checkpoint_chain(number + FULL_REQUEST_EVERY)}
        self.checkpoints = {c: v for c, v in self.checkpoints.items() if c in keep}
        return (base if base is not None else 0), kept  # (0: builds on none, as call 1)

    def _ids(self, nodes: list[int]) -> list[str]:
        """The stored messages of surface nodes (a node's message never changes: each is
        encoded, hashed and stored once; a node that yields no message has none)."""
        ids: list[str] = []
        digests, events = self.digests, self.fold.events
        for seq in nodes:
            digest: object = digests.get(seq, MISSING)
            if digest is MISSING:
                try:
                    has, message = derive_message(events[seq])
                except DeriveError:  # the fold keeps it, the request skips it (as `request` does)
                    has, message = False, None
                digest = digests[seq] = self.store.put(message) if has else None
                if digest is not None and len(self.views) < MAX_CALL_VIEWS:
                    self.previews[digest] = (role_of("", message), one_line(message_text(message, False), PREVIEW))
            if type(digest) is str:
                ids.append(digest)
        return ids

    def _no_view(self, number: int, first: int, call: Call, header: Any) -> None:
        """A call sent after the point where the fold fails: its request has no known view."""
        failure = self.failure or {}  # (set: only a call past the failure has no view)
        reason = f"{fails_at(failure)}: no model view past seq {failure['seq'] - 1}"
        record = {**self._head(number, first, call, header), "view": None, "reason": reason, "failure": self.failure,
                  "response": {}}
        self.previous, self.id_counts, self.replacements = [], [0], -1
        self.looks.forget()
        self.checkpoints.clear()  # (a call after the failure has no request to build on)
        self._opened(number, call, record)
        if len(self.views) < MAX_CALL_VIEWS:
            self.views.append({"call": call.call, "turn": call.turn, "step": call.step,
                               "firstChunkSeq": call.first_chunk_seq, "headerSeq": call.header_seq,
                               "header": header, "count": None, "kept": 0, "messages": None, "reason": reason})

    def _opened(self, number: int, call: Call, record: dict[str, Any]) -> None:
        self.pending[number] = (call, record)
        self.starts.append((call.first_chunk_seq or 0, number))  # (opened in the order of their first chunks)
        self.order.append(number)

    def observe(self, record: Record) -> None:
        item: Any = record.item  # (an Event or a PackedRun; the driver's Item on h28f)
        if item.type != "assistant/chunk":
            if item.type == "assistant/message" and item.row is None:
                self._answered(item)
            return
        call = record.call
        if call is not None and call.first_chunk_seq == item.seq:  # this chunk opened a call
            self.opened(call, self.calls.header)

    def _answered(self, item: Any) -> None:  # (an Event)
        """An assistant message answers the first pending call (by number) whose chunks it cites:
        each cited seq is looked up among the pending calls' chunk ranges (calls are numbered by
        their first chunk, so the ranges are in order), never by scanning every pending call."""
        sources = item.record.get("sourceEventSeqs")
        cited = [s for s in sources if type(s) is int] if type(sources) is list else []
        starts, pending, found = self.starts, self.pending, None
        for s in cited:
            at = bisect.bisect_right(starts, (s, float("inf"))) - 1  # the pending call starting at or before s
            if at >= 0:
                number = starts[at][1]
                call = pending[number][0]
                if s <= (call.last_chunk_seq or -1) and (found is None or number < found[1]):
                    found = (at, number)
        if found is None:
            return
        at, number = found
        call, record = pending.pop(number)
        del starts[at]
        data = item.record.get("data")
        message = data.get("message") if type(data) is dict else None
        record["response"].update(messageSeq=item.seq, message=None if message is None else self.store.put(message))
        self._complete(number, call, record)

    def _complete(self, number: int, call: Call, record: dict[str, Any]) -> None:
        response = record["response"]
        record["provider"], record["model"] = call.provider, call.model
        record["response"] = {
            "messageSeq": response.get("messageSeq"), "message": response.get("message"),
            "finish": call.outcome, "errorCode": call.error_code,
            "usage": call.usage, "lastChunkSeq": call.last_chunk_seq,
            "firstChunkTime": utc_time(call.first_chunk_time), "lastChunkTime": utc_time(call.last_chunk_time),
            "timeToFirstChunkMs": call.latency_ms, "durationMs": call.duration_ms}  # (the call tracker's times)
        self.done[number] = json_bytes(record) + b"\n"
        order, done, write = self.order, self.done, self.fh.write
        while order and order[0] in done:
            write(done.pop(order.popleft()))

    def finish(self, run: Run) -> None:
        for number, (call, record) in self.pending.items():  # calls with no assistant message (cut short)
            self._complete(number, call, record)
        self.pending.clear()
        self.starts.clear()
        self.fh.close()


def _common_prefix(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


# -- reading ---------------------------------------------------------------------------------

def request_from_bundle(folder: Path, call: int) -> dict[str, Any]:
    """The request of main-loop call `call` rebuilt from a bundle's session folder:
    what `dshreplay request LOG --call N --json` prints for the (redacted) log.

    Every value read from the bundle is checked before use: a call record or a
    stored message that is not what export writes is a ReadError naming the
    file (and line), the JSON pointer and what was expected (the bundle is damaged).
    Only the records from the last one that can list the whole request up to
    `call` are parsed, and of the messages only the ones the request names."""
    records = _records(folder, call)
    record = records.get(call, needed_by=None)
    ids = _request_ids(records, record)
    stored = records.messages(list(dict.fromkeys(d for d in (record["header"], *ids) if d is not None)))
    response = record["response"]
    return {"call": record["call"], "turn": record["turn"], "step": record["step"],
            "firstChunkSeq": record["firstChunkSeq"], "lastChunkSeq": response["lastChunkSeq"],
            "outcome": response["finish"], "errorCode": response["errorCode"], "usage": response["usage"],
            "atSeq": record["atSeq"], "headerSeq": record["headerSeq"],
            "header": None if record["header"] is None else stored[record["header"]],
            "messages": [stored[d] for d in ids], "tornTail": torn_tail_read(folder)}


SESSION = "session.json"
TORN_TAIL_KEYS = ("line", "offset", "bytes")


def torn_tail_read(folder: Path) -> dict[str, int] | None:
    """The torn tail `request LOG --json` gives for the log of a session folder: the log's
    (session.json's `tornTail`, read by export's pass over the whole log), unless the fold
    fails (`foldError`): the log's passes stop there and never read up to the tail."""
    path = folder / SESSION
    if not os.path.lexists(path) and not os.path.lexists(folder / CALLS):  # (format 2 wrote no session.json)
        return None
    _, session = read_bundle_json(path, SESSION)
    tail = session.get("tornTail", MISSING) if type(session) is dict else MISSING
    failure = session.get("foldError", MISSING) if type(session) is dict else MISSING
    if tail is not None and not (type(tail) is dict and set(tail) == set(TORN_TAIL_KEYS)
                                 and all(is_count(tail[k]) for k in TORN_TAIL_KEYS)):
        raise ReadError(f'/tornTail: expected null or {{"line", "offset", "bytes"}} (counts), got {shown(tail, 60)} '
                        "(the bundle is damaged)", path=shown_path(path))
    if failure is not None and type(failure) is not dict:
        raise ReadError(f"/foldError: expected null or where the fold fails (an object), got {shown(failure, 60)} "
                        "(the bundle is damaged)", path=shown_path(path))
    return None if tail is None or failure is not None else {k: tail[k] for k in TORN_TAIL_KEYS}


LISTED = ("call", "turn", "step", "firstChunkSeq", "lastChunkSeq", "provider", "model", "outcome", "errorCode",
          "usage", "messageCount")


def calls_from_bundle(folder: Path) -> list[dict[str, Any]]:
    """Every main-loop call of a bundle's session folder, as `request LOG --list --json` lists
    it (without the finish reason's object): each record checked as `request_from_bundle` does.
    A call sent after the point where the fold fails is listed too, its `messageCount` null
    (the log's listing stops at that point and says where)."""
    listed = []
    for record in _records(folder, None).every():
        response = record["response"]
        facts = {**record, "lastChunkSeq": response["lastChunkSeq"], "outcome": response["finish"],
                 "errorCode": response["errorCode"], "usage": response["usage"]}
        listed.append({key: facts.get(key) for key in LISTED})
    return listed


def _records(folder: Path, call: int | None) -> _Records:
    """The call records of `folder` in the format its bundle has (3: calls.jsonl; 2: calls/)."""
    if os.path.lexists(folder / CALLS):
        return _JsonLines(folder, call)
    if os.path.lexists(folder / "calls"):
        return _Files(folder)
    raise UsageError(f"{shown_path(folder)} holds no {CALLS}: not a session folder of an export bundle")


class _JsonLines:
    """Formats 3 and 4: the lines of calls.jsonl that a request may need (the FULL_REQUEST_EVERY
    calls before it, and the checkpoints it may build on), found by the call number each line
    starts with; messages.jsonl scanned once for the messages wanted."""

    def __init__(self, folder: Path, call: int | None) -> None:
        self.folder, self.path = folder, folder / CALLS
        self.chain_path = shown_path(self.path)
        self.lines: dict[int, tuple[int, bytes]] = {}  # call -> (line number, bytes)
        if call is not None:
            low, checkpoints = call - FULL_REQUEST_EVERY, _checkpoint_chain(call)
            for number, line in bundle_lines(self.path, CALLS):
                found = _CALL_LINE.match(line)  # (export writes the number first: the line is not parsed)
                n = int(found.group(1)) if found is not None else self._parse(number, line, None)["call"]
                if n > call:
                    break
                if n >= low or n in checkpoints:
                    self.lines.setdefault(n, (number, line))

    def _parse(self, number: int, line: bytes, call: int | None) -> dict[str, Any]:
        record = parse_bundle_json(line, f"the record of call {call}" if call is not None else "a call record",
                                   shown_path(self.path), number)
        return _checked(record, call, "the number its line starts with", shown_path(self.path), number)

    def get(self, call: int, needed_by: int | None) -> dict[str, Any]:
        found = self.lines.get(call)
        if found is None:
            if needed_by is None:
                raise UsageError(f"there is no call {call} in {shown_path(self.folder)}")
            raise ReadError(f"call {needed_by} builds on call {call}, which is not in the bundle (the bundle is "
                            "damaged)", path=shown_path(self.path))
        return _usable(self._parse(*found, call), call, needed_by, shown_path(self.folder),
                       shown_path(self.path), found[0])

    def where(self, call: int) -> tuple[str, int | None]:
        return shown_path(self.path), self.lines[call][0]

    def every(self) -> Iterator[dict[str, Any]]:
        for number, line in bundle_lines(self.path, CALLS):
            yield self._parse(number, line, None)

    def messages(self, wanted: list[str]) -> dict[str, Any]:
        """The stored messages `wanted` (SHA-256s, each once), each checked against its key."""
        path, found, wanted_once = self.folder / MESSAGES, {}, dict.fromkeys(wanted)
        where = shown_path(path)
        if wanted_once:
            for number, line in bundle_lines(path, MESSAGES):
                if not (line.startswith(_KEY) and line[MESSAGE_AT - len(_VALUE):MESSAGE_AT] == _VALUE
                        and line.endswith(b"}") and is_sha256(line[len(_KEY):len(_KEY) + 64].decode("latin-1"))):
                    raise ReadError('expected a stored message, {"sha256":"<hex>","message":<JSON>} (the bundle '
                                    "is damaged)", path=where, line=number)
                digest = line[len(_KEY):len(_KEY) + 64].decode()
                if digest not in wanted_once or digest in found:
                    continue
                data = line[MESSAGE_AT:-1]
                if hashlib.sha256(data).hexdigest() != digest:
                    raise ReadError("the stored message's bytes do not hash to its key (the bundle is damaged)",
                                    path=where, line=number)
                found[digest] = parse_bundle_json(data, "a stored message", where, number)
                if len(found) == len(wanted_once):
                    break
        missing = [d for d in wanted_once if d not in found]
        if missing:
            raise ReadError(f"the request names the stored message {missing[0]}, which is not in {MESSAGES} (the "
                            "bundle is damaged)", path=where)
        return found


class _Files:
    """Format 2: calls/NNNN.json and messages/<sha256>.json."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.chain_path = shown_path(folder / "calls")

    def _path(self, call: int) -> Path:
        return self.folder / "calls" / f"{call:04d}.json"

    def get(self, call: int, needed_by: int | None) -> dict[str, Any]:
        path = self._path(call)
        if not os.path.lexists(path):
            if needed_by is None:
                raise UsageError(f"there is no call {call} in {shown_path(self.folder)}")
            raise ReadError(f"call {needed_by} builds on call {call}, which is not in the bundle (the bundle is "
                            "damaged)", path=shown_path(self.folder / "calls"))
        _, record = read_bundle_json(path, f"the record of call {call}")
        record = _checked(record, call, "the number in the file's name", shown_path(path), None)
        return _usable(record, call, needed_by, shown_path(self.folder), shown_path(path), None)

    def where(self, call: int) -> tuple[str, int | None]:
        return shown_path(self._path(call)), None

    def every(self) -> Iterator[dict[str, Any]]:
        folder = self.folder / "calls"
        names = sorted((int(p.stem), p) for p in folder.iterdir() if re.fullmatch(r"[0-9]{4,}\.json", p.name))
        for call, path in names:
            _, record = read_bundle_json(path, f"the record of call {call}")
            yield _checked(record, call, "the number in the file's name", shown_path(path), None)

    def messages(self, wanted: list[str]) -> dict[str, Any]:
        found = {}
        for digest in wanted:
            path = self.folder / "messages" / f"{digest}.json"
            data, value = read_bundle_json(path, "a stored message")
            if hashlib.sha256(data).hexdigest() != digest:
                raise ReadError("the stored message's bytes do not hash to its name (the bundle is damaged)",
                                path=shown_path(path))
            found[digest] = value
        return found


_Records = Union[_JsonLines, _Files]  # (the call records of a format 3 or 4 session folder, or of a format 2 one)


def _request_ids(records: _Records, record: dict[str, Any]) -> list[str]:
    """A call record's request message ids: its `messages`, after the first
    `messagesFrom.first` ids of the call it names (a record repeats no more
    than it must; see the module's docstring for the calls it may build on)."""
    chain = [record]
    while chain[-1]["messagesFrom"] is not None:
        if len(chain) > MAX_CHAIN:
            raise ReadError(f"call {record['call']} builds on more than {MAX_CHAIN} calls (export writes chains of "
                            f"at most {FULL_REQUEST_EVERY - 1} calls and the checkpoints before them): the bundle is "
                            "damaged", path=records.chain_path)
        chain.append(records.get(chain[-1]["messagesFrom"]["call"], needed_by=chain[-1]["call"]))
    ids = chain[-1]["messages"]
    for link in reversed(chain[:-1]):
        base = link["messagesFrom"]
        if base["first"] > len(ids):
            path, line = records.where(link["call"])
            raise ReadError(f"expected at most the {counted(len(ids), 'message')} of call {base['call']}, got "
                            f"{base['first']} (the bundle is damaged)", path=path, line=line,
                            pointer="/messagesFrom/first")
        ids = ids[:base["first"]] + link["messages"]
    return list(ids)


def _checked(record: Any, call: int | None, named: str, where: str, line: int | None) -> dict[str, Any]:
    """A call record with every value the readers use checked (`call`: the number it must
    have, `named` where that number comes from; None: any). A record without a view has
    its failure checked instead of its messages."""
    def expect(pointer: str, value: object, ok: bool, expected: str) -> None:
        if not ok:
            got = "nothing" if value is MISSING else shown(value, 60)
            raise ReadError(f"expected {expected}, got {got} (the bundle is damaged)", path=where, line=line,
                            pointer=pointer)
    expect("", record, type(record) is dict, "a call record (a JSON object)")
    number = record.get("call", MISSING)
    if call is None:
        expect("/call", number, type(number) is int and number > 0, "a call number")
        call = number
    expect("/call", number, type(number) is int and number == call, f"{call}, {named}")
    if "view" in record and record["view"] is None:  # a call sent after the point where the fold fails
        failure = record.get("failure", MISSING)
        expect("/failure", failure, type(failure) is dict, "the failure that leaves the call without a view")
    for key in ("turn", "step"):
        expect(f"/{key}", MISSING, key in record, f"the call's {key}")
    for key in ("firstChunkSeq", "atSeq"):
        expect(f"/{key}", record.get(key, MISSING), type(record.get(key)) is int, "a seq")
    response = record.get("response", MISSING)
    expect("/response", response, type(response) is dict, "the call's response (an object)")
    for key in ("finish", "errorCode", "usage"):
        expect(f"/response/{key}", MISSING, key in response, f"the response's {key}")
    last = response.get("lastChunkSeq", MISSING)
    expect("/response/lastChunkSeq", last, last is None or type(last) is int, "a seq or null")
    header_seq, header = record.get("headerSeq", MISSING), record.get("header", MISSING)
    expect("/headerSeq", header_seq, header_seq is None or type(header_seq) is int, "a seq or null")
    expect("/header", header, header is None or is_sha256(header), "null or a stored message's SHA-256")
    if "view" in record and record["view"] is None:
        return dict(record)
    messages = record.get("messages", MISSING)
    expect("/messages", messages, type(messages) is list and all(is_sha256(d) for d in messages),
           "an array of stored messages' SHA-256")
    base = record.get("messagesFrom", MISSING)
    expect("/messagesFrom", base, base is None or type(base) is dict, "null or {call, first}")
    if base is not None:
        earlier, first = base.get("call", MISSING), base.get("first", MISSING)
        expect("/messagesFrom/call", earlier, type(earlier) is int and 0 < earlier < call,
               f"an earlier call (1 to {call - 1})")
        expect("/messagesFrom/first", first, is_count(first), "a message count")
    return dict(record)


def _usable(record: dict[str, Any], call: int, needed_by: int | None, folder: str, where: str,
            line: int | None) -> dict[str, Any]:
    """A checked record a request can be built from: one without a view is a NoViewError (the
    call asked for) or a damaged bundle (a call that builds on it)."""
    if "view" in record and record["view"] is None:
        if needed_by is not None:
            raise ReadError(f"call {needed_by} builds on call {call}, which has no model view (the bundle is damaged)",
                            path=where, line=line, pointer="/view")
        raise NoViewError(f"call {call} has no model view in the bundle", record["failure"], path=folder)
    return record
