"""`dshreplay fold`: table, JSON, --at, and one-line errors with exit codes."""

from __future__ import annotations

import subprocess
import sys

import orjson

from conftest import SAMPLES


def test_json_output_is_exactly_seq_nodes_replacements_messages_torn_tail(cli, builder, write_log):
    b = builder()
    first = b.user("hello")
    second = b.user("again")
    summary = b.compaction(first, second, "greetings")
    path = write_log(b)
    out = cli("fold", path, "--json").json()
    assert list(out) == ["seq", "nodes", "replacements", "messages", "tornTail"]
    assert out["seq"] == len(b.events) - 1 and out["tornTail"] is None
    assert out["nodes"] == [{"seq": summary, "message": 1}]
    assert out["replacements"] == [{"seq": summary, "start": first, "end": second,
                                    "shadowedSeqs": [first, second]}]
    assert out["messages"] == [b.events[summary]["data"]]


def test_json_messages_are_byte_equal_to_the_log(cli, builder, write_log):
    b = builder()
    b.user("ünïcødé \u2028 and \"quotes\"")
    path = write_log(b)
    raw_line = path.read_bytes().splitlines()[-1]
    stdout = cli("fold", path, "--json").stdout.encode()
    assert orjson.dumps(orjson.loads(raw_line)["data"]) in stdout


def test_at_shows_the_view_right_after_that_event(cli, builder, write_log):
    b = builder()
    first = b.user("one")
    b.user("two")
    out = cli("fold", write_log(b), "--at", first, "--json").json()
    assert (out["seq"], out["nodes"]) == (first, [{"seq": first, "message": 1}])


def test_at_beyond_the_log_is_a_usage_error(cli, builder, write_log):
    b = builder()
    result = cli("fold", write_log(b), "--at", 99, expect=2)
    assert result.stderr.count("\n") == 1
    assert f"seq 99 is beyond the log: its last seq is {len(b.events) - 1}" in result.stderr


def test_table_lists_nodes_and_a_count_line_within_100_columns(cli):
    result = cli("fold", SAMPLES / "compaction.jsonl")
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["#", "seq", "role", "op", "bytes", "text"]
    assert all(len(line) <= 100 for line in lines)
    assert lines[2].split()[:5] == ["1", "67", "user", "replace", "3..37"]
    assert [line.split()[0] for line in lines[2:-1]] == ["1", "2", "3", "4", "5", "6", "7", "8"]
    assert lines[-1] == "8 nodes, 8 messages, 1 replacement at seq 94"


def test_each_node_carries_the_number_of_its_message_from_1_and_a_node_with_none_is_null(cli, builder,
                                                                                           write_log):
    b = builder()
    asked = b.user("anything?")
    empty = b.assistant("")  # a stream with no content: dsh projects the node to no message
    again = b.user("still there?")
    out = cli("fold", write_log(b), "--json").json()
    assert out["nodes"] == [{"seq": asked, "message": 1}, {"seq": empty, "message": None},
                            {"seq": again, "message": 2}]
    assert [m["content"][0]["text"] for m in out["messages"]] == ["anything?", "still there?"]
    rows = [line.split()[:3] for line in cli("fold", write_log(b)).stdout.splitlines()[2:-1]]
    assert rows == [["1", str(asked), "user"], ["-", str(empty), "assistant"], ["2", str(again), "user"]]


def test_fold_error_prints_one_line_with_seq_and_exits_1(cli):
    result = cli("fold", SAMPLES / "broken-replace-start-not-found.jsonl", expect=1)
    assert result.stderr.splitlines() == [
        f"dshreplay: {SAMPLES / 'broken-replace-start-not-found.jsonl'}: no answer: the model's view at the end "
        "of the log: the fold fails at seq 67 (DSH-E107, line 69, /surfaceOp/start: replace start seq 1 is not "
        "in the surface)"]
    assert cli("fold", SAMPLES / "broken-replace-start-not-found.jsonl", "--at", 66).stderr == ""  # (before it)


def test_fold_error_in_json_mode_names_stage_and_seq(cli):
    out = cli("fold", SAMPLES / "broken-seq-gap.jsonl", "--json", expect=1).json()
    assert out == {"error": {"stage": "fold", "seq": 5, "line": 7, "pointer": "/seq", "code": "DSH-E101",
                             "message": "seq 8 is not contiguous; expected 5: the line's seq is wrong (the line "
                                        "after it has seq 6)"}, "answeredUpTo": None, "answer": None}


def test_unreadable_inputs_exit_2_with_one_line(cli, tmp_path):
    cases = {
        SAMPLES / "broken-version-1.jsonl": "format version 1 not supported",
        tmp_path / "missing.jsonl": "cannot open",
    }
    for path, text in cases.items():
        result = cli("fold", path, expect=2)
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert text in result.stderr


def test_torn_tail_warns_and_still_folds(cli):
    data = (SAMPLES / "torn-tail.jsonl").read_bytes()
    tail = data[data.rindex(b"\n") + 1:]
    result = cli("fold", SAMPLES / "torn-tail.jsonl", "--json")
    assert f"{len(tail)} bytes lost at byte offset {len(data) - len(tail)}" in result.stderr
    assert result.json()["seq"] == 62


def test_stdin_is_read_with_dash(cli):
    data = (SAMPLES / "multi-turn.runtime.jsonl.zstd").read_bytes()
    assert cli("fold", "-", "--json", input=data).json()["seq"] == 62


def test_version_and_module_entry_point():
    out = subprocess.run([sys.executable, "-m", "dshreplay", "--version"], capture_output=True, text=True)
    assert out.returncode == 0
    assert out.stdout.startswith("dshreplay, version ")
