"""Model calls: which requests the harness sent, and what each one contained.

FORMAT.md section 8: a main-loop call is the `assistant/chunk` stream of one
turn/step ending in a `finish` chunk (a step may hold several: retries,
calls after a compaction), or cut short by an abort: `cancelled`, when an
`interrupted` assistant message of its step follows (the prefix it streamed)
or its turn ends `aborted` while it streams. Its request messages are the model messages at
the seq just before its first chunk; its header is the latest
`request/header` before that. Auxiliary model calls the log records are
listed apart, without shifting the main-loop numbering.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

from dshreplay._jsvalues import JSONData, as_key, as_text, is_time
from dshreplay._jsvalues import dig as _get
from dshreplay.analyses.trackers.turns import Placed
from dshreplay.core.driver import Observer, Record, Run
from dshreplay.core.surface import SURFACE_TYPES, has_message
from dshreplay.errors import DeriveError

__all__ = ["Call", "Request", "CallTracker", "Outcome"]

CANCELLED = "cancelled"  # a call's outcome when an abort cut its stream short
# how a call ended (`Call.outcome`): its finish reason's kind, a string in every log dsh writes ("stop",
# "tool-calls", "max-tokens", "error", ...), CANCELLED, None while its stream has no end in the log, or, for
# a finish reason that names no kind, the reason itself (any JSON value, as logged)
Outcome: TypeAlias = JSONData

AUXILIARY = {
    "compaction/summary": "compaction-summary",
    "session/title-llm-request": "session-title",
    "web/deepseek-search-llm-request": "web-search",
}


@dataclass
class Call:
    """One model call found in the log."""

    call: int | None  # main-loop number from 1; None for an auxiliary call
    kind: str  # "main" or the auxiliary kind
    turn: object = None
    step: object = None
    first_chunk_seq: int | None = None
    last_chunk_seq: int | None = None
    header_seq: int | None = None
    provider: object = None
    model: object = None
    finish: object = None  # the finish chunk's reason (None: the stream never finished)
    usage: object = None
    message_count: int | None = None
    chunks: int = 0
    cancelled: bool = False  # cut short by an abort (no finish chunk)
    finish_seq: int | None = None  # the finish chunk's seq (None: the stream never finished)
    first_chunk_time: Any = None  # its first chunk's time, as logged (epoch ms)
    last_chunk_time: Any = None  # its last chunk's time so far
    requested_at: Any = None  # the time of the event right before its first chunk, when timed (not a chunk)

    @property
    def latency_ms(self) -> float | None:
        """Time to first chunk: from the event before the call's first chunk to that chunk (None: untimed)."""
        first, before = self.first_chunk_time, self.requested_at
        latency: float | None = first - before if is_time(first) and is_time(before) else None
        return latency

    @property
    def duration_ms(self) -> float | None:
        """From its first chunk to its last (None: untimed)."""
        first, last = self.first_chunk_time, self.last_chunk_time
        duration: float | None = last - first if is_time(first) and is_time(last) else None
        return duration

    @property
    def outcome(self) -> Outcome:
        """How the call ended: its finish reason's kind (`stop`, `tool-calls`, `error`, ...;
        the reason itself when it names none), `cancelled` (cut short by an abort), or None
        while the log holds no end of its stream."""
        return CANCELLED if self.cancelled else finish_kind(self.finish)

    @property
    def error_code(self) -> object:
        """The error code its finish reason carries (None: none)."""
        return failure_code(self.finish)

    def to_json(self) -> dict[str, object]:
        out = {"call": self.call, "turn": self.turn, "step": self.step,
               "firstChunkSeq": self.first_chunk_seq, "lastChunkSeq": self.last_chunk_seq,
               "provider": self.provider, "model": self.model, "finish": self.finish,
               "outcome": self.outcome, "errorCode": self.error_code,
               "usage": self.usage, "messageCount": self.message_count}
        if self.kind != "main":
            out["kind"] = self.kind
        return out


