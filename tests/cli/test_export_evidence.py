"""Evidence-grade pins (#22): no hash in a redacted bundle is an oracle of the bytes it
masked (the inputs' hashes are keyed with an evidence key kept beside the bundle);
every input is pinned, readable or not, and found where --inputs says; verify-export
shows when the bundle was made, each input's size at export, what a log that grew
holds beyond the bundle, and what it did not check; the manifest is written in its
RFC 8785 form (its digest is `sha256sum manifest.json`)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import shutil

import pytest
import rfc8785

from dshreplay.testing.samples import LogBuilder

from conftest import SAMPLES

STAMP = "2026-01-01T00:00:00Z"
PASSWORD = b"Summer2024!"
GUESSES = [b"password", b"123456", b"Summer2023!", PASSWORD, b"Winter2024!", b"hunter2"]
HEX64 = re.compile(rb"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")


def digest_of(result) -> str:
    return result.stdout.splitlines()[-1].removeprefix("bundle digest: ")


def password_log(path):
    """A log whose tool result holds `"password": "Summer2024!"` (JSON text the default rules mask)."""
    b = LogBuilder("sample-password")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("read the database settings")
    b.tool_round("bash", '{"command": "cat db.json"}', '{"host": "db.internal", "password": "Summer2024!"}')
    b.end_step()
    b.start_step()
    b.assistant("the database is db.internal")
    b.end_step()
    b.end_turn()
    return b.write(path)


def hashes_in(bundle) -> set[bytes]:
    """Every 64-hex-digit string in every file of the bundle."""
    found: set[bytes] = set()
    for path in bundle.rglob("*"):
        if path.is_file():
            found.update(HEX64.findall(path.read_bytes()))
    return found


def plain_hashes_of(log: bytes) -> set[bytes]:
    """What an attacker computes of a candidate log: its SHA-256, each line's, and the
    plain line chain (every link, as `dshreplay line chain v1` defines it)."""
    hashes = {hashlib.sha256(log).hexdigest().encode()}
    link = hashlib.sha256(b"dshreplay line chain v1").digest()
    for line in log.splitlines(keepends=True):
        hashes.add(hashlib.sha256(line).hexdigest().encode())
        link = hashlib.sha256(link + line).digest()
        hashes.add(link.hex().encode())
    return hashes


# -- 3. no oracle of unredacted bytes -------------------------------------------------------------

def test_a_masked_password_cannot_be_confirmed_from_the_bundles_hashes(cli, tmp_path, evidence_key_file):
    log = password_log(tmp_path / "session.jsonl")
    original = log.read_bytes()
    bundle = tmp_path / "b"
    result = cli("export", log, "--out", bundle, "--timestamp", STAMP)
    assert PASSWORD not in b"".join(p.read_bytes() for p in bundle.rglob("*") if p.is_file())
    in_bundle = hashes_in(bundle)
    assert len(in_bundle) > 20  # (the bundle is full of hashes: events.csv, the manifest, the chain)
    for guess in GUESSES:  # each candidate log rebuilt with a guess; the right one is the original
        candidate = original.replace(PASSWORD, guess)
        assert not plain_hashes_of(candidate) & in_bundle, guess
    assert original.replace(PASSWORD, PASSWORD) == original
    # whoever keeps the key and the log checks the bundle against it
    out = cli("verify-export", bundle, "--digest", digest_of(result), "--evidence-key", evidence_key_file,
              "--json").json()
    assert out["ok"] and out["inputs"][0]["status"] == "matches"
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    assert manifest["integrity"]["inputHash"] == "hmac-sha256"
    key = bytes.fromhex(evidence_key_file.read_text())
    import hmac
    assert manifest["integrity"]["evidenceKey"] == hmac.digest(key, b"dshreplay evidence key", "sha256").hex()
    assert manifest["sessions"][0]["sha256"] == hmac.digest(key, original, "sha256").hex()


def test_the_search_for_plain_hashes_finds_them_when_nothing_is_redacted(cli, tmp_path):
    """The control of the test above: with no redaction the hashes are plain SHA-256 (as
    before #22), and the same search finds the log's, its lines' and the chain's."""
    log = password_log(tmp_path / "session.jsonl")
    bundle = tmp_path / "b"
    cli("export", log, "--out", bundle, "--timestamp", STAMP, "--no-default-redaction")
    found = plain_hashes_of(log.read_bytes()) & hashes_in(bundle)
    password_line = next(line for line in log.read_bytes().splitlines(keepends=True) if PASSWORD in line)
    assert hashlib.sha256(log.read_bytes()).hexdigest().encode() in found
    assert hashlib.sha256(password_line).hexdigest().encode() in found
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    assert manifest["integrity"] == {"canonical": "rfc8785", "digest": "sha256", "inputHash": "sha256",
                                     "evidenceKey": None, "signature": None}


def test_an_export_that_redacts_needs_an_evidence_key(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("DSHREPLAY_EVIDENCE_KEY")
    result = cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", expect=2)
    assert result.stderr == ("dshreplay: usage error: this export redacts, so the hashes of its inputs are keyed: "
                             "give --evidence-key FILE (made if absent; keep it with the logs, never with the "
                             "bundle), or export with --no-default-redaction and no --redact to hash them plainly\n")
    assert not (tmp_path / "b").exists()
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "plain", "--no-default-redaction")  # (nothing keyed)
    rules = tmp_path / "rules.json"
    rules.write_text('{"keys": ["cwd"]}')
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "r", "--no-default-redaction", "--redact", rules,
        expect=2)


