"""The reader: encodings, layouts, packed rows, torn tails and precise errors."""

from __future__ import annotations

import hashlib
import io
import os

import orjson
import pytest
import zstandard

from dshreplay.errors import FormatVersionError, ReadError
from dshreplay.io.reader import LogReader, expand_row, read_log
from dshreplay.testing.samples import LogBuilder

HEADER = {"type": "session", "version": 0, "id": "s1", "createdAt": 5, "delegationDepth": 0}


def lines(*records) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def chunk_row_events(builder) -> LogBuilder:
    b = builder()
    b.user("hi")
    b.assistant("hello there, friend", reasoning="think it through", pieces=5,
                calls=[("call-1", "bash", '{"command":"ls"}')])
    return b


# -- layouts ---------------------------------------------------------------

def test_projected_layout_numbers_events_by_position(write_log):
    path = write_log([HEADER, {"type": "turn/start", "data": {"turn": 1}},
                      {"type": "step/start", "data": {"turn": 1, "step": 1}}])
    header, events = read_log(path)
    assert header == HEADER
    assert [(e.seq, e.type, e.time, e.line) for e in events] == [
        (0, "turn/start", 0, 2), (1, "step/start", 0, 3)]


def test_runtime_layout_keeps_written_seq_and_time(write_log):
    path = write_log([HEADER, {"type": "turn/start", "seq": 0, "time": 17, "data": {"turn": 1}}])
    _, events = read_log(path)
    assert (events[0].seq, events[0].time, events[0].declared_seq) == (0, 17, 0)


def test_all_layouts_of_one_log_give_the_same_events(builder, write_log):
    b = chunk_row_events(builder)
    variants = [write_log(b, layout="runtime"), write_log(b, layout="runtime", pack=True),
                write_log(b, "p.jsonl.zstd", layout="runtime", pack=True)]
    streams = [[e.record for e in read_log(p)[1]] for p in variants]
    assert streams[0] == b.events
    assert streams[1] == b.events
    assert streams[2] == b.events
    projected = [(e.seq, e.type, e.record.get("data")) for e in
                 read_log(write_log(b, layout="projected", pack=True))[1]]
    assert projected == [(e["seq"], e["type"], e["data"]) for e in b.events]


def test_blank_lines_and_crlf_are_tolerated_and_counted_as_lines(write_log):
    body = orjson.dumps(HEADER) + b"\r\n\r\n  \n" + orjson.dumps({"type": "turn/start", "data": {}}) + b"\r\n"
    _, events = read_log(write_log(body))
    assert [(e.seq, e.line) for e in events] == [(0, 4)]


# -- packed rows -----------------------------------------------------------

def test_text_row_expands_to_members_with_cumulative_times():
    row = {"type": "text-chunks", "seq0": 10, "time0": 100,
           "data": {"turn": 1, "step": 2, "index": 0, "dt": [5, -2], "texts": ["a", "", "c"]}}
    members = expand_row(row, "text-chunks", 10, 7, "f").members()
    assert [m.record for m in members] == [
        {"type": "assistant/chunk", "seq": 10, "time": 100,
         "data": {"turn": 1, "step": 2, "chunk": {"type": "text-delta", "index": 0, "text": "a"}}},
        {"type": "assistant/chunk", "seq": 11, "time": 105,
         "data": {"turn": 1, "step": 2, "chunk": {"type": "text-delta", "index": 0, "text": ""}}},
        {"type": "assistant/chunk", "seq": 12, "time": 103,
         "data": {"turn": 1, "step": 2, "chunk": {"type": "text-delta", "index": 0, "text": "c"}}}]
    assert {m.line for m in members} == {7}


def test_tool_call_row_keeps_name_only_when_the_row_has_one():
    named = {"type": "tool-call-chunks", "data": {"turn": 1, "step": 1, "index": 1, "id": "c",
                                                  "name": "bash", "dt": [0], "args": ["", "{}"]}}
    bare = {"type": "tool-call-chunks", "data": {"turn": 1, "step": 1, "index": 1, "id": "c",
                                                 "dt": [0], "args": ["", "{}"]}}
    assert expand_row(named, "tool-call-chunks", 0, 1, "f").members()[1].record["data"]["chunk"] == {
        "type": "tool-call-delta", "index": 1, "id": "c", "name": "bash", "argumentsDelta": "{}"}
    assert expand_row(bare, "tool-call-chunks", 0, 1, "f").members()[1].record["data"]["chunk"] == {
        "type": "tool-call-delta", "index": 1, "id": "c", "argumentsDelta": "{}"}


