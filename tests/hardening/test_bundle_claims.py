"""`export --out`: nothing of the user's is ever lost, whatever is in the way.

Each case runs `python -m dshreplay export` in a child under limits (see
`harness`) and asserts the promise: which files are kept, the exit code and
the one stderr line. `--force` replaces only a folder that is provably a
bundle of ours holding no input; `--out` is claimed at the start; the swap is
renames; a signal or a full disk leaves the old bundle whole (or the new one
complete) and no staging folder behind.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from harness import HEADER, attack, finish, lines, spawn

from dshreplay.bundle.verify import verify_export
from dshreplay.integrity._signing import manifest_digest
from dshreplay.testing.samples import LogBuilder

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
OLD, NEW = "2026-01-01T00:00:00Z", "2026-02-02T00:00:00Z"


def snapshot(folder: Path) -> dict:
    """Every path under `folder` with its bytes (a link: where it points; a folder: None)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        out[rel] = os.readlink(path) if path.is_symlink() else None if path.is_dir() else path.read_bytes()
    return out


def digest_of(bundle: Path) -> str:
    """The digest of a bundle that verifies whole (every file as its manifest says)."""
    differences = verify_export(bundle, bundle_only=True).differences
    assert differences == [], differences
    return manifest_digest((bundle / "manifest.json").read_bytes())


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".partial" in p.name)


@pytest.fixture(scope="module")
def many_calls(tmp_path_factory) -> Path:
    """A log of 400 tool rounds: its bundle holds about 1,200 files, its export takes about a second."""
    b = LogBuilder("many-calls")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user("go")
    for k in range(400):
        b.tool_round("bash", f'{{"command": "echo {k}"}}', f"out {k}\n")
    b.end_step()
    b.end_turn()
    return b.write(tmp_path_factory.mktemp("log") / "many.jsonl")


@pytest.fixture(scope="module")
def bundles(many_calls, tmp_path_factory) -> dict:
    """The bundle of `many_calls` at the OLD time, and the digest of the one at the NEW time."""
    folder = tmp_path_factory.mktemp("bundles")
    for name, stamp in (("old", OLD), ("new", NEW)):
        assert attack("export", many_calls, "--out", folder / name, "--timestamp", stamp).code == 0
    return {"old": folder / "old", "old_digest": digest_of(folder / "old"), "new_digest": digest_of(folder / "new")}


# -- 1. --force replaces only a folder that is provably a bundle of ours ---------------

def test_force_refuses_a_folder_that_merely_has_a_manifest_json(tmp_path):
    project = tmp_path / "extension"
    (project / "src").mkdir(parents=True)
    (project / "manifest.json").write_text('{"manifest_version": 3, "name": "my extension"}')
    (project / "src" / "app.js").write_text("console.log('mine')")
    (project / "NOTES.txt").write_text("notes")
    before = snapshot(project)
    result = attack("export", SAMPLES / "prune.jsonl", "--out", project, "--force")
    assert result.code == 2
    assert result.one_line() == (f"dshreplay: usage error: --force: {project}/manifest.json lacks its files and "
                                 "sessions: not a dshreplay bundle; nothing was deleted (--force replaces only a "
                                 "bundle)")
    assert snapshot(project) == before
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("plant", ["file at the root", "file in a session folder", "empty folder", "link"])
def test_force_refuses_a_bundle_holding_anything_its_manifest_does_not_list(tmp_path, plant):
    out = tmp_path / "b"
    assert attack("export", SAMPLES / "prune.jsonl", "--out", out, "--timestamp", OLD).code == 0
    if plant == "file at the root":
        (out / "mine.txt").write_text("mine")
    elif plant == "file in a session folder":
        (out / "sample-prune" / "notes.md").write_text("mine")
    elif plant == "empty folder":
        (out / "sample-prune" / "drafts").mkdir()
    else:
        (out / "sample-prune" / "elsewhere").symlink_to(tmp_path)
    before = snapshot(out)
    result = attack("export", SAMPLES / "prune.jsonl", "--out", out, "--force")
    assert result.code == 2
    assert result.one_line().startswith(f"dshreplay: usage error: --force: {out} holds ")
    assert result.one_line().endswith("which is not in its bundle's manifest: it is not a dshreplay bundle, "
                                      "and nothing was deleted")
    assert snapshot(out) == before and leftovers(tmp_path) == []


