"""Text for people: times."""

from __future__ import annotations

import datetime

from dshreplay.analyses.render import utc_time


def _reference(ms: int) -> str:
    moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def test_utc_time_of_events_in_one_second_and_across_seconds():
    base = 1_783_352_165_000
    values = [base, base + 1, base + 999, base + 1000, base + 999, base - 1, base, -1, -1000, -1001, -999,
              1, 999, 1000, 253_402_300_799_999]
    for ms in values + values[::-1]:
        assert utc_time(ms) == _reference(ms)
    assert utc_time(base + 7) == "2026-07-06T15:36:05.007Z"
    assert utc_time(-1) == "1969-12-31T23:59:59.999Z"


def test_utc_time_of_what_is_not_a_time():
    assert [utc_time(v) for v in (0, None, "1", True, 10**20)] == [None, None, None, None, None]
