"""Turns and steps (dsh's session invariant): numbering, nesting, and every
event of a step naming the open turn and step (FORMAT.md section 7)."""

from __future__ import annotations

from typing import Any

from dshreplay._jsvalues import MISSING, shown
from dshreplay.analyses.findings import finding
from dshreplay.analyses.rules._base import Family, RuleFindings, Where, get, same, show
from dshreplay.analyses.trackers.toolcalls import ToolTracker
from dshreplay.analyses.trackers.turns import Placed, Stored, TurnTracker
from dshreplay.core.driver import Record, Run

_INT = frozenset({int})


class TurnRules(Family):
    handlers = {"turn/start": "turn_start", "turn/end": "turn_end", "step/start": "step_start",
                "step/end": "step_end", "assistant/chunk": "chunk", "assistant/message": "assistant_message",
                "tool/call": "tool_call", "tool/result": "tool_result", "todo/write": "turn_scoped",
                "request/header": "turn_scoped", "request/context": "turn_scoped"}

    requires = (RuleFindings, TurnTracker, ToolTracker)

    turns: TurnTracker
    tools: ToolTracker

    def begin(self, run: Run) -> None:
        super().begin(run)
        self.turns = run.get(TurnTracker)
        self.tools = run.get(ToolTracker)
        self.step_chunks: set[int] = set()  # the assistant/chunk seqs of the open step

    def turn_start(self, record: Record) -> None:
        event: Stored = record.item
        data = event.record.get("data")
        turn, turns = get(data, "turn"), self.turns
        if turns.prior_turn is not None:
            self.add("DSH-E201", f"turn/start {show(turn)} while turn {show(turns.prior_turn)} is open", event)
        expected = turns.turns_ended + 1
        if not same(turn, expected):
            self.add("DSH-E202", f"turn/start should number turn {expected}, not {show(turn)}", event, "/data/turn")
        self.step_chunks = set()

    def turn_end(self, record: Record) -> None:
        event: Stored = record.item
        data = event.record.get("data")
        turn, turns = get(data, "turn"), self.turns
        if turns.open_turn is None or not same(turn, turns.open_turn):
            self.add("DSH-E203", f"turn/end {show(turn)} does not match the open turn "
                                 f"({show(turns.open_turn)})", event, "/data/turn")
        if turns.open_step is not None:
            self.add("DSH-E204", f"turn/end {show(turn)} while step {show(turns.open_step)} is open", event)
        self.step_chunks = set()

    def step_start(self, record: Record) -> None:
        event: Stored = record.item
        data = event.record.get("data")
        turn, step, turns = get(data, "turn"), get(data, "step"), self.turns
        if turns.open_turn is None or not same(turn, turns.open_turn):
            self.add("DSH-E205", f"step/start in turn {show(turn)} but the open turn is "
                                 f"{show(turns.open_turn)}", event, "/data/turn")
        if turns.prior_step is not None:
            self.add("DSH-E206", f"step/start {show(step)} while step {show(turns.prior_step)} is open", event)
        expected = turns.steps_ended + 1
        if not same(step, expected):
            self.add("DSH-E207", f"step/start should number step {expected} of turn {show(turn)}, not "
                                 f"{show(step)}", event, "/data/step")
        self.step_chunks = set()

    def step_end(self, record: Record) -> None:
        event: Stored = record.item
        data = event.record.get("data")
        self.in_step(event, data)
        self.step_chunks = set()

    def in_step(self, event: Placed, data: Any) -> bool:
        turn, step = (data.get("turn", MISSING), data.get("step", MISSING)) if type(data) is dict \
            else (MISSING, MISSING)
        open_turn, open_step = self.turns.open_turn, self.turns.open_step
        if type(turn) is int and type(step) is int and turn == open_turn and step == open_step:
            return True  # (plain integers naming the open step: what dsh writes)
        if open_turn is None or open_step is None or not same(turn, open_turn) or not same(step, open_step):
            self.add("DSH-E208", f"{event.type} names turn {show(turn)}/step {show(step)} but the open "
                                 f"one is turn {show(open_turn)}/step {show(open_step)}", event)
            return False
        return True

    def chunk(self, record: Record) -> None:
        event: Any = record.item  # (an Event, or a PackedRun or member of one: its row says which)
        if event.row is None:
            data = event.record.get("data")
            turn, step = (data.get("turn"), data.get("step")) if type(data) is dict else (None, None)
            if not (type(turn) is int and type(step) is int and turn == self.turns.open_turn
                    and step == self.turns.open_step):  # (in_step's own first test, inline: chunks are many)
                self.in_step(event, data)
            self.step_chunks.add(event.seq)
            return
        # a packed run, or one member of it: turn/step are the row's, checked once per row
        if event.count > 1 or event.index_in_row == 0:
            row = event.row_data  # (the reader checked its shape: turn and step are there)
            turn, step = row["turn"], row["step"]
            if not (type(turn) is int and type(step) is int and turn == self.turns.open_turn
                    and step == self.turns.open_step):
                self.in_step(event, row)
        self.step_chunks.update(range(event.seq, event.seq + event.count))

    def assistant_message(self, record: Record) -> None:
        event: Stored = record.item
        data = event.record.get("data")
        self.in_step(event, data)
        sources = event.record.get("sourceEventSeqs")
        if type(sources) is list and not (_INT.issuperset(map(type, sources)) and self.step_chunks.issuperset(sources)):
            # (in C, what dsh writes: plain ints, each a chunk of the step; the types first: a True or a
            # 1.0 equals an int in a set, and a list or an object cannot be looked up in one)
            foreign = [s for s in sources if type(s) is not int or s not in self.step_chunks]
            if foreign:
                self.add("DSH-E212", f"assistant/message cites {shown(foreign[:5])}"
                                     f"{' ...' if len(foreign) > 5 else ''}, which are not assistant/chunk "
                                     "events of its step", event, "/sourceEventSeqs")

    def tool_call(self, record: Record) -> None:
        event: Stored = record.item
        data = event.record.get("data")
        self.in_step(event, data)

    def tool_result(self, record: Record) -> None:
        event: Stored = record.item
        data = event.record.get("data")
        if event.record.get("surfaceOp") != "append":
            if self.turns.open_turn is None:
                self.add("DSH-E209", "tool/result rewrite outside any open turn", event)
            return
        self.in_step(event, data)

    def turn_scoped(self, record: Record) -> None:
        event: Stored = record.item
        if self.turns.open_turn is None:
            self.add("DSH-E209", f"{event.type} outside any open turn", event)

    def at_end(self, where: Where) -> None:
        if self.turns.open_turn is not None:
            self.findings.append(finding("DSH-W213", self.tools.interrupted_message(), **where))
