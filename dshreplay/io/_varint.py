"""dsh's SQLite varint list (the `events.source_event_seqs` column of schema 17).

The first value is an unsigned LEB128 varint; each next one is the difference from
the one before, ZigZag-encoded (`2d` for d >= 0, `-2d-1` for d < 0) as a varint.
A NULL column is no list, an empty BLOB an empty list. Decoded exactly as dsh's
reader does: a non-canonical varint (a final 0x00 byte after others), one longer
than 9 bytes, a value out of range (a first value over 2^53-1, a ZigZag value over
2^54-2, a seq below 0 or over 2^53-1) and a truncated varint are errors.
"""

from __future__ import annotations

from itertools import accumulate

from dshreplay._jsvalues import MAX_SAFE_INTEGER

__all__ = ["VarintError", "decode_seqs", "encode_seqs"]

MAX_ZIGZAG = MAX_SAFE_INTEGER * 2


class VarintError(ValueError):
    """Why a varint list cannot be decoded (dsh's words), and the byte offset where it fails."""

    def __init__(self, why: str, offset: int) -> None:
        super().__init__(f"{why} at byte {offset}")
        self.why = why
        self.offset = offset


def decode_seqs(blob: bytes) -> list[int]:
    """The seqs a `source_event_seqs` BLOB holds; VarintError when dsh would refuse it."""
    size = len(blob)
    if size > 2:  # the usual list, a run of consecutive seqs: a first value, then each delta +1 (ZigZag 2)
        end = 0
        while end < size and blob[end] & 0x80:
            end += 1
        rest = size - end - 1
        if rest > 0 and blob.count(2, end + 1) == rest:
            first = _decode(blob[:end + 1])[0]
            if first + rest <= MAX_SAFE_INTEGER:
                return list(range(first, first + rest + 1))
    if blob and max(blob) < 0x80:  # every value one byte: no varint spans bytes
        deltas = [b >> 1 if not b & 1 else -((b + 1) >> 1) for b in blob[1:]]
        seqs = list(accumulate(deltas, initial=blob[0]))
        if min(seqs) >= 0:
            return seqs
    return _decode(blob)


def _decode(blob: bytes) -> list[int]:
    """`decode_seqs`, one varint at a time: the rule, for any list."""
    values: list[int] = []
    previous = 0
    offset, size = 0, len(blob)
    while offset < size:
        start = offset
        limit = MAX_SAFE_INTEGER if not values else MAX_ZIGZAG
        value = shift = 0
        while True:
            if offset >= size:
                raise VarintError("truncated varint", start)
            byte = blob[offset]
            offset += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                if shift and not byte & 0x7F:
                    raise VarintError("non-canonical varint", start)
                if value > limit:
                    raise VarintError("varint is out of range", start)
                break
            shift += 7
            if shift > 56:
                raise VarintError("varint is out of range", start)
        if values:
            value = previous + (value >> 1 if not value & 1 else -((value + 1) >> 1))
        if value < 0 or value > MAX_SAFE_INTEGER:
            raise VarintError("decoded seq is out of range", start)
        values.append(value)
        previous = value
    return values


def encode_seqs(values: list[int]) -> bytes:
    """The BLOB dsh writes for `values` (non-negative safe integers): for tests and fixtures."""
    out = bytearray()
    previous = 0
    for k, value in enumerate(values):
        number = value if k == 0 else (value - previous) * 2 if value >= previous else (previous - value) * 2 - 1
        while number >= 0x80:
            out.append(number & 0x7F | 0x80)
            number >>= 7
        out.append(number)
        previous = value
    return bytes(out)
