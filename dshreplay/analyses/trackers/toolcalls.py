"""Tool calls: each call the model asked for, with its call, result, approval, hooks and outcome.

Facts are attached by id, never by position or order: an id names a call
within its turn, whatever order its events were logged in (a result logged
before its tool/call, a tool/call before the ask are that call's), and an
event of a later turn that names it is a call of its own. A `tool/call` and
its `tool/result` join by callId; an approval by the `callId` of its `approval/asked`
(its `approval/decided` by the approval's id); a hook run by the hook
protocol: `hook/result` pairs with the oldest unanswered `hook/invoked` of the
same turn, point and handlerId (`hooks.HookTracker`), and a hook run at a tool
point (PreToolUse, PostToolUse, ...) belongs to the tool call it ran for.
dsh's hook events name no call: a tool-point hook runs after its call's
`tool/call` and before its `tool/result`, and its `matcher` selects the tool
by name, so it attaches to the one started, unanswered call of the open step
whose tool the matcher selects; when several could be it, the hook names
them all (`candidates`) and attaches to none.

A call's outcome: `completed`, `error`, `not started` (a result dsh wrote as
TOOL_NOT_STARTED, or a call asked for that never got a tool/call), `outcome
unknown` (a recorded tool/call without a result, a TOOL_OUTCOME_UNKNOWN result,
or a call only an approval names: dsh asks an approval after it logs the
tool/call, so that call's tool/call is missing; it may have had side
effects), or `unread` when the pass stopped
before the end of the log and its result was not reached.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dshreplay._jsvalues import MISSING, as_key, is_number, is_time, shown
from dshreplay.analyses.trackers.hooks import TOOL_POINTS, HookRun, HookTracker, matcher_selects, or_none
from dshreplay.analyses.trackers.turns import TOOL_NOT_STARTED, TOOL_OUTCOME_UNKNOWN, Stored, TurnTracker
from dshreplay.core.driver import Observer, Record, Run

__all__ = ["ToolCall", "Approval", "Closer", "ToolTracker", "ToolLedger"]

COMPLETED, ERROR, NOT_STARTED, OUTCOME_UNKNOWN, UNREAD = (
    "completed", "error", "not started", "outcome unknown", "unread")


def _show(value: Any) -> str:
    """A turn or step number as a message names it ("none" when absent or null)."""
    if value is None or value is MISSING:
        return "none"
    return str(int(value)) if is_number(value) and float(value).is_integer() else shown(value)


def _data(event: Stored) -> dict[str, Any]:
    data = event.record.get("data")
    return data if type(data) is dict else {}


@dataclass
class Approval:
    """One approval asked (and decided), or a decision without an ask; both name
    the call and tool of the ask."""

    asked_seq: int | None
    decided_seq: int | None
    id: object
    tool: object
    call_id: object
    outcome: object
    reason: object
    flag: str  # "", "no decision", "decision without ask"
    asked_time: object = None
    decided_time: object = None
    call: ToolCall | None = field(default=None, repr=False, compare=False)  # the call it was asked for

    @property
    def arguments(self) -> object:
        """The arguments of the call it was asked for (None when unknown)."""
        return None if self.call is None else self.call.arguments

    def row(self) -> list[object]:
        return [self.asked_seq, self.decided_seq, self.id, self.tool, self.call_id, self.outcome, self.reason,
                self.flag]


@dataclass(slots=True)
class ToolCall:
    """One tool call: asked for by the model, started (tool/call), answered (tool/result)."""

    call_id: object
    tool: object = None  # the tool/call's name, else the model's tool-call block's, else the approval's
    turn: object = None
    step: object = None
    asked_seq: int | None = None  # the assistant/message that asked for it
    call_seq: int | None = None  # its tool/call
    result_seq: int | None = None  # its appended tool/result
    arguments: object = None
    started_at: object = None  # the tool/call's time
    finished_at: object = None  # the tool/result's time
    is_error: bool | None = None  # the result's first block says isError, or the result carries an error
    error_code: object = None  # the result's error code (TOOL_NOT_STARTED for one dsh wrote for it)
    approval: Approval | None = None
    hooks: tuple[HookRun, ...] = ()  # the HookRuns for it (or that may be for it: candidates)
    outcome: str | None = None  # set when the pass ends (see the module)

    @property
    def duration_ms(self) -> int | float | None:
        """From its tool/call's time to its tool/result's, in milliseconds: None unless both are logged,
        in that order, with times (a result logged before its call has no duration)."""
        started, finished = self.started_at, self.finished_at
        if self.call_seq is None or self.result_seq is None or self.result_seq < self.call_seq \
                or not is_time(started) or not is_time(finished):
            return None
        duration: int | float = finished - started  # type: ignore[operator]  # (is_time: a number)
        return duration

    def to_json(self) -> dict[str, object]:
        return {"callId": self.call_id, "tool": self.tool, "turn": self.turn, "step": self.step,
                "askedSeq": self.asked_seq, "callSeq": self.call_seq, "resultSeq": self.result_seq,
                "outcome": self.outcome, "isError": self.is_error, "errorCode": self.error_code,
                "approval": None if self.approval is None else {
                    "id": self.approval.id, "askedSeq": self.approval.asked_seq,
                    "decidedSeq": self.approval.decided_seq, "outcome": self.approval.outcome},
                "hooks": [h.to_json() for h in self.hooks]}


@dataclass(frozen=True)
class Closer:
    """One event dsh would synthesize to close an interrupted turn."""

    type: str
    turn: object
    step: object = None
    call_id: str | None = None
    code: str | None = None  # TOOL_OUTCOME_UNKNOWN or TOOL_NOT_STARTED for tool/result
    call_seq: int | None = None  # the recorded tool/call, for TOOL_OUTCOME_UNKNOWN

    def to_json(self) -> dict[str, object]:
        return {"type": self.type, "turn": self.turn, "step": self.step, "callId": self.call_id,
                "code": self.code, "callSeq": self.call_seq}

    def describe(self) -> str:
        if self.type == "tool/result" and self.code == TOOL_OUTCOME_UNKNOWN:
            return (f"tool/result {TOOL_OUTCOME_UNKNOWN} for {shown(self.call_id)} (its tool/call at seq "
                    f"{self.call_seq} may have had side effects)")
        if self.type == "tool/result":
            return f"tool/result {TOOL_NOT_STARTED} for {shown(self.call_id)} (asked for, never started)"
        if self.type == "step/end":
            return f"step/end {_show(self.step)}"
        return "turn/end (interrupted)"


class ToolTracker(Observer):
    """The tool calls of the open turn (and any left unanswered), with what
    belongs to each, and the state the tool rules compare with. `ToolLedger`
    keeps every call and approval of the log.

    While a record is observed after this tracker:
    call_at(seq)  on a tool/call, tool/result, approval or hook event: its ToolCall
              (None when it belongs to none; a rewrite of a result is named only by
              the ledger, which keeps answered calls past their turn)
    pending   callId -> tool/call seq: started in the open step, unanswered
    answered  callId -> tool/result seq: answered in the open step
    asked     callId -> (step, tool/call seq or None): asked for since the last step
              boundary, unanswered (what dsh closes in an interrupted turn)
    on an appended tool/result: `answers`, the seq of the pending tool/call it
    answers (None: none), and `earlier`, the seq of an earlier answer to its callId in
    the step; on a step/end: `left`, the pending calls it closed
    After the pass: `closers`, what dsh would append to close an interrupted
    last turn, and each call's outcome.
    """

    requires = (TurnTracker, HookTracker)
    handlers = {"assistant/message": "asked_for", "tool/call": "started", "tool/result": "answered_by",
                "approval/asked": "approval", "approval/decided": "approval", "hook/invoked": "hook",
                "hook/result": "hook", "turn/start": "turn_boundary", "turn/end": "turn_boundary",
                "step/start": "step_start", "step/end": "step_end"}

    turns: TurnTracker
    hooks: HookTracker
    keeps_results = False  # the seqs of results (for their rewrites) kept past their turn

    def begin(self, run: Run) -> None:
        self.turns = run.get(TurnTracker)
        self.hooks = run.get(HookTracker)
        self.by_id: dict[object, ToolCall] = {}  # callId (as_key) -> its latest ToolCall
        self._at: tuple[int | None, ToolCall | None] = (None, None)  # (seq, ToolCall) of the last record that
        # belongs to a call
        self._made: list[object] = []  # the by_id keys of the calls made in the open turn
        self._results: dict[int, ToolCall] = {}  # the seq of a tool/result (or a rewrite of one) -> its call;
        # of the open turn (the ledger: of the whole log)
        self._approvals: dict[object, Approval] = {}  # approval id -> Approval asked, not decided (its call in it)
        self.pending: dict[str, int] = {}
        self.answered: dict[str, int] = {}
        self.asked: dict[str, tuple[Any, int | None]] = {}  # (step as logged, or MISSING)
        self.answers: int | None = None
        self.earlier: int | None = None
        self.left: dict[str, int] = {}
        self.closers: list[Closer] = []

    def step_end(self, record: Record) -> None:
        if self.pending:
            self.left, self.pending = self.pending, {}
        elif self.left:
            self.left = {}
        if self.answered:
            self.answered = {}
        self.asked.clear()

    def turn_boundary(self, record: Record) -> None:
        self._clear_step()
        self.asked.clear()
        self._forget()

    def _forget(self) -> None:
        """Past its turn, a call is looked up no more, answered or not: an event of a later turn that
        names its id (a tool/call, result or approval) belongs to a new call (only the ledger keeps
        the old one, for reports, and the seqs of its results, for their rewrites)."""
        by_id = self.by_id
        for key in self._made:
            by_id.pop(key, None)
        self._made = []
        if self._results and not self.keeps_results:
            self._results = {}

    def call_at(self, seq: int) -> ToolCall | None:
        """The ToolCall the record at `seq` (the one being observed) belongs to, or None."""
        at = self._at
        return at[1] if at[0] == seq else None

    def _keep(self, call: ToolCall) -> None:
        """A new call (the ledger lists it)."""

    def _keep_approval(self, approval: Approval) -> None:
        """A new approval (the ledger lists it)."""

    def step_start(self, record: Record) -> None:
        self._clear_step()

    def _clear_step(self) -> None:
        if self.pending:
            self.pending = {}
        if self.answered:
            self.answered = {}

    def _new(self, call_id: Any, key: object, turn: Any, step: Any) -> ToolCall:
        call = ToolCall(call_id, None, turn, step)
        self._keep(call)
        self.by_id[key] = call
        self._made.append(key)
        return call

    def asked_for(self, record: Record) -> None:
        event: Stored = record.item
        data = _data(event)
        message = data.get("message")
        content = message.get("content") if type(message) is dict else None
        if type(content) is not list:
            return
        for block in content:
            if type(block) is not dict or block.get("type") != "tool-call" or type(block.get("id")) is not str:
                continue
            call_id, step = block["id"], data.get("step", MISSING)
            self.asked[call_id] = (step, None)
            known = self.by_id.get(call_id)
            if known is not None and known.asked_seq == event.seq:  # (an id twice in one message: one call)
                continue
            if known is None or known.asked_seq is not None:
                known = self._new(call_id, call_id, data.get("turn"), or_none(step))
            known.asked_seq = event.seq  # (a call logged before its ask is the one asked: its tool/call's
            if known.call_seq is None:  # name and arguments stand)
                known.tool, known.arguments = block.get("name"), block.get("arguments")

    def started(self, record: Record) -> None:
        event: Stored = record.item
        data = _data(event)
        call_id = data.get("callId")
        key: object  # (the callId, or its as_key)
        if type(call_id) is str:
            self.pending[call_id] = event.seq
            asked = self.asked.get(call_id)
            if asked is not None:
                self.asked[call_id] = (asked[0], event.seq)
            key = call_id
        else:
            key = as_key(call_id)
        call = self.by_id.get(key)
        if call is None or call.call_seq is not None:  # (a result logged before its call is that call's)
            call = self._new(call_id, key, data.get("turn"), data.get("step"))
        if "name" in data:
            call.tool = data["name"]
        call.call_seq, call.started_at, call.arguments = event.seq, event.time, data.get("arguments")
        self._at = (event.seq, call)

    def answered_by(self, record: Record) -> None:
        event: Stored = record.item
        data = _data(event)
        message = data.get("message")
        source = message.get("source") if type(message) is dict else None
        call_id = source.get("callId") if type(source) is dict else None
        key = call_id if type(call_id) is str else as_key(call_id)
        op = event.record.get("surfaceOp")
        if op != "append":  # a rewrite of a result: the call of the result it replaces
            start = op.get("start") if type(op) is dict else None
            call = self._results.get(start) if type(start) is int else None
            if call is not None:
                self._results[event.seq] = call  # (a rewrite of this rewrite is the same call's too)
            self._at = (event.seq, call)
            return
        self.answers = self.earlier = None
        if type(call_id) is str:
            self.answers = self.pending.pop(call_id, None)
            self.earlier = self.answered.get(call_id)
            self.answered[call_id] = event.seq
            self.asked.pop(call_id, None)
        call = self.by_id.get(key)
        if call is None or call.result_seq is not None:
            call = self._new(call_id, key, data.get("turn"), data.get("step"))
        error = data.get("error")
        content = message.get("content") if type(message) is dict else None
        first = content[0] if type(content) is list and content else None
        call.result_seq, call.finished_at = event.seq, event.time
        self._results[event.seq] = call
        call.is_error = (type(first) is dict and first.get("isError") is True) or error is not None
        call.error_code = error.get("code") if type(error) is dict else None
        self._at = (event.seq, call)

    def approval(self, record: Record) -> None:
        event: Stored = record.item
        data = _data(event)
        key = as_key(data.get("id"))
        entry: Approval | None
        if event.type == "approval/asked":
            entry = Approval(event.seq, None, data.get("id"), data.get("toolName"), data.get("callId"), None,
                             data.get("reason"), "no decision", event.time)
            self._keep_approval(entry)
            call = self.by_id.get(as_key(entry.call_id))
            if call is None:
                call = self._new(entry.call_id, as_key(entry.call_id), record.turn, record.step)  # (in force)
                call.tool = entry.tool
            elif call.tool is None:
                call.tool = entry.tool
            call.approval, entry.call = entry, call
            self._approvals[key] = entry
            self._at = (event.seq, call)
            return
        entry = self._approvals.pop(key, None)
        if entry is None:
            self._keep_approval(Approval(None, event.seq, data.get("id"), None, None, data.get("outcome"),
                                         None, "decision without ask", None, event.time))
            return
        entry.decided_seq, entry.outcome, entry.flag = event.seq, data.get("outcome"), ""
        entry.decided_time = event.time
        self._at = (event.seq, entry.call)

    def hook(self, record: Record) -> None:
        event: Stored = record.item
        run = self.hooks.current
        assert run is not None, "the hook tracker, observed first, sets it on every hook event"
        if event.type == "hook/result":
            if run.call is not None:
                self._at = (event.seq, run.call)
            return
        if run.point not in TOOL_POINTS:
            return
        started = [self.by_id[key] for key in map(as_key, self.pending) if key in self.by_id]
        fits = [c for c in started if matcher_selects(run.matcher, c.tool) is not False]
        if len(fits) == 1:
            run.call_id, run.call = fits[0].call_id, fits[0]
            self._at = (event.seq, fits[0])
        else:
            run.candidates = tuple(c.call_id for c in fits)
        for call in fits:
            call.hooks += (run,)


    def names(self, seq: int, message: Any) -> tuple[tuple[str, object], ...]:
        """(callId, tool) of each tool-result block of the message of the tool/result
        at `seq`: its own call (found by the callId it answers), else the latest call
        with the block's id."""
        content = message.get("content") if type(message) is dict else None
        if type(content) is not list:
            return ()
        own = self.call_at(seq)
        out: list[tuple[str, object]] = []
        for block in content:
            call_id = block.get("toolCallId") if type(block) is dict else None
            if type(call_id) is str:
                call = own if own is not None and own.call_id == call_id else self.by_id.get(call_id)
                out.append((call_id, None if call is None else call.tool))
        return tuple(out)

    def finish(self, run: Run) -> None:
        turns = self.turns
        self.closers = []
        if turns.open_turn is not None:
            for call_id, (step, call_seq) in self.asked.items():
                code = TOOL_OUTCOME_UNKNOWN if call_seq is not None else TOOL_NOT_STARTED
                self.closers.append(Closer("tool/result", turns.open_turn, step, call_id, code, call_seq))
            if turns.open_step is not None:
                self.closers.append(Closer("step/end", turns.open_turn, turns.open_step))
            self.closers.append(Closer("turn/end", turns.open_turn))

    def interrupted_message(self) -> str:
        """What the log ends inside, and what dsh would append (when `closers` is not empty)."""
        return (f"log ends inside turn {_show(self.turns.open_turn)}; dsh would append "
                + ", ".join(c.describe() for c in self.closers))


