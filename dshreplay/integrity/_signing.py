"""The bundle digest and its signature, in forms standard tools check.

The manifest is written as its own RFC 8785 (JCS) canonical form and nothing
else (no newline), computed by the `rfc8785` package, so the bundle digest,
SHA-256 over that form, is what `sha256sum manifest.json` prints. The
signature is an SSH signature (PROTOCOL.sshsig, namespace "dshreplay") of
manifest.json's bytes: exactly what `ssh-keygen -Y sign -f KEY -n dshreplay
manifest.json` writes to manifest.json.sig (Ed25519 signatures are
deterministic), and what `ssh-keygen -Y verify -n dshreplay` checks. So the
digest someone wrote down and the signature cover the same bytes.

JCS writes numbers as IEEE 754 doubles: an integer beyond 2^53 - 1 (a log
header may hold one) has no exact JCS form, so the manifest holds it as its
decimal string (`representable`), the digits the log wrote (orjson reads an
integer beyond 64 bits as a float: `exact_integers` takes it back from the
log's text), and so does a whole number the log wrote as a float between
2^53 and 10^21 (JCS would write its digits, which a reader then takes for an
integer past 2^53 - 1: `rfc8785.dumps(json.load(...))` of the manifest fails).
Everything else round-trips.

Bundles written before (formats 1 and 2, no "integrity" member) are read
too: their digest is SHA-256 of the manifest as orjson writes it with sorted
keys (`legacy_digest`), and their `manifest.sig` the hex Ed25519 signature of
the digest's text.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import struct
from types import ModuleType
from typing import TYPE_CHECKING, Any

from dshreplay._jsvalues import MAX_SAFE_INTEGER, json_bytes, nesting_room
from dshreplay.errors import ReadError, UsageError
from dshreplay.integrity._signers import Allowed, read_signers
from dshreplay.io.reader import read_small_file, shown_path

if TYPE_CHECKING:  # (cryptography is imported only by the commands that sign or check)
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

NAMESPACE = "dshreplay"
MAGIC = b"SSHSIG"
ARMOR_BEGIN, ARMOR_END = b"-----BEGIN SSH SIGNATURE-----", b"-----END SSH SIGNATURE-----"
ED25519 = b"ssh-ed25519"
SIGN_HASH = "sha512"  # what ssh-keygen -Y sign uses
MAX_KEY_FILE = 64 * 1024


# -- the digest ---------------------------------------------------------------

def representable(value: Any) -> Any:
    """`value` with every integer JCS cannot write exactly (beyond ±(2^53 - 1)) made
    its decimal string; walked with an explicit stack (a header value may nest 1,024 deep)."""
    def fix(item: Any) -> Any:
        if type(item) is int and not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
            return str(item)
        if type(item) is float and item.is_integer() and MAX_SAFE_INTEGER < abs(item) < 1e21:
            return str(int(item))
        return item
    root = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]  # (a list or dict holding a value, its index or key)
    while stack:
        holder, key = stack.pop()
        item = holder[key]
        if type(item) is dict:
            copy: dict[Any, Any] | list[Any] = dict(item)
            holder[key] = copy
            stack.extend((copy, k) for k in copy)
        elif type(item) is list:
            copy = list(item)
            holder[key] = copy
            stack.extend((copy, k) for k in range(len(copy)))
        else:
            holder[key] = fix(item)
    return root[0]


def exact_integers(value: Any, text: bytes) -> Any:
    """`value` (what orjson made of the JSON `text`, redacted since, perhaps) with every number
    the text wrote as an integer beyond 64 bits, which orjson made a float, back as that integer,
    as the standard library reads it (exactly); `value` as it is when `text` does not parse so.
    Walked with an explicit stack, as `representable`."""
    import json
    try:
        with nesting_room():
            exact = json.loads(text)
    except (ValueError, RecursionError):  # (digits past the interpreter's ceiling, say)
        return value
    root = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, exact)]  # (a holder, its index or key, the exact twin)
    while stack:
        holder, key, twin = stack.pop()
        item = holder[key]
        if type(item) is float and type(twin) is int:
            holder[key] = twin
        elif type(item) is dict and type(twin) is dict:
            copy: dict[Any, Any] | list[Any] = dict(item)
            holder[key] = copy
            stack.extend((copy, k, twin[k]) for k in copy if k in twin)
        elif type(item) is list and type(twin) is list and len(item) == len(twin):
            copy = list(item)
            holder[key] = copy
            stack.extend((copy, k, twin[k]) for k in range(len(copy)))
    return root[0]


def canonical(value: Any) -> bytes:
    """The RFC 8785 canonical form of a JSON value; ValueError names what JCS cannot write."""
    import rfc8785
    try:
        with nesting_room():
            return rfc8785.dumps(value)
    except rfc8785.CanonicalizationError as exc:
        raise ValueError(str(exc)) from None


def manifest_digest(data: bytes) -> str:
    """The bundle digest of a manifest written in canonical form: `sha256sum manifest.json`."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def legacy_digest(manifest: dict[str, Any]) -> str:
    """The digest of a bundle of format 1 or 2: SHA-256 of orjson's sorted, compact form."""
    return "sha256:" + hashlib.sha256(json_bytes(manifest, sort_keys=True)).hexdigest()


