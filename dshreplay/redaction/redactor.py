"""The redactor of an export: masks strings, values and records by the rules (`rules`).

Redaction applies to what dshreplay writes, never to the log it reads.
Masking is in place: a secret is replaced by MASK where it stands, and every
other character stays as the log wrote it; a string that holds JSON is masked
inside each of its strings (`jsontext`). A secret written in another form is
found too (`decode`: the one place forms are undone, for the gate and the views
alike): behind backslash escapes (`\\u0067hp_...`, `\\x67`, octal `\\147`),
URL-encoded to any depth (`%2567hp_...`), inside base64 of text or of a binary
frame (the whole base64 text is masked), and one inside another. Also here: the
values a session masked (to mask them where its findings quote them) and the
tool calls whose arguments, put together from their deltas, hold a secret.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import orjson

from dshreplay._jsvalues import as_key, json_bytes, parse_count, pointer_parts
from dshreplay.core.driver import Observer, Record, Run
from dshreplay.redaction._decode import base64_runs, escapes_decoded, unescape, url_decoded, views
from dshreplay.redaction._jsontext import NUMBERED, Edit, JsonText, apply_edits, json_container, uncounted
from dshreplay.redaction._rules import (
    BASE64_RUN,
    ENGINE,
    MASK,
    PERCENT,
    SECRET,
    Rules,
    Span,
    char_spans,
    compile_rules,
    find,
    secret_value,
    utf8,
    why_engine_off,
)
from dshreplay.redaction._secretrules import plain_member

__all__ = ["Redactor", "load_redactor", "MASK"]

CallKey = tuple[object, object, object]  # (turn, step, block index) of a tool call, as keys (_jsvalues.as_key)
MAX_LAYERS = 4  # encodings undone in turn to find a secret behind them (JSON text inside JSON text, base64 of
# URL-encoded text...: `decode`)
BASE64 = "base64 of a secret"  # (counted with the rule that found the secret in the decoded text)


@dataclass
class Redactor:
    """Masks strings and values with `rules`; while `counting`, counts what it
    replaced and remembers the values it masked (to mask them in findings)."""

    rules: Rules = field(default_factory=Rules)
    secret_calls: frozenset[CallKey] = frozenset()  # (turn, step, index) of tool calls whose arguments hold a secret
    counting: bool = False
    replacements: int = 0
    by_rule: Counter[str] = field(default_factory=Counter)  # rule name -> replacements made

    def __post_init__(self) -> None:
        self._clean_keys: dict[str, bool] = {}  # member names no rule changes -> whether one names a secret
        self.masked_values = MaskedValues()  # values masked while counting (whole, or a secret in them)
        self._active = self.active  # (asked of every record: the rules do not change)

    @property
    def active(self) -> bool:
        rules = self.rules
        return bool(rules.text or rules.pointers or rules.keys or rules.secret_members)

    @property
    def summary(self) -> dict[str, int] | None:
        return self.rules.summary

    def for_calls(self, secret_calls: Iterable[CallKey]) -> Redactor:
        """A fresh redactor with these rules that also masks the argument deltas of `secret_calls`;
        it goes on from this one's counts (a session's, its input's name counted first)."""
        fresh = Redactor(self.rules, frozenset(secret_calls))
        fresh.replacements, fresh.by_rule = self.replacements, Counter(self.by_rule)
        return fresh

    # -- strings ---------------------------------------------------------------------------

    def string(self, value: str) -> str:
        """A string with the rules applied (the same object when none changes it); in one
        that holds JSON (tool arguments, results) each string is masked in place, member
        names too, and the values of members the keys and member-name rules name."""
        edits = self._edits(value, 0)
        if not edits:
            return value
        self._remember(value)
        return apply_edits(value, edits, self._count)

    def text(self, value: str) -> str:
        """A string with every span a text rule matches masked (the same object when none does)."""
        if not self.rules.text:
            return value
        spans = self._text_spans(value, 0)
        if not spans:
            return value
        return apply_edits(value, [(s, e, MASK, rule) for s, e, rule in spans], self._count)

    def _edits(self, value: str, depth: int) -> list[Edit]:
        """The edits (start, end, new text, rule) the rules make to a string."""
        head = value[:1] if value[:1] not in " \t\r\n" else value.lstrip()[:1]
        if (head == "{" or head == "[") and len(value) > 1 and depth < MAX_LAYERS:
            if json_container(value):
                if self.rules.only_defaults and not self._may_change(utf8(value)):
                    return []
                return JsonText(self, value, depth).edits()
        return [(s, e, MASK, rule) for s, e, rule in self._text_spans(value, depth)]

    def _text_spans(self, text: str, depth: int) -> list[tuple[int, int, str]]:
        """Where the text rules match `text` (character offsets), as written or once its
        escapes, URL encoding or base64 are undone: (start, end, rule name)."""
        data = utf8(text)
        spans = char_spans(text, data, self._spans(data))
        if not self.rules.defaults or depth >= MAX_LAYERS:
            return spans
        for view in views(text):
            if self._may_change(utf8(view.text)):
                spans += [(*view.original(s, e), rule) for s, e, rule in self._text_spans(view.text, depth + 1)]
        for start, end, decoded in base64_runs(text):
            if self._may_change(utf8(decoded)):
                found = self._text_spans(decoded, depth + 1)
                if found:
                    spans.append((start, end, found[0][2]))
        return spans

    def _spans(self, data: bytes) -> list[tuple[int, int, str]]:
        """Where each text rule matches `data` (UTF-8): (start, end, rule name) in bytes;
        empty matches and texts a rule's `keep` spares left out."""
        rules = self.rules
        spans: list[Span] = []
        if rules.gate is not None:
            for n in rules.gate.rules(data):
                find(rules.defaults[n], data, spans, trim=True)
        if rules.engine is not None:
            rules.engine.spans(data, spans)
        for rule in rules.user:
            find(rule, data, spans)
        return spans

    def _may_change(self, data: bytes, depth: int = 0) -> bool:
        """Whether a default rule may change a text (UTF-8) or a string inside it (the JSON
        text of a record or of tool arguments): whether it, or it with its encodings undone
        (`decode`: escapes, URL encoding, base64), one inside another up to MAX_LAYERS + 1
        deep, holds a match of a default rule or a secret member's name. Every string of a
        JSON text stands in it between quotes (escaped in one more layer for each level of
        JSON inside a string), and no default rule needs a string's start or end
        (`secretrules`), so a JSON text for which this says no holds no string a default
        rule changes, as written or in any view `_text_spans` takes of it."""
        found = self.rules.gate.scan(data)  # type: ignore[union-attr]  # (only_defaults or defaults: a gate)
        if found & SECRET:
            return True
        if depth > MAX_LAYERS:
            return False
        if b"\\" in data:  # its escapes undone once: the strings of JSON text inside JSON text stand unescaped
            layer = escapes_decoded(data)  # in the layer of their depth
            if layer != data and self._may_change(layer, depth + 1):
                return True
        if found & PERCENT and self._may_change(url_decoded(data), depth + 1):
            return True
        if found & BASE64_RUN:
            for _, _, plain in base64_runs(data):
                if self._may_change(utf8(plain), depth + 1):
                    return True
        engine = self.rules.engine  # (on every layer: the engine's keywords, in the text as each layer reads)
        return engine is not None and bool(found & ENGINE) and bool(engine.findings(data.decode("utf-8", "replace")))

    def _count(self, rule: str, n: int = 1) -> None:
        if n and self.counting:
            self.replacements += n
            self.by_rule[rule] += n

    # -- values and records ----------------------------------------------------------------

    def value(self, value: Any) -> Any:  # (a JSON value of the log)
        """Any JSON value with the keys and text rules applied (to member names too);
        unchanged parts are shared with the input, and an unchanged value is returned
        as it is. Iterative: a record nested as deep as the parser allows is redacted too."""
        t = type(value)
        if t is str:
            return self.string(value)
        if t is not dict and t is not list:
            return value
        keys = self.rules.keys
        stack = [_Copy(value, None)]
        while True:
            frame = stack[-1]
            step = next(frame.items, None)
            if step is None:
                stack.pop()
                result = frame.result()
                self._count(NUMBERED, frame.numbered)
                if not stack:
                    return result
                stack[-1].put(frame.key, result)
                continue
            key, child = step
            t = type(child)
            if frame.keyed:
                secret_name = self._member(frame, key)
                if key in keys or (t is str and secret_name and secret_value(key, child)):
                    self._count("keys" if key in keys else "secret-named member")
                    self._remember(child)
                    frame.put(key, MASK)
                    continue
            if t is str:
                frame.put(key, self.string(child))
            elif t is dict or t is list:
                stack.append(_Copy(child, key))

    def _member(self, frame: _Copy, key: str) -> bool:
        """Masks the member name `key` of `frame` by the text rules (the object gets the
        masked name); whether the name is one of a secret's."""
        known = self._clean_keys.get(key)
        if known is not None:
            return known
        masked = self.string(key)
        secret = self.secret_name(key)
        if masked is key:
            if len(self._clean_keys) < 4096:
                self._clean_keys[key] = secret
        else:
            frame.rename(key, masked)
        return secret

    def secret_name(self, name: str) -> bool:
        """Whether a member of this name holds a secret when its value is text (the defaults)."""
        members = self.rules.secret_members
        return members is not None and members.search(utf8(name)) is not None and not plain_member(name)

    def record(self, record: Any, raw: bytes | None = None) -> Any:
        """One log record with the rules applied (pointers, then keys and text).

        `raw`, the line it was parsed from, lets the default rules skip a
        record none of whose bytes could match.
        """
        if not self._active:
            return record
        if self.secret_calls and type(record) is dict:
            record = self._mask_arguments(record)
        if self.rules.pointers and type(record) is dict:
            record = orjson.loads(json_bytes(record))  # a copy to change in place
            for path in self.rules.pointers:
                old = _replace_at(record, path)
                if old is not _ABSENT:
                    self._count("pointers")
                    self._remember(old)
        if raw is not None and self.rules.only_defaults and not self._may_change(raw):
            return record
        return self.value(record)

    def _mask_arguments(self, record: dict[str, Any]) -> dict[str, Any]:
        """A tool-call delta (or a packed row of them) of a call whose assembled
        arguments hold a secret: every piece of its arguments masked."""
        kind, data = record.get("type"), record.get("data")
        if type(data) is not dict:
            return record
        if kind == "tool-call-chunks" and _call_key(data, data) in self.secret_calls and type(data.get("args")) is list:
            self._count("tool-call arguments")
            return {**record, "data": {**data, "args": [MASK] * len(data["args"])}}
        chunk = data.get("chunk")
        if kind == "assistant/chunk" and type(chunk) is dict and chunk.get("type") == "tool-call-delta" \
                and "argumentsDelta" in chunk and _call_key(data, chunk) in self.secret_calls:
            self._count("tool-call arguments")
            return {**record, "data": {**data, "chunk": {**chunk, "argumentsDelta": MASK}}}
        return record


    # -- findings --------------------------------------------------------------------------

    def _remember(self, value: Any) -> None:
        if self.counting:
            self.masked_values.add(value)

    def finding(self, finding: dict[str, Any]) -> dict[str, Any]:
        """A finding (computed on the original log) as the bundle writes it: its message and
        pointer with the text rules applied, and every value the session's records had masked
        whole (by a pointer, keys or member-name rule, or as a member name) masked wherever the
        message quotes it (as Python or JSON quotes it, even cut short by "...") or the
        pointer names it."""
        pointer = finding.get("pointer")
        return {**finding, "message": self.message(finding["message"]),
                "pointer": None if pointer is None else self.pointer(pointer)}

    def message(self, text: str) -> str:
        """A finding's message, as `finding` writes it. Quoted values the session masked are
        looked for twice: in the message as written (a quote cut short whose start a text rule
        masks, such as a key's BEGIN line, is still the start of a value the session masked),
        then once the text rules have masked it."""
        edits: list[Edit] = [(s, e, MASK, rule) for s, e, rule in self._text_spans(text, 0)] if self.rules.text else []
        edits += [(s, e, MASK, ()) for s, e in self._quoted(text, self._kept_value, self._kept_prefix)]
        text = apply_edits(text, edits, self._count) if edits else text
        spans = self._quoted(text, self._masked_value, self._masked_prefix)
        return apply_edits(text, [(s, e, MASK, ()) for s, e in spans], uncounted) if spans else text

    @staticmethod
    def _quoted(text: str, whole: Callable[[str], bool], prefix: Callable[[str], bool]) -> list[tuple[int, int]]:
        """The quoted stretches of a message that `whole` says are a masked value, and the
        starts of values cut short ("...") that `prefix` says begin one."""
        spans = []
        for quote in ("'", '"'):
            opens = _unescaped(text, quote)
            # every stretch between two quotes in a row may be a quoted value; the last may be one cut short
            for start, end in zip(opens, [*opens[1:], len(text)]):
                inner = text[start + 1:end]
                cut = inner.find("...")
                if end < len(text) and whole(inner):
                    spans.append((start + 1, end))
                elif cut > 0 and prefix(inner[:cut]):
                    spans.append((start + 1, start + 1 + cut))
        return spans

    def pointer(self, pointer: str) -> str:
        """A finding's JSON pointer, as `finding` writes it: a segment that names a masked value masked."""
        parts = self.text(pointer).split("/")
        for n, part in enumerate(parts[1:], 1):
            if self._masked_value(pointer_parts("/" + part)[0], escaped=False):
                parts[n] = MASK
        return "/".join(parts)

    def _masked_value(self, quoted: str, *, escaped: bool = True) -> bool:
        value = unescape(quoted) if escaped else quoted
        return self.masked_values.holds(quoted) or self.masked_values.holds(value) or self.text(value) != value

    def _masked_prefix(self, quoted: str) -> bool:
        value = unescape(quoted)
        return self.masked_values.starts(quoted) or self.masked_values.starts(value) or self.text(value) != value

    def _kept_value(self, quoted: str) -> bool:
        """Whether a quoted stretch is a value the session masked (as written or unescaped)."""
        return self.masked_values.holds(quoted) or self.masked_values.holds(unescape(quoted))

    def _kept_prefix(self, quoted: str) -> bool:
        """Whether a quote cut short begins a value the session masked (as written or unescaped)."""
        return self.masked_values.starts(quoted) or self.masked_values.starts(unescape(quoted))


