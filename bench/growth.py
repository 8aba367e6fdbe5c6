"""Growth curves on hostile shapes: time and peak memory must grow linearly.

Each shape at several sizes, each measured in its own process:

- replacements:  N appended messages, then N replacements of one node each (`fold`)
- citations:     N assistant messages, each citing the one before (`provenance --seq N`: the last
                 message, whose origins are the whole chain)
- citation rows: the same chain, every message's row (`provenance`: the table summarizes each
                 message's origins, N²/2 in all, so its time grows with them; its memory must not)
- long line:     one record whose text is M MB long (`fold`)
- tiny lines:    a .zstd log whose frames hold N two-byte records (`fold`)
- hook results:  N invocations of one handler, then N results that answer none (`validate`)
- schema errors: one todo/write record listing N empty todos, two schema errors each (`validate`)
- duplicate key: a record of M MB (a long list, written with spaces) holding a key twice (`validate`)
- model calls:   N model calls in one step with no compaction, the surface growing by one message
                 a call (`export`: each call's request record builds on the one before)
- pending calls: N model calls that end in an error with no assistant message, then N answered ones
                 (`export`: each message is matched to its call among those still unanswered)
- late rewrites: N tool rounds, each result rewritten (a replacement of the newest node) before the next
                 call (`export`: each call's request differs from the one before in its last message)
- long message:  one assistant message of M MB of text (and as much reasoning), streamed in 4 KiB
                 deltas, with words, emoji and an escaped quote in it (`export`, the default redaction on:
                 its text through the fold, the transcript, the calls and redaction's views)

    python bench/growth.py [--quick] [--shape NAME]... [--write]    (--write: the table to docs/growth.md)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import run_once  # noqa: E402

HEADER = {"type": "session", "version": 0, "id": "growth", "createdAt": 1783352165190, "delegationDepth": 0}


def replacements(n: int) -> bytes:
    from dshreplay.testing.samples import user_record  # (in the --make child only)
    lines = [HEADER] + [user_record(s, f"m{s}") for s in range(n)]
    lines += [user_record(n + k, f"r{k}", {"op": "replace", "start": k, "end": k}, [k]) for k in range(n)]
    return b"".join(json.dumps(x, separators=(",", ":")).encode() + b"\n" for x in lines)


def citations(n: int) -> bytes:
    from dshreplay.testing.samples import user_record  # (in the --make child only)
    lines = [HEADER, user_record(0, "start")]
    for s in range(1, n + 1):
        lines.append({"type": "assistant/message", "seq": s, "time": 1783352166000 + s,
                      "data": {"turn": 1, "step": 1, "message": {"role": "assistant",
                                                                 "content": [{"type": "text", "text": f"a{s}"}]}},
                      "surfaceOp": "append", "sourceEventSeqs": [s - 1]})
    return b"".join(json.dumps(x, separators=(",", ":")).encode() + b"\n" for x in lines)


def _dump(lines: list) -> bytes:
    return b"".join(json.dumps(x, separators=(",", ":")).encode() + b"\n" for x in lines)


def _event(seq: int, kind: str, data: dict) -> dict:
    return {"type": kind, "seq": seq, "time": 1783352166000 + seq, "data": data}


def hook_results(n: int) -> bytes:
    lines = [HEADER, _event(0, "turn/start", {"turn": 1})]
    lines += [_event(1 + k, "hook/invoked", {"turn": 1, "point": f"p{k}", "dialect": "claude-code",
                                             "handlerId": "h"}) for k in range(n)]
    lines += [_event(1 + n + k, "hook/result", {"turn": 1, "point": f"q{k}", "handlerId": "h", "decision": "pass",
                                                "exitCode": 0, "durationMs": 1}) for k in range(n)]
    lines.append(_event(1 + 2 * n, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}))
    return _dump(lines)


def schema_errors(n: int) -> bytes:
    return _dump([HEADER, _event(0, "turn/start", {"turn": 1}), _event(1, "todo/write", {"todos": [{}] * n}),
                  _event(2, "turn/end", {"turn": 1, "reason": {"kind": "completed"}})])


def duplicate_key(mb: int) -> bytes:
    numbers = b"[" + b", ".join([b"1"] * ((mb << 20) // 3)) + b"]"
    return (json.dumps(HEADER).encode() + b"\n" +
            b'{"type": "user/message", "seq": 0, "time": 1783352166000, "surfaceOp": "append", "data": '
            b'{"role": "user", "role": "user", "content": [{"type": "text", "text": "hi"}], "extra": ' + numbers +
            b"}}\n")


def long_line(mb: int) -> bytes:
    from dshreplay.testing.samples import user_record  # (in the --make child only)
    return (json.dumps(HEADER).encode() + b"\n" +
            json.dumps(user_record(0, "x" * (mb * 1024 * 1024))).encode() + b"\n")


def tiny_lines(n: int) -> bytes:
    import zstandard
    text = json.dumps(HEADER).encode() + b"\n" + b"{}\n" * n
    cctx = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True)
    frames = [cctx.compress(text[i:i + (32 << 20)]) for i in range(0, len(text), 32 << 20)]
    return b"".join(frames)


def model_calls(n: int) -> bytes:
    from dshreplay.testing.samples import LogBuilder  # (in the --make child only)
    b = LogBuilder()
    b.start_turn()
    b.start_step()
    b.user("go")
    for _ in range(n):
        b.assistant("ok", finish="stop", pieces=1)
    b.end_step()
    b.end_turn()
    return b.to_bytes()


def pending_calls(n: int) -> bytes:
    from dshreplay.testing.samples import LogBuilder  # (in the --make child only)
    b = LogBuilder()
    b.start_turn()
    b.start_step()
    b.user("go")
    for _ in range(n):  # calls that end in an error and get no assistant message: they stay unanswered
        b.assistant("", finish={"kind": "error", "error": {"code": "OVERLOADED"}}, pieces=1)
        b.events.pop()  # (its assistant/message)
    for _ in range(n):  # then as many that are answered: each message is matched to its call among them
        b.assistant("ok", finish="stop", pieces=1)
    b.end_step()
    b.end_turn()
    return b.to_bytes()


def late_rewrites(n: int) -> bytes:
    from dshreplay.testing.samples import LogBuilder  # (in the --make child only)
    b = LogBuilder()
    b.start_turn()
    b.start_step()
    b.user("go")
    for k in range(n):
        _, result = b.tool_round("bash", '{"cmd": "ls"}', f"file{k}.txt")
        b.rewrite_tool_result(result, "[output trimmed]")
    b.assistant("done", finish="stop", pieces=1)
    b.end_step()
    b.end_turn()
    return b.to_bytes()


def long_message(mb: int) -> bytes:
    from dshreplay.testing.samples import LogBuilder  # (in the --make child only)
    words = "the build log shows \U0001F511 a \"quoted\" token=value path/to/file.py:12 ok\n"
    text = (words * ((mb << 20) // len(words.encode()) + 1))[:mb << 20]
    b = LogBuilder()
    b.start_turn()
    b.start_step()
    b.user("go")
    b.assistant(text, reasoning=text, finish="stop", pieces=max(1, (mb << 20) // 4096))
    b.end_step()
    b.end_turn()
    return b.to_bytes()


SHAPES = {
    "replacements": (replacements, ["fold", "--json"], [10_000, 20_000, 40_000, 100_000], ".jsonl"),
    "citations": (citations, ["provenance", "--seq", "{size}", "--json"], [10_000, 20_000, 40_000, 100_000],
                  ".jsonl"),
    "citation rows": (citations, ["provenance"], [1_000, 2_000, 4_000, 8_000], ".jsonl"),
    "long line (MB)": (long_line, ["fold", "--json"], [25, 50, 100, 200], ".jsonl"),
    "tiny lines": (tiny_lines, ["fold", "--json"], [1_000_000, 2_000_000, 4_000_000, 10_000_000], ".jsonl.zstd"),
    "hook results": (hook_results, ["validate"], [10_000, 20_000, 40_000, 100_000], ".jsonl"),
    "schema errors": (schema_errors, ["validate"], [100_000, 200_000, 400_000, 1_000_000], ".jsonl"),
    "duplicate key (MB)": (duplicate_key, ["validate"], [4, 8, 16, 32], ".jsonl"),
    "model calls": (model_calls, ["export", "--out", "{scratch}/bundle-{size}", "--evidence-key", "{scratch}/key"],
                    [5_000, 10_000, 20_000, 40_000], ".jsonl"),
    "pending calls": (pending_calls, ["export", "--out", "{scratch}/pending-{size}", "--evidence-key",
                                      "{scratch}/key"], [2_000, 4_000, 8_000, 16_000], ".jsonl"),
    "late rewrites": (late_rewrites, ["export", "--out", "{scratch}/rewrites-{size}", "--evidence-key",
                                      "{scratch}/key"], [2_000, 4_000, 8_000, 16_000], ".jsonl"),
    "long message (MB)": (long_message, ["export", "--out", "{scratch}/long-{size}", "--evidence-key",
                                         "{scratch}/key"], [1, 2, 4, 8], ".jsonl"),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the two smallest sizes only")
    parser.add_argument("--write", action="store_true", help="write the table to docs/growth.md")
    parser.add_argument("--shape", action="append", choices=list(SHAPES), help="only this shape (repeatable)")
    parser.add_argument("--make", nargs=3, metavar=("SHAPE", "SIZE", "PATH"), help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.make:
        shape, size, path = options.make
        Path(path).write_bytes(SHAPES[shape][0](int(size)))
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="dshreplay-growth-") as scratch:
        for shape, (_, command, sizes, suffix) in SHAPES.items():
            if options.shape and shape not in options.shape:
                continue
            first = None
            for size in sizes[:2] if options.quick else sizes:
                log = Path(scratch) / f"log{suffix}"
                # made in a process of its own: a child forked from a process holding the log's bytes
                # would start with that memory counted in its peak
                subprocess.run([sys.executable, __file__, "--make", shape, str(size), str(log)], check=True)
                extra = [a.format(size=size, scratch=scratch) for a in command[1:]]
                seconds, cpu, rss = run_once([sys.executable, "-m", "dshreplay", command[0], str(log), *extra])
                first = first or (size, cpu)
                per = (cpu / size) / (first[1] / first[0])
                rows.append((shape, f"{size:,}", f"{seconds:.2f}", f"{cpu:.2f}", f"{per:.2f}", f"{rss:.0f}"))
                print(*rows[-1], sep="\t", flush=True)
    from dshreplay.console._table import render_table
    text = render_table(rows, ["shape", "size", "seconds", "CPU seconds", "CPU per unit vs smallest", "peak RSS MB"],
                        10**6)
    print(text)
    if options.write:
        (Path(__file__).resolve().parent.parent / "docs" / "growth.md").write_text(
            "# Growth on hostile shapes\n\nGenerated by `python bench/growth.py --write` on the 2-core development "
            "machine: each command in its own process; CPU per unit is the CPU time (the command's and its "
            "workers') per replacement, citation, megabyte, line, hook result or empty todo, against the smallest "
            "size (1.00: linear; CPU time, as the wall time of a shared machine says more about its load). "
            "The citation rows are the exception: the table summarizes each message's origins, N²/2 of them "
            "for a chain of N, so their time per citation grows with N; their memory stays linear."
            "\n\n```\n" + text + "\n```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