def test_force_replaces_a_bundle_of_ours_and_leaves_nothing_beside_it(tmp_path):
    out = tmp_path / "b"
    assert attack("export", SAMPLES / "prune.jsonl", "--out", out, "--timestamp", OLD).code == 0
    result = attack("export", SAMPLES / "multi-turn.jsonl", "--out", out, "--force", "--timestamp", NEW)
    assert result.code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "manifest.json", "sample-multi-turn"]
    assert digest_of(out) in result.stdout and sorted(p.name for p in tmp_path.iterdir()) == ["b"]


# -- 2. --out ., .. or any folder holding the current one ------------------------------

def test_an_out_that_is_the_current_folder_or_holds_it_is_refused_and_nothing_is_lost(tmp_path):
    out = tmp_path / "b"
    assert attack("export", SAMPLES / "prune.jsonl", "--out", out, "--timestamp", OLD).code == 0
    (out / "mine.txt").write_text("mine")
    before = snapshot(tmp_path)
    for where, given in ((out, "."), (out / "sample-prune", ".."), (out / "sample-prune", out)):
        result = attack("export", SAMPLES / "prune.jsonl", "--out", given, "--force", cwd=where)
        assert result.code == 2
        assert result.one_line() == (f"dshreplay: usage error: --out {given} is the current folder or holds it: "
                                     "give the bundle a folder of its own (such as --out ./bundle)")
        assert snapshot(tmp_path) == before
    empty = tmp_path / "empty"
    empty.mkdir()
    assert attack("export", SAMPLES / "prune.jsonl", "--out", ".", cwd=empty).code == 2
    assert list(empty.iterdir()) == []


# -- 3. standard input: read, and never deleted ----------------------------------------

def test_force_never_deletes_the_file_read_on_standard_input(tmp_path):
    out = tmp_path / "b"
    assert attack("export", SAMPLES / "prune.jsonl", "--out", out, "--timestamp", OLD).code == 0
    evidence = out / "evidence.jsonl"
    evidence.write_bytes((SAMPLES / "prune.jsonl").read_bytes())
    for read in (evidence, out / "sample-prune" / "events.csv"):  # (the second one the manifest lists)
        before = snapshot(out)
        with open(read, "rb") as stdin:
            result = attack("export", "-", "--out", out, "--force", stdin=stdin)
        assert result.code == 2
        assert result.one_line() == (f"dshreplay: usage error: --out {out} holds the input -: --force would delete "
                                     "it with the old bundle; write the bundle elsewhere")
        assert snapshot(out) == before
        assert read.read_bytes() == before[read.relative_to(out).as_posix()]
        evidence.unlink(missing_ok=True)


