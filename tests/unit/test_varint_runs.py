"""The varint list's run of consecutive seqs (a first value, then deltas of +1: ZigZag 2), read
at C speed: the same seqs and the same errors as the one-varint-at-a-time rule."""

from __future__ import annotations

import random

import pytest

from dshreplay.io._varint import VarintError, _decode, decode_seqs, encode_seqs


def outcome(decode, blob: bytes):
    try:
        return decode(blob)
    except VarintError as exc:
        return exc.why, exc.offset


def test_a_run_of_consecutive_seqs_past_one_byte_is_its_range():
    assert encode_seqs([300, 301, 302]) == b"\xac\x02\x02\x02"  # (300 = 0xac 0x02, then +1 twice)
    assert decode_seqs(b"\xac\x02\x02\x02") == [300, 301, 302]


@pytest.mark.parametrize("blob, error", [
    (b"\x80\x00\x02\x02", ("non-canonical varint", 0)),  # (its first value ends in a 0x00 byte)
    # 2^53-3 (8 bytes), +1, +1, +1: the last is over 2^53-1, at byte 10
    (encode_seqs([2**53 - 3, 2**53 - 2, 2**53 - 1]) + b"\x02", ("decoded seq is out of range", 10)),
    (b"\x80\x80", ("truncated varint", 0)),
])
def test_a_run_is_refused_where_the_rule_refuses_it(blob, error):
    assert outcome(decode_seqs, blob) == error


def test_every_list_decodes_as_the_rule_decodes_it():
    rng = random.Random(7)
    for _ in range(5000):
        if rng.random() < 0.5:
            first = rng.choice([0, 1, 127, 128, 300, 2**14, 2**21 + 5, 2**53 - 9])
            blob = encode_seqs(list(range(first, first + rng.randint(0, 9))))
        else:
            blob = bytes(rng.choice([0, 1, 2, 2, 2, 3, 0x80, 0x81, 0xff]) for _ in range(rng.randint(0, 10)))
        assert outcome(decode_seqs, blob) == outcome(_decode, blob), blob
