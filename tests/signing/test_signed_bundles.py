"""Signed bundles: export --sign-key writes manifest.json.sig, an SSH signature of
manifest.json's bytes (namespace "dshreplay"); verify-export --public-key checks it
with an OpenSSH public key, an allowed_signers file or a PEM key. Bundles of format
1 and 2 (manifest.sig, the hex Ed25519 signature of the digest's text) still verify.
Needs the `sign` extra (skips without it; .ci/run installs it and fails if these skipped)."""

from __future__ import annotations

import hashlib
import json

import orjson
import pytest

pytest.importorskip("cryptography")

from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ed25519  # noqa: E402

from conftest import SAMPLES  # noqa: E402

STAMP = "2026-01-01T00:00:00Z"


def key_pair(folder, name: str, private_format=serialization.PrivateFormat.OpenSSH):
    """An Ed25519 key written as ssh-keygen writes one (or as PEM): (private file, public line file, key)."""
    key = ed25519.Ed25519PrivateKey.generate()
    encoding = serialization.Encoding.PEM
    private = folder / name
    private.write_bytes(key.private_bytes(encoding, private_format, serialization.NoEncryption()))
    public = folder / f"{name}.pub"
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                                     serialization.PublicFormat.OpenSSH) + b" auditor@host\n")
    return private, public, key


def problems(cli, *args, expect=1) -> list:
    out = cli("verify-export", *args, "--json", expect=expect).json()
    return [(d["path"], d["problem"]) for d in out["differences"]]


def test_a_signed_bundle_verifies_with_its_key_and_not_with_another_or_after_a_change(cli, tmp_path):
    private, public, _ = key_pair(tmp_path, "auditor")
    _, stranger, _ = key_pair(tmp_path, "stranger")
    bundle = tmp_path / "b"
    cli("export", SAMPLES / "prune.jsonl", "--out", bundle, "--sign-key", private)
    assert (bundle / "manifest.json.sig").read_bytes().startswith(b"-----BEGIN SSH SIGNATURE-----\n")
    out = cli("verify-export", bundle, "--public-key", public, "--json").json()
    assert out["ok"] and out["manifestCheckedBy"] == ["signature"]
    allowed = tmp_path / "allowed_signers"  # (as `ssh-keygen -Y verify -f allowed_signers` reads it)
    allowed.write_text('# who may sign bundles\nother@host,dshreplay namespaces="git,dshreplay" '
                       + public.read_text())
    assert cli("verify-export", bundle, "--public-key", allowed, "--json").json()["manifestCheckedBy"] == [
        "signature"]
    wrong = problems(cli, bundle, "--public-key", stranger)
    assert wrong == [("manifest.json.sig", "the signature does not hold: it was made by the key "
                                           f"{_fingerprint(public)}, not by the key given")]
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    manifest["generatedAt"] = "2030-01-01T00:00:00Z"  # any change to the manifest's bytes
    import rfc8785
    (bundle / "manifest.json").write_bytes(rfc8785.dumps(manifest))
    assert problems(cli, bundle, "--public-key", public) == [
        ("manifest.json.sig", "the signature does not hold: it does not match manifest.json and the key given")]


def _fingerprint(public_file) -> str:
    import base64
    blob = base64.b64decode(public_file.read_text().split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def test_the_manifest_names_the_signing_key_and_a_signature_by_another_key_is_caught(cli, tmp_path):
    from dshreplay.integrity._signing import Signer
    private, public, _ = key_pair(tmp_path, "auditor")
    other, other_public, _ = key_pair(tmp_path, "other")
    bundle = tmp_path / "b"
    cli("export", SAMPLES / "prune.jsonl", "--out", bundle, "--sign-key", private)
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    assert manifest["integrity"]["signature"] == {"file": "manifest.json.sig", "format": "sshsig",
                                                  "namespace": "dshreplay", "key": _fingerprint(public)}
    # someone re-signs the bundle with a key of their own, and presents that key
    (bundle / "manifest.json.sig").write_bytes(Signer(other).sign((bundle / "manifest.json").read_bytes()))
    assert problems(cli, bundle, "--public-key", other_public) == [
        ("manifest.json", f'names the signing key "{_fingerprint(public)}", but the signature is by '
                          f"{_fingerprint(other_public)}")]


def test_an_unsigned_bundle_checked_with_a_key_says_so_and_a_signature_is_named_when_unchecked(cli, tmp_path):
    private, public, _ = key_pair(tmp_path, "auditor")
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b")
    assert problems(cli, tmp_path / "b", "--public-key", public) == [
        ("manifest.json.sig", "no signature in the bundle")]
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "s", "--sign-key", private)
    out = cli("verify-export", tmp_path / "s", "--json", expect=1).json()
    assert "the signature: manifest.json.sig is present, give --public-key to check it" in out["notChecked"]
    (tmp_path / "s" / "manifest.json.sig").unlink()  # the manifest says it is signed
    assert problems(cli, tmp_path / "s") == [("manifest.json.sig", "missing: the manifest says the bundle is signed")]