# -- keys ---------------------------------------------------------------------

def _crypto() -> tuple[ModuleType, ModuleType, tuple[type[Exception], type[Exception]]]:
    """cryptography's serialization and ed25519 modules, and (InvalidSignature, UnsupportedAlgorithm)."""
    try:
        from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise UsageError("signing needs the cryptography library: pip install 'dshreplay[sign]'") from None
    return serialization, ed25519, (InvalidSignature, UnsupportedAlgorithm)


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def public_blob(key: Ed25519PublicKey) -> bytes:
    """An Ed25519 public key in SSH wire form (what an OpenSSH public key line holds in base64)."""
    serialization, _, _ = _crypto()
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return _string(ED25519) + _string(raw)


def fingerprint(blob: bytes) -> str:
    """A public key's fingerprint (`blob`: its SSH wire form) as `ssh-keygen -l` prints it:
    SHA256: and the unpadded base64 of the blob's SHA-256."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def _key_file(key_file: str | os.PathLike[str], option: str, what: str) -> tuple[bytes, str]:
    """A key file's bytes (read as every small input is) and its name as shown; a usage error naming
    the option when it cannot be read."""
    shown = shown_path(key_file)
    try:
        return read_small_file(key_file, MAX_KEY_FILE, what), shown
    except ReadError as exc:
        raise UsageError(f"{option} {shown}: {exc.message}") from None


class Signer:
    """An Ed25519 private key: an OpenSSH key file (`ssh-keygen -t ed25519`) or a PEM one."""

    def __init__(self, key_file: str | os.PathLike[str]) -> None:
        serialization, ed25519, (_, unsupported) = _crypto()
        data, shown = _key_file(key_file, "--sign-key", "the signing key")
        try:
            if b"-----BEGIN OPENSSH PRIVATE KEY-----" in data:
                key = serialization.load_ssh_private_key(data, password=None)
            else:
                key = serialization.load_pem_private_key(data, password=None)
        except TypeError:  # (cryptography: a key protected by a passphrase, and none given)
            raise UsageError(f"--sign-key {shown} is protected by a passphrase, which dshreplay does not ask "
                             "for: export without --sign-key, then sign manifest.json with `ssh-keygen -Y sign "
                             f"-f KEY -n {NAMESPACE} manifest.json`") from None
        except (ValueError, unsupported) as exc:
            raise UsageError(f"--sign-key {shown}: not an OpenSSH or PEM private key ({str(exc)[:60]})") from None
        if not isinstance(key, ed25519.Ed25519PrivateKey):
            raise UsageError(f"--sign-key {shown}: the signing key must be an Ed25519 key "
                             "(ssh-keygen -t ed25519)")
        self.key: Ed25519PrivateKey = key
        self.fingerprint = fingerprint(public_blob(key.public_key()))

    def sign(self, message: bytes) -> bytes:
        """The armored SSH signature of `message`, byte for byte what
        `ssh-keygen -Y sign -n dshreplay` writes."""
        signed = _signed_data(SIGN_HASH, hashlib.new(SIGN_HASH, message).digest())
        signature = _string(ED25519) + _string(self.key.sign(signed))
        blob = MAGIC + struct.pack(">I", 1) + _string(public_blob(self.key.public_key())) + _string(
            NAMESPACE.encode()) + _string(b"") + _string(SIGN_HASH.encode()) + _string(signature)
        text = base64.b64encode(blob)
        lines = [text[i:i + 70] for i in range(0, len(text), 70)]
        return b"\n".join([ARMOR_BEGIN, *lines, ARMOR_END]) + b"\n"


def _signed_data(hash_name: str, digest: bytes) -> bytes:
    """What an SSH signature signs (PROTOCOL.sshsig): the namespace, the hash's name and the message's hash."""
    return MAGIC + _string(NAMESPACE.encode()) + _string(b"") + _string(hash_name.encode()) + _string(digest)


def trusted_keys(key_file: str | os.PathLike[str]) -> list[Allowed]:
    """The Ed25519 public keys of a file given to --public-key: a PEM public key, OpenSSH
    public key lines (`ssh-ed25519 AAAA... comment`), or an allowed_signers file, each line with
    its principals and options (`signers`: which of them may sign is decided per signature,
    as `ssh-keygen -Y verify` decides it)."""
    serialization, ed25519, (_, unsupported) = _crypto()
    data, shown = _key_file(key_file, "--public-key", "the public key")

    def load(line: bytes) -> tuple[bytes, Any] | None:
        try:
            key = serialization.load_ssh_public_key(line)
        except (ValueError, unsupported):
            return None
        return (public_blob(key), key) if isinstance(key, ed25519.Ed25519PublicKey) else None
    if b"-----BEGIN PUBLIC KEY-----" in data:
        try:
            key = serialization.load_pem_public_key(data)
        except (ValueError, unsupported) as exc:
            raise UsageError(f"--public-key {shown}: not a PEM public key: {exc}") from None
        keys = [Allowed(public_blob(key), key)] if isinstance(key, ed25519.Ed25519PublicKey) else []
    else:
        keys = read_signers(data, load)
    if not keys:
        raise UsageError(f"--public-key {shown}: no Ed25519 public key in it (want an OpenSSH public key, an "
                         "allowed_signers file or a PEM public key)")
    return keys


def usable_keys(keys: list[Allowed], principal: str, now: float) -> list[Ed25519PublicKey]:
    """The keys that may sign as `principal` in our namespace at `now` (a format 1 or 2 bundle's
    signature names no key: any of them may have made it)."""
    return [k.key for k in keys if k.refuses(principal, NAMESPACE, now) is None]


# -- checking a signature -----------------------------------------------------

class _Wire:
    """SSH wire data read with every length checked."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise ValueError("truncated")
        part = self.data[self.at:self.at + n]
        self.at += n
        return part

    def string(self) -> bytes:
        return self.take(struct.unpack(">I", self.take(4))[0])


