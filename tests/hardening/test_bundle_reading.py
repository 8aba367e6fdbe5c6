"""Reading a bundle: `verify-export` and `request --bundle` take nothing a bundle
holds or a manifest names on trust.

Each case runs `python -m dshreplay` in a child under limits of address space
and CPU time (`attack`), so a hang, a crash or a blow-up fails the test fast.
Every value read from a bundle is type-checked (a damaged call record is one
line and exit 2; a damaged manifest entry is a difference naming its JSON
pointer, exit 1); every file is opened as inputs are (a regular file, its size
checked before it is hashed, never read past it); a manifest is bounded in
bytes and in JSON values before it is parsed; a key it holds twice is a
difference; and `--grown` accepts a changed input only when the exported bytes
are still there and only log text was added.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
from pathlib import Path

import orjson
import pytest
import rfc8785
import zstandard
from bundles import to_format_2
from test_attacks import attack

from dshreplay.integrity._chain import SEED

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
STAMP = "2026-01-01T00:00:00Z"
EXTRA = b'{"type":"session/title","seq":999,"time":1,"data":{"title":"later"}}\n'


def exported(tmp_path: Path, sample: str) -> tuple[Path, Path]:
    """`sample` copied to tmp_path/in and exported to tmp_path/b, both named relative to tmp_path
    (every command runs there: the manifest's input path is `in/<sample>`). Without redaction,
    so the inputs' hashes are plain SHA-256: the forger's best case (keyed ones he cannot make)."""
    (tmp_path / "in").mkdir()
    shutil.copy(SAMPLES / sample, tmp_path / "in" / sample)
    result = attack("export", Path("in") / sample, "--out", "b", "--timestamp", STAMP, "--no-default-redaction",
                    cwd=tmp_path)
    assert result.code == 0, result.stderr
    return tmp_path / "b", tmp_path / "in" / sample


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pristine")
    exported(root, "prune.jsonl")
    return root


@pytest.fixture
def bundle(pristine, tmp_path) -> tuple[Path, Path]:
    """A fresh copy of the exported prune.jsonl: (bundle, input); run commands with cwd=tmp_path."""
    shutil.copytree(pristine / "b", tmp_path / "b")
    shutil.copytree(pristine / "in", tmp_path / "in")
    return tmp_path / "b", tmp_path / "in" / "prune.jsonl"


def manifest_of(bundle: Path) -> dict:
    return json.loads((bundle / "manifest.json").read_bytes())


def write_manifest(bundle: Path, manifest: dict) -> str:
    """Write `manifest` as export does; returns its bundle digest (what an attacker would also hand out)."""
    data = rfc8785.dumps(manifest)
    (bundle / "manifest.json").write_bytes(data)
    return "sha256:" + hashlib.sha256(data).hexdigest()


def differences(result) -> list[tuple[str, str]]:
    return [(d["path"], d["problem"]) for d in json.loads(result.stdout)["differences"]]


# -- 1. request --bundle: a damaged call record is one line and exit 2 -------------------------------

@pytest.fixture
def format_2(bundle) -> tuple[Path, Path]:
    """The bundle rewritten as format 2 wrote it (calls/NNNN.json, messages/<sha256>.json)."""
    to_format_2(bundle[0])
    return bundle


@pytest.mark.parametrize("sessions", [True, 5, 1.5])
def test_a_manifest_whose_sessions_is_no_array_is_one_line_and_exit_2(bundle, sessions):
    # `request --bundle B --list` stopped with exit 70 (TypeError: 'bool' object is not iterable).
    manifest = manifest_of(bundle[0])
    manifest["sessions"] = sessions
    write_manifest(bundle[0], manifest)
    for args in (["--list"], ["--call", "1", "--json"]):
        result = attack("request", "--bundle", "b", *args, cwd=bundle[0].parent)
        assert result.code == 2
        assert result.one_line() == ("dshreplay: usage error: the bundle b holds no session folder "
                                     "(no input could be read)")


@pytest.mark.parametrize("change, expected", [
    (b"{}", "/call: expected 2, the number in the file's name, got nothing (the bundle is damaged)"),
    (b"[]", "expected a call record (a JSON object), got [] (the bundle is damaged)"),
    (b"not json", "the record of call 2 is not valid JSON: "),
    ({"messages": 5}, "/messages: expected an array of stored messages' SHA-256, got 5 (the bundle is damaged)"),
    ({"messages": ["../../manifest"]}, "/messages: expected an array of stored messages' SHA-256, got "),
    ({"header": {}}, "/header: expected null or a stored message's SHA-256, got {} (the bundle is damaged)"),
    ({"atSeq": "19"}, '/atSeq: expected a seq, got "19" (the bundle is damaged)'),
    ({"messagesFrom": 7}, "/messagesFrom: expected null or {call, first}, got 7"),
    ({"messagesFrom": {"call": 2, "first": 0}}, "/messagesFrom/call: expected an earlier call (1 to 1), got 2"),
    ({"messagesFrom": {"call": 1, "first": -1}}, "/messagesFrom/first: expected a message count, got -1"),
    ({"messagesFrom": {"call": 1, "first": 9}}, "/messagesFrom/first: expected at most the 1 message of call 1, "
                                                "got 9 (the bundle is damaged)"),
])
def test_a_damaged_call_record_is_one_line_naming_the_file_and_what_was_expected(format_2, change, expected):
    folder, _ = format_2
    record = folder / "sample-prune" / "calls" / "0002.json"
    if isinstance(change, bytes):
        record.write_bytes(change)
    else:
        record.write_bytes(orjson.dumps({**json.loads(record.read_bytes()), **change}))
    result = attack("request", "--bundle", folder / "sample-prune", "--call", 2, seconds=10)
    assert result.code == 2
    assert result.one_line().startswith(f"dshreplay: read error: {record}: {expected}")


@pytest.mark.parametrize("change, expected", [
    (b"{}", "line 2, /call: expected a call number, got nothing (the bundle is damaged)"),
    (b"[]", "line 2: expected a call record (a JSON object), got [] (the bundle is damaged)"),
    (b"not json", "line 2: a call record is not valid JSON: "),
    ("the number twice", "line 2, /call: expected 2, the number its line starts with, got 3"),
    ({"messages": 5}, "line 2, /messages: expected an array of stored messages' SHA-256, got 5 (the bundle is "
                      "damaged)"),
    ({"messages": ["../../manifest"]}, "line 2, /messages: expected an array of stored messages' SHA-256, got "),
    ({"header": {}}, "line 2, /header: expected null or a stored message's SHA-256, got {} (the bundle is damaged)"),
    ({"atSeq": "19"}, 'line 2, /atSeq: expected a seq, got "19" (the bundle is damaged)'),
    ({"messagesFrom": 7}, "line 2, /messagesFrom: expected null or {call, first}, got 7"),
    ({"messagesFrom": {"call": 2, "first": 0}}, "line 2, /messagesFrom/call: expected an earlier call (1 to 1), "
                                                "got 2"),
    ({"messagesFrom": {"call": 1, "first": -1}}, "line 2, /messagesFrom/first: expected a message count, got -1"),
    ({"messagesFrom": {"call": 1, "first": 9}}, "line 2, /messagesFrom/first: expected at most the 1 message of "
                                                "call 1, got 9 (the bundle is damaged)"),
])
def test_a_damaged_line_of_calls_jsonl_is_one_line_naming_the_file_line_and_what_was_expected(bundle, change,
                                                                                             expected):
    folder, _ = bundle
    calls = folder / "sample-prune" / "calls.jsonl"
    lines = calls.read_bytes().splitlines()
    if isinstance(change, bytes):
        lines[1] = change
    elif change == "the number twice":  # (the parsed record holds the last one)
        lines[1] = lines[1][:-1] + b',"call":3}'
    else:
        lines[1] = orjson.dumps({**json.loads(lines[1]), **change})
    calls.write_bytes(b"\n".join(lines) + b"\n")
    result = attack("request", "--bundle", folder / "sample-prune", "--call", 2, seconds=10)
    assert result.code == 2
    assert result.one_line().startswith(f"dshreplay: read error: {calls}: {expected}")


def test_a_call_record_that_builds_on_a_missing_call_or_a_message_that_is_not_its_hash_is_exit_2(format_2):
    folder, _ = format_2
    session = folder / "sample-prune"
    (session / "calls" / "0001.json").unlink()
    result = attack("request", "--bundle", session, "--call", 2, seconds=10)
    assert result.code == 2
    assert result.one_line() == (f"dshreplay: read error: {session / 'calls'}: call 2 builds on call 1, which is "
                                 "not in the bundle (the bundle is damaged)")
    header = json.loads((session / "calls" / "0002.json").read_bytes())["header"]
    stored = session / "messages" / f"{header}.json"
    stored.write_bytes(b'{"role":"system","content":"forged"}\n')
    (session / "calls" / "0002.json").write_bytes(orjson.dumps({
        **json.loads((session / "calls" / "0002.json").read_bytes()), "messagesFrom": None}))
    result = attack("request", "--bundle", session, "--call", 2, seconds=10)
    assert result.code == 2
    assert result.one_line() == (f"dshreplay: read error: {stored}: the stored message's bytes do not hash to "
                                 "its name (the bundle is damaged)")
    assert attack("request", "--bundle", session, "--call", 9).one_line() == (
        f"dshreplay: usage error: there is no call {9} in {session}: it holds call 2")


def test_a_line_of_calls_jsonl_that_builds_on_a_missing_call_or_a_forged_message_is_exit_2(bundle):
    folder, _ = bundle
    session = folder / "sample-prune"
    calls, messages = session / "calls.jsonl", session / "messages.jsonl"
    first, second = calls.read_bytes().splitlines()
    calls.write_bytes(second + b"\n")
    result = attack("request", "--bundle", session, "--call", 2, seconds=10)
    assert result.code == 2
    assert result.one_line() == (f"dshreplay: read error: {calls}: call 2 builds on call 1, which is not in the "
                                 "bundle (the bundle is damaged)")
    record = json.loads(second)
    header = record["header"]
    calls.write_bytes(first + b"\n" + orjson.dumps({**record, "messagesFrom": None}) + b"\n")
    stored = messages.read_bytes().splitlines()
    [at] = [n for n, line in enumerate(stored) if line.startswith(b'{"sha256":"' + header.encode())]
    stored[at] = b'{"sha256":"' + header.encode() + b'","message":{"role":"system","content":"forged"}}'
    messages.write_bytes(b"\n".join(stored) + b"\n")
    result = attack("request", "--bundle", session, "--call", 2, seconds=10)
    assert result.code == 2
    assert result.one_line() == (f"dshreplay: read error: {messages}: line {at + 1}: the stored message's bytes do "
                                 "not hash to its key (the bundle is damaged)")
    del stored[at]
    messages.write_bytes(b"\n".join(stored) + b"\n")
    result = attack("request", "--bundle", session, "--call", 2, seconds=10)
    assert result.code == 2
    assert result.one_line() == (f"dshreplay: read error: {messages}: the request names the stored message {header}, "
                                 "which is not in messages.jsonl (the bundle is damaged)")
    stored[0] = b'{"message":{},"sha256":"' + header.encode() + b'"}'
    messages.write_bytes(b"\n".join(stored) + b"\n")
    result = attack("request", "--bundle", session, "--call", 2, seconds=10)
    assert result.code == 2
    assert result.one_line() == (f'dshreplay: read error: {messages}: line 1: expected a stored message, '
                                 '{"sha256":"<hex>","message":<JSON>} (the bundle is damaged)')
    assert attack("request", "--bundle", session, "--call", 9).one_line() == (
        f"dshreplay: usage error: there is no call 9 in {session}: it holds calls 1..2")


def test_a_line_of_calls_jsonl_longer_than_the_bound_is_refused_without_holding_it(bundle):
    folder, _ = bundle
    calls = folder / "sample-prune" / "calls.jsonl"
    with open(calls, "ab") as fh:
        fh.write(b'{"call":3,"x":"' + b"x" * (65 << 20))  # (no newline: read no further than the bound)
    result = attack("request", "--bundle", folder / "sample-prune", "--call", 3, mem_mb=400, seconds=10)
    assert result.code == 2
    assert result.one_line() == (f"dshreplay: read error: {calls}: line 3: a line of calls.jsonl is longer than "
                                 "67108864 bytes")


# -- 2. verify-export --grown: a doctored chain is a difference naming the manifest entry ------------

@pytest.mark.parametrize("doctor, expected", [
    (lambda e: e.update(chain=5), "/sessions/0/chain: expected the chain over the log's lines (an object), got 5"),
    (lambda e: e["chain"].update(lines=-1), "/sessions/0/chain/lines: expected a line count (1 or more), got -1"),
    (lambda e: e["chain"].update(lines=True), "/sessions/0/chain/lines: expected a line count (1 or more), got true"),
    (lambda e: e["chain"].update(head=5), "/sessions/0/chain/head: expected a SHA-256 in hex, got 5"),
    (lambda e: e["chain"].update(checkpoints=5), "/sessions/0/chain/checkpoints: expected an array of checkpoints, "
                                                 "got 5"),
    (lambda e: e["chain"].update(checkpoints=[{"line": [], "sha256": "0" * 64}]),
     "/sessions/0/chain/checkpoints/0/line: expected a line number after 0 and at most 32, got []"),
    (lambda e: e["chain"].update(checkpoints=[{"line": 9, "sha256": "0" * 64}, {"line": 9, "sha256": "0" * 64}]),
     "/sessions/0/chain/checkpoints/1/line: expected a line number after 9 and at most 32, got 9"),
    (lambda e: e["chain"].update(checkpoints=[{"line": 4, "sha256": {}}]),
     "/sessions/0/chain/checkpoints/0/sha256: expected a SHA-256 in hex, got {}"),
    (lambda e: e.update(encoding="gzip"), '/sessions/0/encoding: expected "jsonl" or "zstd", got "gzip"'),
    (lambda e: e["chain"].update(unreadableFrom=5), '/sessions/0/chain/unreadableFrom: expected null or where '
                                                    'reading stopped ({"line", "reason"}), got 5'),
    (lambda e: e["chain"].update(unreadableFrom={"line": 3, "reason": "x"}),
     "/sessions/0/chain/unreadableFrom/line: expected a line number after 32, got 3"),
    (lambda e: e["chain"].update(unreadableFrom={"line": 33, "reason": None}),
     "/sessions/0/chain/unreadableFrom/reason: expected why the rest cannot be read (text), got null"),
])
def test_a_doctored_chain_is_a_difference_naming_the_manifest_entry(bundle, doctor, expected):
    folder, log = bundle
    with log.open("ab") as fh:
        fh.write(EXTRA)
    manifest = manifest_of(folder)
    doctor(manifest["sessions"][0])
    write_manifest(folder, manifest)
    result = attack("verify-export", "b", "--grown", "--json", cwd=folder.parent, seconds=10)
    assert result.code == 1 and result.stderr == ""
    assert differences(result) == [("manifest.json", f"{expected} (what the export recorded of in/prune.jsonl)")]


def test_a_forged_chain_that_claims_fewer_lines_does_not_pass_a_rewritten_plain_log(bundle):
    folder, log = bundle
    lines = log.read_bytes().splitlines(keepends=True)
    manifest = manifest_of(folder)
    head = hashlib.sha256(SEED + lines[0]).hexdigest()  # (the chain of the header line alone: anyone can make it)
    manifest["sessions"][0]["chain"].update(lines=1, head=head, checkpoints=[])
    write_manifest(folder, manifest)
    lines[5] = lines[5].replace(b'"turn":1', b'"turn":7', 1)
    log.write_bytes(b"".join(lines) + EXTRA)
    result = attack("verify-export", "b", "--grown", "--json", cwd=folder.parent, seconds=10)
    assert result.code == 1
    size = manifest["sessions"][0]["size"]
    assert differences(result) == [("in/prune.jsonl", f"the log's first {size} bytes are not the ones exported "
                                                      "(their SHA-256 differs from the manifest's), though its lines "
                                                      "match the chain")]


def test_a_forged_stop_in_the_chain_never_makes_a_log_pass_as_grown(bundle):
    # (unreadableFrom can only ask more of a log: that reading stop where the export's did)
    folder, log = bundle
    manifest = manifest_of(folder)
    manifest["sessions"][0]["chain"]["unreadableFrom"] = {"line": 33, "reason": "forged"}
    write_manifest(folder, manifest)
    with log.open("ab") as fh:
        fh.write(EXTRA)
    result = attack("verify-export", "b", "--grown", "--json", cwd=folder.parent, seconds=10)
    assert result.code == 1
    assert differences(result) == [("in/prune.jsonl", "the export could not read the log from line 33 (forged); it "
                                                      "now reads on: the bytes there changed")]


# -- 3. pipes, devices and /proc files in a bundle or named by a manifest ------------------------------

def test_a_bundle_file_that_is_a_pipe_is_a_difference_and_never_opened(bundle):
    folder, log = bundle
    log.write_bytes(log.read_bytes().replace(b'"turn":1', b'"turn":7', 1) + EXTRA)  # (--grown reads events.csv)
    for name in ("sample-prune/events.csv", "index.html"):
        (folder / name).unlink()
        os.mkfifo(folder / name)
    result = attack("verify-export", "b", "--grown", "--json", cwd=folder.parent, seconds=10)
    assert result.code == 1
    assert differences(result) == [
        ("index.html", "listed in the manifest but not a regular file (a link, a pipe or a device)"),
        ("sample-prune/events.csv", "listed in the manifest but not a regular file (a link, a pipe or a device)"),
        ("in/prune.jsonl", "rewritten inside the exported prefix, within lines 1..32")]
    record = folder / "sample-prune" / "calls.jsonl"
    record.unlink()
    os.mkfifo(record)
    result = attack("request", "--bundle", folder / "sample-prune", "--call", 1, seconds=10)
    assert result.code == 2
    assert result.one_line() == (f"dshreplay: read error: {record}: is a pipe, not a regular file (use - to read "
                                 "standard input)")


@pytest.mark.parametrize("grown", [[], ["--grown"]])
def test_a_manifest_naming_a_proc_file_is_answered_at_once_even_with_its_true_digest(bundle, grown):
    folder, _ = bundle
    manifest = manifest_of(folder)
    empty = hashlib.sha256(b"").hexdigest()
    manifest["sessions"][0].update(input="/proc/self/pagemap", size=0, sha256=empty)  # (it says 0 bytes, has TBs)
    manifest["files"].append({"path": "../../../../proc/self/pagemap", "size": 0, "sha256": empty})
    digest = write_manifest(folder, manifest)
    result = attack("verify-export", "b", "--digest", digest, "--json", *grown, cwd=folder.parent, seconds=10)
    assert result.code == 1
    assert differences(result) == [
        ("../../../../proc/self/pagemap", "listed in the manifest but missing"),
        ("/proc/self/pagemap", "input size changed while it was read: it holds more than the 0 bytes it gave")
        if not grown else ("/proc/self/pagemap", "the log has 0 lines, fewer than the 32 the export saw")]


# -- 4. a manifest is bounded in bytes, then in JSON values, before it is parsed -------------------------

def test_a_manifest_over_64_mib_is_refused_in_one_line(bundle):
    folder, _ = bundle
    with open(folder / "manifest.json", "r+b") as fh:
        fh.truncate(65 << 20)  # (sparse: nothing written)
    result = attack("verify-export", folder, mem_mb=400, seconds=10)
    assert result.code == 2
    assert result.one_line() == (f"dshreplay: usage error: {folder} has no readable manifest.json (manifest.json "
                                 "is larger than 67108864 bytes): not a dshreplay bundle")


@pytest.mark.parametrize("entry", [b"{}", b'{"path":"x"}', b"[]", b"0"])
def test_a_20_mb_manifest_of_tiny_entries_is_refused_at_once(bundle, entry):
    folder, _ = bundle
    count = (20 << 20) // (len(entry) + 1)
    manifest = manifest_of(folder)
    head = orjson.dumps({**{k: v for k, v in manifest.items() if k != "files"}, "files": []})[:-2]
    assert head.endswith(b'"files":[')  # (valid JSON: refused for its count of values alone)
    (folder / "manifest.json").write_bytes(head + b",".join([entry] * count) + b"]}")
    result = attack("verify-export", folder, mem_mb=300, seconds=10)
    assert result.code == 2
    assert result.one_line() == (f"dshreplay: usage error: {folder} has no readable manifest.json (manifest.json "
                                 "holds more than 2,000,000 JSON values, more than a bundle dshreplay writes: not "
                                 "parsed): not a dshreplay bundle")


@pytest.mark.parametrize("layout", ["as written", "re-serialised"])
def test_a_20_mb_manifest_of_real_entries_is_checked_in_one_pass_in_bounded_memory(bundle, layout):
    folder, _ = bundle
    manifest = manifest_of(folder)
    n = 130_000  # each names a file the bundle does not hold
    manifest["files"] += [{"path": f"sample-prune/calls/{k:06d}.json", "size": 1000, "sha256": f"{k:064x}"}
                          for k in range(n)]
    data = rfc8785.dumps(manifest) if layout == "as written" else json.dumps(manifest).encode()
    (folder / "manifest.json").write_bytes(data)
    assert 16 << 20 < len(data) < 23 << 20
    result = attack("verify-export", "b", "--json", cwd=folder.parent, mem_mb=600, seconds=15)
    assert result.code == 1
    found = differences(result)
    assert len(found) == 10_001  # the first 10,000 listed, the rest counted
    reformatted = layout != "as written"  # (then the first difference says the manifest is not as written)
    assert found[reformatted] == ("sample-prune/calls/000000.json", "listed in the manifest but missing")
    assert found[-1] == ("...", f"{n - 10_000 + reformatted} more differences, not listed")


# -- 5. a key held twice ------------------------------------------------------------------------------

def test_a_manifest_holding_a_key_twice_fails_and_its_digest_and_signature_fail_too(tmp_path):
    pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519
    key = ed25519.Ed25519PrivateKey.generate()
    (tmp_path / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    (tmp_path / "key.pub").write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    shutil.copy(SAMPLES / "broken-seq-gap.jsonl", tmp_path / "gap.jsonl")
    result = attack("export", "gap.jsonl", "--out", "b", "--sign-key", "key.pem", cwd=tmp_path)
    assert result.code == 1  # (its verdict has errors)
    digest = result.stdout.splitlines()[-1].removeprefix("bundle digest: ")
    written = (tmp_path / "b" / "manifest.json").read_bytes()
    sessions = json.loads(written)["sessions"]
    assert [s["verdict"] for s in sessions] == ["errors"]
    whitewashed = [{**s, "verdict": "ok", "findings": {"error": 0, "warning": 0, "notice": 0}} for s in sessions]
    # a reader that keeps the first "sessions" sees "ok"; one that keeps the last sees "errors"
    for doctored, where in [(b'{"sessions":' + orjson.dumps(whitewashed) + b"," + written[1:], "/sessions"),
                            (written.replace(b'"verdict":"errors"', b'"verdict":"ok","verdict":"errors"', 1),
                             "/sessions/0/verdict")]:
        (tmp_path / "b" / "manifest.json").write_bytes(doctored)
        result = attack("verify-export", "b", "--digest", digest, "--public-key", "key.pub", "--json", cwd=tmp_path)
        assert result.code == 1
        now = "sha256:" + hashlib.sha256(doctored).hexdigest()
        key_name = where.rsplit("/", 1)[1]
        assert differences(result) == [
            ("manifest.json", f'{where}: key "{key_name}" appears twice in one object: readers disagree on which '
                              "value counts; dshreplay writes no key twice"),
            ("manifest.json", f"the bundle digest is {now}, not the {digest} written down at export"),
            ("manifest.json.sig", "the signature does not hold: it does not match manifest.json and the key given")]


# -- 6. --grown: only log text may be added ---------------------------------------------------------------

def zstd_frames(*texts: bytes) -> bytes:
    cctx = zstandard.ZstdCompressor(write_checksum=True)
    return b"".join(cctx.compress(t) for t in texts)


SKIPPABLE = struct.pack("<II", 0x184D2A50, 1000) + b"hidden" * 166 + b"hide"  # a 1,000-byte skippable frame


def test_a_plain_log_re_encoded_as_zstd_with_a_hidden_frame_is_not_growth(bundle):
    folder, log = bundle
    text = log.read_bytes()
    header, rest = text.split(b"\n", 1)
    log.write_bytes(zstd_frames(header + b"\n", rest) + SKIPPABLE + zstd_frames(EXTRA))
    result = attack("verify-export", "b", "--grown", "--json", cwd=folder.parent, seconds=10)
    assert result.code == 1
    assert differences(result) == [("in/prune.jsonl", "the log was plain JSONL at export and is zstd-compressed "
                                                      "now: its bytes changed")]


def test_a_zstd_log_that_grew_is_accepted_and_one_that_hides_bytes_is_not(tmp_path):
    folder, log = exported(tmp_path, "multi-turn.runtime.jsonl.zstd")
    name = "in/multi-turn.runtime.jsonl.zstd"
    original = log.read_bytes()
    digest = "sha256:" + hashlib.sha256((folder / "manifest.json").read_bytes()).hexdigest()

    def verify():
        return attack("verify-export", "b", "--grown", "--digest", digest, "--json", cwd=tmp_path, seconds=10)
    log.write_bytes(original + zstd_frames(EXTRA))  # an append batch, as dsh writes it
    result = verify()
    assert result.code == 0 and json.loads(result.stdout)["inputsGrown"] == [
        {"input": name, "detail": f"lines 65..65 appended ({len(EXTRA)} bytes, 1 event): the bundle does not "
                                  "cover them"}]
    text = zstandard.ZstdDecompressor().stream_reader(original, read_across_frames=True).read()
    log.write_bytes(zstd_frames(text + EXTRA))  # re-compressed as one frame: the same text, extended
    assert verify().code == 0
    for hidden, problem in [
            (original + SKIPPABLE + zstd_frames(EXTRA), f"the zstd frame at byte offset {len(original)} holds 1008 "
                                                        "bytes that decode to no log text (a skippable frame): bytes "
                                                        "hidden from every reader"),
            (original + zstd_frames(EXTRA) + SKIPPABLE, f"the zstd frame at byte offset "
                                                        f"{len(original) + len(zstd_frames(EXTRA))} holds 1008 bytes "
                                                        "that decode to no log text (a skippable frame): bytes hidden "
                                                        "from every reader"),
            (original + zstd_frames(EXTRA * 50)[:-9], f"the log ends in {len(zstd_frames(EXTRA * 50)) - 9} bytes at "
                                                       f"byte offset {len(original)} that decode to no log text (a "
                                                       "zstd frame cut short)")]:
        log.write_bytes(hidden)
        result = verify()
        assert result.code == 1
        assert differences(result) == [(name, problem)]
