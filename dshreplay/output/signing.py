"""The bundle digest and its signature."""

from __future__ import annotations

import hashlib

from dshreplay.errors import ReadError, UsageError
from dshreplay.io.reader import read_small_file, shown_path
from dshreplay.jsvalues import (
    json_bytes,
)


def manifest_digest(manifest: dict) -> str:
    """The bundle's digest: SHA-256 of its manifest in canonical form (sorted keys, no spaces).
    Written down at export time, it pins every byte of the bundle."""
    return "sha256:" + hashlib.sha256(json_bytes(manifest, sort_keys=True)).hexdigest()


def _ed25519():
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise UsageError("signing needs the cryptography library: pip install 'dshreplay[sign]'") from None
    return serialization, ed25519, InvalidSignature


def sign_digest(key_file: str, digest: str) -> str:
    """An Ed25519 signature (hex) of `digest`, with the PEM private key in `key_file`."""
    serialization, ed25519, _ = _ed25519()
    try:
        key = serialization.load_pem_private_key(read_small_file(key_file, 64 * 1024, "the signing key"),
                                                 password=None)
    except (ReadError, ValueError, TypeError) as exc:
        raise UsageError(f"{shown_path(key_file)}: not an unencrypted PEM private key: {exc}") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise UsageError(f"{shown_path(key_file)}: the signing key must be an Ed25519 key")
    return key.sign(digest.encode()).hex()


def check_signature(key_file: str, digest: str, signature: str) -> bool:
    """Whether `signature` (hex) is the Ed25519 signature of `digest` by the PEM public key in `key_file`."""
    serialization, ed25519, invalid = _ed25519()
    try:
        key = serialization.load_pem_public_key(read_small_file(key_file, 64 * 1024, "the public key"))
    except (ReadError, ValueError, TypeError) as exc:
        raise UsageError(f"{shown_path(key_file)}: not a PEM public key: {exc}") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise UsageError(f"{shown_path(key_file)}: the public key must be an Ed25519 key")
    try:
        key.verify(bytes.fromhex(signature.strip()), digest.encode())
    except (invalid, ValueError):
        return False
    return True