def test_export_reads_standard_input_once_up_to_max_bytes(tmp_path, evidence_key_file):
    import hmac
    log = SAMPLES / "prune.jsonl"
    with open(log, "rb") as stdin:
        result = attack("export", "-", "--out", tmp_path / "piped", "--timestamp", OLD, stdin=stdin)
    assert result.code == 0, result.stderr
    assert attack("export", log, "--out", tmp_path / "named", "--timestamp", OLD).code == 0
    [entry] = json.loads((tmp_path / "piped" / "manifest.json").read_bytes())["sessions"]
    assert entry["input"] == "-" and entry["verdict"] == "ok" and entry["folder"] == "sample-prune"
    key = bytes.fromhex(evidence_key_file.read_text())  # (the export redacts: the hash is keyed)
    assert entry["size"] == log.stat().st_size and entry["sha256"] == hmac.digest(key, log.read_bytes(), "sha256").hex()
    for name in ("events.csv", "transcript.md", "calls.jsonl", "messages.jsonl", "session.json"):
        assert (tmp_path / "piped" / "sample-prune" / name).read_bytes() == \
            (tmp_path / "named" / "sample-prune" / name).read_bytes()
    with open("/dev/zero", "rb") as zeros:
        result = attack("--max-bytes", "1M", "export", "-", "--out", tmp_path / "endless", stdin=zeros,
                        mem_mb=300, seconds=10)
    assert result.code == 2 and result.one_line() == ("dshreplay: read error: <stdin>: more than 1048576 bytes "
                                                      "(the --max-bytes ceiling; a pipe with no end?)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["named", "piped"]


# -- 4. --out is claimed at the start ------------------------------------------------

def test_an_out_being_written_by_another_export_is_refused(tmp_path):
    out = tmp_path / "b"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # (as a running export holds it)
        result = attack("export", SAMPLES / "prune.jsonl", "--out", out)
    finally:
        os.close(fd)
    assert result.code == 2
    assert result.one_line() == (f"dshreplay: usage error: --out {out} is being written by another dshreplay "
                                 "export: wait for it to end, or write elsewhere")
    assert list(out.iterdir()) == [] and leftovers(tmp_path) == []


def test_two_exports_to_one_absent_out_leave_one_bundle_and_one_refusal(many_calls, tmp_path):
    out = tmp_path / "b"
    racers = [spawn("export", many_calls, "--out", out, "--timestamp", stamp) for stamp in (OLD, NEW)]
    outcomes = [finish(proc) for proc in racers]
    assert sorted(o.code for o in outcomes) == [0, 2], [o.stderr for o in outcomes]
    winner, loser = sorted(outcomes, key=lambda o: o.code)
    assert loser.one_line() in (f"dshreplay: usage error: --out {out} is being written by another dshreplay "
                                "export: wait for it to end, or write elsewhere",
                                f"dshreplay: usage error: --out {out} is not empty (use --force to replace a "
                                "previous bundle)",
                                f"dshreplay: usage error: --out {out} was replaced while this export claimed it: "
                                "run it again")  # (it opened the folder just before the other's bundle took it)
    assert f"bundle digest: {digest_of(out)}" in winner.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


# -- 5. signals: the old bundle whole, or the new one complete -------------------------

def _wait_for(moment, proc, parent: Path) -> None:
    """Until `moment` (nothing: at once; the staging folder is there; the bundle in it is written)."""
    deadline = time.monotonic() + 20
    while proc.poll() is None and time.monotonic() < deadline:
        if moment == "at once":
            return
        if moment == "staging" and any(parent.glob(".b.partial-*")):
            return
        if moment == "written" and any(parent.glob(".b.partial-*/manifest.json")):
            return
        time.sleep(0.001)


def _interrupted(outcome, signum: int) -> None:
    """Exit 0 (the signal came after the export), 128 + the signal with one line, or death
    by the signal (before Python set its handlers up)."""
    assert outcome.code in (0, 128 + signum, -signum), outcome
    if outcome.code == 128 + signum:
        assert outcome.one_line() == "dshreplay: interrupted"


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["INT", "TERM", "HUP"])
def test_a_signal_at_any_moment_of_a_forced_export_keeps_the_old_bundle_whole_or_puts_the_new_one(
        many_calls, bundles, tmp_path, signum):
    for moment in ("at once", "staging", "written"):
        parent = tmp_path / moment.replace(" ", "-")
        shutil.copytree(bundles["old"], parent / "b")
        proc = spawn("export", many_calls, "--out", parent / "b", "--force", "--timestamp", NEW)
        _wait_for(moment, proc, parent)
        proc.send_signal(signum)
        _interrupted(finish(proc), signum)
        assert leftovers(parent) == [], moment
        assert digest_of(parent / "b") in (bundles["old_digest"], bundles["new_digest"]), moment


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["INT", "TERM", "HUP"])
def test_a_signal_during_an_export_to_a_new_folder_leaves_nothing_or_the_whole_bundle(many_calls, bundles, tmp_path,
                                                                                       signum):
    proc = spawn("export", many_calls, "--out", tmp_path / "b", "--timestamp", NEW)
    _wait_for("staging", proc, tmp_path)
    proc.send_signal(signum)
    outcome = finish(proc)
    _interrupted(outcome, signum)
    assert leftovers(tmp_path) == []
    if outcome.code == 0:
        assert digest_of(tmp_path / "b") == bundles["new_digest"]
    else:
        assert not (tmp_path / "b").exists()


