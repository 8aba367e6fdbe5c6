"""A third party checks a real bundle with standard tools alone, running exactly the
commands docs/guide/audit-bundles.md gives: `sha256sum` (the digest), the `rfc8785` one-liner
(the digest from any copy of the manifest's JSON), `jq` and `sha256sum -c` (every
file), `ssh-keygen -Y verify` (the signature), `ssh-keygen -l` (the key's name) and
`openssl dgst -mac HMAC` (the inputs, by whoever keeps the evidence key). And
`ssh-keygen -Y sign` makes of manifest.json exactly the manifest.json.sig export
wrote (Ed25519 signatures are deterministic)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("cryptography")

from conftest import SAMPLES  # noqa: E402

TOOLS = ("ssh-keygen", "sha256sum", "jq", "openssl")
STAMP = "2026-01-01T00:00:00Z"


def sh(command: str, cwd, expect: int = 0) -> str:
    """`command` run by bash in `cwd`, as a reader of the docs would type it."""
    done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == expect, f"{command}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture
def signed(cli, tmp_path):
    """A bundle of a log holding a secret, exported with redaction, an evidence key and an
    ssh-keygen key: (bundle, log, evidence key, private key, digest printed by export)."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")
    sh("ssh-keygen -q -t ed25519 -N '' -C auditor@example -f signer", tmp_path)
    log = tmp_path / "logs" / "audit-demo.jsonl"
    log.parent.mkdir()
    shutil.copy(SAMPLES / "audit-demo.jsonl", log)
    key = tmp_path / "evidence.key"
    result = cli("export", log, "--out", tmp_path / "bundle", "--timestamp", STAMP, "--evidence-key", key,
                 "--sign-key", tmp_path / "signer")
    digest = result.stdout.splitlines()[-1].removeprefix("bundle digest: ")
    return tmp_path / "bundle", log, key, tmp_path / "signer", digest


def test_the_digest_is_what_sha256sum_and_the_rfc8785_one_liner_print(signed):
    bundle, _, _, _, digest = signed
    assert sh("sha256sum manifest.json", bundle) == f"{digest.removeprefix('sha256:')}  manifest.json\n"
    pretty = bundle.parent / "manifest-pretty.json"  # (any copy of the manifest's JSON, reformatted)
    pretty.write_text(json.dumps(json.loads((bundle / "manifest.json").read_bytes()), indent=4))
    one_liner = ("python3 -c 'import json, sys, rfc8785; sys.stdout.buffer.write(rfc8785.dumps(json.load(sys.stdin)))'"
                 f" < {pretty} | sha256sum")
    python = f"PATH={Path(sys.executable).parent}:$PATH; "  # (the python3 that has rfc8785: this one)
    assert sh(python + one_liner, bundle) == f"{digest.removeprefix('sha256:')}  -\n"


def test_every_file_checks_with_jq_and_sha256sum_and_nothing_is_added(signed):
    bundle, *_ = signed
    command = """jq -r '.files[] | "\\(.sha256)  \\(.path)"' manifest.json | sha256sum -c --quiet"""
    listing = ("diff <(jq -r '.files[].path' manifest.json | LC_ALL=C sort) <(find . -type f ! -name manifest.json "
               "! -name manifest.json.sig | sed 's|^\\./||' | LC_ALL=C sort)")
    assert sh(command, bundle) == "" and sh(listing, bundle) == ""
    (bundle / "index.html").write_text("changed")
    assert "index.html: FAILED" in sh(command, bundle, expect=1)
    (bundle / "sample-audit-demo" / "smuggled.txt").write_text("x")
    assert sh(listing, bundle, expect=1).endswith("\n> sample-audit-demo/smuggled.txt\n")


def test_ssh_keygen_verifies_our_signature_and_signs_manifest_json_to_the_same_bytes(signed, tmp_path):
    bundle, _, _, private, _ = signed
    sh(f'echo "dshreplay $(cat {private}.pub)" > {tmp_path}/allowed_signers', bundle)
    verify = (f"ssh-keygen -Y verify -f {tmp_path}/allowed_signers -I dshreplay -n dshreplay "
              "-s manifest.json.sig < manifest.json")
    assert 'Good "dshreplay" signature for dshreplay with ED25519 key SHA256:' in sh(verify, bundle)
    fingerprint = sh(f"ssh-keygen -lf {private}.pub", bundle).split()[1]
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    assert manifest["integrity"]["signature"]["key"] == fingerprint
    # ssh-keygen -Y sign of the same bytes gives our signature, byte for byte
    shutil.copy(bundle / "manifest.json", tmp_path / "manifest.json")
    sh(f"ssh-keygen -Y sign -f {private} -n dshreplay manifest.json", tmp_path)
    assert (tmp_path / "manifest.json.sig").read_bytes() == (bundle / "manifest.json.sig").read_bytes()
    # a signature in another namespace, or of other bytes, is refused by both
    (bundle / "manifest.json").write_bytes((bundle / "manifest.json").read_bytes().replace(b'"ok"', b'"OK"', 1))
    assert "Signature verification failed" in sh(verify, bundle, expect=255)


