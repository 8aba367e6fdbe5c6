"""Build dsh session logs from code: the bundled samples and test fixtures.

`LogBuilder` writes events the way dsh does (turns, steps, streamed chunks,
tool calls, compactions, prunes, tool-result rewrites) and serializes them in
either envelope layout, with packed chunk rows and as zstd frames.

`python -m dshreplay.testing.samples [DIR]` regenerates `sample_logs/`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Sequence

import orjson

from dshreplay.core.surface import SurfaceFold, fold
from dshreplay.errors import FoldError
from dshreplay.io.reader import ROW_TAGS, Event

CREATED_AT = 1783352165190
DELTA_KINDS = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks",
               "tool-call-delta": "tool-call-chunks"}


class LogBuilder:
    """Append dsh events with realistic payloads; serialize in any layout."""

    def __init__(self, session_id: str = "00000000-0000-4000-8000-000000000001", *,
                 created_at: int = CREATED_AT, cwd: str | None = "/home/dev/project",
                 provider: str = "deepseek-official", model: str = "deepseek-v4-flash",
                 **header_extra: Any) -> None:
        self.header: dict[str, Any] = {"type": "session", "version": 0, "id": session_id, "createdAt": created_at}
        if cwd is not None:
            self.header["cwd"] = cwd
        self.header["delegationDepth"] = 0
        self.header.update(header_extra)
        self.events: list[dict[str, Any]] = []
        self.clock = created_at
        self.provider = provider
        self.model = model
        self.turn = 0
        self.step = 0
        self.turn_open = False
        self.step_open = False
        self._ids = 0
        self._fold: SurfaceFold | None = SurfaceFold()  # kept current while every added event folds
        self.base = 0  # seq of events[0]: drain() hands events out and forgets them

    # -- low level -------------------------------------------------------
    @property
    def next_seq(self) -> int:
        return self.base + len(self.events)

    def event(self, seq: int) -> dict[str, Any]:
        return self.events[seq - self.base]

    def add(self, type_: str, data: Any, dt: int = 7, **envelope: Any) -> int:
        """Append one event (envelope extras such as surfaceOp go in `envelope`)."""
        self.clock += dt
        seq = self.next_seq
        event = {"type": type_, "seq": seq, "time": self.clock, "data": data}
        event.update(envelope)
        self.events.append(event)
        if self._fold is not None:
            try:
                self._fold.apply(Event(seq, type_, event, 0))
            except FoldError:
                self._fold = None  # a deliberately broken log: surface() refolds (and raises)
        return seq

    def new_id(self, prefix: str = "id") -> str:
        self._ids += 1
        return f"{prefix}-{self._ids:04d}"

    # -- turns and steps -------------------------------------------------
    def start_turn(self) -> int:
        self.turn += 1
        self.step = 0
        self.turn_open = True
        return self.add("turn/start", {"turn": self.turn})

    def end_turn(self, kind: str = "completed", *, by: str | None = None) -> int:
        """Close the turn (and its open step); `by` says who aborted an `aborted` one (user, parent, ...)."""
        if self.step_open:
            self.end_step()
        self.turn_open = False
        reason = {"kind": kind} if by is None else {"kind": kind, "reason": {"kind": by}}
        return self.add("turn/end", {"turn": self.turn, "reason": reason})

    def start_step(self) -> int:
        self.step += 1
        self.step_open = True
        return self.add("step/start", {"turn": self.turn, "step": self.step})

    def end_step(self) -> int:
        self.step_open = False
        return self.add("step/end", {"turn": self.turn, "step": self.step})

    def resume_after_crash(self) -> tuple[int, int]:
        """What dsh appends when it loads a log that ends inside a turn, then resumes it (FORMAT.md
        sections 8 and 9): an error tool/result for each call of the open step left unanswered
        (TOOL_OUTCOME_UNKNOWN after its tool/call, TOOL_NOT_STARTED when only asked for), step/end,
        turn/end `interrupted`, then session/end-seed. (The seq of the first closer, of the end-seed.)"""
        start = max(i for i, e in enumerate(self.events) if e["type"] == "step/start")
        asked: dict[str, int] = {}
        called: dict[str, int] = {}
        for e in self.events[start:]:
            if e["type"] == "assistant/message":
                for block in e["data"]["message"]["content"]:
                    if block["type"] == "tool-call":
                        asked.setdefault(block["id"], e["seq"])
            elif e["type"] == "tool/call":
                called[e["data"]["callId"]] = e["seq"]
            elif e["type"] == "tool/result":
                call_id = e["data"]["message"]["source"]["callId"]
                asked.pop(call_id, None)
                called.pop(call_id, None)
        first = self.next_seq
        for call_id, cites in asked.items():
            known = call_id in called
            code = "TOOL_OUTCOME_UNKNOWN" if known else "TOOL_NOT_STARTED"
            message = {"id": f"interrupted-tool-result-{call_id}", "role": "user",
                       "source": {"kind": "tool", "callId": call_id},
                       "content": [{"type": "tool-result", "toolCallId": call_id, "isError": True,
                                    "content": [{"type": "text", "text": f"The tool call was interrupted ({code})."}]}]}
            self.add("tool/result", {"turn": self.turn, "step": self.step, "message": message,
                                     "error": {"name": "ToolInterruptedError", "code": code}},
                     sourceEventSeqs=[called.get(call_id, cites)], surfaceOp="append")
        self.end_turn("interrupted")
        return first, self.add("session/end-seed", {})

    def request_header(self, reason: str = "initial", system: str = "You are a coding agent.",
                       tools: list[dict[str, Any]] | None = None) -> int:
        tools = tools if tools is not None else [
            {"name": "bash", "description": "Run a shell command.",
             "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}]
        return self.add("request/header", {
            "header": {"config": {"provider": self.provider, "model": self.model},
                       "system": system, "tools": tools}, "reason": reason})

    # -- messages --------------------------------------------------------
    def user(self, text: str, **source: Any) -> int:
        message = {"content": [{"type": "text", "text": text}],
                   "source": source or {"kind": "user"}, "role": "user", "id": self.new_id("msg")}
        return self.add("user/message", message, surfaceOp="append")

    def assistant(self, text: str = "", *, reasoning: str | None = None,
                  calls: Sequence[tuple[str, str, str | list[str]]] = (), usage: dict[str, Any] | None = None,
                  finish: str | dict[str, Any] | None = None, pieces: int = 4) -> int:
        """Stream one model call (chunks, usage, finish: a kind, or the whole finish reason)
        and log its assistant/message. A call's arguments given as a list are streamed in
        those deltas (else in `pieces` even ones)."""
        chunks: list[int] = []
        blocks = []
        index = 0

        def chunk(body: dict[str, Any]) -> None:
            chunks.append(self.add("assistant/chunk",
                                   {"turn": self.turn, "step": self.step, "chunk": body}, dt=3))

        if reasoning:
            chunk({"type": "block-start", "index": index, "blockType": "reasoning"})
            for piece in _split(reasoning, pieces):
                chunk({"type": "reasoning-delta", "index": index, "text": piece})
            block = {"type": "reasoning", "text": reasoning}
            chunk({"type": "block-end", "index": index, "block": block})
            blocks.append(block)
            index += 1
        if text:
            chunk({"type": "block-start", "index": index, "blockType": "text"})
            for piece in _split(text, pieces):
                chunk({"type": "text-delta", "index": index, "text": piece})
            block = {"type": "text", "text": text}
            chunk({"type": "block-end", "index": index, "block": block})
            blocks.append(block)
            index += 1
        for call_id, name, given in calls:
            deltas = given if isinstance(given, list) else _split(given, pieces)
            arguments = "".join(deltas)
            chunk({"type": "block-start", "index": index, "blockType": "tool-call"})
            for k, piece in enumerate([""] + deltas):
                delta = {"type": "tool-call-delta", "index": index, "id": call_id}
                if k == 0:
                    delta["name"] = name
                delta["argumentsDelta"] = piece
                chunk(delta)
            block = {"type": "tool-call", "id": call_id, "name": name, "arguments": arguments}
            chunk({"type": "block-end", "index": index, "block": block})
            blocks.append(block)
            index += 1
        usage = usage or {"inputTokens": 1200 + 40 * self.next_seq, "outputTokens": 30 + len(text) // 4,
                          "cacheReadTokens": 0, "reasoningTokens": len(reasoning or "") // 4}
        chunk({"type": "usage", "usage": usage})
        reason = finish if type(finish) is dict else {"kind": finish or ("tool-calls" if calls else "stop")}
        chunk({"type": "finish", "reason": reason})
        message = {"role": "assistant", "content": blocks,
                   "source": {"kind": "model", "provider": self.provider, "model": self.model},
                   "id": self.new_id("msg")}
        return self.add("assistant/message",
                        {"turn": self.turn, "step": self.step, "message": message, "usage": usage},
                        sourceEventSeqs=chunks, surfaceOp="append")

    def cancelled(self, text: str, *, message: bool = True, pieces: int = 2) -> int:
        """A model call an abort cuts short: its text streams (no usage, no finish chunk), then,
        with `message`, the `interrupted` assistant message dsh finalizes from that prefix (a
        stream cut before any visible content leaves none). The seq of its last event."""
        chunks = [self.add("assistant/chunk", {"turn": self.turn, "step": self.step, "chunk": body}, dt=3)
                  for body in [{"type": "block-start", "index": 0, "blockType": "text"}]
                  + [{"type": "text-delta", "index": 0, "text": piece} for piece in _split(text, pieces)]]
        if not message:
            return chunks[-1]
        body = {"role": "assistant", "content": [{"type": "text", "text": text}],
                "source": {"kind": "model", "provider": self.provider, "model": self.model}, "id": self.new_id("msg")}
        return self.add("assistant/message", {"turn": self.turn, "step": self.step, "message": body,
                                              "interrupted": True}, sourceEventSeqs=chunks, surfaceOp="append")

    def tool_call(self, call_id: str, name: str, arguments: str) -> int:
        return self.add("tool/call", {"turn": self.turn, "step": self.step, "callId": call_id,
                                      "name": name, "arguments": arguments})

    def tool_result(self, call_id: str, output: str, *, cites: int, is_error: bool = False) -> int:
        message = {"source": {"kind": "tool", "callId": call_id},
                   "content": [{"type": "tool-result", "toolCallId": call_id,
                                "content": [{"type": "text", "text": output}], "isError": is_error}],
                   "role": "user", "id": self.new_id("msg")}
        return self.add("tool/result", {"turn": self.turn, "step": self.step, "message": message},
                        sourceEventSeqs=[cites], surfaceOp="append")

    def approval(self, call_id: str, tool: str, outcome: str | None = "allowed-once",
                 reason: str = "needs approval") -> tuple[int, int | None]:
        """approval/asked for a call (and approval/decided, unless `outcome` is None): their seqs."""
        approval = self.new_id("approval")
        asked = self.add("approval/asked", {"id": approval, "toolName": tool, "callId": call_id, "reason": reason})
        if outcome is None:
            return asked, None
        return asked, self.add("approval/decided", {"id": approval, "outcome": outcome})

    def tool_round(self, name: str, arguments: str, output: str, *, text: str = "",
                   reasoning: str | None = None) -> tuple[int, int]:
        """A model call asking for one tool, the call, and its result."""
        call_id = self.new_id("call")
        self.assistant(text, reasoning=reasoning, calls=[(call_id, name, arguments)])
        call = self.tool_call(call_id, name, arguments)
        return call, self.tool_result(call_id, output, cites=call)

    # -- hooks -----------------------------------------------------------
    def hook_invoked(self, point: str, handler_id: str, *, turn: int | None = None,
                     dialect: str = "claude-code", matcher: str | None = None) -> int:
        """A hook command started at `point` (in the current turn unless `turn` says otherwise)."""
        data = {"turn": self.turn if turn is None else turn, "point": point, "dialect": dialect,
                "handlerId": handler_id}
        if matcher is not None:
            data["matcher"] = matcher
        return self.add("hook/invoked", data)

    def hook_result(self, point: str, handler_id: str, *, turn: int | None = None, decision: str = "pass",
                    exit_code: int | None = 0, duration_ms: float = 4.25) -> int:
        """The outcome of a hook run, paired to its hook/invoked by turn, point and handler id."""
        data = {"turn": self.turn if turn is None else turn, "point": point, "handlerId": handler_id,
                "decision": decision}
        if exit_code is not None:
            data["exitCode"] = exit_code
        data["durationMs"] = duration_ms
        return self.add("hook/result", data)

    # -- replacements ----------------------------------------------------
    def surface(self) -> list[int]:
        """The current surface, computed by dshreplay's own fold."""
        if self._fold is not None and self._fold.next_seq == self.next_seq:
            return list(self._fold.nodes)
        return list(fold(Event(e["seq"], e["type"], e, 0) for e in self.events).nodes)

    def compaction(self, start: int, end: int, summary: str, *, tokens: int = 900,
                   turn: int | None | bool = True, error: str | None = None) -> int:
        """A summarizing compaction bracket replacing surface nodes start..end."""
        nodes = self.surface()
        shadowed = nodes[nodes.index(start):nodes.index(end) + 1]
        cid = self.new_id("compaction")
        owner = self.turn if turn is True else turn
        begin = self.add("compaction/start", {"compactionId": cid, "turn": owner})
        meter = self.add("compaction/summary", {
            "compactionId": cid, "summary": [{"type": "text", "text": summary}],
            "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]}, "shadowedSeqs": shadowed,
            "shadowedTokenCount": tokens, "provider": self.provider, "model": self.model})
        message = {"content": [{"type": "text", "text": "<compacted-summary>\n" + summary
                                + "\n</compacted-summary>"}],
                   "source": {"kind": "plugin", "plugin": "compact", "compactionId": cid},
                   "role": "user", "id": self.new_id("msg")}
        replacer = self.add("user/message", message, sourceEventSeqs=[begin, meter, *shadowed],
                            surfaceOp={"op": "replace", "start": start, "end": end})
        end_data = {"compactionId": cid, "turn": owner}
        if error:
            end_data["error"] = error
        self.add("compaction/end", end_data)
        return replacer

    def prune(self, start: int, end: int, text: str = "[pruned tool output]", *,
              tokens: int = 400) -> int:
        nodes = self.surface()
        shadowed = nodes[nodes.index(start):nodes.index(end) + 1]
        self.add("compaction/prune", {"shadowedRange": {"start": shadowed[0], "end": shadowed[-1]},
                                      "shadowedSeqs": shadowed, "shadowedTokenCount": tokens})
        message = {"content": [{"type": "text", "text": text}],
                   "source": {"kind": "plugin", "plugin": "prune"}, "role": "user",
                   "id": self.new_id("msg")}
        return self.add("user/message", message, sourceEventSeqs=shadowed,
                        surfaceOp={"op": "replace", "start": start, "end": end})

    def rewrite_tool_result(self, seq: int, new_output: str) -> int:
        """Replace one tool/result node with a copy whose first result content changed."""
        original = self.event(seq)
        data = orjson.loads(orjson.dumps(original["data"]))
        data["message"]["content"][0]["content"] = [{"type": "text", "text": new_output}]
        return self.add("tool/result", data, sourceEventSeqs=[seq],
                        surfaceOp={"op": "replace", "start": seq, "end": seq})

    # -- serialization ---------------------------------------------------
    def records(self, *, layout: str = "runtime", pack: bool = False) -> list[dict[str, Any]]:
        """Storage records (header excluded) in the chosen layout."""
        out: list[dict[str, Any]] = []
        events = self.events
        i = 0
        while i < len(events):
            run = _delta_run(events, i) if pack else 1
            if run >= 3:
                out.append(_pack(events[i:i + run], layout))
                i += run
                continue
            event = events[i]
            if layout == "projected":
                event = {k: v for k, v in event.items() if k not in ("seq", "time")}
            out.append(event)
            i += 1
        return out

    def drain(self, *, layout: str = "runtime", pack: bool = False) -> bytes:
        """The lines of the events added since the last drain; then forget them."""
        data = b"".join(orjson.dumps(r) + b"\n" for r in self.records(layout=layout, pack=pack))
        self.base += len(self.events)
        self.events = []
        return data

    def to_bytes(self, *, layout: str = "runtime", pack: bool = False) -> bytes:
        lines = [orjson.dumps(self.header)] + [orjson.dumps(r) for r in self.records(
            layout=layout, pack=pack)]
        return b"\n".join(lines) + b"\n"

    def to_zstd(self, *, layout: str = "runtime", pack: bool = False, batch: int = 7) -> bytes:
        return zstd_frames(self.to_bytes(layout=layout, pack=pack), batch=batch)

    def write(self, path: str | os.PathLike[str], *, layout: str = "runtime", pack: bool = False) -> Path:
        path = Path(path)
        data = self.to_zstd(layout=layout, pack=pack) if path.name.endswith(".zstd") \
            else self.to_bytes(layout=layout, pack=pack)
        path.write_bytes(data)
        return path


