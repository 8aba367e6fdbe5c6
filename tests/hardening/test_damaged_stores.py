"""Damaged dsh SQLite stores and hostile export ZIPs: each gets the answer dsh's read path
gives, in one located line, never a traceback; a grown store session verifies as grown.

The stores are copies of dsh's own (../shared/corpus/sqlite/), damaged in a temporary
folder by plain SQL edits; the ZIPs are made here. Skips when ../shared/corpus is absent.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import stat
import zipfile

import pytest
from harness import attack

from dshreplay.errors import ReadError, UsageError
from dshreplay.io._varint import VarintError, decode_seqs, encode_seqs
from dshreplay.io.reader import LogSource

SESSION = "{{sessionId}}"


@pytest.fixture
def store(corpus_dir, tmp_path):
    """A writable copy of a one-session store (31 rows, seqs 0..30, a turn/end at 30, a zstd BLOB at 6)."""
    copy = tmp_path / "store.sqlite"
    shutil.copyfile(corpus_dir / "sqlite" / "headless-agent__compaction-recovery__session.sqlite", copy)
    return copy


def _edit(path, *statements):
    db = sqlite3.connect(path)
    db.execute("PRAGMA foreign_keys = OFF")
    for sql in statements:
        db.execute(sql)
    db.commit()
    db.execute("PRAGMA journal_mode = DELETE")
    db.close()


def _refused(path) -> ReadError:
    with pytest.raises(ReadError) as caught:
        LogSource(f"{path}#{SESSION}").reader().close()
    return caught.value


@pytest.mark.parametrize("statement,seq,column,why", [
    ("DELETE FROM events WHERE seq = 12", 13, "events.seq", "seq 12 is missing (this row starts at seq 13)"),
    ("UPDATE events SET data = x'28b52ffd0000' WHERE seq = 6", 6, "events.data",
     "corrupt zstd frame: decompression error: did not decompress full frame"),
    ("UPDATE events SET data = x'00112233' WHERE seq = 6", 6, "events.data", "BLOB is not a zstd frame"),
    ("UPDATE events SET data = '{\"turn\":1,' WHERE seq = 8", 8, "events.data",
     "is not valid JSON: unexpected end of data"),
    ("UPDATE events SET surface_op = 'append' WHERE seq = 4", 4, "events.surface_op",
     "is not valid JSON: unexpected character, expected a JSON value"),
    ("UPDATE events SET source_event_seqs = x'1382' WHERE seq = 21", 21, "events.source_event_seqs",
     "malformed source_event_seqs storage value: truncated varint at byte 1"),
    ("UPDATE events SET data = 5 WHERE seq = 3", 3, "events.data", "stored data must be a string or blob, got integer"),
])
def test_a_bad_row_before_the_last_turn_end_makes_the_session_unloadable(store, statement, seq, column, why):
    _edit(store, statement)
    error = _refused(store)
    assert (error.path, error.seq, error.pointer) == (f"{store}#{SESSION}", seq, column)
    assert error.message == f"corrupt session log: invalid committed physical row at seq {seq}: {why}"


def test_a_bad_row_after_the_last_turn_end_starts_a_torn_tail(store):
    _edit(store, "INSERT INTO events VALUES ('{{sessionId}}', 31, 'turn/start', 0, '{\"turn\":', NULL, NULL, NULL)")
    source = LogSource(f"{store}#{SESSION}")
    with source.reader() as reader:
        events = list(reader.events())
        assert (len(events), reader.event_count) == (31, 31)
        assert reader.torn_tail is not None and reader.torn_tail.line == 33
    assert source.container is not None and source.container.pin["tornFromSeq"] == 31
    assert source.data is not None and source.data.endswith(
        b"torn tail: the rows from seq 31 on cannot be read (events.data: is not valid JSON: unexpected end of data)")


def test_a_foreign_application_id_or_schema_version_is_one_line_and_exit_2(store, cli):
    _edit(store, "PRAGMA application_id = 7")
    result = cli("fold", f"{store}#{SESSION}", expect=2)
    assert result.stderr == (f"dshreplay: read error: {store}: not a dsh session store: application id 7, "
                             "expected 1146308688 (dsh's \"DSHP\")\n")
    _edit(store, "PRAGMA application_id = 1146308688", "PRAGMA user_version = 18")
    result = cli("fold", str(store), expect=2)
    assert result.stderr == (f"dshreplay: read error: {store}: dsh session store of schema version 18: "
                             "dshreplay reads schema 17, as dsh does (no migration)\n")


def test_a_session_whose_row_is_missing_is_not_in_the_store(store):
    _edit(store, "DELETE FROM sessions")
    error = _refused(store)
    assert error.message == ("no session '{{sessionId}}' in the store: its events rows have no sessions row, "
                             "so dsh does not see it")


@pytest.mark.parametrize("column,value,rule", [
    ("cwd", "work/space", "must be absolute"),
    ("origin", "fork", "must be subagent or null"),
    ("incarnation", "not-a-uuid", "must be a UUID"),
])
def test_a_session_row_dsh_refuses_is_refused_naming_its_column(store, column, value, rule):
    _edit(store, f"UPDATE sessions SET {column} = '{value}'")
    error = _refused(store)
    assert (error.pointer, error.message) == (
        f"sessions.{column}", f"stored session {column} {rule} (dsh refuses the row), got '{value}'")


def test_a_store_with_several_sessions_asks_which(corpus_dir):
    path = corpus_dir / "sqlite" / "acp-agent__subagent-mixed.sqlite"
    with pytest.raises(UsageError) as caught:
        LogSource(str(path))
    assert caught.value.message == (
        f"{path} holds 3 sessions: name one as {path}#SESSION_ID (02b3a8dd-1d5e-4866-825f-5fbf5000a632, "
        "959ffdf5-03e2-465e-9482-009b704632dc, e4aafa18-b9e3-48d0-8aae-6c9b25dcae80)")


@pytest.mark.parametrize("blob,why", [
    (b"\x80", "truncated varint at byte 0"),
    (b"\x13\x80\x00", "non-canonical varint at byte 1"),
    (b"\xff" * 9 + b"\x01", "varint is out of range at byte 0"),
    (b"\x02\x05", "decoded seq is out of range at byte 1"),  # 2, then 2 - 3 = -1
])
def test_varints_dsh_refuses_are_refused(blob, why):
    with pytest.raises(VarintError) as caught:
        decode_seqs(blob)
    assert str(caught.value) == why


def test_varints_round_trip_as_dsh_writes_them():
    assert encode_seqs([19, 20, 4]) == bytes.fromhex("13021f")
    assert decode_seqs(bytes.fromhex("13021f")) == [19, 20, 4]
    assert decode_seqs(b"") == []


def test_verify_export_grown_accepts_a_store_session_that_grew(store, tmp_path, cli):
    out, key = tmp_path / "bundle", tmp_path / "key"
    _edit(store, "DELETE FROM events WHERE seq = 30")  # (the turn ends later)
    cli("export", str(store), "--out", str(out), "--evidence-key", str(key), expect=None)
    _edit(store, "INSERT INTO events VALUES ('{{sessionId}}', 30, 'turn/end', 0, '{\"turn\":1}', NULL, NULL, NULL)",
          "UPDATE sessions SET revision = revision + 1")
    plain = cli("verify-export", str(out), "--evidence-key", str(key), "--json", expect=None)
    assert json.loads(plain.stdout)["inputs"][0]["status"] == "differs"
    grown = cli("verify-export", str(out), "--evidence-key", str(key), "--grown", "--json", expect=None)
    entry = json.loads(grown.stdout)["inputs"][0]
    assert entry["status"] == "grew"
    assert entry["detail"] == "lines 32..32 appended (56 bytes, 1 event): the bundle does not cover them"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sessions"][0]["container"]["kind"] == "dsh-sqlite-store"
    assert manifest["sessions"][0]["container"]["rows"] == 30


def _zip(path, entries, *, link=None):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            archive.writestr(name, data)
        if link is not None:
            info = zipfile.ZipInfo(link)
            info.create_system = 3
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, "/etc/passwd")
    return path


HEADER = b'{"type":"session","version":0,"id":"s","createdAt":1}\n'


@pytest.mark.parametrize("entries,link,why", [
    ([("session.jsonl", HEADER), ("../evil", b"x")], None,
     "holds the entry '../evil', a path outside the export: refused"),
    ([("session.jsonl", HEADER), ("/abs", b"x")], None, "holds the entry '/abs', a path outside the export: refused"),
    ([("session.jsonl", HEADER), ("session.jsonl", HEADER)], None, "holds the entry 'session.jsonl' twice: not a dsh "
                                                                   "export (refused)"),
    ([("session.jsonl", HEADER)], "media/x.png", "holds the entry 'media/x.png', a symbolic link: refused"),
    ([("other.jsonl", HEADER)], None, "holds no session.jsonl: not a dsh session export"),
])
def test_hostile_zips_are_refused_in_one_line(tmp_path, cli, entries, link, why):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (zipfile warns of the duplicate name it is told to write)
        path = _zip(tmp_path / "export.zip", entries, link=link)
    result = cli("fold", str(path), expect=2)
    assert result.stderr == f"dshreplay: read error: {path}: {why}\n"


def test_a_zip_whose_entry_claims_more_than_deflate_can_give_is_a_bomb(tmp_path, cli):
    path = _zip(tmp_path / "export.zip", [("session.jsonl", HEADER)])
    data = bytearray(path.read_bytes())
    central = data.index(b"PK\x01\x02")
    data[central + 24:central + 28] = (0xF0000000).to_bytes(4, "little")  # the uncompressed size it declares
    path.write_bytes(bytes(data))
    compressed = zipfile.ZipFile(path).infolist()[0].compress_size
    result = cli("fold", str(path), expect=2)
    assert result.stderr == (f"dshreplay: read error: {path}: entry 'session.jsonl' inflates {0xF0000000} bytes from "
                             f"{compressed}, more than 200 to 1 (no log compresses so): a ZIP bomb, refused\n")


def test_a_deflate_bomb_is_refused_before_it_is_inflated_in_a_child_held_to_400_mb(tmp_path):
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive, archive.open("session.jsonl", "w") as entry:
        entry.write(HEADER)
        block = b"\n" * (1 << 20)
        for _ in range(500):  # (written a block at a time: the test holds none of it)
            entry.write(block[:1_000_000])
    assert path.stat().st_size < 600_000  # (half a gigabyte of text in half a megabyte)
    outcome = attack("fold", str(path), mem_mb=400)
    assert outcome.code == 2
    compressed = zipfile.ZipFile(path).infolist()[0].compress_size
    assert outcome.one_line() == (f"dshreplay: read error: {path}: entry 'session.jsonl' inflates "
                                  f"{len(HEADER) + 500_000_000} bytes from {compressed}, more than 200 to 1 (no log "
                                  "compresses so): a ZIP bomb, refused")


def test_a_zip_entry_over_the_ceiling_is_refused_before_it_is_inflated(tmp_path, cli):
    path = _zip(tmp_path / "export.zip", [("session.jsonl", HEADER + b"x" * 2000)])
    result = cli("fold", "--max-bytes", "1000", str(path), expect=2)
    assert result.stderr == (f"dshreplay: read error: {path}: entry 'session.jsonl' holds {len(HEADER) + 2000} "
                             "bytes, over the 1000-byte --max-bytes ceiling\n")


def test_a_zip_subagent_not_held_is_named(corpus_dir):
    path = corpus_dir / "zip" / "acp-agent__read-image.zip"
    with pytest.raises(ReadError) as caught:
        LogSource(f"{path}#subagents/nope")
    assert caught.value.message == "no session 'subagents/nope' in the export (it holds no subagent)"


def test_a_zip_whose_entries_overlap_is_a_bomb(tmp_path, cli):
    path = _zip(tmp_path / "export.zip", [("session.jsonl", HEADER), ("media/aaaa.png", b"x" * 40)])
    data = bytearray(path.read_bytes())
    first = data.index(b"PK\x01\x02")
    second = data.index(b"PK\x01\x02", first + 4)
    data[second + 42:second + 46] = data[first + 42:first + 46]  # the second entry's data is the first's
    path.write_bytes(bytes(data))
    result = cli("fold", str(path), expect=2)
    assert result.stderr == (f"dshreplay: read error: {path}: entries 'session.jsonl' and 'media/aaaa.png' overlap in "
                             "the file (a ZIP bomb): refused\n")


def test_verify_export_tells_a_media_file_of_an_export_zip_that_changed(corpus_dir, tmp_path, cli):
    archive, out = tmp_path / "export.zip", tmp_path / "bundle"
    shutil.copyfile(corpus_dir / "zip" / "acp-agent__read-image.zip", archive)
    cli("export", str(archive), "--out", str(out), "--no-default-redaction", expect=None)
    with zipfile.ZipFile(archive) as old:
        entries = [(info.filename, old.read(info)) for info in old.infolist()]
    media = entries[1][0]
    _zip(archive, [entries[0], (media, entries[1][1] + b"\x00")])
    report = cli("verify-export", str(out), "--json", expect=None).json()
    assert report["inputs"][0]["status"] == "matches"  # (the session's own text is the same)
    assert {"path": str(archive), "problem": f"media file {media} changed"} in report["differences"]