def test_a_pem_signing_key_makes_the_same_ssh_signature(cli, tmp_path):
    pem, public, _ = key_pair(tmp_path, "old", serialization.PrivateFormat.PKCS8)
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", "--sign-key", pem)
    assert cli("verify-export", tmp_path / "b", "--public-key", public, "--json").json()["ok"]


@pytest.mark.parametrize("content, message", [
    ("not a key", "not an OpenSSH or PEM private key"),
    (None, "the signing key must be an Ed25519 key (ssh-keygen -t ed25519)")])
def test_a_signing_key_that_is_not_an_ed25519_private_key_is_a_usage_error(cli, tmp_path, content, message):
    bad = tmp_path / "bad"
    if content is None:
        from cryptography.hazmat.primitives.asymmetric import ec
        content = ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()).decode()
    bad.write_text(content)
    result = cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", "--sign-key", bad, expect=2)
    assert message in result.stderr and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "b").exists()


def test_a_public_key_file_without_a_usable_key_is_a_usage_error(cli, tmp_path):
    private, public, _ = key_pair(tmp_path, "auditor")
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", "--sign-key", private)
    elsewhere = tmp_path / "allowed_signers"
    elsewhere.write_text("dshreplay ssh-ed25519 AAAAnot-a-key\n# no key at all\n")
    result = cli("verify-export", tmp_path / "b", "--public-key", elsewhere, expect=2)
    assert result.stderr == (f"dshreplay: usage error: --public-key {elsewhere}: no Ed25519 public key in it (want "
                             "an OpenSSH public key, an allowed_signers file or a PEM public key)\n")
    elsewhere.write_text('dshreplay namespaces="git" ' + public.read_text())  # (a key, not for this namespace)
    assert problems(cli, tmp_path / "b", "--public-key", elsewhere) == [
        ("manifest.json.sig", "the signature does not hold: allowed_signers line 1 does not permit the key in "
                              "namespace 'dshreplay'")]


def test_a_format_2_bundle_signed_with_a_pem_key_still_verifies(cli, tmp_path):
    """A bundle written before #22: manifest.sig holds the hex Ed25519 signature of
    "sha256:<hex>", the SHA-256 of the manifest as orjson writes it with sorted keys."""
    key = ed25519.Ed25519PrivateKey.generate()
    pem = tmp_path / "key.pub.pem"
    pem.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                  serialization.PublicFormat.SubjectPublicKeyInfo))
    stranger = tmp_path / "stranger.pub.pem"
    stranger.write_bytes(ed25519.Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    bundle = tmp_path / "b"
    cli("export", SAMPLES / "prune.jsonl", "--out", bundle, "--timestamp", STAMP, "--no-default-redaction")
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    del manifest["integrity"]
    manifest["format"] = 2
    (bundle / "manifest.json").write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    digest = "sha256:" + hashlib.sha256(orjson.dumps(manifest, option=orjson.OPT_SORT_KEYS)).hexdigest()
    (bundle / "manifest.sig").write_text(key.sign(digest.encode()).hex() + "\n")
    out = cli("verify-export", bundle, "--public-key", pem, "--digest", digest, "--json").json()
    assert out["ok"] and out["manifestCheckedBy"] == ["digest", "signature"]
    assert problems(cli, bundle, "--public-key", stranger) == [
        ("manifest.sig", "the signature does not match the bundle digest and this public key")]