def check_ssh_signature(armored: bytes, message: bytes, keys: list[Allowed], principal: str,
                        now: float) -> tuple[str | None, str | None]:
    """Whether the armored SSH signature is one of `message` in namespace "dshreplay" by a key
    `keys` let sign as `principal` at `now`: (why not, or None; the fingerprint of the key it
    names, or None)."""
    _, _, (invalid, _) = _crypto()
    try:
        text = armored.strip()
        if not (text.startswith(ARMOR_BEGIN) and text.endswith(ARMOR_END)):
            return "it is not an armored SSH signature", None
        blob = base64.b64decode(b"".join(text[len(ARMOR_BEGIN):-len(ARMOR_END)].split()), validate=True)
        wire = _Wire(blob)
        if wire.take(6) != MAGIC or struct.unpack(">I", wire.take(4))[0] != 1:
            return "it is not an SSH signature of version 1", None
        public, namespace, _reserved, hash_name = wire.string(), wire.string(), wire.string(), wire.string()
        signature = _Wire(wire.string())
        kind, raw = signature.string(), signature.string()
    except (ValueError, binascii.Error, struct.error):
        return "it is not a well-formed SSH signature", None
    named = fingerprint(public)
    if namespace != NAMESPACE.encode():
        return f"it is made for another namespace than {NAMESPACE}", named
    if hash_name not in (b"sha256", b"sha512") or kind != ED25519:
        return "it is not an Ed25519 signature over SHA-256 or SHA-512", named
    lines = [k for k in keys if k.blob == public]
    if not lines:
        return f"it was made by the key {named}, not by the key given", named
    refused = [k.refuses(principal, NAMESPACE, now) for k in lines]
    if None not in refused:
        return str(refused[0]), named
    signer = lines[0].key
    signed = _signed_data(hash_name.decode(), hashlib.new(hash_name.decode(), message).digest())
    try:
        signer.verify(raw, signed)
    except invalid:
        return "it does not match manifest.json and the key given", named
    return None, named


def check_legacy_signature(keys: list[Ed25519PublicKey], digest: str, signature: str) -> bool:
    """Whether `signature` (hex) of a format 1 or 2 bundle is the Ed25519 signature of
    the text of its digest by one of `keys`."""
    _, _, (invalid, _) = _crypto()
    try:
        raw = bytes.fromhex(signature.strip())
    except ValueError:
        return False
    for key in keys:
        try:
            key.verify(raw, digest.encode())
            return True
        except invalid:
            continue
    return False