def test_the_evidence_key_is_made_once_with_mode_0600_and_reused(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("DSHREPLAY_EVIDENCE_KEY")
    key = tmp_path / "keys" / "case-17.key"
    key.parent.mkdir()
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "a", "--timestamp", STAMP, "--evidence-key", key)
    text = key.read_text()
    assert re.fullmatch(r"[0-9a-f]{64}\n", text) and os.stat(key).st_mode & 0o777 == 0o600
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", "--timestamp", STAMP, "--evidence-key", key)
    assert key.read_text() == text  # (never replaced)
    assert (tmp_path / "a" / "manifest.json").read_bytes() == (tmp_path / "b" / "manifest.json").read_bytes()
    other = tmp_path / "keys" / "other.key"
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "c", "--timestamp", STAMP, "--evidence-key", other)
    assert (tmp_path / "c" / "manifest.json").read_bytes() != (tmp_path / "a" / "manifest.json").read_bytes()


@pytest.mark.parametrize("where", ["b/evidence.key", "b"])
def test_an_evidence_key_inside_out_is_refused(cli, tmp_path, where):
    result = cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", "--evidence-key", tmp_path / where,
                 expect=2)
    assert "lies inside --out" in result.stderr and "never in it" in result.stderr
    assert not (tmp_path / "b").exists()


def test_a_file_that_is_no_evidence_key_is_a_usage_error(cli, tmp_path):
    bad = tmp_path / "bad.key"
    bad.write_text("secret\n")
    result = cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", "--evidence-key", bad, expect=2)
    assert result.stderr == (f"dshreplay: usage error: --evidence-key {bad} is not an evidence key: want 64 hex "
                             "digits (32 bytes) and a newline, as `openssl rand -hex 32` prints\n")
    assert bad.read_text() == "secret\n"


WEAK_KEYS = [
    ("00" * 32, "it is one byte repeated"),
    ("deadbeef" * 8, "it repeats a pattern of 4 bytes"),
    ("00112233445566778899aabbccddeeff" * 2, "it repeats a pattern of 16 bytes"),
    (bytes(range(32)).hex(), "its bytes step by only 1 distinct differences (a counter or a progression)"),
    (b"Summer2024!Summer2024!Summer2024".hex(), "it holds only 9 distinct byte values"),
    (b"Q7#kP!x9@Lm2$Vz8&Rt4*Yw6^Nb3%Hd5".hex(), "its bytes are all printable text (the hex of a passphrase, "
                                               "not random bytes)"),
    (hashlib.sha256(b"").hexdigest(), "it is a published example or test key"),
]


@pytest.mark.parametrize("text, why", WEAK_KEYS)
def test_an_evidence_key_that_can_be_guessed_is_refused_by_every_command_that_reads_one(cli, tmp_path, text, why):
    """A key of all zeros was accepted: its fingerprint in the manifest named it, and rawSha256
    then confirmed a guessed password offline. Refused, with a way to make a good one."""
    weak = tmp_path / "weak.key"
    weak.write_text(text + "\n")
    expected = (f"dshreplay: usage error: --evidence-key {weak} cannot be used: {why}, so it can be guessed (and "
                "with it every value the bundle masks, from their keyed hashes); make one with `openssl rand -hex "
                "32 > FILE`, or name a file that does not exist and dshreplay makes it\n")
    result = cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", "--evidence-key", weak, expect=2)
    assert result.stderr == expected and not (tmp_path / "b").exists()
    assert weak.read_text() == text + "\n"
    result = cli("index", SAMPLES / "prune.jsonl", "--db", tmp_path / "i.duckdb", "--evidence-key", weak, expect=2)
    assert result.stderr == expected
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "good", "--timestamp", STAMP)
    result = cli("verify-export", tmp_path / "good", "--evidence-key", weak, expect=2)
    assert result.stderr == expected