GOOD_DATA = {"turn": 1, "step": 1, "index": 0, "dt": [1], "texts": ["a", "b"]}


def test_a_row_of_numbers_that_are_not_plain_ints_expands_as_dsh_reads_them():
    row = {"type": "text-chunks", "seq0": 4.0, "time0": 5, "data": {**GOOD_DATA, "turn": 1.5, "dt": [2.0]}}
    run = expand_row(row, "text-chunks", 4, 3, "f")
    assert (run.count, run.times, run.declared_seq, [m.declared_seq for m in run.members()]) == \
        (2, [5, 7.0], 4.0, [4.0, 5.0])


@pytest.mark.parametrize("row,why", [
    ({"type": "text-chunks", "seq0": 0, "data": GOOD_DATA}, "envelope must be exactly"),
    ({"type": "text-chunks", "seq0": -1, "time0": 0, "data": GOOD_DATA}, "seq0 must be"),
    ({"type": "text-chunks", "seq0": 0, "time0": 0.5, "data": GOOD_DATA}, "time0 must be"),
    ({"type": "text-chunks", "data": [1]}, "data must be an object"),
    ({"type": "text-chunks", "data": {**GOOD_DATA, "extra": 1}}, "data must be exactly"),
    ({"type": "text-chunks", "data": {**GOOD_DATA, "turn": "1"}}, "turn/step/index must be numbers"),
    ({"type": "text-chunks", "data": {**GOOD_DATA, "dt": [], "texts": []}}, "non-empty array of strings"),
    ({"type": "text-chunks", "data": {**GOOD_DATA, "texts": ["a", 2]}}, "non-empty array of strings"),
    ({"type": "text-chunks", "data": {**GOOD_DATA, "dt": [1.5]}}, "dt must be an array of safe integers"),
    ({"type": "text-chunks", "data": {**GOOD_DATA, "dt": [1, 2]}}, "dt has 2 gaps for 2 members"),
    ({"type": "text-chunks", "seq0": 0, "time0": 2**53 - 1, "data": GOOD_DATA}, "member times"),
    ({"type": "text-chunks", "seq0": 0, "time0": 2**53 - 1, "data": {**GOOD_DATA, "dt": [1.0]}}, "member times"),
    ({"type": "text-chunks", "seq0": 2**53 - 1, "time0": 0, "data": GOOD_DATA}, "member seqs"),
    ({"type": "text-chunks", "seq0": 2**53 - 1, "time0": 2**53 - 1, "data": GOOD_DATA}, "member seqs"),
    ({"type": "text-chunks", "data": {**GOOD_DATA, "dt": [True]}}, "dt must be an array of safe integers"),
    ({"type": "text-chunks", "data": {**GOOD_DATA, "dt": [2**53]}}, "dt must be an array of safe integers"),
    ({"type": "text-chunks", "data": {**GOOD_DATA, "dt": [2**53], "texts": ["a"]}},
     "dt must be an array of safe integers"),
    ({"type": "text-chunks", "data": {**GOOD_DATA, "step": True}}, "turn/step/index must be numbers"),
    ({"type": "tool-call-chunks", "data": {**GOOD_DATA}}, "data must be exactly {turn, step, index, id"),
    ({"type": "tool-call-chunks", "data": {"turn": 1, "step": 1, "index": 0, "id": 3, "dt": [],
                                           "args": ["x"]}}, "id (and name when present) must be strings"),
])
def test_malformed_rows_are_rejected_with_line_and_seq(write_log, row, why):
    path = write_log([HEADER, {"type": "turn/start", "data": {"turn": 1}}, row])
    with LogReader(path) as reader, pytest.raises(ReadError) as err:
        list(reader.events())
    assert why in err.value.message
    assert (err.value.line, err.value.seq) == (3, 1)
    assert f"malformed {row['type']} row" in str(err.value)


# -- torn tails and bad lines ---------------------------------------------

