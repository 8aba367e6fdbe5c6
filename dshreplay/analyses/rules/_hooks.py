"""Hooks (dsh's hook-protocol invariant): each hook/invoked and hook/result lies
in its open turn, each hook/result answers an unanswered hook/invoked of the
same turn, point and handlerId (the HookTracker pairs them), and no turn
closes with one unanswered."""

from __future__ import annotations

from typing import Any

from dshreplay.analyses.findings import finding
from dshreplay.analyses.rules._base import Family, RuleFindings, Where, get, not_open_turn, opt, same, show
from dshreplay.analyses.trackers.hooks import HookKey, HookTracker, hook_key, hook_name
from dshreplay.analyses.trackers.turns import Stored, TurnTracker
from dshreplay.core.driver import Record, Run


class HookRules(Family):
    handlers = {"hook/invoked": "invoked", "hook/result": "result", "turn/end": "turn_end"}

    requires = (RuleFindings, TurnTracker, HookTracker)

    hooks: HookTracker
    turns: TurnTracker

    def begin(self, run: Run) -> None:
        super().begin(run)
        self.hooks = run.get(HookTracker)
        self.turns = run.get(TurnTracker)

    def _in_turn(self, turn: Any) -> bool:
        open_turn = self.turns.open_turn
        return open_turn is not None and same(turn, open_turn)

    def invoked(self, record: Record) -> None:
        event: Stored = record.item
        data = event.record.get("data")
        turn = get(data, "turn")
        if not self._in_turn(turn):
            self.add("DSH-E401", not_open_turn(event, turn, self.turns.open_turn), event, "/data/turn")

    def result(self, record: Record) -> None:
        event: Stored = record.item
        data = event.record.get("data")
        turn, hooks = get(data, "turn"), self.hooks
        how, run = hooks.how, hooks.current
        assert run is not None, "the hook tracker, observed first, sets it on every hook event"
        note = ""
        if how == "left":
            note = f" (its hook/invoked at seq {run.invoked_seq} was left unanswered when its turn closed at " \
                   f"seq {hooks.ended})"
        elif how == "turn":
            note = f" (its hook/invoked at seq {run.invoked_seq} names turn {show(self.turns.open_turn)})"
        if not self._in_turn(turn):
            self.add("DSH-E401", not_open_turn(event, turn, self.turns.open_turn) + note, event, "/data/turn")
        if how is not None:
            return
        key = hook_key(data)
        self.add("DSH-E402", f"hook/result for {hook_name(key)} in turn {show(turn)} answers no unanswered "
                             f"hook/invoked{self._hint(key)}", event, "/data/handlerId")

    def _hint(self, key: HookKey) -> str:
        """What the log says about the handler of a result that found no invocation."""
        answered = self.hooks.answered.get(key)
        if answered is not None:
            return f" (its hook/invoked at seq {answered[0]} was already answered at seq {answered[1]})"
        oldest = self.hooks.pending.oldest_of_handler(key[2])
        if oldest is not None:
            run, other = oldest
            invoked = run.invoked_seq
            return f" (the unanswered hook/invoked of that handler at seq {invoked} is at {opt(other[1])} in " \
                   f"turn {show(other[0])})"
        return ""

    def turn_end(self, record: Record) -> None:
        event: Stored = record.item
        for key, run in self.hooks.dropped:
            self.add("DSH-W403", f"turn closed with {hook_name(key)} (hook/invoked at seq {run.invoked_seq}) "
                                 "unanswered", event)

    def at_end(self, where: Where) -> None:
        for key, run in self.hooks.unanswered():
            self.findings.append(finding("DSH-W403", f"log ends with {hook_name(key)} (hook/invoked at seq "
                                                     f"{run.invoked_seq}) unanswered", **where))
