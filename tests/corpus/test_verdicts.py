"""`validate --snapshot` gives each corpus log the verdict its index expects.

`clean` logs were recorded from real dsh runs: no error allowed. `invalid`
logs break dsh's own rules: at least one error, and a fold error wherever dsh's
fold failed.
"""

from __future__ import annotations

import json

import pytest

from dshreplay.analyses.validate import validate_log
from dshreplay.options import Options

from conftest import CORPUS, corpus_available


def _entries():
    if not corpus_available():
        return [pytest.param(None, None, id="corpus-absent")]
    index = json.loads((CORPUS / "index.json").read_text())
    return [pytest.param(entry, name, id=name) for entry in index["logs"]
            for name in [f"{entry['name']}.jsonl", *entry["variants"]]]


@pytest.mark.parametrize("entry,filename", _entries())
def test_validate_verdict_matches_the_corpus(corpus_dir, entry, filename):
    report = validate_log(corpus_dir / "upstream" / filename, Options(snapshot=True))
    errors = [f for f in report.findings if f.severity == "error"]
    assert report.unreadable is None
    if entry["expect"] == "clean":
        assert errors == [], errors[:3]
    else:
        assert errors, entry["expectWhy"]
    if entry["errorStage"] == "fold":
        assert any(f.code.startswith("DSH-E1") and f.seq == entry["firstFailingSeq"] for f in errors)
    if entry["errorStage"] == "derive":
        assert any(f.code == "DSH-E112" for f in errors)
    assert report.events == entry["eventCount"]


def test_the_fast_schema_forms_agree_with_the_schema_files_on_every_corpus_record(corpus_dir):
    from dshreplay.analyses.validate import schemas
    from dshreplay.io.reader import LogReader

    from schema_forms import disagreements
    lines = []
    for path in sorted(corpus_dir.rglob("*.jsonl*")):
        if path.name.endswith((".jsonl", ".jsonl.zstd")):
            with LogReader(path) as reader:  # (a zstd log: its text)
                text = b"".join(reader.zstd_text()) if reader.encoding == "zstd" else path.read_bytes()
            lines.extend(text.splitlines()[1:])
    checked, differ = disagreements(schemas(), lines)
    assert checked > 100_000
    assert differ == []