class MaskedValues:
    """The strings a session's records had masked whole, kept to mask them where its
    findings quote them: a hash of each (for an exact match) and its first PREFIX
    characters (for a quote cut short), within BUDGET; past it, `overflow`: every
    quoted stretch of a finding is then masked."""

    PREFIX = 256
    BUDGET = 32 << 20  # characters kept, counting 64 for each value's hash

    def __init__(self) -> None:
        self.hashes: set[int] = set()
        self.prefixes: set[str] = set()
        self.size = 0
        self.overflow = False
        self._sorted: list[str] | None = None

    def add(self, value: Any) -> None:
        """Keeps every string of `value` (member names too)."""
        stack = [value]
        while stack and not self.overflow:
            item = stack.pop()
            t = type(item)
            if t is str:
                if item and item != MASK and hash(item) not in self.hashes:
                    self.size += min(len(item), self.PREFIX) + 64
                    self.overflow = self.size > self.BUDGET
                    self.hashes.add(hash(item))
                    self.prefixes.add(item[:self.PREFIX])
                    self._sorted = None
            elif t is dict:
                stack += item
                stack += item.values()
            elif t is list:
                stack += item
        if self.overflow:
            self.hashes, self.prefixes = set(), set()

    def holds(self, text: str) -> bool:
        return self.overflow or hash(text) in self.hashes

    def starts(self, text: str) -> bool:
        """Whether a value kept starts with `text` (a quote cut short; empty: nothing to hide)."""
        if self.overflow or len(text) >= self.PREFIX:
            return self.overflow or text[:self.PREFIX] in self.prefixes
        if not text:
            return False
        if self._sorted is None:
            self._sorted = sorted(self.prefixes)
        at = bisect.bisect_left(self._sorted, text)
        return at < len(self._sorted) and self._sorted[at].startswith(text)


