"""Every session of dsh's own SQLite stores and web export ZIPs folds as dsh folds its log.

`../shared/corpus/sqlite/` holds stores dsh's SQLite backend wrote from the corpus logs
(its `index.json` maps each session to its log); `../shared/corpus/zip/` export ZIPs
dsh's web export wrote. Each session, read in place, must fold exactly like its log's
`*.expected.json` at every `at` point. Skips when ../shared/corpus is absent.
"""

from __future__ import annotations

import json
import os

import pytest
from corpus.test_conformance import folds_as_dsh

from dshreplay.io._store import discover
from dshreplay.io.reader import LogSource

from conftest import CORPUS, corpus_available


def _store_cases():
    if not corpus_available():
        return [pytest.param(None, None, None, id="corpus-absent")]
    index = json.loads((CORPUS / "sqlite" / "index.json").read_text())
    return [pytest.param(store, session_id, entry, id=f"{store}#{session_id}")
            for store, facts in index["stores"].items() for session_id, entry in facts["sessions"].items()]


def _zip_cases():
    if not corpus_available():
        return [pytest.param(None, None, None, id="corpus-absent")]
    index = json.loads((CORPUS / "zip" / "index.json").read_text())
    cases = []
    for name, facts in index.items():
        for k, (session_id, log) in enumerate(facts["sessions"].items()):
            spec = name if k == 0 else f"{name}#subagents/{session_id}"
            cases.append(pytest.param(spec, log, session_id, id=spec))
    return cases


def _fold_like_expected(source: LogSource, expected: dict) -> None:
    with source.reader() as reader:
        folds_as_dsh(reader, expected)
        assert reader.torn_tail is None


@pytest.mark.parametrize("store,session_id,entry", _store_cases())
def test_store_session_folds_exactly_as_dsh(corpus_dir, store, session_id, entry):
    expected = json.loads((corpus_dir / "upstream" / entry["expected"]).read_text())
    source = LogSource(f"{corpus_dir / 'sqlite' / store}#{session_id}")
    header = dict(expected["header"])
    for key, (_, now) in entry["headerRewrites"].items():
        header[key] = now
    with source.reader() as reader:
        got = reader.header
    if "delegationDepth" not in got:  # (dsh's JSONL writer defaults it to 0; a stored row keeps NULL)
        header.pop("delegationDepth", None)
    assert got == header
    assert source.container is not None and source.container.pin["session"] == session_id
    _fold_like_expected(source, expected)


@pytest.mark.parametrize("spec,log,session_id", _zip_cases())
def test_zip_session_folds_exactly_as_its_source(corpus_dir, spec, log, session_id):
    name = log.removesuffix(".jsonl").replace(".runtime", "")
    expected = json.loads((corpus_dir / "upstream" / f"{name}.expected.json").read_text())
    source = LogSource(str(corpus_dir / "zip" / spec))
    with source.reader() as reader:
        assert reader.header["id"] == session_id
    _fold_like_expected(source, expected)


def test_a_store_is_every_session_it_holds_and_a_zip_its_root_then_its_subagents(corpus_dir):
    store = str(corpus_dir / "sqlite" / "acp-agent__subagent-mixed.sqlite")
    assert discover([store]) == [f"{store}#02b3a8dd-1d5e-4866-825f-5fbf5000a632",
                                 f"{store}#959ffdf5-03e2-465e-9482-009b704632dc",
                                 f"{store}#e4aafa18-b9e3-48d0-8aae-6c9b25dcae80"]
    archive = str(corpus_dir / "zip" / "acp-agent__subagent-mixed.zip")
    assert discover([archive]) == [archive, f"{archive}#subagents/e4aafa18-b9e3-48d0-8aae-6c9b25dcae80",
                                   f"{archive}#subagents/02b3a8dd-1d5e-4866-825f-5fbf5000a632"]


def test_reading_every_store_changes_no_byte_and_creates_no_side_file(corpus_dir, tmp_path):
    folder = corpus_dir / "sqlite"
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}
    for path in sorted(folder.glob("*.sqlite")):
        for spec in discover([str(path)]):
            LogSource(spec).reader().close()
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()} == before
    # a writable copy too (the corpus folder is read-only): no -wal, no -shm, not a byte changed
    copy = tmp_path / "store.sqlite"
    copy.write_bytes((folder / "acp-agent__subagent-mixed.sqlite").read_bytes())
    stamp = copy.stat().st_mtime_ns
    for spec in discover([str(copy)]):
        with LogSource(spec).reader() as reader:
            list(reader.events())
    assert os.listdir(tmp_path) == ["store.sqlite"]
    assert copy.read_bytes() == (folder / "acp-agent__subagent-mixed.sqlite").read_bytes()
    assert copy.stat().st_mtime_ns == stamp


def test_export_zip_media_are_listed_with_their_hash_checked_against_the_name(corpus_dir):
    source = LogSource(str(corpus_dir / "zip" / "acp-agent__read-image.zip"))
    assert source.container is not None
    assert source.container.pin["media"] == [{
        "path": "media/sha256:b1ff9c8ea3a780bad09b346c423d2d0e46815926879b18e841d928376a946640.png",
        "size": 69, "sha256": "b1ff9c8ea3a780bad09b346c423d2d0e46815926879b18e841d928376a946640",
        "nameMatches": True}]


def test_lineage_draws_an_export_zip_and_a_store_as_root_and_subagents(corpus_dir, cli):
    for path in (corpus_dir / "zip" / "acp-agent__subagent-mixed.zip",
                 corpus_dir / "sqlite" / "acp-agent__subagent-mixed.sqlite"):
        (root,) = cli("lineage", "--json", str(path)).json()["sessions"]
        assert root["sessionId"] == "959ffdf5-03e2-465e-9482-009b704632dc"
        children = {c["sessionId"]: c for c in root["children"]}
        assert set(children) == {"e4aafa18-b9e3-48d0-8aae-6c9b25dcae80", "02b3a8dd-1d5e-4866-825f-5fbf5000a632"}
        assert children["02b3a8dd-1d5e-4866-825f-5fbf5000a632"]["seedVerified"] is True
        assert all(c["problems"] == [] for c in children.values())
