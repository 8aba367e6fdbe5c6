"""Logs of every shape the answers must agree on, and every kind of damage, built from code.

Each shape is a `Shape`: a `LogBuilder`, the layout it is written in (runtime, projected, or
mixed: every other record without seq and time), packed rows or not, and the encoding. `write`
gives its bytes with one kind of damage (`DAMAGES`) at a chosen line: the cross-command
agreement test (tests/cli/test_agreement.py) reads them through every surface.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import orjson

from dshreplay.io._packed import ROW_TAGS
from dshreplay.testing.samples import LogBuilder, compacted, damage_line, fork_child, multi_turn, zstd_frames


@dataclass(frozen=True)
class Shape:
    builder: LogBuilder
    layout: str = "runtime"  # runtime, projected or mixed
    pack: bool = False
    zstd: bool = False


def resumed() -> LogBuilder:
    """dsh resumed the session after a crash inside turn 2 (a tool call recorded, no result):
    its closers, session/end-seed, then turn 3 completed."""
    b = LogBuilder("shape-resumed")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("first")
    b.assistant("done")
    b.end_turn()
    b.start_turn()
    b.start_step()
    b.user("run it")
    b.assistant("", calls=[("call_1", "bash", '{"command": "make"}')])
    b.tool_call("call_1", "bash", '{"command": "make"}')
    b.resume_after_crash()
    b.start_turn()
    b.request_header(reason="resume")
    b.start_step()
    b.user("again")
    b.assistant("ok")
    b.end_turn()
    return b


def parallel_tools(b: LogBuilder, calls: list[tuple[str, str]], outputs: list[str]) -> list[int]:
    """One model call asking for several tools at once; their tool/calls, then the results in
    reverse order (dsh runs them in parallel: results land as each finishes). The results' seqs."""
    ids = [(b.new_id("call"), name, arguments) for name, arguments in calls]
    b.assistant("", calls=ids)
    seqs = {call_id: b.tool_call(call_id, name, arguments) for call_id, name, arguments in ids}
    return [b.tool_result(call_id, output, cites=seqs[call_id])
            for (call_id, _, _), output in reversed(list(zip(ids, outputs)))]


def parallel() -> LogBuilder:
    b = LogBuilder("shape-parallel")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("look around")
    parallel_tools(b, [("bash", '{"command": "ls"}'), ("bash", '{"command": "pwd"}'),
                       ("bash", '{"command": "false"}')], ["a\n", "/src\n", ""])
    b.end_step()
    b.start_step()
    b.assistant("seen")
    b.end_turn()
    return b


def summarized(b: LogBuilder, seq: int, *, input_tokens: int = 700) -> None:
    """Make the compaction/summary at `seq` one the summarizer model streamed (an auxiliary call)."""
    b.event(seq)["data"].update(llmStreamCall=True, usage={"inputTokens": input_tokens, "outputTokens": 40})


def long_session(turns: int, session_id: str = "long-session") -> LogBuilder:
    """A session of `turns` turns, each a question, a bash call with 30 lines of output and an
    answer: the long session the viewer's size bound and bench/view.py measure."""
    b = LogBuilder(session_id)
    for t in range(turns):
        b.start_turn()
        if t == 0:
            b.request_header()
        b.start_step()
        b.user(f"Question {t}: why does the build fail? " + "Here is the context you asked for. " * 4)
        output = "".join(f"src/module_{i}.py:{t}: warning: unused variable 'x{i}'\n" for i in range(30))
        b.tool_round("bash", '{"command": "make test"}', output, text="Running the tests.")
        b.assistant(f"Turn {t}: the build fails because " + "the linker cannot find a symbol; " * 8)
        b.end_turn()
    return b


def compaction_chain() -> LogBuilder:
    """A compaction whose summary a second compaction summarizes again (a chain), each a
    summarizer call; then a failing model call (an error finish) and its retry."""
    b = compacted()
    b.header["id"] = "shape-compaction-chain"
    first = next(e["seq"] for e in b.events if e["type"] == "compaction/summary")
    summarized(b, first)
    b.start_turn()
    b.start_step()
    nodes = b.surface()
    b.compaction(nodes[0], nodes[2], "Entry point main.py; a --verbose flag added.")
    summarized(b, next(e["seq"] for e in reversed(b.events) if e["type"] == "compaction/summary"), input_tokens=900)
    b.user("And now?")
    b.add("assistant/chunk", {"turn": b.turn, "step": b.step, "chunk": {"type": "finish", "reason": {
        "kind": "error", "failure": {"message": "rate limited", "code": "RATE_LIMITED"}}}})
    b.assistant("Done.")
    b.end_turn()
    return b