class ToolLedger(ToolTracker):
    """The tool tracker that also keeps every tool call (`calls`, in order of
    first mention, each with its outcome once the pass is over) and every
    approval (`approvals`), and names the call of a rewritten result: what a
    pass that reports tool calls requires."""

    def begin(self, run: Run) -> None:
        super().begin(run)
        self.calls: list[ToolCall] = []
        self.approvals: list[Approval] = []

    def _keep(self, call: ToolCall) -> None:
        self.calls.append(call)

    keeps_results = True

    def _keep_approval(self, approval: Approval) -> None:
        self.approvals.append(approval)

    def finish(self, run: Run) -> None:
        super().finish(run)
        for call in self.calls:
            call.outcome = outcome(call, run.complete)


def outcome(call: ToolCall, complete: bool = True) -> str:
    """How a call ended (see the module); `complete`: the pass read the whole log."""
    if call.result_seq is not None:
        if call.error_code == TOOL_NOT_STARTED:
            return NOT_STARTED
        if call.error_code == TOOL_OUTCOME_UNKNOWN:
            return OUTCOME_UNKNOWN
        return ERROR if call.is_error else COMPLETED
    if not complete:
        return UNREAD
    if call.call_seq is None and call.asked_seq is None:  # named only by an approval: dsh asks one after the
        return OUTCOME_UNKNOWN  # tool/call it logs, so this one's call is missing, and it may have run
    return NOT_STARTED if call.call_seq is None else OUTCOME_UNKNOWN
