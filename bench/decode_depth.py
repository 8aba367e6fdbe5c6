"""What decoding only a record's envelope would save, and what it would cost to keep it exact.

Issue #24 asks for a reader that decodes only the fields a pass needs (with
msgspec: a Struct for the envelope, `data` kept raw). This measures, on the
lines of a log, the CPU time per line of a full orjson parse, of msgspec's
envelope decode and of its type alone; then the checks the skipped bytes
would need so that a line orjson refuses is still refused (msgspec does not
look inside what it skips for invalid UTF-8, nor for numbers beyond a
double's range), and lists the lines where the two parsers disagree.

    python bench/decode_depth.py /work/benchlogs/1m.jsonl [--lines 200000]

Measured (#24, callgrind instructions on a 30,000-line prefix of the 1M log,
so that the shared machine's load does not move them): a full orjson parse
355M, msgspec's envelope decode 212M (0.60x), `bytes.isascii` 28M, and the
cheapest exact check found for numbers beyond a double in the skipped bytes
(`bytes.translate` of digits, signs and exponents, then three substring
searches) 458M (1.29x): closing the gap costs more than the envelope saves,
so the reader parses every line with orjson and saves instead on what it
builds from a line (`LogReader.records(quiet=...)`).

Needs msgspec (pip install msgspec); it is not a dependency of dshreplay.
"""

import argparse
import gc
import re
import sys
import time
from itertools import islice
from pathlib import Path
from typing import Annotated, Union

import orjson

# Lines orjson refuses and msgspec's envelope decode accepts: the gaps a skipped field leaves
GAPS = {
    "invalid UTF-8 in a skipped string": b'{"type":"a","data":{"x":"\xff"}}',
    "UTF-8 of a surrogate in a skipped string": b'{"type":"a","data":{"x":"\xed\xa0\x80"}}',
    "number beyond a double in a skipped value": b'{"type":"a","data":{"x":1e400}}',
    "400-digit integer in a skipped value": b'{"type":"a","data":{"x":1' + b"0" * 400 + b"}}",
}
OVERFLOW = re.compile(rb"[eE][+-]?[0-9]{3}|[0-9]{210}")  # a number that may exceed a double (conservative)
# digits as 0, exponent marks as e, signs as s, every other byte blank
_SHAPES = bytes(48 if 48 <= c <= 57 else 101 if c in b"eE" else 115 if c in b"+-" else 32 for c in range(256))


def overflow_by_translate(line: bytes) -> bool:
    """The same conservative test without a regular expression: the line's digits, exponent
    marks and signs kept (everything else blanked), then a 3-digit exponent or a long run of
    digits searched for as plain bytes."""
    shape = line.translate(_SHAPES)
    return b"e000" in shape or b"es000" in shape or b"0" * 210 in shape



def envelope_decoders():
    """msgspec decoders of the envelope and of the type alone (annotations evaluated here: no
    `from __future__ import annotations` in this file, msgspec reads them)."""
    import msgspec
    i64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]  # (orjson reads larger ints as floats)
    unset = msgspec.UNSET

    class Envelope(msgspec.Struct, forbid_unknown_fields=True):
        type: Union[str, msgspec.UnsetType] = unset
        seq: Union[i64, msgspec.UnsetType] = unset
        time: Union[i64, msgspec.UnsetType] = unset
        seq0: Union[i64, msgspec.UnsetType] = unset  # (a packed row's)
        time0: Union[i64, msgspec.UnsetType] = unset
        data: msgspec.Raw = msgspec.Raw()
        surfaceOp: msgspec.Raw = msgspec.Raw()
        sourceEventSeqs: msgspec.Raw = msgspec.Raw()

    class TypeOnly(msgspec.Struct):
        type: Union[str, msgspec.UnsetType] = unset

    return msgspec.json.Decoder(Envelope).decode, msgspec.json.Decoder(TypeOnly).decode


def per_line(fn, lines: list[bytes], rounds: int = 3) -> float:
    """CPU µs per line of `fn(line)` (best of `rounds`)."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for line in lines:
            fn(line)
        best = min(best, time.process_time() - start)
    return best / len(lines) * 1e6


def accepts(fn, line: bytes) -> bool:
    try:
        fn(line)
    except Exception:  # noqa: BLE001 - any refusal
        return False
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--lines", type=int, default=200_000)
    args = parser.parse_args(argv)
    try:
        envelope, type_only = envelope_decoders()
    except ImportError:
        print("msgspec is not installed: pip install msgspec")
        return 2
    with open(args.log, "rb") as fh:
        next(fh)  # (the header)
        lines = list(islice(fh, args.lines))
    gc.disable()  # (each decoded value is dropped at once; collections would only add noise)
    full = per_line(orjson.loads, lines)
    rows = [("orjson.loads (the whole record)", full),
            ("msgspec envelope (data, surfaceOp, sourceEventSeqs raw)", per_line(envelope, lines)),
            ("msgspec type alone", per_line(type_only, lines)),
            ("check: line is ASCII (bytes.isascii)", per_line(bytes.isascii, lines)),
            ("check: no number beyond a double (re.search)", per_line(OVERFLOW.search, lines)),
            ("check: no number beyond a double (bytes.translate)", per_line(overflow_by_translate, lines))]
    print(f"{len(lines):,} lines of {args.log.name}, {sum(map(len, lines)) / len(lines):.0f} bytes on average")
    for name, cost in rows:
        print(f"  {name:<58} {cost:6.2f} µs/line  {cost / full:5.2f}x")
    print("lines orjson refuses and the envelope decode accepts:")
    for name, line in GAPS.items():
        print(f"  {name}: orjson {'accepts' if accepts(orjson.loads, line) else 'refuses'}, "
              f"envelope {'accepts' if accepts(envelope, line) else 'refuses'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
