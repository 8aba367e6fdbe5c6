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


def test_inspect_and_stats_agree_on_turns_and_calls_for_every_corpus_log(corpus_dir):
    from dshreplay.session import Session
    checked = 0
    for log in sorted((corpus_dir / "upstream").glob("*.jsonl")):
        session = Session(log)
        try:
            health = session.inspect().to_json()
        except Exception as exc:  # noqa: BLE001 - a log the reader refuses is another test's business
            assert type(exc).__name__ in ("ReadError", "FormatVersionError"), exc
            continue
        stats = session.stats()
        assert [t["ending"] for t in health["turnEndings"]] == stats.turn_endings, log.name
        assert (health["turns"], health["calls"]) == (stats.turns, stats.calls), log.name
        checked += 1
    assert checked >= 150


def test_inspect_stats_and_the_report_agree_on_every_corpus_log(corpus_dir, tmp_path):
    import html
    import json

    from click.testing import CliRunner

    from dshreplay.cli import cli
    from dshreplay.session import Session
    out = tmp_path / "bundle"
    result = CliRunner().invoke(cli, ["export", str(corpus_dir / "upstream"), "--out", str(out), "--snapshot",
                                      "--timestamp", "2026-01-01T00:00:00Z", "--jobs", "1"])
    assert result.exit_code in (0, 1), result.output
    manifest = json.loads((out / "manifest.json").read_bytes())
    checked = 0
    for entry in manifest["sessions"]:
        if entry.get("folder") is None:
            continue
        session = Session(corpus_dir / "upstream" / entry["input"].rsplit("/", 1)[-1])
        health, stats = session.inspect().to_json(), session.stats()
        facts = json.loads((out / entry["folder"] / "session.json").read_bytes())
        if health["error"] is not None:  # inspect and stats answer for the events before it; the bundle for all
            assert entry["verdict"] == "errors" and stats.answered_up_to == health["answeredUpTo"] == \
                entry["answeredUpTo"] == health["error"]["seq"] - 1, entry["input"]
            continue
        endings = [t["ending"] for t in facts["turns"]]
        assert endings == stats.turn_endings == [t["ending"] for t in health["turnEndings"]], entry["input"]
        assert facts["calls"] == stats.calls == health["calls"], entry["input"]
        assert facts["failedCalls"] == stats.failed_calls, entry["input"]
        page = html.unescape((out / entry["folder"] / "report.html").read_text(encoding="utf-8"))
        shown = ", ".join(f"{t['turn']}: {t['ending']}" for t in facts["turns"]) or "-"
        assert f"<td>turn endings</td><td>{shown}</td>" in page, entry["input"]
        checked += 1
    assert checked >= 150
