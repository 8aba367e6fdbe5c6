"""A session in a dsh SQLite store reads as its log: the same header, events and fold.

The stores are written by `dshreplay.testing.sqlitestore` (dsh's schema, packing, zstd
and varints) from the generated sample logs; dsh's own stores are read in
tests/corpus/test_stores.py.
"""

from __future__ import annotations

import pytest

from dshreplay.io.reader import LogReader, LogSource
from dshreplay.session import Session
from dshreplay.testing import samples
from dshreplay.testing.sqlitestore import write_store


@pytest.mark.parametrize("make", [samples.multi_turn, samples.compacted, samples.pruned, samples.rewritten,
                                  samples.incident])
@pytest.mark.parametrize("batch", [None, 5])
def test_a_stored_session_folds_exactly_as_its_log(tmp_path, make, batch):
    builder = make()
    log = builder.write(tmp_path / "session.jsonl")
    with LogReader(log) as reader:
        header = {k: v for k, v in reader.header.items() if k != "type"}
        records = [event.record for event in reader.events()]
    write_store(tmp_path / "store.sqlite", [(header, records)], batch=batch)
    spec = f"{tmp_path / 'store.sqlite'}#{header['id']}"
    with LogSource(spec).reader() as reader:
        assert reader.header == {"type": "session", **header}
        assert [e.record for e in reader.events()] == records
    assert Session(spec).fold().to_json() == Session(log).fold().to_json()


def test_a_long_payload_is_stored_as_a_zstd_frame_and_read_back(tmp_path):
    builder = samples.multi_turn()
    builder.user("word " * 2000)
    log = builder.write(tmp_path / "session.jsonl")
    with LogReader(log) as reader:
        header = {k: v for k, v in reader.header.items() if k != "type"}
        records = [event.record for event in reader.events()]
    write_store(tmp_path / "store.sqlite", [(header, records)])
    import sqlite3
    db = sqlite3.connect(tmp_path / "store.sqlite")
    assert db.execute("SELECT count(*) FROM events WHERE typeof(data) = 'blob'").fetchone() == (1,)
    db.close()
    with LogSource(str(tmp_path / "store.sqlite")).reader() as reader:
        assert [e.record for e in reader.events()] == records


def test_a_session_whose_text_exceeds_max_bytes_is_refused(tmp_path):
    from dshreplay.errors import ReadError
    from dshreplay.options import Options

    log = samples.multi_turn().write(tmp_path / "session.jsonl")
    with LogReader(log) as reader:
        header = {k: v for k, v in reader.header.items() if k != "type"}
        records = [event.record for event in reader.events()]
    write_store(tmp_path / "store.sqlite", [(header, records)])
    with pytest.raises(ReadError) as caught:
        LogSource(str(tmp_path / "store.sqlite"), Options(max_bytes=1000))
    assert caught.value.message == ("the session's text exceeds the 1000-byte ceiling (a log that needs a larger "
                                    "--max-bytes)")