def _unescaped(text: str, quote: str) -> list[int]:
    """Where `quote` stands in `text` unescaped: after no backslash, or after backslashes that pair up."""
    found, at = [], text.find(quote)
    while at >= 0:
        run = at
        while run > 0 and text[run - 1] == "\\":  # (the runs before different quotes never overlap)
            run -= 1
        if (at - run) % 2 == 0:
            found.append(at)
        at = text.find(quote, at + 1)
    return found


def _call_key(data: dict[str, Any], chunk: dict[str, Any]) -> CallKey:
    """Which tool call of its step a delta belongs to: (turn, step, block index)."""
    return as_key(data.get("turn")), as_key(data.get("step")), as_key(chunk.get("index"))


class ArgumentDeltas(Observer):
    """Assembles the arguments of every tool call from its deltas, in a pass over
    the original log; `secret_calls(redactor)` names the calls whose assembled
    arguments the rules would change (a secret split across deltas shows only
    once they are put together)."""

    types = frozenset({"assistant/chunk"})

    def begin(self, run: Run) -> None:
        self.parts: dict[CallKey, list[str]] = {}

    def observe(self, record: Record) -> None:
        item: Any = record.item  # (an Event or a PackedRun; the driver's Item on h28f)
        if item.row == "tool-call-chunks":
            data = item.row_data
            self.parts.setdefault(_call_key(data, data), []).extend(data["args"])
        elif item.row is None:
            data = item.record.get("data")
            chunk = data.get("chunk") if type(data) is dict else None
            if type(chunk) is dict and chunk.get("type") == "tool-call-delta" \
                    and type(chunk.get("argumentsDelta")) is str:
                self.parts.setdefault(_call_key(data, chunk), []).append(chunk["argumentsDelta"])

    def secret_calls(self, redactor: Redactor) -> frozenset[CallKey]:
        found = set()
        for key, parts in self.parts.items():
            text = "".join(parts)
            if redactor.string(text) != text:
                found.add(key)
        return frozenset(found)