def test_our_verify_export_accepts_the_ssh_public_key_the_allowed_signers_file_and_a_signature_made_later(
        cli, signed, tmp_path):
    bundle, log, key, private, digest = signed
    for trusted in (f"{private}.pub", tmp_path / "allowed_signers"):
        sh(f'echo "dshreplay $(cat {private}.pub)" > {tmp_path}/allowed_signers', tmp_path)
        out = cli("verify-export", bundle, "--public-key", trusted, "--digest", digest, "--evidence-key", key,
                  "--json").json()
        assert out["ok"] and out["manifestCheckedBy"] == ["digest", "signature"]
        assert out["inputs"] == [{"input": str(log), "sizeAtExport": log.stat().st_size, "status": "matches",
                                  "detail": "", "notCovered": None}]
    # a bundle exported unsigned, then signed with ssh-keygen (a key with a passphrase, say)
    cli("export", log, "--out", tmp_path / "later", "--timestamp", STAMP, "--evidence-key", key)
    sh(f"ssh-keygen -Y sign -f {private} -n dshreplay manifest.json", tmp_path / "later")
    out = cli("verify-export", tmp_path / "later", "--public-key", f"{private}.pub", "--evidence-key", key,
              "--json").json()
    assert out["ok"] and out["manifestCheckedBy"] == ["signature"]


def test_the_keeper_of_the_evidence_key_checks_the_inputs_with_openssl(signed):
    bundle, log, key, _, _ = signed
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    [entry] = manifest["sessions"]
    assert manifest["integrity"]["inputHash"] == "hmac-sha256"
    hmac_of_log = sh(f"openssl dgst -sha256 -mac HMAC -macopt hexkey:$(cat {key}) {log}", bundle)
    assert hmac_of_log.split("= ")[1].strip() == entry["sha256"]
    named = sh(f"printf %s 'dshreplay evidence key' | openssl dgst -sha256 -mac HMAC -macopt hexkey:$(cat {key})",
               bundle)
    assert named.split("= ")[1].strip() == manifest["integrity"]["evidenceKey"]
    chain = ("python3 -c 'import hashlib, hmac, sys; key = bytes.fromhex(open(sys.argv[1]).read()); "
             "h = hashlib.sha256(b\"dshreplay line chain v1\").digest()\n"
             "for line in open(sys.argv[2], \"rb\"): h = hmac.digest(key, h + line, \"sha256\")\n"
             f"print(h.hex())' {key} {log}")
    assert sh(chain, bundle).strip() == entry["chain"]["head"]
    row = sh(f"sed -n 5p {log} | openssl dgst -sha256 -mac HMAC -macopt hexkey:$(cat {key})", bundle)
    events = (bundle / "sample-audit-demo" / "events.csv").read_text().splitlines()
    line_5 = next(r for r in events[1:] if r.split(",")[1] == "5")
    assert line_5.split(",")[-1] == row.split("= ")[1].strip()


def documented_commands() -> str:
    """The shell block of docs/guide/audit-bundles.md's "Checking a bundle with standard tools", as written."""
    text = (Path(__file__).parents[2] / "docs" / "guide" / "audit-bundles.md").read_text()
    section = text[text.index("## Checking a bundle with standard tools"):]
    return section[section.index("```sh\n") + 6:section.index("\n```\n")]


def test_the_documented_commands_run_as_written_and_write_nothing_in_the_bundle(cli, signed, tmp_path):
    bundle, log, key, private, digest = signed
    before = sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*"))
    python = Path(sys.executable).parent  # (the python3 that has rfc8785: this one)
    script = f"set -euo pipefail\nexport PATH={python}:$PATH\n{documented_commands()}\n"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "BUNDLE": str(bundle), "SIGNER": f"{private}.pub",
                               "EVIDENCE_KEY": str(key), "LOG": str(log)})
    assert done.returncode == 0, done.stderr
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    [entry] = manifest["sessions"]
    events = (bundle / "sample-audit-demo" / "events.csv").read_text().splitlines()
    row_5 = next(r for r in events[1:] if r.split(",")[1] == "5").split(",")[-1]
    hexdigest = digest.removeprefix("sha256:")
    fingerprint = manifest["integrity"]["signature"]["key"]
    lines = done.stdout.splitlines()
    assert lines[:3] == [f"{hexdigest}  manifest.json", f"{hexdigest}  -",
                         f'Good "dshreplay" signature for dshreplay with ED25519 key {fingerprint}']
    assert lines[3].split()[1] == fingerprint and lines[3].endswith("(ED25519)")
    assert [line.split("= ")[-1] for line in lines[4:7]] == [entry["sha256"], row_5,
                                                              manifest["integrity"]["evidenceKey"]]
    assert lines[7:] == [entry["chain"]["head"]]
    assert sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*")) == before  # nothing written in it
    out = cli("verify-export", bundle, "--public-key", f"{private}.pub", "--digest", digest, "--evidence-key", key,
              "--json").json()
    assert out["ok"] and out["differences"] == []
