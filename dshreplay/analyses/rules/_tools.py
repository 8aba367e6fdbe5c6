"""Tool calls (dsh's session invariant): every appended tool/result answers a
tool/call of its step, and a step closes with none unanswered."""

from __future__ import annotations

from dshreplay._jsvalues import MISSING, shown
from dshreplay.analyses.rules._base import Family, RuleFindings, get
from dshreplay.analyses.trackers.toolcalls import ToolTracker
from dshreplay.analyses.trackers.turns import TOOL_NOT_STARTED, Stored
from dshreplay.core.driver import Record, Run


class ToolRules(Family):
    handlers = {"step/end": "step_end", "tool/result": "tool_result"}

    requires = (RuleFindings, ToolTracker)

    tools: ToolTracker

    def begin(self, run: Run) -> None:
        super().begin(run)
        self.tools = run.get(ToolTracker)

    def step_end(self, record: Record) -> None:
        event: Stored = record.item
        for call_id, call_seq in self.tools.left.items():
            self.add("DSH-W211", f"step closed with tool call {shown(call_id)} (tool/call at seq {call_seq}) "
                                 "unanswered", event)

    def tool_result(self, record: Record) -> None:
        event: Stored = record.item
        data = event.record.get("data")
        if event.record.get("surfaceOp") != "append" or self.tools.answers is not None:
            return
        synthetic = get(data, "message", "content", 0, "isError") is True \
            and get(data, "error", "code") == TOOL_NOT_STARTED
        if synthetic:
            return
        call_id = get(data, "message", "source", "callId")
        earlier = self.tools.earlier
        again = f" (already answered at seq {earlier})" if earlier is not None else ""
        self.add("DSH-E210", f"tool/result for {shown(call_id) if call_id is not MISSING else 'no callId'} "
                             f"answers no tool/call of this step{again}", event, "/data/message/source/callId")
