"""The pass driver: one Record per record, observers in order of what they require,
the types each reads, the fold-error policy, stopping early."""

from __future__ import annotations

import pytest

from dshreplay.core.driver import SKIP, STOP, Observer, arrange, run_pass, states_at
from dshreplay.errors import UsageError
from dshreplay.io.reader import LogSource

import scenarios


class Record(Observer):
    def __init__(self, log: list, name: str) -> None:
        self.log, self.name = log, name

    def begin(self, run) -> None:
        self.log.append((self.name, "begin"))

    def observe(self, record) -> None:
        self.log.append((self.name, record.item.seq, None if record.replacement is None else record.replacement.seq,
                         None if record.error is None else record.error.code))

    def finish(self, run) -> None:
        self.log.append((self.name, "finish", run.complete))


def bad_replace(write_log):
    """seq 0 appended, seq 1 replaces a node that is not on the surface, seq 2 appended."""
    return write_log([scenarios.HEADER, scenarios.user(0, "a"),
                      scenarios.user(1, "b", op=scenarios.replace(7, 7), sources=[0]),
                      scenarios.user(2, "c")])


def test_observers_hear_each_record_in_order_and_skip_goes_past_a_rejected_event(write_log):
    log: list = []
    run = run_pass(LogSource(bad_replace(write_log)), [Record(log, "a"), Record(log, "b")], on_fold_error=SKIP)
    assert log == [("a", "begin"), ("b", "begin"),
                   ("a", 0, None, None), ("b", 0, None, None),
                   ("a", 1, None, "DSH-E107"), ("b", 1, None, "DSH-E107"),
                   ("a", 2, None, None), ("b", 2, None, None),
                   ("a", "finish", True), ("b", "finish", True)]
    assert run.fold.nodes == [0, 2] and [e.seq for e in run.fold_errors] == [1]


def test_stop_ends_the_pass_at_the_first_fold_error_with_the_state_before_it(write_log):
    log: list = []
    run = run_pass(LogSource(bad_replace(write_log)), [Record(log, "a")], on_fold_error=STOP)
    assert log == [("a", "begin"), ("a", 0, None, None), ("a", "finish", False)]
    assert run.fold.nodes == [0] and run.fold_error.seq == 1 and run.event_count is None


def test_until_stops_after_that_seq(write_log):
    path = write_log([scenarios.HEADER, *(scenarios.user(n, str(n)) for n in range(5))])
    run = run_pass(LogSource(path), until=2)
    assert (run.last_seq, run.complete) == (2, False)
    states = states_at(LogSource(path), [-1, 3, 1])
    assert {s: st.nodes for s, st in states.items()} == {-1: (), 1: (0, 1), 3: (0, 1, 2, 3)}
    with pytest.raises(UsageError, match="seq 9 is beyond the log: its last seq is 4"):
        states_at(LogSource(path), [9])


def test_a_fold_at_a_seq_inside_a_packed_row_answers_for_that_seq():
    from dshreplay.core.driver import fold_report

    from conftest import SAMPLES
    source = LogSource(SAMPLES / "compaction.jsonl")  # seqs 40..43 are one packed row
    report = fold_report(source, 40)
    assert (report.seq, report.state.nodes, report.error) == (40, (3, 19, 21, 32, 37), None)


class Base(Observer):
    made = 0

    def __init__(self) -> None:
        Base.made += 1
        self.seen: list = []

    def observe(self, record) -> None:
        self.seen.append(record.item.seq)


class Middle(Observer):
    requires = (Base,)

    def begin(self, run) -> None:
        self.base = run.get(Base)
        self.heard: list = []

    def observe(self, record) -> None:
        self.heard.append((record.item.seq, list(self.base.seen)))  # the base has seen this record already


class Top(Observer):
    requires = (Middle, Base)
    types = frozenset({"turn/start"})

    def begin(self, run) -> None:
        self.seqs: list = []

    def observe(self, record) -> None:
        self.seqs.append(record.item.seq)


def test_an_observer_comes_after_what_it_requires_made_once_and_reads_only_its_types(write_log):
    path = write_log([scenarios.HEADER, scenarios.ev(0, "turn/start", {"turn": 1}), scenarios.user(1, "a"),
                      scenarios.ev(2, "turn/end", {"turn": 1, "reason": {"kind": "completed"}})])
    Base.made = 0
    top = Top()
    run = run_pass(LogSource(path), [top])
    ordered, _ = arrange([top])
    assert [type(o).__name__ for o in ordered] == ["Base", "Middle", "Top"]
    assert Base.made == 2  # once per arrangement: this pass, and the `arrange` above
    middle = run.get(Middle)
    assert middle.heard == [(0, [0]), (1, [0, 1]), (2, [0, 1, 2])]
    assert run.get(Base) is middle.base and top.seqs == [0]


def test_a_given_observer_is_the_one_its_dependents_get(write_log):
    path = write_log([scenarios.HEADER, scenarios.user(0, "a")])
    base = Base()
    run = run_pass(LogSource(path), [Middle(), base])
    assert run.get(Base) is base and base.seen == [0]
    with pytest.raises(LookupError, match="no Top in this pass"):
        run.get(Top)


def test_an_observer_that_requires_itself_is_refused():
    class Loop(Observer):
        pass
    Loop.requires = (Loop,)
    with pytest.raises(ValueError, match="Loop requires itself"):
        arrange([Loop()])