class _Copy:
    """An object or array being redacted: copied on its first change only; member
    names the rules mask are renamed when it is done, numbered apart when two
    would collide (`numbered` counts those)."""

    __slots__ = ("original", "key", "keyed", "items", "copy", "renames", "numbered")

    def __init__(self, original: Any, key: Any) -> None:  # (a JSON object or array, its key)
        self.original, self.key = original, key
        self.keyed = type(original) is dict
        self.items = iter(original.items()) if self.keyed else enumerate(original)
        self.copy: Any = None  # (a dict or a list once a member changes)
        self.renames: dict[str, str] | None = None
        self.numbered = 0

    def put(self, key: Any, new: Any) -> None:
        if new is not self.original[key]:
            if self.copy is None:
                self.copy = dict(self.original) if self.keyed else list(self.original)
            self.copy[key] = new

    def rename(self, key: str, new: str) -> None:
        if self.renames is None:
            self.renames = {}
        self.renames[key] = new

    def result(self) -> Any:
        members = self.original if self.copy is None else self.copy
        if self.renames is None:
            return members
        taken = {k for k in members if k not in self.renames}  # names kept as they are
        renamed: dict[str, Any] = {}
        last: dict[str, int] = {}  # masked name -> the last number given to it
        for k, v in members.items():
            name = self.renames.get(k)
            if name is None:
                renamed[k] = v
                continue
            if name in taken or name in renamed:
                n = last.get(name, 2)
                while f"{name}#{n}" in taken or f"{name}#{n}" in renamed:
                    n += 1
                last[name] = n
                self.numbered += 1
                name = f"{name}#{n}"
            renamed[name] = v
        return renamed