def test_plain_torn_tail_is_reported_and_the_prefix_kept(write_log):
    good = lines(HEADER, {"type": "turn/start", "data": {"turn": 1}})
    path = write_log(good + b'{"type":"step/st')
    with LogReader(path) as reader:
        events = list(reader.events())
        assert [e.type for e in events] == ["turn/start"]
        tail = reader.torn_tail
    assert (tail.line, tail.offset, tail.size, tail.encoding) == (3, len(good), 16, "jsonl")


def test_last_line_without_newline_that_parses_is_an_event(write_log):
    path = write_log(lines(HEADER) + b'{"type":"turn/start","data":{"turn":1}}')
    with LogReader(path) as reader:
        assert len(list(reader.events())) == 1
        assert reader.torn_tail is None
        assert reader.final_newline is False


def test_bad_line_before_the_end_is_an_error_naming_line_and_seq(write_log):
    path = write_log(lines(HEADER, {"type": "a", "data": {}}) + b"{oops\n" + lines({"type": "b", "data": {}}))
    with LogReader(path) as reader, pytest.raises(ReadError) as err:
        list(reader.events())
    assert (err.value.path, err.value.line, err.value.seq) == (str(path), 3, 1)
    assert "line is not valid JSON" in err.value.message


@pytest.mark.parametrize("raw,why", [
    (b"[1, 2]\n", "record must be a JSON object, got an array"),
    (b'"text"\n', "record must be a JSON object, got a string"),
    (b"\xef\xbb\xbf{}\n", "byte-order mark"),
    (b'{"a": NaN}\n', "not valid JSON"),
    (b'{"a": "\xff"}\n', "not valid JSON"),
])
def test_non_object_and_undecodable_lines_are_errors(write_log, raw, why):
    path = write_log(lines(HEADER) + raw + lines({"type": "x", "data": {}}))
    with LogReader(path) as reader, pytest.raises(ReadError) as err:
        list(reader.events())
    assert why in err.value.message
    assert err.value.line == 2


# -- header ----------------------------------------------------------------

def test_header_must_come_first(write_log):
    with pytest.raises(ReadError, match='first record must be the session header'):
        LogReader(write_log([{"type": "turn/start", "data": {}}])).header


def test_empty_file_has_no_header(write_log):
    with pytest.raises(ReadError, match="empty log: no session header"):
        LogReader(write_log(b"")).header


@pytest.mark.parametrize("version", [1, -1, "0", None, 0.5])
def test_a_version_other_than_zero_is_refused(write_log, version):
    with pytest.raises(FormatVersionError) as err:
        LogReader(write_log([{**HEADER, "version": version}])).header
    assert f"format version {orjson.dumps(version).decode()} not supported" in err.value.message
    assert err.value.line == 1


def test_missing_version_and_placeholders_still_read(write_log):
    header = {k: v for k, v in HEADER.items() if k != "version"} | {"cwd": "{{cwd}}"}
    assert read_log(write_log([header, {"type": "turn/start", "data": {}}]))[0] == header


# -- zstd ------------------------------------------------------------------

def zstd_log(builder) -> tuple[LogBuilder, list[bytes]]:
    """A log as dsh writes it compressed: header frame, then frames of 3 lines."""
    b = chunk_row_events(builder)
    text = b.to_bytes(pack=True).splitlines(keepends=True)
    cctx = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True)
    frames = [cctx.compress(text[0])] + [cctx.compress(b"".join(text[k:k + 3]))
                                         for k in range(1, len(text), 3)]
    assert b"".join(frames) == b.to_zstd(pack=True, batch=3)
    return b, frames


def test_zstd_reads_across_every_frame(builder, write_log):
    b, frames = zstd_log(builder)
    data = b"".join(frames)
    # the one-shot API sees only the header frame: the reader must not
    assert zstandard.ZstdDecompressor().decompress(data).count(b"\n") == 1
    path = write_log(data, "s.jsonl.zstd")
    with LogReader(path) as reader:
        assert reader.encoding == "zstd"
        assert [e.record for e in reader.events()] == b.events


