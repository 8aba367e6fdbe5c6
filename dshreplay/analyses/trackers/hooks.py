"""Hook runs: each hook/invoked paired with the hook/result that answered it, as dsh's hook protocol pairs them.

A `hook/result` pairs with the oldest unanswered `hook/invoked` of the same
turn, point and handlerId (`HookTracker`); a handler may run again before its
first run answers. A hook run at a tool point (`TOOL_POINTS`: PreToolUse,
PostToolUse, ...) belongs to the tool call it ran for: the tool tracker
(`toolcalls.ToolTracker`) attaches it, by its `matcher` (`matcher_selects`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence, TypeVar

from dshreplay._jsvalues import MISSING, as_key, dig, shown
from dshreplay.analyses.trackers.turns import Placed, Stored, TurnTracker
from dshreplay.core.driver import Observer, Record, Run

if TYPE_CHECKING:
    from dshreplay.analyses.trackers.toolcalls import ToolCall

__all__ = ["HookRun", "HookTracker", "TOOL_POINTS", "hook_key", "hook_name", "matcher_selects"]

TOOL_POINTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"})

HookKey = tuple[object, ...]  # (turn, point, handlerId), each keyed by as_key
K = TypeVar("K")
T = TypeVar("T")


def _get(value: Any, *keys: str | int) -> Any:
    if len(keys) == 1 and type(value) is dict:
        return value.get(keys[0], MISSING)
    return dig(value, *keys, default=MISSING)


def _opt(value: object) -> str:
    """A log value as a message quotes it ("none" when absent)."""
    return "none" if value is MISSING else shown(value)


@dataclass
class HookRun:
    """One run of a hook handler: its hook/invoked and the hook/result that answered it."""

    invoked_seq: int | None  # None: a hook/result that answered no invocation
    turn: object
    point: object
    handler: object
    matcher: object = None
    dialect: object = None
    result_seq: int | None = None
    decision: object = None
    exit_code: object = None
    duration_ms: object = None
    call_id: object = None  # the tool call it ran for (by the tool tracker), else None
    call: ToolCall | None = field(default=None, repr=False, compare=False)  # that call itself (its id may be
    # used again by a later call before the hook answers: the hook/result still belongs to this one)
    candidates: tuple[object, ...] = ()  # the tool calls it may have run for, when the log cannot tell which

    def label(self) -> str:
        """`point:decision` ("no result" when unanswered), with the calls it may belong to when ambiguous."""
        text = f"{self.point}:{self.decision if self.result_seq is not None else 'no result'}"
        if self.call_id is None and len(self.candidates) > 1:
            text += "(one of " + "|".join(map(str, self.candidates)) + ")"
        return text

    def to_json(self) -> dict[str, object]:
        return {"invokedSeq": self.invoked_seq, "resultSeq": self.result_seq, "turn": self.turn,
                "point": self.point, "handlerId": self.handler, "matcher": self.matcher,
                "decision": self.decision, "exitCode": self.exit_code, "durationMs": self.duration_ms,
                "callId": self.call_id, "candidates": list(self.candidates)}


def hook_key(data: Any) -> HookKey:
    """What pairs a hook/result with its hook/invoked, as dsh keys it: turn, point and handlerId."""
    values = (_get(data, "turn"), _get(data, "point"), _get(data, "handlerId"))
    return tuple(as_key(v) for v in values)


def hook_name(key: HookKey) -> str:
    return f"hook {_opt(key[2])} at {_opt(key[1])}"


def _take(waiting: dict[K, _Fifo[T]], key: K) -> T | None:
    """The oldest entry waiting under `key` (a _Fifo), removed; None when there is none."""
    entries = waiting.get(key)
    if entries is None:
        return None
    entry = entries.pop_first()
    if entries.empty:
        del waiting[key]
    return entry


class _Fifo(list[T]):
    """A first-in, first-out queue as small as a list (a deque takes 600 bytes for one item, and a
    log can hold one queue per invocation); taking the first is O(1) amortized (list.pop(0) is not)."""

    __slots__ = ("head",)

    def __init__(self) -> None:
        super().__init__()
        self.head = 0  # the first entry not yet taken

    @property
    def empty(self) -> bool:
        return self.head >= len(self)

    def first(self) -> T:
        return self[self.head]

    def pop_first(self) -> T:
        entry = self[self.head]
        self.head += 1
        if self.head > 16 and 2 * self.head > len(self):  # drop the taken half: each entry moves O(1) times
            del self[:self.head]
            self.head = 0
        return entry

    def waiting(self) -> list[T]:
        """The entries not yet taken, oldest first."""
        return self[self.head:]


class PendingHooks:
    """Unanswered hook invocations (HookRuns), by pairing key (turn, point, handlerId) and by handler.

    dsh pairs a result with the oldest unanswered invocation of the same three
    (a handler may run again before its first run answers). Each question a
    result asks costs O(1) amortized, however many invocations wait: by key, and
    the oldest waiting invocation of a handler for the hint of a result that
    pairs with none (seqs only grow, so each handler's queue is in seq order, and
    answered entries are dropped from its front when met).
    """

    __slots__ = ("by_key", "by_handler", "waiting")

    def __init__(self) -> None:
        self.by_key: dict[HookKey, _Fifo[HookRun]] = {}  # key -> _Fifo of HookRuns, oldest first
        self.by_handler: dict[object, _Fifo[tuple[HookRun, HookKey]]] = {}  # handlerId key -> _Fifo of (HookRun,
        # key), oldest first, answered ones included
        self.waiting: set[int | None] = set()  # the hook/invoked seqs still unanswered (a run added has one)

    def __bool__(self) -> bool:
        return bool(self.waiting)

    def add(self, key: HookKey, run: HookRun) -> None:
        self.by_key.setdefault(key, _Fifo()).append(run)
        self.by_handler.setdefault(key[2], _Fifo()).append((run, key))
        self.waiting.add(run.invoked_seq)

    def take(self, key: HookKey) -> HookRun | None:
        """The oldest unanswered invocation under `key`, now answered; None when there is none."""
        run = _take(self.by_key, key)
        if run is not None:
            self.waiting.discard(run.invoked_seq)
        return run

    def oldest_of_handler(self, handler: object) -> tuple[HookRun, HookKey] | None:
        """(HookRun, key) of the oldest unanswered invocation of `handler`, or None."""
        queue = self.by_handler.get(handler)
        if queue is None:
            return None
        while not queue.empty and queue.first()[0].invoked_seq not in self.waiting:
            queue.pop_first()
        if queue.empty:
            del self.by_handler[handler]
            return None
        return queue.first()

    def in_order(self) -> list[tuple[HookKey, HookRun]]:
        """(key, HookRun) of every unanswered invocation, oldest first."""
        return sorted(((key, run) for key, runs in self.by_key.items() for run in runs.waiting()),
                      key=lambda p: p[1].invoked_seq)  # type: ignore[arg-type, return-value]  # (a waiting run
        # was invoked: its invoked_seq is an int, never the None of a result that answered none)


class HookTracker(Observer):
    """Pairs each hook/result with its hook/invoked, as dsh's hook protocol does:
    the oldest unanswered invocation of the same (turn, point, handlerId); a
    handler may run again before its first run answers.

    While a record is observed after this tracker:
    pending   the open turn's unanswered invocations (PendingHooks: by key, oldest first)
    left      key -> _Fifo of (HookRun, turn/end seq) a closed turn left unanswered
    answered  key -> (hook/invoked seq, hook/result seq) last paired in the open turn
    current   on a hook/invoked or hook/result: its HookRun
    on a hook/result: `how` it paired ("open": with an unanswered invocation
    of its key; "left": one its turn left unanswered, closed at seq `ended`;
    "turn": one of the open turn, which the result does not name; None: none)
    on a turn/end: `dropped`, the (key, HookRun) it left unanswered, oldest first
    """

    requires = (TurnTracker,)
    types = frozenset({"hook/invoked", "hook/result", "turn/end"})

    turns: TurnTracker
    dropped: Sequence[tuple[HookKey, HookRun]]

    def begin(self, run: Run) -> None:
        self.turns = run.get(TurnTracker)
        self.current: HookRun | None = None
        self.pending = PendingHooks()
        self.left: dict[HookKey, _Fifo[tuple[HookRun, int]]] = {}
        self.answered: dict[HookKey, tuple[int | None, int]] = {}
        self.how: str | None = None
        self.ended: int | None = None
        self.dropped = []

    def observe(self, record: Record) -> None:
        event: Stored = record.item
        data = event.record.get("data")
        kind = event.type
        if kind == "hook/invoked":
            run = HookRun(event.seq, or_none(_get(data, "turn")), or_none(_get(data, "point")),
                          or_none(_get(data, "handlerId")), or_none(_get(data, "matcher")),
                          or_none(_get(data, "dialect")))
            self.pending.add(hook_key(data), run)
            self.current = run
        elif kind == "hook/result":
            self._result(event, data)
        elif self.pending:  # a turn/end leaving invocations unanswered
            self.dropped = self.unanswered()
            for key, run in self.dropped:
                self.left.setdefault(key, _Fifo()).append((run, event.seq))
            self.pending = PendingHooks()
            self.answered = {}
        else:  # turn/end
            self.dropped = ()
            if self.answered:
                self.answered = {}

    def _result(self, event: Placed, data: Any) -> None:
        key = hook_key(data)
        how: str | None
        run, how, self.ended = self.pending.take(key), "open", None
        if run is None:
            left = _take(self.left, key)
            if left is not None:
                (run, self.ended), how = left, "left"
        open_turn = self.turns.open_turn
        turn = _get(data, "turn")
        if run is None and open_turn is not None and not _same(turn, open_turn):
            run = self.pending.take((as_key(open_turn), key[1], key[2]))
            how = "turn"
        if run is None:
            how = None
            run = HookRun(None, or_none(turn), or_none(_get(data, "point")), or_none(_get(data, "handlerId")))
        else:
            self.answered[key] = (run.invoked_seq, event.seq)
        self.how = how
        run.result_seq = event.seq
        run.decision, run.exit_code = or_none(_get(data, "decision")), or_none(_get(data, "exitCode"))
        run.duration_ms = or_none(_get(data, "durationMs"))
        self.current = run

    def unanswered(self) -> list[tuple[HookKey, HookRun]]:
        """(key, HookRun) of every unanswered invocation of the open turn, oldest first."""
        return self.pending.in_order()


def or_none(value: Any) -> Any:
    return None if value is MISSING else value



def _same(a: object, b: object) -> bool:
    """JavaScript `===` on the numbers and nulls the rules compare."""
    if a is None or b is None:
        return a is None and b is None
    return type(a) in (int, float) and type(b) in (int, float) and a == b


def matcher_selects(matcher: object, tool: object) -> bool | None:
    """Whether a hook handler's `matcher` selects the tool named `tool`: True,
    False, or None when the log cannot say (a pattern that is more than tool
    names; patterns from a log are not run: a hostile one could hang the reader).
    No matcher, "" and "*" select every tool; "a|b" selects a and b; "a.*" the
    names that start with a."""
    if matcher is None or matcher in ("", "*"):
        return True
    if type(matcher) is not str or type(tool) is not str:
        return None
    for name in matcher.split("|"):
        stem = name[:-2] if name.endswith(".*") else None
        if not _plain(stem if stem is not None else name):
            return None
        if (name == tool) if stem is None else tool.startswith(stem):
            return True
    return False


def _plain(name: str) -> bool:
    return name != "" and all(c.isalnum() or c in "_-" for c in name)