def user_record(seq: int, text: str, op: Any = "append", sources: Any = None) -> dict[str, Any]:
    """A bare `user/message` record (runtime layout) for hand-built logs: hostile shapes, growth runs."""
    record: dict[str, Any] = {"type": "user/message", "seq": seq, "time": 1783352166000 + seq,
              "data": {"role": "user", "content": [{"type": "text", "text": text}]}, "surfaceOp": op}
    if sources is not None:
        record["sourceEventSeqs"] = sources
    return record


DAMAGE = ("bad-json", "missing", "duplicate", "swap", "unknown-type")
UNKNOWN_TYPE = "custom/probe"  # the type of unknown-type damage: no dsh writes it


def damaged(b: LogBuilder, kind: str, seq: int) -> bytes:
    """The runtime log of `b` (unpacked: event `seq` on line seq + 2) with one kind of damage
    at event `seq` (see `damage_line`)."""
    return damage_line(b.to_bytes().splitlines(keepends=True), kind, seq + 1)  # (line 0 is the header)


def damage_line(lines: list[bytes], kind: str, at: int) -> bytes:
    """The text of `lines` with one kind of damage at line index `at`: its line is not JSON
    (bad-json), it is left out (missing), written twice (duplicate), swapped with the next
    line (swap), or its record's type is one dsh does not define, without `ignorable` (unknown-type)."""
    lines = list(lines)
    if kind == "bad-json":
        lines[at] = lines[at][:len(lines[at]) // 2] + b"\n"
    elif kind == "missing":
        del lines[at]
    elif kind == "duplicate":
        lines.insert(at, lines[at])
    elif kind == "swap":
        if at + 1 >= len(lines):
            raise ValueError(f"no line after line index {at} to swap it with")
        lines[at], lines[at + 1] = lines[at + 1], lines[at]
    elif kind == "unknown-type":
        lines[at] = orjson.dumps({**orjson.loads(lines[at]), "type": UNKNOWN_TYPE}) + b"\n"
    else:
        raise ValueError(f"damage is one of {DAMAGE}, not {kind!r}")
    return b"".join(lines)


def zstd_frames(text: bytes, *, batch: int = 7) -> bytes:
    """dsh's zstd layout: the header alone in frame 1, then `batch` lines per frame."""
    import zstandard

    cctx = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True)
    lines = text.splitlines(keepends=True)
    frames = [cctx.compress(lines[0])] if lines else []
    for k in range(1, len(lines), batch):
        frames.append(cctx.compress(b"".join(lines[k:k + batch])))
    return b"".join(frames)


