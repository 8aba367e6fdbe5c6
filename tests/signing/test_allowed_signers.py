"""`verify-export --public-key ALLOWED_SIGNERS --principal ID` decides as `ssh-keygen -Y verify
-f ALLOWED_SIGNERS -I ID -n dshreplay` does: both run here on the same bundle and the same file,
case by case (principals and their patterns, valid-after, valid-before, namespaces,
cert-authority, options that do not parse, several lines), and must give the same answer.
It ignored the principal, valid-after and valid-before, and said verified where ssh-keygen
refused all three."""

from __future__ import annotations

import shutil
import subprocess

import pytest

pytest.importorskip("cryptography")

from conftest import SAMPLES  # noqa: E402

STAMP = "2026-01-01T00:00:00Z"
OTHER = "OTHER"  # (stands for another Ed25519 key in a case's lines)

# (allowed_signers lines, with KEY the signer's public key; the principal asked for; accepted?)
CASES = [
    ("dshreplay KEY", "dshreplay", True),
    ("alice@corp KEY", "dshreplay", False),
    ("alice@corp KEY", "alice@corp", True),
    ("ALICE@corp KEY", "alice@corp", False),
    ("other,alice@corp KEY", "alice@corp", True),
    ('"alice@corp" KEY', "alice@corp", True),
    ("*@corp,!mallory@corp KEY", "bob@corp", True),
    ("*@corp,!mallory@corp KEY", "mallory@corp", False),
    ("?ob@corp KEY", "bob@corp", True),
    ('dshreplay valid-before="20200101" KEY', "dshreplay", False),
    ('dshreplay valid-before="20200101000000Z" KEY', "dshreplay", False),
    ('dshreplay valid-after="29990101Z" KEY', "dshreplay", False),
    ('dshreplay valid-after="202001010000",valid-before="29990101" KEY', "dshreplay", True),
    ('dshreplay valid-after="20300101",valid-before="20200101" KEY', "dshreplay", False),
    ('dshreplay valid-after=20200101 KEY', "dshreplay", False),
    ('dshreplay valid-after="2020" KEY', "dshreplay", False),
    ('dshreplay namespaces="git" KEY', "dshreplay", False),
    ('dshreplay namespaces="git,dsh*" KEY', "dshreplay", True),
    ('dshreplay namespaces="*,!dshreplay" KEY', "dshreplay", False),
    ('dshreplay NAMESPACES="dshreplay" KEY', "dshreplay", True),
    ('dshreplay namespaces="git",namespaces="dshreplay" KEY', "dshreplay", False),
    ("dshreplay cert-authority KEY", "dshreplay", False),
    ("dshreplay frobnicate KEY", "dshreplay", False),
    ('dshreplay valid-before="20200101" KEY\ndshreplay KEY', "dshreplay", True),
    ("dshreplay OTHER\nalice@corp KEY", "dshreplay", False),
    ("# a comment\n\n  dshreplay KEY", "dshreplay", True),
    ("ssh-team KEY", "ssh-team", True),
    ('dshreplay namespaces="git, dshreplay" KEY', "dshreplay", False),
    ('dshreplay namespaces="git,dshreplay",valid-before="29990101" KEY comment with spaces', "dshreplay", True),
]


def run(command: list[str], cwd, stdin=None) -> int:
    data = stdin.read_bytes() if stdin else b""
    return subprocess.run(command, cwd=cwd, input=data, capture_output=True, timeout=60).returncode


@pytest.fixture(scope="module")
def signed(tmp_path_factory):
    """A bundle signed with an ssh-keygen key: (folder, bundle, public key text, another key's text)."""
    if shutil.which("ssh-keygen") is None:
        pytest.skip("not installed: ssh-keygen")
    folder = tmp_path_factory.mktemp("allowed")
    for name in ("signer", "other"):
        assert run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", name], folder) == 0
    from click.testing import CliRunner

    from dshreplay.cli import cli as command
    result = CliRunner().invoke(command, ["export", str(SAMPLES / "prune.jsonl"), "--out", str(folder / "b"),
                                       "--timestamp", STAMP, "--no-default-redaction", "--sign-key",
                                       str(folder / "signer")])
    assert result.exit_code == 0, result.output
    return (folder, folder / "b", " ".join((folder / "signer.pub").read_text().split()[:2]),
            " ".join((folder / "other.pub").read_text().split()[:2]))


@pytest.mark.parametrize("lines, principal, accepted", CASES)
def test_verify_export_and_ssh_keygen_agree_on_every_allowed_signers_case(cli, signed, lines, principal, accepted):
    folder, bundle, key, other = signed
    allowed = folder / "allowed_signers"
    allowed.write_text(lines.replace(OTHER, other).replace("KEY", key) + "\n")
    ssh = run(["ssh-keygen", "-Y", "verify", "-f", str(allowed), "-I", principal, "-n", "dshreplay", "-s",
               "manifest.json.sig"], bundle, stdin=bundle / "manifest.json")
    out = cli("verify-export", bundle, "--public-key", allowed, "--principal", principal, "--json",
              expect=None).json()
    ours = out["manifestCheckedBy"] == ["signature"]
    assert (ssh == 0, ours) == (accepted, accepted)
    assert out["ok"] is accepted and out["differences"] == ([] if accepted else out["differences"][:1])


def test_a_refused_signature_says_which_line_refused_it_and_why(cli, signed):
    folder, bundle, key, _ = signed
    allowed = folder / "allowed_signers"
    for lines, principal, why in [
            ("alice@corp KEY", "dshreplay", "allowed_signers line 1 lists the key for other principals than "
                                            "'dshreplay' (name the one to trust with --principal, as ssh-keygen "
                                            "-Y verify -I)"),
            ('# old key\ndshreplay valid-before="20200101Z" KEY', "dshreplay",
             "allowed_signers line 2: the key has expired (valid-before 2020-01-01 00:00:00 UTC)"),
            ('dshreplay valid-after="29990101Z" KEY', "dshreplay",
             "allowed_signers line 1: the key is not yet valid (valid-after 2999-01-01 00:00:00 UTC)"),
            ('dshreplay namespaces="git" KEY', "dshreplay",
             "allowed_signers line 1 does not permit the key in namespace 'dshreplay'"),
            ("dshreplay frobnicate KEY", "dshreplay", "allowed_signers line 1: bad options: unknown key option")]:
        allowed.write_text(lines.replace("KEY", key) + "\n")
        out = cli("verify-export", bundle, "--public-key", allowed, "--principal", principal, "--json",
                  expect=1).json()
        assert out["differences"] == [{"path": "manifest.json.sig", "problem": f"the signature does not hold: {why}"}]
