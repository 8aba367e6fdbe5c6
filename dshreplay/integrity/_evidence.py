"""How a bundle hashes the bytes of its inputs: plain SHA-256, or HMAC-SHA256
with an evidence key kept beside the bundle, never in it.

A bundle whose export redacted anything must not carry a plain hash of
bytes it redacted: with the rest of a line rebuilt from the bundle, a masked
password is found by hashing guesses until one matches the line's hash (the
input's SHA-256 and the line chain are the same oracle over whole files).
So when redaction is on, every hash of input bytes the bundle holds (each
input's hash in the manifest, events.csv's `rawSha256`, the line chain and
its checkpoints) is an HMAC-SHA256 under a 32-byte evidence key. Whoever
holds the key and the logs can check them (`verify-export --evidence-key`,
or `openssl dgst -sha256 -mac HMAC -macopt hexkey:$(cat KEY) LOG`); whoever
holds only the bundle can check its own files, and learns nothing from the
hashes of the inputs. The manifest names the key by its fingerprint, an
HMAC of a fixed label, which tells whether a key is the right one and
reveals nothing of it, provided the key cannot be guessed: a key is refused
(`weakness`) unless it looks drawn at random, since a guessed key turns its
fingerprint into a confirmation and every keyed hash back into an oracle.

The key file is text: the key's 32 bytes as 64 lowercase hex digits and a
newline (what `openssl rand -hex 32` prints). Export makes it when it is
absent (mode 0600, never replacing a file), and refuses one inside --out.
The SQL index (`index`) keeps the same facts of its inputs (their hashes and
line chains, to prove growth) and keys them the same way (`input_hash`).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from dshreplay.errors import ReadError, UsageError
from dshreplay.io.reader import read_small_file, shown_path

KEY_BYTES = 32
FINGERPRINT_LABEL = b"dshreplay evidence key"
_KEY_TEXT = re.compile(rb"([0-9a-fA-F]{64})\r?\n?")
MIN_DISTINCT = 16  # of 32 random bytes, fewer distinct values (or steps) than this: odds below 1 in 10^10
# published 32-byte values (SHA-256 of nothing; the seed of our line chain, in the docs) are never keys
KNOWN_KEYS = frozenset({hashlib.sha256(b"").digest(), hashlib.sha256(b"dshreplay line chain v1").digest()})
MAKE_ONE = "make one with `openssl rand -hex 32 > FILE`, or name a file that does not exist and dshreplay makes it"
PLAIN, KEYED = "sha256", "hmac-sha256"


@dataclass(frozen=True)
class InputHash:
    """The one hash of input bytes a bundle uses: SHA-256, or HMAC-SHA256 under `key`.

    A log's every line is hashed twice (its link in the chain, its hash in events.csv),
    so the keyed hash of a short text starts from the two SHA-256 states of the key's
    padded blocks, computed once (RFC 2104: HMAC(K, m) = H(K^opad || H(K^ipad || m))):
    0.8 µs a line instead of the 2.9 µs of `hmac.digest`, the same bytes (tested)."""

    key: bytes | None = None
    _pads: tuple[Any, Any] = field(default=(None, None), init=False, repr=False, compare=False)  # (hashlib states)

    def __post_init__(self) -> None:
        if self.key is not None:
            block = self.key.ljust(64, b"\0")  # (a key of 32 bytes: shorter than SHA-256's block)
            object.__setattr__(self, "_pads", (hashlib.sha256(bytes(b ^ 0x36 for b in block)),
                                               hashlib.sha256(bytes(b ^ 0x5C for b in block))))

    def __getstate__(self) -> bytes | None:  # (sent to worker processes: the key; the pads are made again)
        return self.key

    def __setstate__(self, key: bytes | None) -> None:
        object.__setattr__(self, "key", key)
        self.__post_init__()

    @property
    def name(self) -> str:
        """As the manifest names it: "sha256" or "hmac-sha256"."""
        return PLAIN if self.key is None else KEYED

    @property
    def label(self) -> str:
        """As a message names it: "SHA-256" or "HMAC-SHA256"."""
        return "SHA-256" if self.key is None else "HMAC-SHA256"

    @property
    def fingerprint(self) -> str | None:
        """The key's name in the manifest: HMAC-SHA256(key, "dshreplay evidence key") in hex
        (None without a key). It cannot be turned back into the key."""
        return None if self.key is None else hmac.digest(self.key, FINGERPRINT_LABEL, "sha256").hex()

    def new(self) -> Any:  # (a hashlib or hmac object: both have update and hexdigest)
        """A running hash (`update`, `hexdigest`) for bytes that arrive in blocks."""
        return hashlib.sha256() if self.key is None else hmac.new(self.key, digestmod="sha256")

    def digest(self, data: bytes) -> bytes:
        """The hash of `data`."""
        if self.key is None:
            return hashlib.sha256(data).digest()
        inner, outer = self._pads[0].copy(), self._pads[1].copy()
        inner.update(data)
        outer.update(inner.digest())
        digest: bytes = outer.digest()
        return digest

    def hex(self, data: bytes) -> str:
        """The hash of `data` in hex (a line of a log: events.csv's `rawSha256`)."""
        return self.digest(data).hex()

    def link(self, previous: bytes, line: bytes) -> bytes:
        """The next link of a line chain: the hash of the previous link and the line."""
        return self.digest(previous + line)


PLAIN_HASH = InputHash()


def input_hash(redacts: bool, key_file: str | Path | None, *, command: str, writes: str,
               places: Mapping[str, str | Path | None]) -> InputHash:
    """The hash of input bytes for a run of `command` ("export", "index") that writes `writes`
    ("the bundle", "the index"): plain SHA-256 when nothing is redacted; else HMAC-SHA256 under the
    key in `key_file` (required then, made if absent), which must lie in none of `places`
    (option -> path: what the run writes, where it would travel with the output)."""
    if not redacts:
        return PLAIN_HASH
    if key_file is None:
        raise UsageError(f"this {command} redacts, so the hashes of its inputs are keyed: give --evidence-key FILE "
                         f"(made if absent; keep it with the logs, never with {writes}), or {command} with "
                         "--no-default-redaction and no --redact to hash them plainly")
    return InputHash(load_key(key_file, create=True, places=places, writes=writes))


def load_key(path: str | Path, *, create: bool, places: Mapping[str, str | Path | None] | None = None,
             writes: str = "the bundle") -> bytes:
    """The evidence key in the file at `path`; with `create`, a new random key written
    there first when the file is absent (mode 0600, never over an existing file).
    A key file inside one of `places` (option -> path: the bundle's --out, the index's
    --db and --parquet) is refused: it would travel with what is written there."""
    shown = shown_path(path)
    for option, place in (places or {}).items():
        if place is not None and _inside(Path(path), place):
            raise UsageError(f"--evidence-key {shown} lies inside {option} {shown_path(place)}: the key must be "
                             f"kept beside {writes} (with the logs), never in it")
    if create and not os.path.lexists(path):
        _write_new_key(path, shown)
    try:
        data = read_small_file(path, 256, "the evidence key")
    except ReadError as exc:
        raise UsageError(f"--evidence-key {shown}: {exc.message}") from None
    match = _KEY_TEXT.fullmatch(data)
    if match is None:
        raise UsageError(f"--evidence-key {shown} is not an evidence key: want 64 hex digits (32 bytes) and a "
                         "newline, as `openssl rand -hex 32` prints")
    key = bytes.fromhex(match.group(1).decode())
    weak = weakness(key)
    if weak is not None:
        raise UsageError(f"--evidence-key {shown} cannot be used: {weak}, so it can be guessed (and with it every "
                         f"value the bundle masks, from their keyed hashes); {MAKE_ONE}")
    return key


def weakness(key: bytes) -> str | None:
    """Why `key` does not look drawn at random (None: it does). 32 random bytes hold about 30
    distinct values and 29 distinct steps between neighbours (mod 256), and are all printable
    ASCII once in 10^14 draws; fewer than MIN_DISTINCT values or steps happens less than once
    in 10^10 draws. So refused, and refused only by these: a published key, a key that repeats
    a shorter pattern, one of few byte values (all zeros, one byte, hex or decimal digits), a
    run that steps evenly (00 01 02 ...), text (the hex of a passphrase)."""
    if key in KNOWN_KEYS:
        return "it is a published example or test key"
    period = next((p for p in range(1, len(key)) if key == key[p:] + key[:p]), None)
    if period is not None:
        return "it is one byte repeated" if period == 1 else f"it repeats a pattern of {period} bytes"
    if len(set(key)) < MIN_DISTINCT:
        return f"it holds only {len(set(key))} distinct byte values"
    steps = len({(b - a) % 256 for a, b in zip(key, key[1:])})
    if steps < MIN_DISTINCT:
        return f"its bytes step by only {steps} distinct differences (a counter or a progression)"
    if all(0x20 <= b < 0x7F for b in key):
        return "its bytes are all printable text (the hex of a passphrase, not random bytes)"
    return None


def _write_new_key(path: str | Path, shown: str) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:  # made meanwhile: it is read as any existing key
        return
    except OSError as exc:
        raise UsageError(f"--evidence-key {shown} cannot be made: {exc.strerror or exc}") from None
    with open(fd, "w", encoding="ascii") as fh:
        key = secrets.token_bytes(KEY_BYTES)
        while weakness(key) is not None:  # (less than once in 10^10 draws)
            key = secrets.token_bytes(KEY_BYTES)
        fh.write(key.hex() + "\n")


def _inside(path: Path, folder: str | Path) -> bool:
    """Whether `path` is `folder` or lies inside it (links and `..` resolved as far as they exist)."""
    try:
        here, there = Path(os.path.realpath(path)), Path(os.path.realpath(folder))
    except (OSError, ValueError):
        return False
    return here == there or there in here.parents
