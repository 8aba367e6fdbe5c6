"""Relational rules: turns, steps, tool calls, compaction brackets, metering, hooks.

FORMAT.md sections 7 and 8, and the pairing of `hook/invoked` with `hook/result`
(dsh's hook-protocol package). dsh checks these only in its optional invariant
companions; `validate` always checks them. `RelationChecker` sees events in
order, one at a time, after the surface fold has processed each one, and
collects findings; `finish()` adds what only the end of the log can tell.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dshreplay.analyses.findings import DEFAULT_CAP, Finding, FindingList, finding
from dshreplay.core.surface import Replacement
from dshreplay.io.reader import Event, seed_length
from dshreplay.jsvalues import MISSING, as_key, dig, is_number, js_same, shown

TOOL_NOT_STARTED = "TOOL_NOT_STARTED"
TOOL_OUTCOME_UNKNOWN = "TOOL_OUTCOME_UNKNOWN"
STEP_EVENTS = frozenset({"assistant/chunk", "assistant/message", "tool/call"})
TURN_EVENTS = frozenset({"todo/write", "request/header", "request/context"})
METERS = frozenset({"compaction/summary", "compaction/prune"})


def _same(a, b) -> bool:
    """JavaScript `===` on the numbers and nulls these rules compare."""
    if a is None or b is None:
        return a is None and b is None
    return is_number(a) and is_number(b) and a == b


def _show(value) -> str:
    """A turn or step number as a message names it ("none" when absent or null)."""
    if value is None or value is MISSING:
        return "none"
    return str(int(value)) if is_number(value) and float(value).is_integer() else shown(value)


def _get(value, *keys):
    if len(keys) == 1 and type(value) is dict:  # the common case, without dig's loop
        return value.get(keys[0], MISSING)
    return dig(value, *keys, default=MISSING)


@dataclass
class BracketRecord:
    """Everything the log says about one compactionId (one row of `brackets`)."""

    compaction_id: object
    start: int | None = None
    end: int | None = None
    status: str = "open"  # closed | failed | open | abandoned | unbracketed (a replacement with no bracket)
    turn: object = None
    summary_seq: int | None = None
    replacement_seq: int | None = None
    error: object = None
    anomalies: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"compactionId": self.compaction_id, "start": self.start, "end": self.end,
                "status": self.status, "turn": self.turn, "summarySeq": self.summary_seq,
                "replacementSeq": self.replacement_seq, "error": self.error, "anomalies": self.anomalies}


@dataclass(frozen=True)
class Closer:
    """One event dsh would synthesize to close an interrupted turn."""

    type: str
    turn: object
    step: object = None
    call_id: str | None = None
    code: str | None = None  # TOOL_OUTCOME_UNKNOWN or TOOL_NOT_STARTED for tool/result
    call_seq: int | None = None  # the recorded tool/call, for TOOL_OUTCOME_UNKNOWN

    def to_json(self) -> dict:
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


class _Bracket:
    __slots__ = ("cid", "command", "start", "turn", "summary", "deferred")

    def __init__(self, cid, command, start: int, turn):
        self.cid = cid
        self.command = command
        self.start = start
        self.turn = turn
        self.summary: int | None = None
        self.deferred: list[Finding] = []  # turn-boundary findings, dropped if later abandoned


class RelationChecker:
    """Streaming checker for the relations between events."""

    def __init__(self, header: dict | None = None, cap: int | None = DEFAULT_CAP) -> None:
        self.findings: FindingList = FindingList(cap)
        self.open_turn = None
        self.open_step = None
        self.next_turn = 1
        self.next_step = 1
        self.pending: dict = {}  # callId -> tool/call seq, in the open step
        self.answered: dict = {}  # callId -> tool/result seq, in the open step
        self.asked: dict = {}  # callId -> (step, tool/call seq or None): what a crash leaves unanswered
        self.step_chunks: set[int] = set()
        self.bracket: _Bracket | None = None
        self.brackets: dict = {}  # compactionId -> BracketRecord, in order of first mention
        self.meter: Event | None = None  # a metering event waiting for its replacement
        self.last_event: Event | None = None
        self.hooks = _PendingHooks()  # the open turn's unanswered hook invocations
        self.hooks_left: dict = {}  # key -> _Fifo of (hook/invoked seq, turn/end seq) a closed turn left unanswered
        self.hooks_answered: dict = {}  # key -> (hook/invoked seq, hook/result seq) last paired, in the open turn
        self.seed_length = seed_length(header)
        self.seed_checked = False

    def add(self, code: str, message: str, event: Event, pointer: str | None = None) -> None:
        self.findings.append(finding(code, message, seq=event.seq, line=event.line, pointer=pointer))

    # -- the stream ------------------------------------------------------
    def check(self, event: Event, replacement: Replacement | None) -> None:
        kind = event.type
        if self.meter is not None:
            self._settle_meter(event, replacement)
        elif replacement is not None:
            self.add("DSH-N314", f"replacement of {replacement.start}..{replacement.end} has no "
                                 "compaction/summary or compaction/prune directly before it", event)
        if kind in METERS:
            self.meter = event
        if self.seed_length is not None and event.seq <= self.seed_length < event.seq + event.count:
            self.seed_checked = True
            if kind != "session/end-seed":
                self.add("DSH-E014", f"header seedLength {self.seed_length} points at {kind}, "
                                     "not session/end-seed", event)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event, None if event.row is not None else event.record.get("data"))
        self.last_event = event

    def record_for(self, cid) -> BracketRecord:
        key = as_key(cid)
        record = self.brackets.get(key)
        if record is None:
            record = self.brackets[key] = BracketRecord(None if cid is MISSING else cid)
        return record

    def _settle_meter(self, event: Event, replacement: Replacement | None) -> None:
        meter, self.meter = self.meter, None
        if replacement is not None and meter.type == "compaction/summary":
            cid = _get(meter.record, "data", "compactionId")
            if cid is not MISSING:
                self.record_for(cid).replacement_seq = event.seq
        record = event.record if event.row is None else {}
        if replacement is None and type(record.get("surfaceOp")) is dict:
            return  # the replacement was there but the fold rejected it: that finding says it
        if replacement is None:
            failed = meter.type == "compaction/summary" and event.type == "compaction/end" \
                and _get(record, "data", "error") is not MISSING
            if not failed:
                self.add("DSH-E313", f"{meter.type} at seq {meter.seq} is not directly followed by the "
                                     f"replacement it prices (next is {event.type})", meter)
            return
        declared = _get(meter.record, "data", "shadowedSeqs")
        actual = list(replacement.shadowed_seqs)
        if type(declared) is list and declared != actual:
            self.add("DSH-W312", f"{meter.type} at seq {meter.seq} says it prices {shown(declared)} but the "
                                 f"replacement shadowed {shown(actual)}", meter, "/data/shadowedSeqs")

    # -- turns and steps (dsh's session invariant) -------------------------
    def _turn_start(self, event: Event, data) -> None:
        turn = _get(data, "turn")
        self._turn_boundary(event)
        if self.open_turn is not None:
            self.add("DSH-E201", f"turn/start {_show(turn)} while turn {_show(self.open_turn)} is open", event)
        if not _same(turn, self.next_turn):
            self.add("DSH-E202", f"turn/start should number turn {self.next_turn}, not {_show(turn)}",
                     event, "/data/turn")
        self.open_turn = turn if is_number(turn) else None
        self.open_step = None
        self.next_step = 1
        self._reset_step()
        self.asked.clear()

    def _turn_end(self, event: Event, data) -> None:
        turn = _get(data, "turn")
        self._turn_boundary(event)
        if self.open_turn is None or not _same(turn, self.open_turn):
            self.add("DSH-E203", f"turn/end {_show(turn)} does not match the open turn "
                                 f"({_show(self.open_turn)})", event, "/data/turn")
        if self.open_step is not None:
            self.add("DSH-E204", f"turn/end {_show(turn)} while step {_show(self.open_step)} is open", event)
        for key, invoked in self.hooks.in_order():
            self.add("DSH-W403", f"turn closed with {_hook_name(key)} (hook/invoked at seq {invoked}) "
                                 "unanswered", event)
            self.hooks_left.setdefault(key, _Fifo()).append((invoked, event.seq))
        self.hooks = _PendingHooks()
        self.hooks_answered = {}
        self.open_turn = None
        self.open_step = None
        self.next_turn += 1
        self._reset_step()
        self.asked.clear()

    def _step_start(self, event: Event, data) -> None:
        turn, step = _get(data, "turn"), _get(data, "step")
        if self.open_turn is None or not _same(turn, self.open_turn):
            self.add("DSH-E205", f"step/start in turn {_show(turn)} but the open turn is "
                                 f"{_show(self.open_turn)}", event, "/data/turn")
        if self.open_step is not None:
            self.add("DSH-E206", f"step/start {_show(step)} while step {_show(self.open_step)} is open", event)
        if not _same(step, self.next_step):
            self.add("DSH-E207", f"step/start should number step {self.next_step} of turn "
                                 f"{_show(turn)}, not {_show(step)}", event, "/data/step")
        self.open_step = step if is_number(step) else None
        self._reset_step()

    def _step_end(self, event: Event, data) -> None:
        self._in_step(event, data)
        for call_id, call_seq in self.pending.items():
            self.add("DSH-W211", f"step closed with tool call {shown(call_id)} (tool/call at seq {call_seq}) "
                                 "unanswered", event)
        self.open_step = None
        self.next_step += 1
        self._reset_step()
        self.asked.clear()

    def _reset_step(self) -> None:
        self.pending = {}
        self.answered = {}
        self.step_chunks = set()

    def _in_step(self, event: Event, data) -> bool:
        turn, step = (data.get("turn", MISSING), data.get("step", MISSING)) if type(data) is dict \
            else (MISSING, MISSING)
        if type(turn) is int and type(step) is int and turn == self.open_turn and step == self.open_step:
            return True  # (plain integers naming the open step: what dsh writes)
        if self.open_turn is None or self.open_step is None or not _same(turn, self.open_turn) \
                or not _same(step, self.open_step):
            self.add("DSH-E208", f"{event.type} names turn {_show(turn)}/step {_show(step)} but the open "
                                 f"one is turn {_show(self.open_turn)}/step {_show(self.open_step)}", event)
            return False
        return True

    def _chunk(self, event: Event, data) -> None:
        if event.row is None:
            self._in_step(event, data)
            self.step_chunks.add(event.seq)
            return
        # a packed run, or one member of it: turn/step are the row's, checked once per row
        if event.count > 1 or event.index_in_row == 0:
            self._in_step(event, event.row_data)
        self.step_chunks.update(range(event.seq, event.seq + event.count))

    def _assistant_message(self, event: Event, data) -> None:
        self._in_step(event, data)
        sources = event.record.get("sourceEventSeqs")
        if type(sources) is list:
            foreign = [s for s in sources if type(s) is not int or s not in self.step_chunks]
            if foreign:
                self.add("DSH-E212", f"assistant/message cites {shown(foreign[:5])}"
                                     f"{' ...' if len(foreign) > 5 else ''}, which are not assistant/chunk "
                                     "events of its step", event, "/sourceEventSeqs")
        content = _get(data, "message", "content")
        if type(content) is list:
            step = _get(data, "step")
            for block in content:
                if _get(block, "type") == "tool-call" and type(_get(block, "id")) is str:
                    self.asked[block["id"]] = [step, None]

    def _tool_call(self, event: Event, data) -> None:
        self._in_step(event, data)
        call_id = _get(data, "callId")
        if type(call_id) is str:
            self.pending[call_id] = event.seq
            if call_id in self.asked:
                self.asked[call_id][1] = event.seq

    def _tool_result(self, event: Event, data) -> None:
        if event.record.get("surfaceOp") != "append":
            if self.open_turn is None:
                self.add("DSH-E209", "tool/result rewrite outside any open turn", event)
            return
        self._in_step(event, data)
        call_id = _get(data, "message", "source", "callId")
        synthetic = _get(data, "message", "content", 0, "isError") is True \
            and _get(data, "error", "code") == TOOL_NOT_STARTED
        if type(call_id) is str and call_id in self.pending:
            del self.pending[call_id]
        elif not synthetic:
            earlier = self.answered.get(call_id) if type(call_id) is str else None
            again = f" (already answered at seq {earlier})" if earlier is not None else ""
            self.add("DSH-E210", f"tool/result for {shown(call_id) if call_id is not MISSING else 'no callId'} "
                                 f"answers no tool/call of this step{again}", event,
                     "/data/message/source/callId")
        if type(call_id) is str:
            self.answered[call_id] = event.seq
            self.asked.pop(call_id, None)

    def _turn_scoped(self, event: Event, data) -> None:
        if self.open_turn is None:
            self.add("DSH-E209", f"{event.type} outside any open turn", event)

    # -- compaction brackets (dsh's compaction invariant) ------------------
    def _turn_boundary(self, event: Event) -> None:
        b = self.bracket
        if b is not None:
            owner = "standalone compaction" if b.turn is None else f"compaction for turn {_show(b.turn)}"
            b.deferred.append(finding("DSH-E309", f"{event.type} inside an open {owner} (started at seq "
                                                  f"{b.start})", seq=event.seq, line=event.line))

    def _owner(self, event: Event, owner) -> None:
        if owner is None:
            if self.open_turn is not None:
                self.add("DSH-E302", f"{event.type} is standalone (turn null) but turn "
                                     f"{_show(self.open_turn)} is open", event, "/data/turn")
        elif not self._names_open_turn(owner):
            self.add("DSH-E302", self._not_open_turn(event, owner), event, "/data/turn")

    def _names_open_turn(self, turn) -> bool:
        return self.open_turn is not None and _same(turn, self.open_turn)

    def _not_open_turn(self, event: Event, turn) -> str:
        """Why an event naming `turn` does not lie in the open turn (when `_names_open_turn` is false)."""
        if self.open_turn is None:
            return f"{event.type} for turn {_show(turn)} outside any open turn"
        return f"{event.type} names turn {_show(turn)} but the open turn is {_show(self.open_turn)}"

    def _matches_open(self, event: Event, data) -> bool:
        b = self.bracket
        if b is None:
            self.add("DSH-E304", f"{event.type} has no open compaction/start", event)
            record = self.record_for(_get(data, "compactionId"))
            what = "end" if event.type == "compaction/end" else "summary"
            record.anomalies.append(f"{what} without start (seq {event.seq})")
            if what == "end":
                record.end = event.seq
                record.status = "failed" if _get(data, "error") is not MISSING else "closed"
            return False
        cid, command = _get(data, "compactionId"), _get(data, "sourceCommandId")
        if not js_same(cid, b.cid):
            self.add("DSH-E303", f"{event.type} names compaction {_opt(cid)} but the open one is {_opt(b.cid)} "
                                 f"(seq {b.start})", event, "/data/compactionId")
        if not js_same(command, b.command):
            self.add("DSH-E303", f"{event.type} sourceCommandId {_opt(command)} does not match the start's "
                                 f"{_opt(b.command)}", event, "/data/sourceCommandId")
        return True

    def _compaction_start(self, event: Event, data) -> None:
        if self.bracket is not None:
            self.add("DSH-E301", f"compaction/start while compaction {_opt(self.bracket.cid)} (seq "
                                 f"{self.bracket.start}) is open", event)
            self._close_bracket()
        owner = _get(data, "turn")
        owner = None if owner is MISSING else owner
        self._owner(event, owner)
        cid = _get(data, "compactionId")
        self.bracket = _Bracket(cid, _get(data, "sourceCommandId"), event.seq, owner)
        record = self.record_for(cid)
        if record.start is not None:
            record.anomalies.append(f"started twice (seq {record.start} and seq {event.seq})")
        else:
            record.start, record.turn = event.seq, owner

    def _compaction_summary(self, event: Event, data) -> None:
        if not self._matches_open(event, data):
            return
        b = self.bracket
        self._owner(event, b.turn)
        if b.summary is not None:
            self.add("DSH-E305", f"second compaction/summary for {_opt(b.cid)} (first at seq {b.summary})", event)
        b.summary = event.seq
        self.record_for(b.cid).summary_seq = event.seq
        seqs, span = _get(data, "shadowedSeqs"), _get(data, "shadowedRange")
        if type(seqs) is list:
            if not seqs:
                self.add("DSH-E306", "compaction/summary shadowedSeqs is empty", event, "/data/shadowedSeqs")
            elif not (_same(_get(span, "start"), seqs[0]) and _same(_get(span, "end"), seqs[-1])):
                self.add("DSH-E306", f"shadowedRange {_opt(_get(span, 'start'))}..{_opt(_get(span, 'end'))} is not the "
                                     f"first and last shadowedSeqs ({_opt(seqs[0])}..{_opt(seqs[-1])})", event,
                         "/data/shadowedRange")

    def _compaction_end(self, event: Event, data) -> None:
        if not self._matches_open(event, data):
            return
        b = self.bracket
        owner = _get(data, "turn")
        if not _same(None if owner is MISSING else owner, b.turn):
            self.add("DSH-E307", f"compaction/end names turn {_show(owner)} but its start named "
                                 f"{_show(b.turn)}", event, "/data/turn")
        self._owner(event, b.turn)
        error = _get(data, "error")
        if error is MISSING and b.summary is None:
            self.add("DSH-E308", f"compaction {_opt(b.cid)} ended without error but wrote no summary", event)
        record = self.record_for(b.cid)
        record.end = event.seq
        record.status = "closed" if error is MISSING else "failed"
        record.error = None if error is MISSING else error
        self._close_bracket()

    def _close_bracket(self) -> None:
        if self.bracket is not None:
            self.findings.extend(self.bracket.deferred)
        self.bracket = None

    def _end_seed(self, event: Event, data) -> None:
        b = self.bracket
        if b is not None:
            self.add("DSH-N311", f"compaction {_opt(b.cid)} (seq {b.start}) was left open before this "
                                 "session/end-seed: abandoned with its lifecycle", event)
            self.record_for(b.cid).status = "abandoned"
            self.bracket = None  # its deferred turn-boundary findings belong to the dead lifecycle

    def _user_message(self, event: Event, data) -> None:
        op = event.record.get("surfaceOp")
        source = _get(data, "source")
        if type(op) is dict and _get(source, "kind") == "plugin" and _get(source, "plugin") == "compact":
            b = self.bracket
            cid = _get(source, "compactionId")
            record = self.record_for(cid)
            record.replacement_seq = event.seq
            if b is None and record.start is None:
                record.status = "unbracketed"  # (dsh's older logs write a checkpoint with no bracket at all)
            elif b is None or not js_same(cid, b.cid):
                record.anomalies.append(f"replacement at seq {event.seq} outside its bracket")
            name = shown(cid) if cid is not MISSING else "(no id)"
            if b is not None and not js_same(cid, b.cid):  # dsh's compaction invariant refuses these two
                self.add("DSH-E303", f"compaction checkpoint {name} replaces history inside compaction "
                                     f"{_opt(b.cid)} (started at seq {b.start})", event, "/data/source/compactionId")
            elif b is None and record.start is not None:
                self.add("DSH-E304", f"compaction checkpoint {name} replaces history outside its compaction "
                                     f"(started at seq {record.start})", event, "/data/source/compactionId")
            elif b is None:
                self.add("DSH-W315", f"compaction checkpoint {name} replaces history but no compaction is open "
                                     "and none started with its id", event, "/data/source/compactionId")

    # -- hooks (dsh's hook-protocol invariant) ------------------------------
    def _hook_invoked(self, event: Event, data) -> None:
        turn = _get(data, "turn")
        if not self._names_open_turn(turn):
            self.add("DSH-E401", self._not_open_turn(event, turn), event, "/data/turn")
        self.hooks.add(_hook_key(data), event.seq)

    def _hook_result(self, event: Event, data) -> None:
        turn = _get(data, "turn")
        key = _hook_key(data)
        invoked, note = self.hooks.take(key), ""
        if invoked is None:
            left = _take(self.hooks_left, key)
            if left is not None:
                invoked, ended = left
                note = f" (its hook/invoked at seq {invoked} was left unanswered when its turn closed at seq {ended})"
        in_turn = self._names_open_turn(turn)
        if invoked is None and not in_turn and self.open_turn is not None:
            # the result names another turn than the open one its invocation named
            invoked = self.hooks.take((as_key(self.open_turn), key[1], key[2]))
            if invoked is not None:
                note = f" (its hook/invoked at seq {invoked} names turn {_show(self.open_turn)})"
        if not in_turn:
            self.add("DSH-E401", self._not_open_turn(event, turn) + note, event, "/data/turn")
        if invoked is not None:
            self.hooks_answered[key] = (invoked, event.seq)
            return
        self.add("DSH-E402", f"hook/result for {_hook_name(key)} in turn {_show(turn)} answers no unanswered "
                             f"hook/invoked{self._hook_hint(key)}", event, "/data/handlerId")

    def _hook_hint(self, key) -> str:
        """What the log says about the handler of a result that found no invocation."""
        answered = self.hooks_answered.get(key)
        if answered is not None:
            return f" (its hook/invoked at seq {answered[0]} was already answered at seq {answered[1]})"
        oldest = self.hooks.oldest_of_handler(key[2])
        if oldest is not None:
            invoked, other = oldest
            return f" (the unanswered hook/invoked of that handler at seq {invoked} is at {_opt(other[1])} in " \
                   f"turn {_show(other[0])})"
        return ""

    # -- the end -----------------------------------------------------------
    def finish(self, last_seq: int | None) -> list[Finding]:
        """Findings only the end of the log can tell; returns every finding, by seq."""
        last = self.last_event
        where = {"seq": last.seq + last.count - 1, "line": last.end_line} if last else {}
        if self.meter is not None:
            self.findings.append(finding("DSH-E313", f"{self.meter.type} at seq {self.meter.seq} ends the log "
                                         "without the replacement it prices", seq=self.meter.seq,
                                         line=self.meter.line))
        if self.bracket is not None:
            b = self.bracket
            self.findings.append(finding("DSH-W310", f"compaction {_opt(b.cid)} started at seq {b.start} never "
                                                     "ended (in progress or crashed)", seq=b.start))
            self._close_bracket()
        if self.seed_length is not None and not self.seed_checked:
            self.findings.append(finding("DSH-E014", f"header seedLength {self.seed_length} is beyond the "
                                                     f"log's {0 if last_seq is None else last_seq + 1} events"))
        if self.open_turn is not None:
            self.findings.append(finding("DSH-W213", self.interrupted_message(), **where))
        for key, invoked in self.hooks.in_order():
            self.findings.append(finding("DSH-W403", f"log ends with {_hook_name(key)} (hook/invoked at seq "
                                                     f"{invoked}) unanswered", **where))
        self.findings.sort(key=lambda f: (f.seq is None, f.seq if f.seq is not None else 0))
        return self.findings

    def closers(self) -> list[Closer]:
        """What dsh would append on load to close an interrupted final turn ([] if none)."""
        if self.open_turn is None:
            return []
        out = []
        for call_id, (step, call_seq) in self.asked.items():
            code = TOOL_OUTCOME_UNKNOWN if call_seq is not None else TOOL_NOT_STARTED
            out.append(Closer("tool/result", self.open_turn, step, call_id, code, call_seq))
        if self.open_step is not None:
            out.append(Closer("step/end", self.open_turn, self.open_step))
        out.append(Closer("turn/end", self.open_turn))
        return out

    def interrupted_message(self) -> str:
        closers = ", ".join(c.describe() for c in self.closers())
        return f"log ends inside turn {_show(self.open_turn)}; dsh would append {closers}"


def _opt(value) -> str:
    """A log value as a message quotes it ("none" when absent)."""
    return "none" if value is MISSING else shown(value)


def _hook_key(data) -> tuple:
    """What pairs a hook/result with its hook/invoked, as dsh keys it: turn, point and handlerId."""
    values = (_get(data, "turn"), _get(data, "point"), _get(data, "handlerId"))
    return tuple(as_key(v) for v in values)


def _hook_name(key) -> str:
    return f"hook {_opt(key[2])} at {_opt(key[1])}"


def _take(waiting: dict, key):
    """The oldest entry waiting under `key` (a _Fifo), removed; None when there is none."""
    entries = waiting.get(key)
    if entries is None:
        return None
    entry = entries.pop_first()
    if entries.empty:
        del waiting[key]
    return entry


class _Fifo(list):
    """A first-in, first-out queue as small as a list (a deque takes 600 bytes for one item, and a
    log can hold one queue per invocation); taking the first is O(1) amortized (list.pop(0) is not)."""

    __slots__ = ("head",)

    def __init__(self) -> None:
        super().__init__()
        self.head = 0  # the first entry not yet taken

    @property
    def empty(self) -> bool:
        return self.head >= len(self)

    def first(self):
        return self[self.head]

    def pop_first(self):
        entry = self[self.head]
        self.head += 1
        if self.head > 16 and 2 * self.head > len(self):  # drop the taken half: each entry moves O(1) times
            del self[:self.head]
            self.head = 0
        return entry


class _PendingHooks:
    """Unanswered hook invocations, by pairing key (turn, point, handlerId) and by handler.

    dsh pairs a result with the oldest unanswered invocation of the same three
    (a handler may run again before its first run answers). Each question a
    result asks costs O(1) amortized, however many invocations wait: by key, and
    the oldest waiting invocation of a handler for the hint of a result that
    pairs with none (seqs only grow, so each handler's queue is in seq order, and
    answered entries are dropped from its front when met).
    """

    __slots__ = ("by_key", "by_handler", "waiting")

    def __init__(self) -> None:
        self.by_key: dict = {}  # key -> _Fifo of hook/invoked seqs, oldest first
        self.by_handler: dict = {}  # handlerId key -> _Fifo of (seq, key), oldest first, answered ones included
        self.waiting: set[int] = set()  # the seqs still unanswered

    def add(self, key: tuple, seq: int) -> None:
        self.by_key.setdefault(key, _Fifo()).append(seq)
        self.by_handler.setdefault(key[2], _Fifo()).append((seq, key))
        self.waiting.add(seq)

    def take(self, key: tuple) -> int | None:
        """The oldest unanswered invocation under `key`, now answered; None when there is none."""
        seq = _take(self.by_key, key)
        if seq is not None:
            self.waiting.discard(seq)
        return seq

    def oldest_of_handler(self, handler) -> tuple[int, tuple] | None:
        """(seq, key) of the oldest unanswered invocation of `handler`, or None."""
        queue = self.by_handler.get(handler)
        if queue is None:
            return None
        while not queue.empty and queue.first()[0] not in self.waiting:
            queue.pop_first()
        if queue.empty:
            del self.by_handler[handler]
            return None
        return queue.first()

    def in_order(self) -> list[tuple]:
        """(key, hook/invoked seq) of every unanswered invocation, oldest first."""
        return sorted(((key, seq) for key, seqs in self.by_key.items() for seq in seqs[seqs.head:]),
                      key=lambda p: p[1])


_HANDLERS = {
    "turn/start": RelationChecker._turn_start,
    "turn/end": RelationChecker._turn_end,
    "step/start": RelationChecker._step_start,
    "step/end": RelationChecker._step_end,
    "assistant/chunk": RelationChecker._chunk,
    "assistant/message": RelationChecker._assistant_message,
    "tool/call": RelationChecker._tool_call,
    "tool/result": RelationChecker._tool_result,
    "user/message": RelationChecker._user_message,
    "todo/write": RelationChecker._turn_scoped,
    "request/header": RelationChecker._turn_scoped,
    "request/context": RelationChecker._turn_scoped,
    "compaction/start": RelationChecker._compaction_start,
    "compaction/summary": RelationChecker._compaction_summary,
    "compaction/end": RelationChecker._compaction_end,
    "session/end-seed": RelationChecker._end_seed,
    "hook/invoked": RelationChecker._hook_invoked,
    "hook/result": RelationChecker._hook_result,
}