_ABSENT = object()


def _index(part: str) -> int | None:
    """A JSON pointer's array index (RFC 6901: ASCII digits, no leading zero), bounded; None if not one."""
    return parse_count(part, 10**18) if part == "0" or not part.startswith("0") else None


def _replace_at(value: Any, path: tuple[str, ...]) -> Any:
    """Masks the value at `path` in place; the value it held (_ABSENT: none)."""
    for part in path[:-1]:
        if type(value) is dict and part in value:
            value = value[part]
        elif type(value) is list and (n := _index(part)) is not None and n < len(value):
            value = value[n]
        else:
            return _ABSENT
    if not path:
        return _ABSENT
    last = path[-1]
    if type(value) is dict and last in value:
        old, value[last] = value[last], MASK
        return old
    if type(value) is list and (n := _index(last)) is not None and n < len(value):
        old, value[n] = value[n], MASK
        return old
    return _ABSENT




def load_redactor(rules_path: str | None, *, defaults: bool = True) -> Redactor:
    """The redactor for an export: the rules file (if any) plus the default secret rules
    (`secretrules`, which imports detect-secrets: only an export pays for it)."""
    return Redactor(compile_rules(rules_path, defaults=defaults))


def engine_off(redactor: Redactor) -> str | None:
    """Why the default rules run without their base engine (None: they run with it, or do not run)."""
    return why_engine_off(redactor.rules)
