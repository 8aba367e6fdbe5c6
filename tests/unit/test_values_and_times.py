"""One rule each for what a number and a usable time are, how a time is written and read,
and how a JSON pointer is written and read (dshreplay._jsvalues)."""

from __future__ import annotations

import datetime

import pytest

import dshreplay
from dshreplay._jsvalues import (
    MAX_TIME,
    epoch_ms,
    is_number,
    is_time,
    json_pointer,
    parse_time,
    pointer_parts,
    utc_time,
)
from dshreplay.analyses.query import EventFilter
from dshreplay.testing.samples import LogBuilder


def test_a_number_is_an_int_or_a_float_never_a_bool():
    assert [is_number(v) for v in (0, -3, 1.5, 2**64, True, False, "1", None, [1])] == \
        [True, True, True, True, False, False, False, False, False]


def _reference(ms) -> str:
    moment = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def test_utc_time_of_events_in_one_second_and_across_seconds():
    base = 1_783_352_165_000
    values = [base, base + 1, base + 999, base + 1000, base + 999, base - 1, base, 1, 999, 1000, MAX_TIME,
              base + 0.5]
    for ms in values + values[::-1]:
        assert utc_time(ms) == _reference(ms)
    assert utc_time(base + 7) == "2026-07-06T15:36:05.007Z"
    assert utc_time(MAX_TIME) == "9999-12-31T23:59:59.999Z"


USABLE = [1, 1.5, 1_783_352_165_492, MAX_TIME]
UNUSABLE = [0, -1, -1000, 0.0, MAX_TIME + 1, 1e20, True, "1783352165492", None, [1]]


def test_a_usable_time_is_a_number_of_ms_after_1970_up_to_the_year_9999_and_only_it_is_shown():
    assert [is_time(v) for v in USABLE] == [True] * len(USABLE)
    assert [is_time(v) for v in UNUSABLE] == [False] * len(UNUSABLE)
    assert [utc_time(v) for v in UNUSABLE] == [None] * len(UNUSABLE)


def test_events_show_and_filter_by_time_the_same_events(tmp_path):
    b = LogBuilder()
    b.start_turn()
    for _ in range(len(USABLE) + len(UNUSABLE) - 1):
        b.add("todo/write", {"todos": []})
    for event, time in zip(b.events, USABLE + UNUSABLE):
        event["time"] = time
    session = dshreplay.open(b.write(tmp_path / "times.jsonl"))
    shown = [row.seq for row in session.query() if row.time is not None]
    assert shown == [0, 1, 2, 3]
    assert [row.seq for row in session.query(EventFilter(since=1))] == shown
    assert [row.time for row in session.query(EventFilter(until=MAX_TIME))] == \
        ["1970-01-01T00:00:00.001Z", "1970-01-01T00:00:00.001Z", "2026-07-06T15:36:05.492Z",
         "9999-12-31T23:59:59.999Z"]


def test_an_iso_time_is_read_as_utc_and_to_the_exact_millisecond():
    assert parse_time("2026-07-06T15:36:05.700Z") == \
        datetime.datetime(2026, 7, 6, 15, 36, 5, 700000, tzinfo=datetime.timezone.utc)
    assert parse_time("2026-07-06T17:36:05+02:00") == parse_time("2026-07-06T15:36:05") \
        == datetime.datetime(2026, 7, 6, 15, 36, 5, tzinfo=datetime.timezone.utc)
    assert epoch_ms(parse_time("2026-07-06T15:36:05.700Z")) == 1_783_352_165_700
    assert utc_time(epoch_ms(parse_time("2026-07-06T15:36:05.492Z"))) == "2026-07-06T15:36:05.492Z"


@pytest.mark.parametrize(("text", "why"), [
    ("yesterday", "is not an ISO 8601 time"), ("", "is not an ISO 8601 time"),
    ("0001-01-01T00:00:00+01:00", "is outside the years 1 to 9999 in UTC")])
def test_a_text_that_is_no_time_says_why(text, why):
    with pytest.raises(ValueError, match=f"^{why}$"):
        parse_time(text)


def test_a_json_pointer_escapes_tilde_and_slash_and_reads_back():
    parts = ["data", "a/b", "~x~1", 0, ""]
    assert json_pointer(parts) == "/data/a~1b/~0x~01/0/"
    assert pointer_parts(json_pointer(parts)) == ["data", "a/b", "~x~1", "0", ""]
    assert json_pointer([]) == "" and pointer_parts("") == []


def test_a_log_value_keys_a_dict_by_its_json_and_an_absent_one_apart_from_null():
    from dshreplay._jsvalues import MISSING, as_key
    assert as_key(MISSING) is MISSING and as_key(None) is None and as_key(MISSING) != as_key(None)
    assert as_key([1, {"a": 2}]) == as_key([1, {"a": 2}]) and as_key([1]) != as_key("[1]")