def test_the_index_pass_shares_the_trackers_and_runs_no_validation_rule():
    from dshreplay.analyses.trackers.logindex import Indexer
    from dshreplay.analyses.validate import Validation
    index_pass = {type(o).__name__ for o in arrange([Indexer()])[0]}
    assert index_pass == {"Indexer", "MessageCount", "CallTracker", "ShadowTracker", "TurnSpans", "HookTracker",
                          "ToolLedger", "CompactionTracker", "Spills"}
    validate_pass = [type(o).__name__ for o in arrange([Validation(None, False)])[0]]
    assert validate_pass == ["RuleFindings", "MeteringRules", "SeedRules", "TurnTracker", "HookTracker", "ToolTracker",
                             "TurnRules", "ToolRules", "CompactionTracker", "CompactionRules", "HookRules",
                             "Relations", "Validation"]


def test_a_tracker_and_its_history_keeping_subclass_are_one_observer_of_the_subclass(write_log):
    from dshreplay.analyses.trackers.logindex import Indexer
    from dshreplay.analyses.trackers.toolcalls import ToolLedger, ToolTracker
    from dshreplay.analyses.trackers.turns import TurnSpans, TurnTracker
    from dshreplay.analyses.validate import Validation
    ordered, by_class = arrange([Validation(None, False), Indexer()])
    names = [type(o).__name__ for o in ordered]
    assert names.count("ToolLedger") == 1 and "ToolTracker" not in names
    assert names.count("TurnSpans") == 1 and "TurnTracker" not in names
    assert by_class[ToolTracker] is by_class[ToolLedger] and by_class[TurnTracker] is by_class[TurnSpans]
    # the rules, placed first, already read the ledger: it comes before them
    assert names.index("ToolLedger") < names.index("ToolRules")


def test_a_rules_only_pass_keeps_no_history_of_calls_or_turns(write_log):
    path = write_log(scenarios.parallel_calls()[0])
    from dshreplay.analyses.trackers.toolcalls import ToolTracker
    from dshreplay.analyses.trackers.turns import TurnTracker
    from dshreplay.analyses.validate import Validation
    run = run_pass(LogSource(path), [Validation(None, False)])
    assert type(run.get(ToolTracker)) is ToolTracker and not hasattr(run.get(ToolTracker), "calls")
    assert type(run.get(TurnTracker)) is TurnTracker and not hasattr(run.get(TurnTracker), "turns")


def test_two_unrelated_subclasses_of_one_required_class_are_refused():
    class Base(Observer):
        pass

    class Left(Base):
        pass

    class Right(Base):
        pass

    class NeedsBase(Observer):
        requires = (Base,)

    class NeedsLeft(Observer):
        requires = (Left,)

    class NeedsRight(Observer):
        requires = (Right,)

    with pytest.raises(ValueError, match="Base is required as Left and as Right"):
        arrange([NeedsLeft(), NeedsRight(), NeedsBase()])


def test_a_pass_resumed_on_the_lines_appended_ends_as_a_pass_over_the_whole_log(tmp_path):
    from dshreplay.analyses.stats import SessionSummary, session_stats
    from dshreplay.core._passstate import dump_state, load_state
    from dshreplay.testing.samples import compacted
    data = compacted().to_bytes(pack=True)
    lines = data.splitlines(keepends=True)
    log = tmp_path / "log.jsonl"
    kept: list = []

    def keep(state) -> None:
        kept[:] = [dump_state(state, b"k" * 32)]  # (as kept between runs: dumped before `finish` runs)
    for cut in (2, 20, len(lines) // 2, len(lines) - 1):  # (inside turns, steps, a stream, a bracket)
        log.write_bytes(b"".join(lines[:cut]))
        run_pass(LogSource(log), [SessionSummary()], checkpoint=keep)
        log.write_bytes(data)
        state = load_state(kept[0], b"k" * 32)
        seen = Record([], "new")  # (an observer given with a state is not the state's: the state's go on)
        run = run_pass(LogSource(log), [seen], resume=state)
        assert (run.complete, run.lines, run.event_count) == (True, len(lines), session_stats(LogSource(log)).events)
        assert state.get(SessionSummary).stats.to_json() == session_stats(LogSource(log)).to_json(), cut
        assert seen.log == []


def test_no_state_is_kept_of_a_log_that_does_not_end_cleanly(write_log):
    from dshreplay.testing.samples import multi_turn
    data = multi_turn().to_bytes()
    kept: list = []
    for broken in (data[:-1], data + b'{"type": "turn/st', data.replace(b'"seq":5,', b'"seq":7,', 1)):
        run = run_pass(LogSource(write_log(broken)), [], checkpoint=kept.append)
        assert run.complete
    assert kept == []  # (no final newline, a torn tail, a fold error)


def test_a_kept_state_holds_its_findings():
    import pickle

    from dshreplay.analyses.findings import FindingList, finding
    found = FindingList(1)
    for code in ("DSH-W012", "DSH-W012", "DSH-N009"):
        found.append(finding(code, "x"))
    again = pickle.loads(pickle.dumps(found))
    assert (list(again), again.cap, again.omitted) == (list(found), 1, {"DSH-W012": 1})