def test_a_key_dshreplay_makes_or_openssl_draws_is_accepted():
    from dshreplay.integrity._evidence import weakness
    assert [weakness(secrets.token_bytes(32)) for _ in range(20_000)] == [None] * 20_000


def test_without_the_key_the_bundle_is_checked_and_the_inputs_are_named_unchecked(cli, tmp_path, monkeypatch):
    log = tmp_path / "prune.jsonl"
    shutil.copy(SAMPLES / "prune.jsonl", log)
    digest = digest_of(cli("export", log, "--out", tmp_path / "b", "--timestamp", STAMP))
    monkeypatch.delenv("DSHREPLAY_EVIDENCE_KEY")
    unchecked = "the inputs: their hashes are keyed (HMAC-SHA256, the export redacted), give --evidence-key to " \
                "check them"
    out = cli("verify-export", tmp_path / "b", "--digest", digest, "--json").json()
    assert out["ok"] and out["notChecked"] == [unchecked]
    assert out["inputs"] == [{"input": str(log), "sizeAtExport": 6361, "status": "not checked",
                              "detail": "its hash is keyed: give --evidence-key", "notCovered": None}]
    (tmp_path / "b" / "sample-prune" / "tools.csv").write_text("changed")  # the bundle's own files still count
    assert cli("verify-export", tmp_path / "b", "--digest", digest, "--json", expect=1).json()["differences"] == [
        {"path": "sample-prune/tools.csv", "problem": "size changed: 7 bytes, manifest says "
                                                      f"{_listed(tmp_path / 'b', 'sample-prune/tools.csv')}"}]
    stranger = tmp_path / "stranger.key"
    stranger.write_text(secrets.token_hex(32) + "\n")
    out = cli("verify-export", tmp_path / "b", "--evidence-key", stranger, "--json", expect=1).json()
    assert out["notChecked"][-1].startswith("the inputs: the evidence key given (fingerprint ")
    assert out["notChecked"][-1].endswith("...) is not the one this bundle was made with")


def _listed(bundle, path) -> int:
    manifest = json.loads((bundle / "manifest.json").read_bytes())
    return next(f["size"] for f in manifest["files"] if f["path"] == path)


# -- 4. every input pinned ------------------------------------------------------------------------

UNREADABLE = {
    "bad-header.jsonl": b'{"type":"note","text":"no session header"}\n{"type":"turn/start","seq":0}\n',
    "not-json.jsonl": b"this is not JSON\n",
    "corrupt.jsonl.zstd": b"\x28\xb5\x2f\xfd" + b"\x00" * 40,
}


def test_unreadable_inputs_are_pinned_and_a_swap_is_caught(cli, tmp_path, evidence_key_file):
    import hmac
    folder = tmp_path / "logs"
    folder.mkdir()
    for name, data in UNREADABLE.items():
        (folder / name).write_bytes(data)
    shutil.copy(SAMPLES / "prune.jsonl", folder / "good.jsonl")
    given = [folder / name for name in (*UNREADABLE, "good.jsonl")]
    result = cli("export", *given, "--out", tmp_path / "b", "--timestamp", STAMP, expect=2)
    digest = digest_of(result)
    key = bytes.fromhex(evidence_key_file.read_text())
    sessions = json.loads((tmp_path / "b" / "manifest.json").read_bytes())["sessions"]
    assert [s["verdict"] for s in sessions] == ["unreadable"] * 3 + ["ok"]
    for entry, path in zip(sessions, given):
        assert entry["size"] == path.stat().st_size
        assert entry["sha256"] == hmac.digest(key, path.read_bytes(), "sha256").hex()
    assert cli("verify-export", tmp_path / "b", "--digest", digest, "--json").json()["ok"]
    (folder / "not-json.jsonl").write_bytes(b"this is not JS0N\n")  # the same size, other bytes
    (folder / "bad-header.jsonl").unlink()
    out = cli("verify-export", tmp_path / "b", "--digest", digest, "--json", expect=1).json()
    assert out["differences"] == [
        {"path": str(folder / "bad-header.jsonl"),
         "problem": "input not found (give its folder with --inputs, or --bundle-only to check the bundle alone)"},
        {"path": str(folder / "not-json.jsonl"), "problem": "input content changed (HMAC-SHA256 differs)"}]
    grown = cli("verify-export", tmp_path / "b", "--digest", digest, "--grown", "--bundle-only", "--json",
                expect=1).json()
    assert grown["differences"] == [
        {"path": str(folder / "not-json.jsonl"), "problem": "input content changed (HMAC-SHA256 differs); it was "
         "unreadable at export, so only its exact bytes are pinned (no line chain to show it only grew)"}]