SHAPES: dict[str, Callable[[], Shape]] = {
    "resumed": lambda: Shape(resumed()),
    "fork-child": lambda: Shape(fork_child(), pack=True),
    "projected": lambda: Shape(multi_turn(), layout="projected"),
    "projected-packed": lambda: Shape(compacted(), layout="projected", pack=True),
    "mixed": lambda: Shape(parallel(), layout="mixed"),
    "packed": lambda: Shape(compacted(), pack=True),
    "zstd": lambda: Shape(resumed(), pack=True, zstd=True),
    "parallel-tools": lambda: Shape(parallel()),
    "compaction-chain": lambda: Shape(compaction_chain(), pack=True),
}

DAMAGES = ("none", "bad-json", "missing", "duplicate", "wrong-seq", "corrupt-frame", "torn-tail", "unknown-type")


def lines(shape: Shape) -> list[bytes]:
    """The shape's lines (the header first), each with its newline."""
    b = shape.builder
    records = b.records(layout="projected" if shape.layout == "projected" else "runtime", pack=shape.pack)
    if shape.layout == "mixed":
        records = [{k: v for k, v in r.items() if k not in ("seq", "time", "seq0", "time0")} if n % 2 else r
                   for n, r in enumerate(records)]
    return [orjson.dumps(r) + b"\n" for r in [b.header, *records]]


def write(shape: Shape, damage: str = "none", at: int = 1) -> bytes:
    """The bytes of `shape` with `damage` at line index `at` (1 is the first record; taken modulo
    the records): for corrupt-frame, the frame that holds that line has a wrong checksum (the log
    is written as zstd); a torn tail cuts the last line in half, without its newline; for
    unknown-type, the event on that line (or the next that is not a packed row) has a type dsh
    does not define, without `ignorable`."""
    if damage not in DAMAGES:  # (a misspelt damage would give an intact log, and a test that cannot fail)
        raise ValueError(f"no damage {damage!r}: one of {', '.join(DAMAGES)}")
    text = lines(shape)
    at = 1 + (at - 1) % (len(text) - 1)
    if damage == "unknown-type":  # (an event's line: a packed row's tag is not a type)
        at = next(k for k in [*range(at, len(text)), *range(1, at)] if orjson.loads(text[k])["type"] not in ROW_TAGS)
    if damage in ("bad-json", "missing", "duplicate", "unknown-type"):
        data = damage_line(text, damage, at)
    elif damage == "wrong-seq":
        data = b"".join(text[:at] + [_with_seq(text[at], at + 2)] + text[at + 1:])
    elif damage == "torn-tail":
        data = b"".join(text[:-1]) + text[-1][:len(text[-1]) // 2]
    else:
        data = b"".join(text)
    if damage == "corrupt-frame":
        return _corrupt_frame(data, 1 + (at - 1) // 7)
    return zstd_frames(data) if shape.zstd else data


def _with_seq(line: bytes, seq: int) -> bytes:
    """The record on `line` with an explicit seq that is not its position (a packed row's seq0)."""
    record: dict[str, Any] = orjson.loads(line)
    record["seq0" if "seq0" in record or record["type"].endswith("-chunks") else "seq"] = seq
    return orjson.dumps(record) + b"\n"


def _corrupt_frame(text: bytes, frame: int, batch: int = 7) -> bytes:
    """`text` as dsh's zstd frames (see `zstd_frames`), frame number `frame` (0 is the header's)
    with a wrong checksum."""
    rows = text.splitlines(keepends=True)
    groups = [rows[:1]] + [rows[k:k + batch] for k in range(1, len(rows), batch)]
    import zstandard
    cctx = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True)
    frames = [bytearray(cctx.compress(b"".join(g))) for g in groups]
    frames[min(frame, len(frames) - 1)][-1] ^= 0xFF  # the last 4 bytes of a frame are its checksum
    return b"".join(bytes(f) for f in frames)
