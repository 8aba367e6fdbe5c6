"""Every validate rule, each broken by a small crafted log: the code and the seq."""

from __future__ import annotations

import orjson
import pytest

from dshreplay.analyses.findings import CODES
from dshreplay.analyses.validate import validate_log
from dshreplay.options import Options
from dshreplay.testing.samples import LogBuilder, pruned

pytestmark = pytest.mark.usefixtures("read_mode")  # each test: checks here, and in worker windows


def findings(path, **options):
    report = validate_log(path, Options(**options))
    return [(f.code, f.seq) for f in report.findings]


def problems(path, **options):
    """Errors and warnings as (code, seq); the still-open turn of `clean` (DSH-W213) left out."""
    options.setdefault("ignore", frozenset({"DSH-W213"}))
    report = validate_log(path, Options(**options))
    return [(f.code, f.seq) for f in report.findings if f.severity != "notice"]


def test_a_clean_log_has_no_findings(clean, write_log):
    clean.end_turn()
    assert findings(write_log(clean)) == []
    assert findings(write_log(clean, layout="projected", pack=True)) == []
    assert findings(write_log(clean, "c.jsonl.zstd", pack=True)) == []


# -- reading and format -------------------------------------------------------

def test_e001_unreadable_line_is_skipped_and_numbering_resyncs(clean, write_log):
    clean.end_turn()
    lines = clean.to_bytes().splitlines(keepends=True)
    path = write_log(b"".join(lines[:4] + [b"{not json\n"] + lines[4:]))
    assert findings(path) == [("DSH-E001", 3)]


def test_e001_a_line_that_replaced_an_event_costs_that_seq(clean, write_log):
    clean.end_turn()
    lines = clean.to_bytes().splitlines(keepends=True)
    path = write_log(b"".join(lines[:4] + [b"[1]\n"] + lines[5:]))  # event 3 is gone
    assert findings(path) == [("DSH-E001", 3)]  # the next line's own seq 4 resumes the check: no DSH-E101


def test_e002_malformed_row(clean, write_log):
    clean.end_turn()
    records = clean.records(pack=True)
    row = next(i for i, r in enumerate(records) if r["type"] == "text-chunks")
    records[row]["data"]["dt"].append(1)
    path = write_log([clean.header, *records])
    found = findings(path)
    assert found[0] == ("DSH-E002", records[row]["seq0"])


def test_e003_header_without_version(clean, write_log):
    del clean.header["version"]
    assert ("DSH-E003", None) in findings(write_log(clean))


def test_e004_unknown_envelope_field(clean, write_log):
    clean.events[2]["colour"] = "red"
    assert problems(write_log(clean))[0] == ("DSH-E004", 2)


def test_e005_payload_of_the_wrong_shape(clean, write_log):
    clean.events[0]["data"]["turn"] = "one"
    report = validate_log(write_log(clean))
    first = report.findings[0]
    assert (first.code, first.seq, first.pointer) == ("DSH-E005", 0, "/data/turn")


def test_e006_unknown_type_and_n007_ignorable_unknown_type(clean, write_log):
    clean.add("custom/thing", {"x": 1})
    clean.add("custom/other", {"x": 2}, ignorable=True)
    seq = clean.next_seq - 2
    found = findings(write_log(clean))
    assert ("DSH-E006", seq) in found and ("DSH-N007", seq + 1) in found


def test_e008_seq_without_time(clean, write_log):
    del clean.events[3]["time"]
    assert problems(write_log(clean))[0] == ("DSH-E008", 3)


def test_n009_mixed_layouts(clean, write_log):
    clean.end_turn()
    records = clean.records()
    records[5] = {k: v for k, v in records[5].items() if k not in ("seq", "time")}
    assert findings(write_log([clean.header, *records])) == [("DSH-N009", None)]


def test_w010_torn_tail(clean, write_log):
    clean.end_turn()
    assert findings(write_log(clean.to_bytes() + b'{"type":"turn/st')) == [("DSH-W010", None)]


def test_n011_placeholders_only_with_snapshot(clean, write_log):
    clean.end_turn()
    clean.header["cwd"] = "{{cwd}}"
    clean.events[1]["data"]["header"]["tools"] = "{{tools}}"
    path = write_log(clean)
    assert findings(path, snapshot=True) == [("DSH-N011", None)]
    assert ("DSH-E005", 1) in findings(path)