def test_an_input_whose_bytes_could_not_be_read_at_all_is_named_unpinned(cli, tmp_path):
    (tmp_path / "empty").mkdir()  # (a folder holding no log: no bytes to pin)
    result = cli("export", tmp_path / "empty", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", expect=2)
    out = cli("verify-export", tmp_path / "b", "--digest", digest_of(result), "--json").json()
    assert out["ok"] and out["inputs"][0] == {
        "input": str(tmp_path / "empty"), "sizeAtExport": None, "status": "not checked",
        "detail": "the export could not read its bytes: the manifest pins none", "notCovered": None}
    assert out["notChecked"] == ["1 inputs the export could not read at all: the manifest pins none of their bytes"]


def test_inputs_says_where_every_input_is_looked_for_absolute_paths_included(cli, tmp_path):
    original = tmp_path / "evidence" / "case" / "prune.jsonl"
    original.parent.mkdir(parents=True)
    shutil.copy(SAMPLES / "prune.jsonl", original)
    digest = digest_of(cli("export", original, "--out", tmp_path / "b", "--timestamp", STAMP))
    copies = tmp_path / "copies"
    copies.mkdir()
    (copies / "prune.jsonl").write_bytes(original.read_bytes().replace(b"coding agent", b"CODING AGENT"))
    out = cli("verify-export", tmp_path / "b", "--digest", digest, "--inputs", copies, "--json", expect=1).json()
    assert out["differences"] == [{"path": str(original), "problem": "input content changed (HMAC-SHA256 differs)"}]
    (copies / "prune.jsonl").unlink()  # the original still lies at its absolute path: --inputs does not look there
    out = cli("verify-export", tmp_path / "b", "--inputs", copies, "--json", expect=1).json()
    assert [d["problem"] for d in out["differences"]] == [
        "input not found (give its folder with --inputs, or --bundle-only to check the bundle alone)"]
    mirrored = copies / original.relative_to(original.anchor)  # DIR/<the absolute path, made relative>
    mirrored.parent.mkdir(parents=True)
    shutil.copy(original, mirrored)
    assert cli("verify-export", tmp_path / "b", "--inputs", copies, "--digest", digest, "--json").json()[
        "inputs"][0]["status"] == "matches"


def test_verify_export_shows_when_the_bundle_was_made_and_each_inputs_size_at_export(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "prune.jsonl", "prune.jsonl")
    digest = digest_of(cli("export", "prune.jsonl", "--out", "b", "--timestamp", STAMP))
    text = cli("verify-export", "b", "--digest", digest).stdout.splitlines()
    assert text == [f"bundle   format {_format(tmp_path / 'b')}, made {STAMP}, 1 session",
                    "input    prune.jsonl (6361 bytes at export): matches",
                    "b: verified: every file matches the manifest, the manifest its digest, and every input "
                    "matches it"]
    out = cli("verify-export", tmp_path / "b", "--json", expect=1).json()
    assert out["generatedAt"] == STAMP and out["inputs"][0]["sizeAtExport"] == 6361


def _format(bundle):
    return json.loads((bundle / "manifest.json").read_bytes())["format"]


def test_verify_export_never_says_verified_when_the_manifest_went_unchecked(cli, tmp_path):
    log = tmp_path / "prune.jsonl"
    shutil.copy(SAMPLES / "prune.jsonl", log)
    cli("export", log, "--out", tmp_path / "b", "--timestamp", STAMP)
    text = cli("verify-export", tmp_path / "b", expect=1).stdout.splitlines()  # (the inputs vouch for themselves)
    assert text[-2:] == ["not checked: the manifest itself: give --digest (written down at export) or "
                         "--public-key; files that match a manifest rewritten with them prove nothing",
                         f"{tmp_path / 'b'}: not verified: every input matches the manifest, but no digest or "
                         "signature vouched for the bundle's own files, and a manifest rewritten with them matches "
                         "too (give --digest or --public-key)"]
    log.unlink()
    result = cli("verify-export", tmp_path / "b", "--bundle-only", expect=1)
    assert result.stdout.splitlines()[-1] == (f"{tmp_path / 'b'}: nothing checked: no digest or signature vouched "
                                              "for the manifest (give --digest or --public-key)")


def test_a_bundle_without_a_session_is_never_verified(cli, tmp_path):
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", "--timestamp", STAMP)
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_bytes())
    shutil.rmtree(tmp_path / "b" / "sample-prune")
    manifest["sessions"] = []
    manifest["files"] = [f for f in manifest["files"] if not f["path"].startswith("sample-prune/")]
    data = rfc8785.dumps(manifest)
    (tmp_path / "b" / "manifest.json").write_bytes(data)
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    out = cli("verify-export", tmp_path / "b", "--digest", digest, "--json", expect=1).json()
    assert not out["ok"] and out["differences"] == [] and out["notChecked"] == ["any session: the bundle holds none"]
    result = cli("verify-export", tmp_path / "b", "--digest", digest, expect=1)
    assert result.stdout.splitlines()[-1] == f"{tmp_path / 'b'}: nothing checked: the bundle holds no session"