class MessageCount(Observer):
    """How many model messages the current surface yields, kept as the fold
    goes: an appended node adds its message (if it yields one), a replacement
    takes its shadowed nodes' away and adds its own. Call it for the count."""

    types = SURFACE_TYPES  # (only surface events change the surface)

    def begin(self, run: Run) -> None:
        self.present: dict[int, int] = {}  # surface node -> 1 if it yields a message, else 0
        self.total = 0

    def observe(self, record: Record) -> None:
        item, replacement = record.item, record.replacement
        if replacement is not None:
            for seq in replacement.shadowed_seqs:
                self.total -= self.present.pop(seq, 0)
        elif item.row is not None or record.error is not None:
            return
        try:
            present = int(has_message(item))
        except DeriveError:
            present = 0
        self.present[item.seq] = present
        self.total += present

    def __call__(self) -> int:
        return self.total


class CallTracker(Observer):
    """The model calls, as a pass tracker: `record.call` is the main-loop call
    in force (the one the latest chunk belongs to). A call's message count is
    the model messages of the surface when it opened (MessageCount)."""

    requires = (MessageCount,)
    types = frozenset({"request/header", "assistant/message", "turn/end", *AUXILIARY})
    handlers = {"assistant/chunk": "chunk"}

    count_messages: MessageCount

    def begin(self, run: Run) -> None:
        self.count_messages = run.get(MessageCount)
        self.calls: list[Call] = []
        self.auxiliary: list[Call] = []
        self.open: dict[tuple[object, object], Call] = {}  # (turn, step) -> Call in progress
        self.header_seq: int | None = None
        self.header: Any = None  # the latest request/header's header

    def chunk(self, record: Record) -> None:
        """An `assistant/chunk` record: an Event, or a PackedRun of them (its row says which)."""
        event: Any = record.item
        chunk = chunk_type = None
        row = event.row is not None
        if row:
            data = event.row_data
        else:
            data = event.record.get("data")
            if type(data) is not dict:
                data = {}
            chunk = data.get("chunk")
            if type(chunk) is dict:
                chunk_type = chunk.get("type")
        key = (data.get("turn"), data.get("step"))  # (absent as null: one stream)
        try:
            call = self.open.get(key)
        except TypeError:  # (an array or an object: keyed as every log value is; any other keys as itself)
            key = (as_key(key[0]), as_key(key[1]))
            call = self.open.get(key)
        if call is None:
            call = self._open(event, data)
            self.open[key] = call
            previous = record.previous
            if previous is not None and previous.type != "assistant/chunk" and is_time(previous.time):
                call.requested_at = previous.time
        if record.call is not call:
            record.call = call
        count = event.count
        call.chunks += count
        call.last_chunk_seq = event.seq + count - 1
        call.last_chunk_time = event.last_time if row else event.time
        if chunk_type == "usage":
            call.usage = _get(chunk, "usage")
        elif chunk_type == "finish":
            call.finish = _get(chunk, "reason")
            call.finish_seq = event.seq
            del self.open[key]

    def observe(self, record: Record) -> None:
        event: Any = record.item
        kind = event.type
        if kind == "assistant/message":  # (an interrupted one: the prefix of a cancelled stream)
            if self.open:
                data = event.record.get("data")
                if _get(data, "interrupted") is True:
                    self._cancel((as_key(_get(data, "turn")), as_key(_get(data, "step"))))
        elif kind == "turn/end":  # an aborted turn cancels the streams it leaves open
            if self.open:
                data = event.record.get("data")
                if _get(data, "reason", "kind") == "aborted":
                    turn = as_key(_get(data, "turn"))
                    for key in [k for k in self.open if k[0] == turn]:
                        self._cancel(key)
        elif kind == "request/header":
            self.header_seq = event.seq
            self.header = _get(event.record.get("data"), "header")
        else:
            data = event.record.get("data")
            if kind == "compaction/summary" and _get(data, "llmStreamCall") is not True:
                return
            self.auxiliary.append(Call(None, AUXILIARY[kind], first_chunk_seq=event.seq,
                                       last_chunk_seq=event.seq, provider=_get(data, "provider"),
                                       model=_get(data, "model"), usage=_get(data, "usage"),
                                       first_chunk_time=event.time, last_chunk_time=event.time))

    def _cancel(self, key: tuple[object, object]) -> None:
        call = self.open.pop(key, None)
        if call is not None:
            call.cancelled = True

    def _open(self, event: Placed, data: Any) -> Call:
        config = _get(self.header, "config")
        call = Call(len(self.calls) + 1, "main", _get(data, "turn"), _get(data, "step"), event.seq, None,
                    self.header_seq, _get(config, "provider"), _get(config, "model"),
                    message_count=self.count_messages(), first_chunk_time=event.time)
        self.calls.append(call)
        return call