def test_zstd_frame_cut_short_is_a_torn_tail(builder, write_log):
    b, frames = zstd_log(builder)
    data = b"".join(frames)
    path = write_log(data[:-3], "s.jsonl.zstd")
    with LogReader(path) as reader:
        events = list(reader.events())
        tail = reader.torn_tail
    last_start = len(data) - len(frames[-1])
    assert (tail.encoding, tail.offset, tail.size) == ("zstd", last_start, len(frames[-1]) - 3)
    kept = read_log(write_log(b"".join(frames[:-1]), "kept.jsonl.zstd"))[1]
    assert [e.record for e in events] == [e.record for e in kept]
    assert 0 < len(events) < len(b.events)


def test_zstd_bad_checksum_is_corruption(builder, write_log):
    _, frames = zstd_log(builder)
    bad = bytearray(b"".join(frames))
    bad[-1] ^= 0x55
    with LogReader(write_log(bytes(bad), "s.jsonl.zstd")) as reader, pytest.raises(ReadError) as err:
        list(reader.events())
    assert "corrupt zstd data" in err.value.message and "checksum" in err.value.message


def test_zstd_garbage_between_frames_is_corruption(builder, write_log):
    _, frames = zstd_log(builder)
    first = len(frames[0]) + len(frames[1])
    data = b"".join(frames[:2]) + b"junk" + b"".join(frames[2:])
    with LogReader(write_log(data, "s.jsonl.zstd")) as reader:
        with pytest.raises(ReadError, match=f"frame at byte offset {first}"):
            list(reader.events())


def test_zstd_decompressed_size_ceiling(builder, write_log):
    _, frames = zstd_log(builder)
    with LogReader(write_log(b"".join(frames), "s.jsonl.zstd"), max_bytes=200) as reader:
        with pytest.raises(ReadError, match="exceeds the 200-byte ceiling"):
            list(reader.events())


# -- sources ---------------------------------------------------------------

def test_session_directory_with_one_log(tmp_path, builder):
    b = builder()
    b.write(tmp_path / "session.jsonl.zstd")
    header, events = read_log(tmp_path)
    assert header == b.header and len(events) == len(b.events)


def test_session_directory_with_both_encodings_is_refused(tmp_path, builder):
    b = builder()
    b.write(tmp_path / "session.jsonl")
    b.write(tmp_path / "session.jsonl.zstd")
    with pytest.raises(ReadError, match="both session.jsonl and session.jsonl.zstd"):
        read_log(tmp_path)


def test_empty_directory_is_refused(tmp_path):
    with pytest.raises(ReadError, match="holds no session.jsonl"):
        read_log(tmp_path)


def test_missing_file_is_a_read_error(tmp_path):
    with pytest.raises(ReadError, match="cannot open"):
        LogReader(tmp_path / "nope.jsonl")


def test_a_binary_stream_without_peek_is_read(builder):
    b = builder()

    class Pipe(io.RawIOBase):
        def __init__(self, data):
            self.data = data

        def readable(self):
            return True

        def readinto(self, buf):
            n = min(len(buf), len(self.data), 5)
            buf[:n] = self.data[:n]
            self.data = self.data[n:]
            return n

    for data in (b.to_bytes(), b.to_zstd()):
        with LogReader(Pipe(data)) as reader:
            assert [e.record for e in reader.events()] == b.events


def test_reading_never_changes_the_file(builder, write_log):
    path = write_log(chunk_row_events(builder), pack=True)
    before = (path.stat().st_mtime_ns, path.stat().st_size, hashlib.sha256(path.read_bytes()).digest())
    os.chmod(path, 0o444)
    read_log(path)
    after = (path.stat().st_mtime_ns, path.stat().st_size, hashlib.sha256(path.read_bytes()).digest())
    assert before == after


def test_one_huge_zstd_frame_is_refused_before_it_fills_memory(tmp_path, monkeypatch):
    import dshreplay.io.reader as reader_module
    monkeypatch.setattr(reader_module, "MAX_FRAME_BYTES", 1 << 16)
    cctx = zstandard.ZstdCompressor(write_checksum=True)
    data = cctx.compress(orjson.dumps(HEADER) + b"\n") + cctx.compress(b"\n" * (1 << 18))
    path = tmp_path / "bomb.jsonl.zstd"
    path.write_bytes(data)
    with LogReader(path) as reader, pytest.raises(ReadError, match="decompresses to more than 65536 bytes"):
        list(reader.events())