# -- 4. --grown: from the first new byte; what the bundle does not cover -------------------------

def grown_case(cli, tmp_path, ending: bytes | None):
    """A log exported while its last line was being written: `ending` is the start of a line
    after the last complete one (None: the last line is whole but lacks its newline)."""
    b = LogBuilder("sample-grow")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("first")
    lines = b.to_bytes().splitlines(keepends=True)
    log = tmp_path / "grow.jsonl"
    log.write_bytes(b"".join(lines)[:-1] if ending is None else b"".join(lines) + ending)
    digest = digest_of(cli("export", log, "--out", tmp_path / "b", "--timestamp", STAMP, expect=None))
    return log, len(lines), digest


def test_a_log_exported_without_its_final_newline_that_then_grew_is_growth_from_the_first_new_byte(cli, tmp_path):
    log, n, digest = grown_case(cli, tmp_path, None)
    last = log.read_bytes().splitlines(keepends=True)[-1]
    assert not last.endswith(b"\n")
    more = b'{"type":"session/title","seq":5,"time":1783352166000,"data":{"title":"later"}}\n'
    with log.open("ab") as fh:
        fh.write(b"\n" + more * 2)
    out = cli("verify-export", tmp_path / "b", "--grown", "--digest", digest, "--json").json()
    assert out["ok"] and out["differences"] == []
    detail = (f"the rest of line {n} and lines {n + 1}..{n + 2} appended ({1 + 2 * len(more)} bytes, 2 events): "
              "the bundle does not cover them")
    assert out["inputs"][0]["status"] == "grew" and out["inputs"][0]["detail"] == detail
    exported = sum(len(line) for line in log.read_bytes().splitlines(keepends=True)[:n]) - 1
    assert out["inputs"][0]["notCovered"] == {"fromByte": exported, "fromLine": n, "lines": 3,
                                              "bytes": 1 + 2 * len(more), "events": 2, "completesLine": True}


def test_a_log_exported_with_a_torn_last_line_that_was_then_completed_is_growth(cli, tmp_path):
    record = b'{"type":"session/title","seq":5,"time":1783352166000,"data":{"title":"later"}}\n'
    log, n, digest = grown_case(cli, tmp_path, record[:30])  # a crash, or a write still under way
    with log.open("ab") as fh:
        fh.write(record[30:] + record.replace(b'"seq":5', b'"seq":6'))
    out = cli("verify-export", tmp_path / "b", "--grown", "--digest", digest, "--json").json()
    assert out["ok"]
    assert out["inputs"][0]["detail"] == (f"the rest of line {n + 1} and lines {n + 2}..{n + 2} appended "
                                          f"({len(record) - 30 + len(record)} bytes, 2 events): the bundle does "
                                          "not cover them")
    with log.open("r+b") as fh:  # a byte of the exported torn line changed: not growth
        fh.seek(sum(len(x) for x in log.read_bytes().splitlines(keepends=True)[:n]) + 3)
        fh.write(b"X")
    assert cli("verify-export", tmp_path / "b", "--grown", "--json", expect=1).json()["differences"][0][
        "problem"].startswith("rewritten inside the exported prefix")


