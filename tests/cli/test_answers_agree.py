"""Each fact once: every surface shows the same answer for the same log (#35)."""

from __future__ import annotations

import csv
import io

from dshreplay.testing.samples import LogBuilder


def _projected_with_packed_rows(tmp_path):
    b = LogBuilder("projected")
    b.start_turn()
    b.start_step()
    b.user("hello")
    b.assistant("one two three four five six", pieces=6)
    b.end_step()
    b.end_turn()
    return b.write(tmp_path / "projected.jsonl", layout="projected", pack=True)


def test_a_projected_log_has_no_times_in_any_event_packed_members_included(cli, tmp_path):
    # the members of a packed row after the first got 0 plus their gaps (1970-01-01T00:00:00.003Z,
    # ...) in events and events.csv, while every other event of the projected layout showed none
    log = _projected_with_packed_rows(tmp_path)
    rows = cli("events", log, "--json").json()
    assert len(rows) > 6 and [r["time"] for r in rows] == [None] * len(rows)
    assert "1970" not in cli("events", log, "--wide").stdout
    cli("export", log, "--out", tmp_path / "b", "--no-default-redaction", "--timestamp", "2026-01-01T00:00:00Z")
    [events_csv] = (tmp_path / "b").rglob("events.csv")
    table = list(csv.DictReader(io.StringIO(events_csv.read_text())))
    assert len(table) == len(rows) and {r["time"] for r in table} == {""}


def test_a_time_filter_on_a_projected_log_with_packed_rows_is_a_usage_error(cli, tmp_path):
    # `--since 2026-01-01` printed '0 events', exit 0, and `--since 1970-01-01` only chunks
    log = _projected_with_packed_rows(tmp_path)
    for since in ("2026-01-01", "1970-01-01"):
        result = cli("events", log, "--since", since, expect=2)
        assert result.stderr == (f"dshreplay: usage error: {log}: since on a log without times (a projected log "
                                 "has none): leave out since and until\n")