def test_w012_last_record_without_newline(clean, write_log):
    clean.end_turn()
    assert findings(write_log(clean.to_bytes()[:-1])) == [("DSH-W012", None)]


def test_e013_corrupt_zstd_stops_reading(clean, write_log):
    clean.end_turn()
    data = bytearray(clean.to_zstd(batch=4))
    data[-2] ^= 0xFF
    assert findings(write_log(bytes(data), "c.jsonl.zstd"))[-1][0] == "DSH-E013"


def test_w017_a_skippable_zstd_frame_is_bytes_hidden_from_every_reader(clean, write_log):
    import struct

    clean.end_turn()
    data = clean.to_zstd(batch=4)
    hidden = struct.pack("<II", 0x184D2A50, 12) + b"secret notes"  # a skippable frame: 8 + 12 bytes
    path = write_log(data + hidden, "c.jsonl.zstd")
    report = validate_log(path)
    assert [(f.code, f.message) for f in report.findings] == [
        ("DSH-W017", f"the zstd frame at byte offset {len(data)} holds 20 bytes that decode to no log text "
                     "(a skippable frame): hidden from every reader")]
    assert findings(write_log(data, "d.jsonl.zstd")) == []  # (the same log without it is clean)


def test_e014_seed_length_must_point_at_end_seed(write_log):
    from dshreplay.testing.samples import fork_child
    b = fork_child()
    b.header["seedLength"] -= 1
    assert ("DSH-E014", b.header["seedLength"]) in findings(write_log(b))


# -- the surface fold, as findings ---------------------------------------------

def test_e101_a_seq_jump_is_one_finding_and_the_seqs_after_it_hold(clean, write_log):
    clean.end_turn()
    first = next(i for i, e in enumerate(clean.events) if e["type"] == "assistant/chunk")
    for event in clean.events[first:]:
        event["seq"] += 1  # the written seqs jump by one just before a run of chunks (seq 4 is missing)
        if "sourceEventSeqs" in event:  # (and the messages cite their chunks by their new seqs)
            event["sourceEventSeqs"] = [s + 1 if s >= first else s for s in event["sourceEventSeqs"]]
    report = validate_log(write_log(clean))
    assert [(f.code, f.seq, f.line) for f in report.findings] == [("DSH-E101", first, first + 2)]
    assert report.findings[0].message == (f"seq {first + 1} is not contiguous; expected {first}: seq {first} is "
                                          f"missing (checking goes on from seq {first + 1})")


def test_fold_rejections_are_findings_and_checking_goes_on(clean, write_log):
    assert clean.events[3]["type"] == "user/message"
    clean.events[3]["surfaceOp"] = "prepend"
    clean.events[5]["seq"] = 50
    assert problems(write_log(clean)) == [("DSH-E004", 3), ("DSH-E104", 3), ("DSH-E101", 5)]


def test_e112_assistant_message_without_message(clean, write_log):
    seq = next(e["seq"] for e in clean.events if e["type"] == "assistant/message")
    del clean.events[seq]["data"]["message"]
    found = findings(write_log(clean))
    assert ("DSH-E112", seq) in found and ("DSH-E005", seq) in found


# -- turns, steps, tools -------------------------------------------------------

def test_e201_turn_start_while_open(clean, write_log):
    seq = clean.add("turn/start", {"turn": 2})
    assert ("DSH-E201", seq) in problems(write_log(clean))


def test_e202_turn_numbering(clean, write_log):
    clean.end_turn()
    seq = clean.add("turn/start", {"turn": 3})
    assert ("DSH-E202", seq) in problems(write_log(clean))