def test_a_stale_bundle_presented_with_grown_says_what_it_does_not_cover(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "prune.jsonl"
    shutil.copy(SAMPLES / "prune.jsonl", log)
    digest = digest_of(cli("export", "prune.jsonl", "--out", "b", "--timestamp", STAMP))
    lines = log.read_bytes().count(b"\n")
    more = b'{"type":"session/title","seq":99,"time":1783352166000,"data":{"title":"later"}}\n'
    with log.open("ab") as fh:
        fh.write(more * 4)
    result = cli("verify-export", "b", "--grown", "--digest", digest)
    assert result.stdout.splitlines()[1:] == [
        f"input    prune.jsonl (6361 bytes at export): grew: lines {lines + 1}..{lines + 4} appended "
        f"({4 * len(more)} bytes, 4 events): the bundle does not cover them",
        "b: verified: every file matches the manifest, the manifest its digest, and every input matches it "
        "(1 grew since)"]


# -- 5. the manifest in its RFC 8785 form ---------------------------------------------------------

def test_values_a_log_header_controls_are_written_as_rfc8785_writes_them(cli, tmp_path):
    """Where orjson's sorted form (the digest of format 2) and jq differed from RFC 8785:
    an integer above 2^53 (held as its decimal string: JCS has no exact form of it),
    a float like 1.0 (written 1), U+007F (written raw, as JCS says)."""
    log = LogBuilder("sample-jcs", seedLength=2**53 + 1, delegationDepth=1.0, agentPreset="a\x7fb",
                     origin={"z": 1, "é": 2, "\U0001f600": 3, "\ue000": 4}).write(tmp_path / "jcs.jsonl")
    result = cli("export", log, "--out", tmp_path / "b", "--timestamp", STAMP, expect=None)
    written = (tmp_path / "b" / "manifest.json").read_bytes()
    assert digest_of(result) == "sha256:" + hashlib.sha256(written).hexdigest()
    assert rfc8785.dumps(json.loads(written)) == written
    header = json.loads(written)["sessions"][0]["header"]
    assert header["seedLength"] == "9007199254740993"
    assert b'"delegationDepth":1,' in written and b'"agentPreset":"a\x7fb"' in written
    assert '"origin":{"z":1,"é":2,"😀":3,"\ue000":4}'.encode() in written  # (keys in UTF-16 order)
    assert cli("verify-export", tmp_path / "b", "--digest", digest_of(result), "--json").json()["ok"]


def test_every_log_integer_past_2_to_the_53_is_its_decimal_string_and_the_documented_recheck_holds(cli, tmp_path):
    """orjson reads an integer past 64 bits as a float: 2^64 was written 18446744073709552000 (and
    2^64 + 1 the same), which `rfc8785.dumps(json.load(...))` then refused. Each is now the digits
    the log wrote; a whole number the log wrote as a float past 2^53 is its digits too."""
    log = LogBuilder("sample-big", seedLength=111, delegationDepth=222,
                     origin={"a": [333, {"b": 444}], "c": 555.0}).write(tmp_path / "big.jsonl")
    text = log.read_bytes()
    for small, big in [(b'"seedLength":111', b'"seedLength":18446744073709551616'),
                       (b'"delegationDepth":222', b'"delegationDepth":-9223372036854775809'),
                       (b'"origin":{"a":[333,{"b":444}],"c":555.0}',
                        b'"origin":{"a":[18446744073709551617,{"b":123456789012345678901234567890}],"c":1e20}')]:
        assert small in text
        text = text.replace(small, big)
    log.write_bytes(text)
    result = cli("export", log, "--out", tmp_path / "b", "--timestamp", STAMP, expect=None)
    written = (tmp_path / "b" / "manifest.json").read_bytes()
    header = json.loads(written)["sessions"][0]["header"]
    assert (header["seedLength"], header["delegationDepth"]) == ("18446744073709551616", "-9223372036854775809")
    assert header["origin"] == {"a": ["18446744073709551617", {"b": "123456789012345678901234567890"}],
                                "c": "100000000000000000000"}
    assert rfc8785.dumps(json.loads(written)) == written  # the recheck docs/guide/audit-bundles.md gives
    assert cli("verify-export", tmp_path / "b", "--digest", digest_of(result), "--json").json()["ok"]


def test_an_input_whose_name_is_not_utf8_is_pinned_as_its_bytes_and_found_again(cli, tmp_path, monkeypatch):
    """Its name was recorded as the text `log-\\xff.jsonl` alone, and verify-export, run in the
    same folder, reported it not found (that text names another file)."""
    monkeypatch.chdir(tmp_path)
    name = os.fsdecode(b"log-\xff.jsonl")
    shutil.copy(SAMPLES / "prune.jsonl", name)
    digest = digest_of(cli("export", name, "--out", "b", "--timestamp", STAMP))
    [entry] = json.loads((tmp_path / "b" / "manifest.json").read_bytes())["sessions"]
    assert (entry["input"], entry["inputBytes"]) == ("log-\\xff.jsonl", "bG9nLf8uanNvbmw=")  # base64 of the bytes
    out = cli("verify-export", "b", "--digest", digest, "--json").json()
    assert out["ok"] and [(i["input"], i["status"]) for i in out["inputs"]] == [("log-\\xff.jsonl", "matches")]
    folder = tmp_path / os.fsdecode(b"case-\xfe")  # a session folder so named: its log file is pinned too
    folder.mkdir()
    shutil.copy(SAMPLES / "prune.jsonl", folder / "session.jsonl")
    digest = digest_of(cli("export", folder.name, "--out", "c", "--timestamp", STAMP))
    [entry] = json.loads((tmp_path / "c" / "manifest.json").read_bytes())["sessions"]
    assert base64.b64decode(entry["fileBytes"]) == b"case-\xfe/session.jsonl"
    assert cli("verify-export", "c", "--digest", digest, "--json").json()["inputs"][0]["status"] == "matches"
    secret = os.fsdecode(b"ghp_" + b"A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8" + b"-\xff.jsonl")  # (masked, so no bytes)
    shutil.copy(SAMPLES / "prune.jsonl", secret)
    cli("export", secret, "--out", "e", "--timestamp", STAMP)
    [entry] = json.loads((tmp_path / "e" / "manifest.json").read_bytes())["sessions"]
    assert entry["input"] == "[REDACTED]-\\xff.jsonl" and "inputBytes" not in entry
    plain = tmp_path / "plain.jsonl"  # (a name that is text pins no bytes)
    shutil.copy(SAMPLES / "prune.jsonl", plain)
    cli("export", plain, "--out", "d", "--timestamp", STAMP)
    assert "inputBytes" not in json.loads((tmp_path / "d" / "manifest.json").read_bytes())["sessions"][0]


def test_a_manifest_not_in_its_canonical_form_is_a_difference(cli, tmp_path):
    digest = digest_of(cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", "--timestamp", STAMP))
    manifest = (tmp_path / "b" / "manifest.json").read_bytes()
    (tmp_path / "b" / "manifest.json").write_bytes(json.dumps(json.loads(manifest), indent=1).encode())
    out = cli("verify-export", tmp_path / "b", "--digest", digest, "--json", expect=1).json()
    now = "sha256:" + hashlib.sha256((tmp_path / "b" / "manifest.json").read_bytes()).hexdigest()
    assert [(d["path"], d["problem"]) for d in out["differences"]] == [
        ("manifest.json", "is not in its RFC 8785 canonical form, as export writes it (so `sha256sum "
                          "manifest.json` is not the bundle digest, and its signature cannot match)"),
        ("manifest.json", f"the bundle digest is {now}, not the {digest} written down at export")]


def test_a_manifest_naming_an_unknown_input_hash_is_a_difference(cli, tmp_path):
    cli("export", SAMPLES / "prune.jsonl", "--out", tmp_path / "b", "--timestamp", STAMP)
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_bytes())
    manifest["integrity"]["inputHash"] = "md5"
    (tmp_path / "b" / "manifest.json").write_bytes(rfc8785.dumps(manifest))
    out = cli("verify-export", tmp_path / "b", "--json", expect=1).json()
    assert out["differences"] == [{"path": "manifest.json",
                                   "problem": '/integrity/inputHash: expected "sha256" or "hmac-sha256", got "md5"'}]