def _split(text: str, pieces: int) -> list[str]:
    size = max(1, -(-len(text) // pieces))
    return [text[k:k + size] for k in range(0, len(text), size)] or [""]


def _delta_key(event: dict[str, Any]) -> tuple[Any, ...] | None:
    data: Any = event.get("data")
    chunk = data.get("chunk") if type(data) is dict else None
    if event.get("type") != "assistant/chunk" or type(chunk) is not dict:
        return None
    kind = chunk.get("type")
    if kind not in DELTA_KINDS:
        return None
    return (kind, data["turn"], data["step"], chunk["index"], chunk.get("id"))


def _delta_run(events: list[dict[str, Any]], i: int) -> int:
    key = _delta_key(events[i])
    if key is None:
        return 1
    has_name = "name" in events[i]["data"]["chunk"]
    n = 1
    while i + n < len(events) and _delta_key(events[i + n]) == key \
            and ("name" in events[i + n]["data"]["chunk"]) == has_name:
        n += 1
    return n


def _pack(run: list[dict[str, Any]], layout: str) -> dict[str, Any]:
    first = run[0]
    chunk = first["data"]["chunk"]
    tag = DELTA_KINDS[chunk["type"]]
    assert tag in ROW_TAGS
    data = {"turn": first["data"]["turn"], "step": first["data"]["step"], "index": chunk["index"],
            "dt": [b["time"] - a["time"] for a, b in zip(run, run[1:])]}
    if tag == "tool-call-chunks":
        data["id"] = chunk["id"]
        if "name" in chunk:
            data["name"] = chunk["name"]
        data["args"] = [e["data"]["chunk"]["argumentsDelta"] for e in run]
    else:
        data["texts"] = [e["data"]["chunk"]["text"] for e in run]
    if layout == "projected":
        return {"type": tag, "data": data}
    return {"type": tag, "seq0": first["seq"], "time0": first["time"], "data": data}


# -- the bundled samples --------------------------------------------------

def multi_turn() -> LogBuilder:
    """Two turns with a tool round each: the everyday session."""
    b = LogBuilder("sample-multi-turn")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("List the files in the project and tell me which one is the entry point.")
    b.tool_round("bash", '{"command": "ls"}', "README.md\nmain.py\nutil.py\n",
                 reasoning="I should list the directory first.")
    b.end_step()
    b.start_step()
    b.assistant("The entry point is main.py.")
    b.end_turn()
    b.start_turn()
    b.start_step()
    b.user("Show me the first line of main.py.")
    b.tool_round("bash", '{"command": "head -1 main.py"}', "import sys\n")
    b.end_step()
    b.start_step()
    b.assistant("Its first line is `import sys`.")
    b.end_turn()
    return b


def compacted() -> LogBuilder:
    """A long first turn summarized away by a compaction inside turn 2."""
    b = multi_turn()
    b.header["id"] = "sample-compaction"
    nodes = b.surface()
    b.start_turn()
    b.start_step()
    b.compaction(nodes[0], nodes[4], "The user asked for the entry point; it is main.py.")
    b.user("Now add a --verbose flag to main.py.")
    b.tool_round("bash", '{"command": "grep -n argparse main.py"}', "3:import argparse\n")
    b.end_step()
    b.start_step()
    b.assistant("main.py already uses argparse; I added the flag.")
    b.end_turn()
    return b


def pruned() -> LogBuilder:
    """A model-free prune of a bulky tool result."""
    b = LogBuilder("sample-prune")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("Print the build log.")
    _, result = b.tool_round("bash", '{"command": "cat build.log"}', "compiling...\n" * 40)
    b.end_step()
    b.start_step()
    b.prune(result, result, "[tool output pruned: 40 lines of build log]")
    b.assistant("The build finished without errors.")
    b.end_turn()
    return b


def rewritten() -> LogBuilder:
    """A tool/result whose content is rewritten in place (a content-only replacement)."""
    b = LogBuilder("sample-tool-rewrite")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("Read the secrets file.")
    _, result = b.tool_round("bash", '{"command": "cat .env"}', "API_KEY=sk-live-0123456789\n")
    b.rewrite_tool_result(result, "[redacted by policy]")
    b.end_step()
    b.start_step()
    b.assistant("The file holds one API key, which I will not repeat.")
    b.end_turn()
    return b


def fork(parent: LogBuilder, session_id: str, through: int, **header: Any) -> LogBuilder:
    """A fork child of `parent`: the parent's events 0..`through` as its seed (`seedLength`
    in its header), then `session/end-seed`; it goes on with the parent's turn numbering."""
    b = LogBuilder(session_id, parentSession=parent.header["id"], **header)
    for e in parent.events[:through + 1]:
        b.add(e["type"], e["data"], **{k: v for k, v in e.items() if k in ("surfaceOp", "sourceEventSeqs")})
    b.turn = sum(1 for e in b.events if e["type"] == "turn/start")
    b.header["seedLength"] = b.next_seq
    b.add("session/end-seed", {})
    return b


def fork_child() -> LogBuilder:
    """A subagent child: the parent's history as seed, then its own turn."""
    parent = multi_turn()
    first_turn_end = next(i for i, e in enumerate(parent.events) if e["type"] == "turn/end")
    b = fork(parent, "sample-fork-child", first_turn_end, origin="subagent")
    b.header["delegationDepth"] = 1
    b.start_turn()
    b.add("subagent/descriptor", {"version": 2, "mode": "one-shot", "provider": "spawn",
                                  "label": "Check the entry point"})
    b.request_header(reason="resume")
    b.start_step()
    b.user("Confirm main.py runs.")
    b.tool_round("bash", '{"command": "python main.py --help"}', "usage: main.py [-h]\n")
    b.end_step()
    b.start_step()
    b.assistant("It runs.")
    b.end_turn()
    return b


def audit_demo() -> LogBuilder:
    """The export demo: a compaction, an approval, and a secret in a tool result."""
    b = compacted()
    b.header["id"] = "sample-audit-demo"
    b.start_turn()
    b.start_step()
    b.user("Deploy it to staging.")
    call_id = b.new_id("call")
    b.assistant("I will deploy with the staging key.", calls=[(call_id, "bash", '{"command": "./deploy.sh"}')])
    approval = b.new_id("approval")
    b.add("approval/asked", {"id": approval, "toolName": "bash", "callId": call_id,
                             "reason": "deploys to a shared environment"})
    b.add("approval/decided", {"id": approval, "outcome": "allowed-once"})
    seq = b.tool_call(call_id, "bash", '{"command": "./deploy.sh"}')
    b.tool_result(call_id, "using token sk-stag1ng0123456789abcdef\ndeployed build 42", cites=seq)
    b.end_step()
    b.start_step()
    b.assistant("Deployed build 42 to staging.")
    b.end_turn()
    return b


CONTEXT_EXCEEDED = {"kind": "error", "failure": {"message": "request exceeded the model context window",
                                                  "code": "CONTEXT_WINDOW_EXCEEDED"}}


def incident() -> LogBuilder:
    """A session a responder opens after an incident (the report's screenshots in docs/):
    turn 1: a model call that fails (CONTEXT_WINDOW_EXCEEDED, 1.2 s after the user's message)
    and is retried 2 s later, a build that runs 41 s and fails, an install that waits five
    minutes for its approval, then an answer; turn 2: the user aborts while the model streams;
    turn 3: the log ends inside it, its tool call unanswered."""
    b = LogBuilder("incident-demo")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("The deploy failed: find out why and fix the build.")
    b.add("assistant/chunk", {"turn": b.turn, "step": b.step,
                              "chunk": {"type": "finish", "reason": CONTEXT_EXCEEDED}}, dt=1200)
    b.clock += 2000  # (the harness waits before it retries)
    b.assistant("Let me look at the build.", calls=[("call_build", "bash", '{"command": "make build"}')])
    seq = b.tool_call("call_build", "bash", '{"command": "make build"}')
    b.clock += 41_000
    b.tool_result("call_build", "error: no module named 'requests'", cites=seq, is_error=True)
    b.end_step()
    b.start_step()
    b.assistant("", calls=[("call_install", "bash", '{"command": "pip install requests"}')])
    b.add("approval/asked", {"id": "approval-1", "toolName": "bash", "callId": "call_install",
                             "reason": "installs a package"})
    b.clock += 300_000
    b.add("approval/decided", {"id": "approval-1", "outcome": "allowed-once"})
    seq = b.tool_call("call_install", "bash", '{"command": "pip install requests"}')
    b.clock += 9_000
    b.tool_result("call_install", "Successfully installed requests", cites=seq)
    b.end_step()
    b.start_step()
    b.assistant("The build passes now: the requests module was missing.")
    b.end_turn()
    b.start_turn()
    b.start_step()
    b.user("Now deploy it.")
    b.clock += 1500
    b.cancelled("I will run the deploy script")
    b.end_turn("aborted", by="user")
    b.start_turn()
    b.start_step()
    b.user("Run the tests first.")
    b.assistant("", calls=[("call_tests", "bash", '{"command": "make test"}')])
    b.tool_call("call_tests", "bash", '{"command": "make test"}')
    return b


def write_samples(out: Path) -> list[Path]:
    """Regenerate every bundled sample under `out`; returns the written paths."""
    out.mkdir(parents=True, exist_ok=True)
    written = []

    def put(name: str, data: bytes) -> None:
        path = out / name
        path.write_bytes(data)
        written.append(path)

    m = multi_turn()
    put("multi-turn.jsonl", m.to_bytes(layout="projected"))
    put("multi-turn.runtime.jsonl", m.to_bytes(layout="runtime"))
    put("multi-turn.runtime.jsonl.zstd", m.to_zstd(layout="runtime"))
    put("packed-rows.jsonl", m.to_bytes(layout="runtime", pack=True))
    put("compaction.jsonl", compacted().to_bytes(pack=True))
    put("audit-demo.jsonl", audit_demo().to_bytes(pack=True))
    put("prune.jsonl", pruned().to_bytes())
    put("tool-result-rewrite.jsonl", rewritten().to_bytes())
    put("fork-child.jsonl", fork_child().to_bytes(pack=True))
    text = m.to_bytes()
    put("torn-tail.jsonl", text + b'{"type":"turn/start","seq":' + str(len(m.events)).encode()
        + b',"time":17833')
    # broken logs, each named for its defect
    lines = text.splitlines(keepends=True)
    put("broken-bad-json-line.jsonl", b"".join(lines[:5] + [b'{"type":"step/start",\n'] + lines[5:]))
    bad_seq = orjson.loads(lines[6])
    bad_seq["seq"] += 3
    put("broken-seq-gap.jsonl", b"".join(lines[:6] + [orjson.dumps(bad_seq) + b"\n"] + lines[7:]))
    put("broken-version-1.jsonl", orjson.dumps({**m.header, "version": 1}) + b"\n" + b"".join(lines[1:]))
    put("broken-replace-start-not-found.jsonl", _with_bad_replace(compacted()))
    zst = m.to_zstd(layout="runtime")
    put("broken-zstd-checksum.jsonl.zstd", _flip_last_checksum(zst))
    return written


def _with_bad_replace(b: LogBuilder) -> bytes:
    for e in b.events:
        if type(e.get("surfaceOp")) is dict:
            e["surfaceOp"] = {**e["surfaceOp"], "start": 1}
            break
    return b.to_bytes()


def _flip_last_checksum(data: bytes) -> bytes:
    out = bytearray(data)
    out[-1] ^= 0xFF  # the last 4 bytes of a frame are its XXH64 checksum
    return bytes(out)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "sample_logs"
    for path in write_samples(out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
