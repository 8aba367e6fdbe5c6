"""A corpus log indexed in two parts (its first lines, then read on from the pass kept there)
gives exactly the rows of the log indexed whole: every fact a pass carries across the cut
(open turns and calls, brackets, hooks, findings) survives being kept between runs."""

from __future__ import annotations

import json

import pytest

from dshreplay.sql.rows import index_log

from conftest import CORPUS, corpus_available


def _logs():
    if not corpus_available():
        return [pytest.param(None, None, id="corpus-absent")]
    index = json.loads((CORPUS / "index.json").read_text())
    return [pytest.param(f"{entry['name']}.jsonl", entry["expect"], id=entry["name"]) for entry in index["logs"]]


@pytest.mark.parametrize("name,expect", _logs())
def test_a_log_read_on_from_a_kept_pass_gives_the_rows_of_a_whole_read(corpus_dir, name, expect, tmp_path):
    data = (corpus_dir / "upstream" / name).read_bytes()
    lines = data.splitlines(keepends=True)
    log = tmp_path / "session.jsonl"
    log.write_bytes(data)
    whole = index_log(log, messages=True)
    resumed_at = []
    for cut in sorted({2, len(lines) // 3, len(lines) // 2, len(lines) - 1}):
        if not 1 < cut < len(lines):
            continue
        log.write_bytes(b"".join(lines[:cut]))
        first = index_log(log, messages=True, keep=True)
        log.write_bytes(data)
        if first.state is None:  # (a prefix that does not end cleanly keeps no pass)
            continue
        resumed = index_log(log, messages=True, keep=True,
                            resume=(first.facts["size"], first.state, first.facts["chain"]["lines"]))
        assert resumed.resumed
        assert resumed.tables == whole.tables, (name, cut)
        assert resumed.facts == whole.facts
        resumed_at.append(cut)
    assert resumed_at or expect != "clean" or len(lines) < 4  # (a clean log's prefixes end cleanly)