def test_e203_turn_end_for_another_turn(clean, write_log):
    clean.end_step()
    seq = clean.add("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    assert problems(write_log(clean)) == [("DSH-E203", seq)]


def test_e204_turn_end_with_open_step(clean, write_log):
    seq = clean.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    assert problems(write_log(clean)) == [("DSH-E204", seq)]


def test_e205_step_in_another_turn(clean, write_log):
    clean.end_step()
    seq = clean.add("step/start", {"turn": 2, "step": 3})
    assert ("DSH-E205", seq) in problems(write_log(clean))


def test_e206_step_start_while_open(clean, write_log):
    seq = clean.add("step/start", {"turn": 1, "step": 3})
    assert ("DSH-E206", seq) in problems(write_log(clean))


def test_e207_step_numbering(clean, write_log):
    clean.end_step()
    seq = clean.add("step/start", {"turn": 1, "step": 5})
    assert ("DSH-E207", seq) in problems(write_log(clean))


def test_e208_tool_call_in_another_step(clean, write_log):
    seq = clean.add("tool/call", {"turn": 1, "step": 1, "callId": "c9", "name": "bash", "arguments": "{}"})
    assert ("DSH-E208", seq) in problems(write_log(clean))


def test_e208_packed_chunks_outside_any_step_reported_once_per_row(write_log):
    b = LogBuilder()
    b.start_turn()
    b.start_step()
    b.user("hi")
    b.assistant("a reply in many pieces", pieces=6)
    b.events = [e for e in b.events if e["type"] != "step/start"]
    for i, e in enumerate(b.events):
        e["seq"] = i
    found = [c for c in problems(write_log(b, pack=True)) if c[0] == "DSH-E208"]
    # block-start, the row of six deltas (once), block-end, usage, finish, the message
    assert found == [("DSH-E208", s) for s in (2, 3, 9, 10, 11, 12)]


def test_e209_request_header_outside_any_turn(clean, write_log):
    clean.end_turn()
    seq = clean.request_header()
    assert problems(write_log(clean)) == [("DSH-E209", seq)]


def test_e210_result_without_call(clean, write_log):
    seq = clean.tool_result("never-called", "?", cites=2)
    assert problems(write_log(clean)) == [("DSH-E210", seq)]


def test_e210_synthetic_not_started_result_is_allowed(clean, write_log):
    seq = clean.tool_result("never-called", "interrupted", cites=2, is_error=True)
    clean.events[seq]["data"]["error"] = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    clean.end_turn()
    assert problems(write_log(clean)) == []


def test_e210_second_result_for_one_call(clean, write_log):
    results = [e for e in clean.events if e["type"] == "tool/result"]
    b = clean
    b.end_step()
    b.start_step()
    call_id = results[0]["data"]["message"]["source"]["callId"]
    b.tool_call(call_id, "bash", "{}")
    b.tool_result(call_id, "x", cites=b.next_seq - 1)
    seq = b.tool_result(call_id, "again", cites=b.next_seq - 2)
    b.end_turn()
    report = validate_log(write_log(b))
    assert [(f.code, f.seq) for f in report.findings] == [("DSH-E210", seq)]
    assert "already answered at seq" in report.findings[0].message


def test_w211_unanswered_call_at_step_end(clean, write_log):
    clean.tool_call("c-lost", "bash", "{}")
    seq = clean.end_step()
    clean.end_turn()
    assert problems(write_log(clean)) == [("DSH-W211", seq)]


def test_e212_assistant_message_citing_other_events(clean, write_log):
    message = next(e for e in reversed(clean.events) if e["type"] == "assistant/message")
    message["sourceEventSeqs"] = [0, *message["sourceEventSeqs"]]
    assert problems(write_log(clean)) == [("DSH-E212", message["seq"])]


def test_e212_a_duplicated_line_of_a_projected_log_shifts_what_later_messages_cite(clean, write_log):
    clean.end_turn()
    records = clean.records(layout="projected")  # seqs by position
    chunk = next(i for i, r in enumerate(records) if r["type"] == "assistant/chunk")
    message = max(i for i, r in enumerate(records) if r["type"] == "assistant/message")
    step_start = max(i for i, r in enumerate(records) if r["type"] == "step/start")
    assert records[message]["sourceEventSeqs"][0] == step_start + 1
    duplicated = records[:chunk + 1] + records[chunk:]
    # the last message (now at message + 1) cites step_start + 1, now its step/start: dsh's fold and
    # invariants let that pass, its token meter throws on it (the message carries usage)
    assert "usage" in records[message]["data"]
    assert findings(write_log([clean.header, *duplicated])) == [("DSH-E212", message + 1)]
    runtime = clean.to_bytes().splitlines(keepends=True)  # (with written seqs: every later seq is off)
    assert findings(write_log(b"".join(runtime[:chunk + 2] + runtime[chunk + 1:])))[0] == ("DSH-E101", chunk + 1)


def test_w213_interrupted_turn_says_what_dsh_would_synthesize(clean, write_log):
    clean.end_step()
    clean.start_step()
    clean.assistant("", calls=[("c-run", "bash", "{}"), ("c-asked", "read", "{}")])
    call = clean.tool_call("c-run", "bash", "{}")
    report = validate_log(write_log(clean))
    [last] = report.findings
    assert (last.code, last.seq) == ("DSH-W213", call)
    assert last.message == (
        f'log ends inside turn 1; dsh would append tool/result TOOL_OUTCOME_UNKNOWN for "c-run" (its '
        f'tool/call at seq {call} may have had side effects), tool/result TOOL_NOT_STARTED for "c-asked" '
        "(asked for, never started), step/end 3, turn/end (interrupted)")


# -- compaction brackets and metering -------------------------------------------

@pytest.fixture
def compacting(clean):
    """`clean` plus a valid compaction of its first two nodes; returns (builder, seqs)."""
    nodes = clean.surface()
    replacer = clean.compaction(nodes[0], nodes[1], "summary")
    seqs = {"start": replacer - 2, "summary": replacer - 1, "replace": replacer, "end": replacer + 1}
    return clean, seqs


def test_a_valid_compaction_has_no_findings(compacting, write_log):
    b, _ = compacting
    b.end_turn()
    assert findings(write_log(b)) == []


def test_e301_nested_compaction(compacting, write_log):
    b, s = compacting
    b.events[s["end"]] = {**b.events[s["end"]], "type": "compaction/start",
                          "data": {"compactionId": "other", "turn": 1}}
    found = problems(write_log(b))
    assert ("DSH-E301", s["end"]) in found


def test_e302_standalone_compaction_inside_a_turn(compacting, write_log):
    b, s = compacting
    b.events[s["start"]]["data"]["turn"] = None
    b.events[s["end"]]["data"]["turn"] = None
    assert ("DSH-E302", s["start"]) in problems(write_log(b))


def test_e303_summary_for_another_compaction(compacting, write_log):
    b, s = compacting
    b.events[s["summary"]]["data"]["compactionId"] = "someone-else"
    assert problems(write_log(b)) == [("DSH-E303", s["summary"])]


def test_e304_end_without_start(clean, write_log):
    seq = clean.add("compaction/end", {"compactionId": "x", "turn": 1})
    assert problems(write_log(clean)) == [("DSH-E304", seq)]


def test_e305_second_summary(compacting, write_log):
    b, s = compacting
    summary = b.events[s["summary"]]
    b.events.insert(s["summary"], dict(summary))
    for i, e in enumerate(b.events):
        e["seq"] = i
    for e in b.events[s["replace"]:]:
        if "sourceEventSeqs" in e:
            e["sourceEventSeqs"] = [x + 1 if x >= s["summary"] else x for x in e["sourceEventSeqs"]]
    found = problems(write_log(b))
    assert ("DSH-E305", s["summary"] + 1) in found


def test_e306_shadowed_range_disagrees_with_seqs(compacting, write_log):
    b, s = compacting
    b.events[s["summary"]]["data"]["shadowedRange"]["end"] = 0
    assert problems(write_log(b)) == [("DSH-E306", s["summary"])]


def test_e307_end_names_another_turn(compacting, write_log):
    b, s = compacting
    b.events[s["end"]]["data"]["turn"] = 2
    assert ("DSH-E307", s["end"]) in problems(write_log(b))


def test_e308_successful_end_without_summary(clean, write_log):
    clean.add("compaction/start", {"compactionId": "k", "turn": 1})
    seq = clean.add("compaction/end", {"compactionId": "k", "turn": 1})
    assert problems(write_log(clean)) == [("DSH-E308", seq)]
    clean.events[seq]["data"]["error"] = "model refused"
    assert problems(write_log(clean)) == []


def test_e309_turn_boundary_inside_open_compaction(clean, write_log):
    clean.add("compaction/start", {"compactionId": "k", "turn": 1})
    clean.end_step()
    seq = clean.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    clean.add("compaction/end", {"compactionId": "k", "turn": 1, "error": "cancelled"})
    found = problems(write_log(clean))
    assert ("DSH-E309", seq) in found


def test_w310_open_compaction_at_the_end(clean, write_log):
    seq = clean.add("compaction/start", {"compactionId": "k", "turn": 1})
    assert ("DSH-W310", seq) in problems(write_log(clean))


def test_n311_compaction_abandoned_before_end_seed(clean, write_log):
    clean.add("compaction/start", {"compactionId": "k", "turn": 1})
    clean.end_step()
    clean.add("turn/end", {"turn": 1, "reason": {"kind": "interrupted"}})  # repair closers
    seed = clean.add("session/end-seed", {})
    assert findings(write_log(clean)) == [("DSH-N311", seed)]


def test_w312_meter_prices_other_nodes(compacting, write_log):
    b, s = compacting
    b.events[s["summary"]]["data"]["shadowedSeqs"] = [b.events[s["replace"]]["surfaceOp"]["start"]]
    b.events[s["summary"]]["data"]["shadowedRange"]["end"] = b.events[s["replace"]]["surfaceOp"]["start"]
    assert problems(write_log(b)) == [("DSH-W312", s["summary"])]


def test_w312_a_changed_seq_in_a_prune_is_a_warning_as_dsh_accepts_it(write_log):
    b = pruned()
    [meter] = [e for e in b.events if e["type"] == "compaction/prune"]
    [result] = meter["data"]["shadowedSeqs"]
    meter["data"]["shadowedSeqs"] = [result + 1]  # (its shadowedRange still says result..result)
    report = validate_log(write_log(b))
    assert [(f.code, f.seq) for f in report.findings] == [("DSH-W312", meter["seq"])]
    assert report.ok


def test_e313_prune_not_followed_by_its_replacement(clean, write_log):
    nodes = clean.surface()
    seq = clean.add("compaction/prune", {"shadowedRange": {"start": nodes[0], "end": nodes[0]},
                                         "shadowedSeqs": [nodes[0]], "shadowedTokenCount": 10})
    clean.user("no replacement here")
    assert problems(write_log(clean)) == [("DSH-E313", seq)]


def test_e313_a_replacement_that_comes_late_is_one_error_on_that_replacement(clean, write_log):
    # it was E313 on the prune, two seqs before the replacement it is about, and N314 on the replacement
    nodes = clean.surface()
    meter = clean.add("compaction/prune", {"shadowedRange": {"start": nodes[0], "end": nodes[0]},
                                           "shadowedSeqs": [nodes[0]], "shadowedTokenCount": 10})
    clean.add("request/context", {"provider": clean.provider, "model": clean.model})
    message = {"content": [{"type": "text", "text": "[pruned]"}], "source": {"kind": "plugin", "plugin": "prune"},
               "role": "user", "id": "m-late"}
    late = clean.add("user/message", message, sourceEventSeqs=[nodes[0]],
                     surfaceOp={"op": "replace", "start": nodes[0], "end": nodes[0]})
    report = validate_log(write_log(clean), Options(ignore=frozenset({"DSH-W213"})))
    assert [(f.code, f.seq, f.message) for f in report.findings] == [
        ("DSH-E313", late, f"replacement of {nodes[0]}..{nodes[0]} is not directly after the compaction/prune at "
                           f"seq {meter} that prices it (1 events lie between)")]


def test_e313_a_meter_followed_by_another_meter_is_named_on_the_first(clean, write_log):
    nodes = clean.surface()
    first = clean.add("compaction/prune", {"shadowedRange": {"start": nodes[0], "end": nodes[0]},
                                           "shadowedSeqs": [nodes[0]], "shadowedTokenCount": 10})
    clean.user("between")
    clean.prune(nodes[0], nodes[0])
    report = validate_log(write_log(clean), Options(ignore=frozenset({"DSH-W213"})))
    assert [(f.code, f.seq, f.message) for f in report.findings] == [
        ("DSH-E313", first, f"compaction/prune at seq {first} is followed by no replacement before the next "
                            f"metering event at seq {first + 2}")]


def test_n314_unmetered_replacement(clean, write_log):
    result = next(e["seq"] for e in clean.events if e["type"] == "tool/result")
    seq = clean.rewrite_tool_result(result, "shorter")
    clean.end_turn()
    assert findings(write_log(clean)) == [("DSH-N314", seq)]


def test_w315_checkpoint_without_compaction(clean, write_log):
    nodes = clean.surface()
    message = {"content": [{"type": "text", "text": "summary"}],
               "source": {"kind": "plugin", "plugin": "compact", "compactionId": "ghost"},
               "role": "user", "id": "m-x"}
    seq = clean.add("user/message", message, sourceEventSeqs=[nodes[0]],
                    surfaceOp={"op": "replace", "start": nodes[0], "end": nodes[0]})
    assert problems(write_log(clean)) == [("DSH-W315", seq)]


def _checkpoint(builder, cid: str) -> int:
    nodes = builder.surface()
    message = {"content": [{"type": "text", "text": "summary"}],
               "source": {"kind": "plugin", "plugin": "compact", "compactionId": cid}, "role": "user", "id": "m-x"}
    return builder.add("user/message", message, sourceEventSeqs=[nodes[0]],
                       surfaceOp={"op": "replace", "start": nodes[0], "end": nodes[0]})


def test_e303_checkpoint_of_another_compaction_inside_an_open_one(clean, write_log):
    start = clean.add("compaction/start", {"compactionId": "open-one", "turn": clean.turn})
    seq = _checkpoint(clean, "other")
    clean.add("compaction/end", {"compactionId": "open-one", "turn": clean.turn, "error": "gave up"})
    assert problems(write_log(clean)) == [("DSH-E303", seq)]
    messages = [f.message for f in validate_log(write_log(clean)).findings if f.code == "DSH-E303"]
    assert messages == [f'compaction checkpoint "other" replaces history inside compaction "open-one" '
                        f"(started at seq {start})"]


def test_e304_checkpoint_after_its_compaction_ended(clean, write_log):
    clean.compaction(clean.surface()[0], clean.surface()[0], "first")
    start = next(e["seq"] for e in clean.events if e["type"] == "compaction/start")
    cid = next(e["data"]["compactionId"] for e in clean.events if e["type"] == "compaction/start")
    seq = _checkpoint(clean, cid)
    assert problems(write_log(clean)) == [("DSH-E304", seq)]
    messages = [f.message for f in validate_log(write_log(clean)).findings if f.code == "DSH-E304"]
    assert messages == [f'compaction checkpoint "{cid}" replaces history outside its compaction (started at seq '
                        f"{start})"]


def test_every_code_is_exercised_by_a_test():
    source = "".join(open(__file__.replace("test_validate_rules", name)).read()
                     for name in ("test_validate_rules", "test_surface", "test_hook_rules"))
    for code in CODES:
        if code in ("DSH-E000",) or code.startswith("DSH-E1"):
            continue  # unreadable files: CLI tests; fold codes: test_surface.py; hooks: test_hook_rules.py
        assert code.lower().replace("dsh-", "") in source.lower() or code in source, code


def test_select_and_ignore_filter_by_prefix(clean, write_log):
    clean.add("custom/thing", {"x": 1})
    clean.tool_call("c-lost", "bash", "{}")
    clean.end_step()
    path = write_log(clean)
    assert {c for c, _ in findings(path, select=frozenset({"DSH-W"}))} == {"DSH-W211", "DSH-W213"}
    assert {c for c, _ in findings(path, ignore=frozenset({"DSH-W", "DSH-E006"}))} == set()


def test_findings_carry_line_and_pointer(clean, write_log):
    clean.events[0]["data"]["turn"] = "one"
    path = write_log(clean)
    report = validate_log(path)
    assert orjson.loads(path.read_bytes().splitlines()[report.findings[0].line - 1])["seq"] == 0


@pytest.mark.parametrize("bad_type", [["a"], {"k": 1}, 5, None])
def test_a_type_that_is_not_a_string_is_reported_not_crashed_on(clean, write_log, bad_type):
    clean.events[2]["type"] = bad_type
    found = problems(write_log(clean))
    assert ("DSH-E004", 2) in found and ("DSH-E006", 2) in found


def test_a_key_written_twice_is_a_warning_at_its_object(clean, write_log):
    lines = write_log(clean).read_bytes().splitlines(keepends=True)
    assert lines[1].startswith(b'{"type":"turn/start"')
    lines[1] = lines[1].replace(b'"data":{', b'"data":{"turn":9,', 1)  # seq 0 writes data.turn twice
    path = write_log(b"".join(lines))
    report = validate_log(path, Options(ignore=frozenset({"DSH-W213"})))
    [dup] = [f for f in report.findings if f.code == "DSH-W016"]
    assert (dup.seq, dup.line, dup.pointer, dup.severity) == (0, 2, "/data", "warning")
    assert dup.message.startswith('key "turn" appears twice in one object')
    assert [f.code for f in report.findings if f.severity == "error"] == []  # the last value is the one read


def test_a_key_written_twice_is_found_though_a_longer_number_makes_up_its_bytes(clean, write_log):
    lines = write_log(clean).read_bytes().splitlines(keepends=True)
    assert lines[1].startswith(b'{"type":"turn/start"') and b'"data":{"turn":1' in lines[1]
    # orjson writes the 1e9 that is kept as 1000000000.0: nine bytes more, as many as the "turn":0, before it
    lines[1] = lines[1].replace(b'"data":{"turn":1', b'"data":{"turn":0,"turn":1e9', 1)
    written = orjson.dumps(orjson.loads(lines[1]))
    assert len(written) == len(lines[1].rstrip(b"\n")) and written != lines[1].rstrip(b"\n")
    report = validate_log(write_log(b"".join(lines)), Options(select=frozenset({"DSH-W016"})))
    assert [(f.code, f.seq, f.line, f.pointer) for f in report.findings] == [("DSH-W016", 0, 2, "/data")]


def test_e212_cites_a_chunk_seq_only_as_a_plain_integer(clean, write_log):
    # a float or a boolean equal to a chunk's seq, or a list holding one, is not that seq
    message = next(e for e in reversed(clean.events) if e["type"] == "assistant/message")
    first, *rest = message["sourceEventSeqs"]
    message["sourceEventSeqs"] = [float(first), *rest, [first], {"seq": first}, True]
    report = validate_log(write_log(clean), Options(select=frozenset({"DSH-E212"})))
    assert [(f.code, f.seq, f.pointer, f.message) for f in report.findings] == [
        ("DSH-E212", message["seq"], "/sourceEventSeqs",
         f'assistant/message cites [{first}.0,[{first}],{{"seq":{first}}},true], which are not '
         "assistant/chunk events of its step")]
    message["sourceEventSeqs"] = [first, *rest]
    assert findings(write_log(clean), select=frozenset({"DSH-E212"})) == []


def test_one_record_s_own_findings_come_in_the_order_its_checks_run(clean, write_log):
    # envelope schema, seq without time, a key written twice: all at one line, in that order; then the
    # fold's verdict on it: an unknown type (before the surface field a log-only type may not carry)
    lines = write_log(clean).read_bytes().splitlines(keepends=True)
    seq = clean.next_seq
    lines.append(b'{"type":"custom/thing","seq":%d,"sourceEventSeqs":"no","data":{"x":1,"x":2}}\n' % seq)
    own = frozenset({"DSH-E004", "DSH-E008", "DSH-E006", "DSH-W016", "DSH-E102"})
    report = validate_log(write_log(b"".join(lines)), Options(select=own))
    line = len(lines)
    assert [(f.code, f.seq, f.line, f.pointer) for f in report.findings] == [
        ("DSH-E004", seq, line, "/sourceEventSeqs"), ("DSH-E008", seq, line, None),
        ("DSH-W016", seq, line, "/data"), ("DSH-E006", seq, line, "/type")]
    assert [report.findings[1].message, report.findings[3].message] == [
        "record has seq but no time",
        'unknown event type "custom/thing" without ignorable: true: dsh refuses to load the log (event skipped '
        "for surface purposes)"]


def test_w018_fields_a_newer_dsh_adds_are_warnings_naming_them_and_errors_only_with_strict(clean, write_log):
    clean.header["owner"] = "ops"
    result = next(e for e in clean.events if e["type"] == "tool/result")
    result["data"]["mutations"] = [{"path": "a.txt"}]
    report = validate_log(write_log(clean), Options(ignore=frozenset({"DSH-W213"})))
    assert [(f.code, f.severity, f.seq, f.pointer, f.message) for f in report.findings] == [
        ("DSH-W018", "warning", None, "/owner", 'field "owner" is not in dsh\'s schema as dshreplay knows it '
                                                "(a newer or forked dsh?): read, not checked"),
        ("DSH-W018", "warning", result["seq"], "/data/mutations", 'field "mutations" is not in dsh\'s schema as '
                                                                  "dshreplay knows it (a newer or forked dsh?): "
                                                                  "read, not checked")]


def test_w018_is_not_given_where_the_payload_is_wrong_besides(clean, write_log):
    result = next(e for e in clean.events if e["type"] == "tool/result")
    result["data"]["mutations"] = []
    result["data"]["turn"] = "one"
    report = validate_log(write_log(clean))
    assert sorted((f.code, f.pointer) for f in report.findings if f.code in ("DSH-E005", "DSH-W018")) == [
        ("DSH-E005", "/data"), ("DSH-E005", "/data/turn")]
