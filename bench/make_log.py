"""Generate a realistic synthetic dsh log of about N events, streamed to disk.

Mix: user prompts, streamed reasoning and text (packed chunk rows), tool
rounds with long outputs, a summarizing compaction every few hundred events,
some prunes and tool-result rewrites. Runtime layout; with --zstd a
.jsonl.zstd twin is written too. With --emoji the text mixes emoji, CJK and
accented words with the English ones (nearly half the words outside ASCII: what
the UTF-8 paths of the reader, the fold and redaction pay for).

    python bench/make_log.py 400000 bench/out/400k.jsonl --zstd
    python bench/make_log.py 400000 bench/out/400k-emoji.jsonl --emoji
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from dshreplay.testing.samples import LogBuilder, zstd_frames

WORDS = ("the build log shows compile link test deploy error warning module function import "
         "return value config path file directory agent tool result cache token stream").split()


EMOJI_WORDS = [*WORDS, "🔑", "🚀", "✅", "❌", "🐍", "📦", "🧪", "⚠️", "日志", "构建", "テスト", "エラー",
               "café", "naïve", "résumé", "Größe", "👩‍💻", "🇯🇵", "数据库", "😀😃😄"]


def _text(rng: random.Random, n: int, words: list[str] = WORDS) -> str:
    return " ".join(rng.choice(words) for _ in range(n))


def generate(events: int, seed: int = 7, session_id: str = "bench-session", emoji: bool = False, **header):
    """Yield chunks of JSONL text (header first) until about `events` events exist, a turn at a
    time: a run to more events with the same seed starts with every byte of a shorter one."""
    rng = random.Random(seed)
    vocabulary = EMOJI_WORDS if emoji else WORDS

    def text(rng: random.Random, n: int) -> str:
        return _text(rng, n, vocabulary)

    b = LogBuilder(session_id, cwd="/srv/work/project", **header)
    yield b.to_bytes()[: b.to_bytes().index(b"\n") + 1]
    since_compaction = 0
    while b.next_seq < events:
        b.start_turn()
        if b.turn == 1 or rng.random() < 0.05:
            b.request_header(reason="initial" if b.turn == 1 else "change")
        b.start_step()
        b.user(text(rng, rng.randint(8, 60)))
        for _ in range(rng.randint(1, 4)):
            name = rng.choice(["bash", "read", "grep", "edit"])
            _, result = b.tool_round(name, f'{{"arg": "{text(rng, 4)}"}}', text(rng, rng.randint(50, 900)),
                                     reasoning=text(rng, rng.randint(10, 80)), text=text(rng, 6))
            if rng.random() < 0.04:
                b.rewrite_tool_result(result, "[output trimmed]")
            b.end_step()
            b.start_step()
        b.assistant(text(rng, rng.randint(20, 120)), reasoning=text(rng, 30), pieces=rng.randint(8, 40))
        nodes = b.surface()
        if b.next_seq - since_compaction > 300 and len(nodes) > 6:
            since_compaction = b.next_seq
            end = rng.randint(2, len(nodes) - 3)
            if rng.random() < 0.3:
                b.prune(nodes[end], nodes[end])
            else:
                b.compaction(nodes[0], nodes[end], text(rng, 120))
        b.end_turn()
        yield b.drain(pack=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("events", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--zstd", action="store_true", help="also write OUT.zstd")
    parser.add_argument("--emoji", action="store_true", help="text with emoji, CJK and accented words")
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "wb") as fh:
        for chunk in generate(args.events, emoji=args.emoji):
            fh.write(chunk)
    if args.zstd:
        write_zstd(args.out, Path(str(args.out) + ".zstd"))
    return 0


def write_zstd(src: Path, dst: Path, batch: int = 64) -> None:
    """dsh's frame layout, streamed: header alone, then batches of lines."""
    with open(src, "rb") as fh, open(dst, "wb") as out:
        header = fh.readline()
        out.write(zstd_frames(header))
        lines = []
        for line in fh:
            lines.append(line)
            if len(lines) == batch:
                out.write(_frame(b"".join(lines)))
                lines = []
        if lines:
            out.write(_frame(b"".join(lines)))


def _frame(data: bytes) -> bytes:
    import zstandard
    return zstandard.ZstdCompressor(write_checksum=True, write_content_size=True).compress(data)


if __name__ == "__main__":
    sys.exit(main())