def failure_code(finish: Any) -> object:
    """The error code a call's finish reason carries (`{"kind": "error", "failure": {"code": ...}}`), or None."""
    failure = finish.get("failure") if type(finish) is dict else None
    return failure.get("code") if type(failure) is dict else None


def failed(finish: Any) -> bool:
    """Whether a call's finish reason says it failed."""
    return type(finish) is dict and (finish.get("kind") == "error" or type(finish.get("failure")) is dict)


def retries(calls: list[Call]) -> list[Call]:
    """The main-loop calls issued again in the same step after a call that failed:
    after an `llm/retry`, or after a compaction that recovered from an overflow."""
    return [after for before, after in zip(calls, calls[1:])
            if failed(before.finish) and (as_key(before.turn), as_key(before.step))
            == (as_key(after.turn), as_key(after.step))]


def retried_calls(calls: list[Call]) -> int:
    """How many main-loop calls are retries (see `retries`)."""
    return len(retries(calls))


def finish_kind(finish: Any) -> Outcome:
    """A finish reason's kind (`stop`, `tool-calls`, `error`, ...; the reason itself when it names none)."""
    kind: Outcome = finish.get("kind", finish) if type(finish) is dict else finish
    return kind


def finish_text(finish: Any) -> str:
    """A finish reason in words: its kind and error code ("stop", "error CONTEXT_WINDOW_EXCEEDED")."""
    return outcome_text(finish_kind(finish), failure_code(finish))


def outcome_text(outcome: object, error_code: object = None) -> str:
    """A call's outcome (`Call.outcome`, with its error code) in words: "stop", "error
    CONTEXT_WINDOW_EXCEEDED", "cancelled", or "(open)" while the log holds no end of it."""
    if outcome is None:
        return "(open)"
    return f"{as_text(outcome)} {as_text(error_code)}" if error_code is not None else as_text(outcome)


@dataclass
class Request:
    """The exact request of one call (or the one that would be sent at a seq: no call,
    the turn and step in force right after that seq, and no outcome)."""

    call: int | None
    turn: object
    step: object
    first_chunk_seq: int | None
    at_seq: int  # the messages are the model view right after this seq (-1: before any event)
    header_seq: int | None
    header: object
    messages: list[JSONData]  # the model messages, exactly as dsh folds them (a JSON object each, as logged)
    last_chunk_seq: int | None = None
    outcome: Outcome = None  # Call.outcome: the finish kind, "cancelled", or None (no end in the log)
    error_code: object = None
    usage: object = None
    torn_tail: dict[str, int] | None = None  # TornTail.to_json() when a pass that answered read up to one

    @classmethod
    def of_call(cls, call: Call, header: object, messages: list[JSONData], torn_tail: dict[str, int] | None = None
                ) -> Request:
        assert call.first_chunk_seq is not None, "every call the tracker finds has a first chunk"
        return cls(call.call, call.turn, call.step, call.first_chunk_seq, call.first_chunk_seq - 1, call.header_seq,
                   header, messages, call.last_chunk_seq, call.outcome, call.error_code, call.usage, torn_tail)

    def to_json(self) -> dict[str, object]:
        return {"call": self.call, "turn": self.turn, "step": self.step,
                "firstChunkSeq": self.first_chunk_seq, "lastChunkSeq": self.last_chunk_seq,
                "outcome": self.outcome, "errorCode": self.error_code, "usage": self.usage,
                "atSeq": self.at_seq, "headerSeq": self.header_seq, "header": self.header, "messages": self.messages,
                "tornTail": self.torn_tail}
