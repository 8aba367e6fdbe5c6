"""Signed bundles: export --sign-key writes an Ed25519 signature of the bundle
digest; verify-export --public-key checks it. Needs the `sign` extra (skips
without it; .ci/run installs it and fails if these skipped)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("cryptography")

from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ed25519  # noqa: E402

from conftest import SAMPLES  # noqa: E402


def key_pair(folder, name: str):
    key = ed25519.Ed25519PrivateKey.generate()
    private = folder / f"{name}.pem"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    public = folder / f"{name}.pub.pem"
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    return private, public


def test_a_signed_bundle_verifies_with_its_key_and_not_with_another_or_after_a_change(cli, tmp_path):
    private, public = key_pair(tmp_path, "auditor")
    _, stranger = key_pair(tmp_path, "stranger")
    bundle = tmp_path / "b"
    cli("export", SAMPLES / "prune.jsonl", "--out", bundle, "--sign-key", private)
    assert (bundle / "manifest.sig").is_file()
    assert cli("verify-export", bundle, "--public-key", public, "--json").json()["ok"]
    wrong = cli("verify-export", bundle, "--public-key", stranger, "--json", expect=1).json()["differences"]
    assert wrong == [{"path": "manifest.sig",
                      "problem": "the signature does not match the bundle digest and this public key"}]
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    manifest["generatedAt"] = "2030-01-01T00:00:00Z"  # any change to the manifest changes the digest
    (bundle / "manifest.json").write_bytes(json.dumps(manifest).encode())
    changed = cli("verify-export", bundle, "--public-key", public, "--json", expect=1).json()["differences"]
    assert [d["path"] for d in changed] == ["manifest.sig"]


def test_an_unsigned_bundle_checked_with_a_key_says_so(cli, tmp_path):
    _, public = key_pair(tmp_path, "auditor")
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b")
    result = cli("verify-export", tmp_path / "b", "--public-key", public, "--json", expect=1).json()
    assert result["differences"] == [{"path": "manifest.sig", "problem": "no signature in the bundle"}]


def test_a_signing_key_that_is_not_ed25519_is_a_usage_error(cli, tmp_path):
    (tmp_path / "bad.pem").write_text("not a key")
    result = cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", "--sign-key", tmp_path / "bad.pem",
                 expect=2)
    assert "not an unencrypted PEM private key" in result.stderr
    assert not (tmp_path / "b").exists()
