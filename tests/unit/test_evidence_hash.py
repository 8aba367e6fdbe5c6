"""The hash of input bytes (integrity.evidence.InputHash): plain SHA-256, or HMAC-SHA256
under the evidence key, computed from precomputed pads; checked against the standard
library's HMAC on texts of every length around the block size."""

from __future__ import annotations

import hashlib
import hmac
import pickle

from dshreplay.integrity._evidence import InputHash

KEY = bytes(range(32))


def test_the_keyed_hash_is_hmac_sha256_on_texts_of_every_length():
    keyed = InputHash(KEY)
    for n in [*range(0, 130), 1000, 100_000]:
        text = bytes((7 * k) % 256 for k in range(n))
        assert keyed.digest(text) == hmac.digest(KEY, text, "sha256"), n
        assert keyed.hex(text) == hmac.new(KEY, text, "sha256").hexdigest()
    running = keyed.new()
    running.update(b"ab")
    running.update(b"c")
    assert running.hexdigest() == hmac.digest(KEY, b"abc", "sha256").hex()


def test_the_plain_hash_is_sha256_and_a_link_hashes_the_previous_link_and_the_line():
    plain, keyed = InputHash(), InputHash(KEY)
    assert plain.hex(b"line\n") == hashlib.sha256(b"line\n").hexdigest()
    assert plain.link(b"\x01" * 32, b"line\n") == hashlib.sha256(b"\x01" * 32 + b"line\n").digest()
    assert keyed.link(b"\x01" * 32, b"line\n") == hmac.digest(KEY, b"\x01" * 32 + b"line\n", "sha256")
    assert (plain.name, plain.label, plain.fingerprint) == ("sha256", "SHA-256", None)
    assert (keyed.name, keyed.label) == ("hmac-sha256", "HMAC-SHA256")
    assert keyed.fingerprint == hmac.digest(KEY, b"dshreplay evidence key", "sha256").hex()


def test_a_keyed_hash_crosses_to_a_worker_process_whole():
    copy = pickle.loads(pickle.dumps(InputHash(KEY)))
    assert copy.key == KEY and copy.hex(b"x") == hmac.digest(KEY, b"x", "sha256").hex()