# -- 6. a full disk is an error of the output ------------------------------------------

def test_a_file_too_large_is_an_output_error_and_the_old_bundle_is_kept(many_calls, tmp_path):
    out = tmp_path / "b"
    assert attack("export", SAMPLES / "prune.jsonl", "--out", out, "--timestamp", OLD).code == 0
    old = digest_of(out)
    for target, kept in ((out, f"the old bundle in {out} is kept"), (tmp_path / "new", "no bundle was written")):
        result = attack("export", many_calls, "--out", target, "--force", file_size=64 * 1024)
        assert result.code == 2 and result.stdout == ""  # (no claim about the input: no table, no verdict)
        line = result.one_line()
        assert line.startswith(f"dshreplay: output error: {target}/many-calls/")
        assert line.endswith(f": File too large; {kept}")
    assert digest_of(out) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


@pytest.fixture
def small_disk(tmp_path):
    """A 256 KiB tmpfs (needs the right to mount, as root in a sandbox has; else the test skips)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", disk], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    yield disk
    subprocess.run(["umount", disk], check=True)


def test_a_full_disk_is_an_output_error_not_an_unreadable_input(small_disk, many_calls):
    out = small_disk / "b"
    assert attack("export", SAMPLES / "prune.jsonl", "--out", out, "--timestamp", OLD).code == 0
    old = digest_of(out)
    result = attack("export", many_calls, SAMPLES / "compaction.jsonl", "--out", out, "--force")
    assert result.code == 2 and result.stdout == ""
    assert result.one_line().startswith(f"dshreplay: output error: {out}/")
    assert result.one_line().endswith(f": No space left on device; the old bundle in {out} is kept")
    assert digest_of(out) == old and sorted(p.name for p in small_disk.iterdir()) == ["b"]


# -- 7. folder names never take a root file's name -----------------------------------

def test_session_ids_named_like_root_files_keep_a_signed_bundle_whole(tmp_path):
    pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519
    key = ed25519.Ed25519PrivateKey.generate()
    (tmp_path / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    (tmp_path / "pub.pem").write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    for n, name in enumerate(["manifest.sig", "MANIFEST.SIG", "index.html", "manifest.json.sig"]):
        (tmp_path / f"{n}.jsonl").write_bytes(lines({**HEADER, "id": name}))
    logs = [tmp_path / f"{n}.jsonl" for n in range(4)]
    result = attack("export", *logs, "--out", tmp_path / "b", "--sign-key", tmp_path / "key.pem")
    assert result.code == 0, result.stderr
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == [
        "index.html", "manifest.json", "manifest.json.sig", "~004DANIFEST.SIG", "~0069ndex.html",
        "~006Danifest.json.sig", "~006Danifest.sig"]
    assert attack("verify-export", tmp_path / "b", "--public-key", tmp_path / "pub.pem").code == 0


# -- pipes and devices given by name ------------------------------------------------

def test_export_refuses_a_pipe_or_a_device_given_by_name_at_once(tmp_path):
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    for named, what in ((fifo, "a pipe"), (Path("/dev/zero"), "a device or socket")):
        out = tmp_path / f"b-{named.name}"
        result = attack("export", named, SAMPLES / "prune.jsonl", "--out", out, mem_mb=300, seconds=10)
        assert result.code == 2
        *before, last = result.stderr.splitlines()  # (under 300 MiB the secret engine is off, and says so first)
        assert last == f"dshreplay: unreadable: {named}: is {what}, not a regular file (use - to read standard input)"
        assert [line.split(" is off:")[0] for line in before] == [
            "dshreplay: warning: the secret engine (Betterleaks)"]
        assert [e["verdict"] for e in json.loads((out / "manifest.json").read_bytes())["sessions"]] == \
            ["unreadable", "ok"]
