"""Redaction for exports: rules that mask text and values in what is written.

A rules file is JSON: {"text": [regex, ...], "pointers": [JSON pointer, ...],
"keys": [key name, ...]}. `text` patterns (RE2 syntax) are masked in every
string, object keys included; `pointers` (into each log record, e.g.
"/data/header/system") and `keys` (any object member of that name, at any
depth) have their whole value replaced. The default rules (`secretrules`:
detect-secrets' plugins and ours) mask secrets, and the text values of
members named like one (`password`, `apiKey`, `token`, ...). Redaction
applies to what dshreplay writes, never to the log it reads.

Masking is in place: a secret is replaced by MASK where it stands, and every
other character stays as the log wrote it. A string that holds JSON (tool
arguments, a result) is never parsed and written back: each string of it is
masked inside its own quotes, so a duplicated key keeps both values, `1.10`
stays `1.10` and a pretty-printed result stays pretty. A secret written in
another form is found too (`encodings`: the one place forms are undone, for
the gate and the views alike): behind backslash escapes (`\\u0067hp_...`,
`\\x67`, octal `\\147`), URL-encoded to any depth (`%2567hp_...`), inside
base64 of text or of a binary frame (the whole base64 text is masked), and
one inside another.

Every pattern, default or the user's, runs on RE2, an engine whose search time
grows linearly with the text whatever the pattern (Python's backtracking `re`
takes exponential time on `(a+)+$` and quadratic time on a default rule over
`x.x.x...`), within a fixed memory budget. Each rule is compiled and searched
on its own, so rules cannot interfere (group names and numbers, flags); the
spans they find in a string are masked together. The default rules are also
compiled into one RE2 set (`Gate`) that says in one scan which of them match a
text, and whether it holds a URL escape or a run of base64 worth decoding
(most texts: none of these, and no rule runs on them). What RE2 cannot run in linear time (backreferences,
lookaround, conditionals, `(?x)`...) is a usage error naming the rule, never
a rule that silently stops matching.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Union

import orjson
import re2

from dshreplay.core.driver import Observer, Record, Run
from dshreplay.errors import ReadError, UsageError
from dshreplay.io.reader import read_small_file
from dshreplay.jsvalues import as_key, json_bytes, parse_count, pointer_parts, shown
from dshreplay.output.encodings import (
    BASE64_GATE,
    PERCENT_PATTERN,
    View,
    base64_runs,
    escapes_decoded,
    json_view,
    unescape,
    url_decoded,
    views,
)
from dshreplay.output.secretrules import (
    KEEP,
    SECRET_MEMBER_IN_JSON,
    SECRET_MEMBERS,
    plain_member,
    plain_member_value,
)

if TYPE_CHECKING:
    from dshreplay.output.secretrules import DefaultRule

__all__ = ["Redactor", "load_redactor", "MASK"]

MASK = "[REDACTED]"
Span = tuple[int, int, str]  # (start, end, rule name): where a text rule matches
Edit = tuple[int, int, str, Union[str, tuple[str, ...]]]  # (start, end, new text, the rule or rules that made it)
CallKey = tuple[object, object, object]  # (turn, step, block index) of a tool call, as keys (jsvalues.as_key)
MAX_RULES_BYTES = 1024**2
RULES_MEMORY = 64 << 20  # RE2 memory for all text rules together (each gets an even share as its max_mem)
GATE_MEMORY = 16 << 20  # RE2 memory of the one pattern of every default rule
NAME_MEMORY = 1 << 20  # RE2 memory of a member-name pattern
NUMBERED = "keys numbered apart"  # masked keys that would have collided with another key of their object
BASE64 = "base64 of a secret"  # (counted with the rule that found the secret in the decoded text)
MAX_LAYERS = 4  # encodings undone in turn to find a secret behind them (JSON text inside JSON text, base64 of
# URL-encoded text...: `encodings`)


@dataclass(frozen=True)
class TextRule:
    """One text rule, compiled on its own."""

    name: str  # as counted in the manifest: a default rule's name, or "text rule N" of the rules file
    pattern: Any  # an RE2 pattern (re2 has no types)
    groups: tuple[int, ...] = (0,)  # the groups masked (0: the whole match)
    keep: Callable[[str, str], bool] | None = None  # a test of a masked text (and what its match holds before
    # it: the secret's name) that says it is no secret after all


@dataclass(frozen=True)
class Rules:
    """Everything an export masks, compiled once and shared by every session's redactor."""

    defaults: tuple[TextRule, ...] = ()
    user: tuple[TextRule, ...] = ()  # the rules file's text rules
    pointers: tuple[tuple[str, ...], ...] = ()
    keys: frozenset[str] = frozenset()
    gate: Gate | None = None  # every default rule at once (None: no default rule)
    secret_members: Any = None  # RE2: member names whose text values are masked (the defaults)
    only_defaults: bool = False  # no rules file: a record none of whose bytes a default rule matches is kept
    summary: dict[str, int] | None = None  # the rules file as the manifest records it: how many rules of each kind
    engine: Any = None  # the base engine of the defaults (secretengine.Engine): its findings are masked beside them

    @property
    def text(self) -> tuple[TextRule, ...]:
        return self.defaults + self.user


_PERCENT = re.compile(PERCENT_PATTERN)
SECRET, PERCENT, BASE64_RUN = 1, 2, 4  # what a Gate scan finds: a default rule's match or a secret
# member's name, a URL escape, a run of base64 long enough to hide a secret


class Gate:
    """Every default rule, a secret member's name as JSON text writes it (`password":`), a
    URL escape and a run of base64, in one RE2 set: one scan of a text (a DFA, no capture
    groups) says which of them it holds, where a search for each would take one scan each
    (most texts hold none). Made from the rules' own patterns: no second copy of a rule.
    A scan the DFA gives up on (its memory spent) is answered by the regexps instead."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.patterns = patterns
        self.any_rule = _compile("|".join(f"(?:{p})" for p in patterns), GATE_MEMORY)
        self.member = _compile(SECRET_MEMBER_IN_JSON, NAME_MEMORY)
        options = re2.Options()
        options.log_errors = False
        options.max_mem = GATE_MEMORY
        self._set = re2.Set.SearchSet(options)
        for pattern in (*patterns, SECRET_MEMBER_IN_JSON, PERCENT_PATTERN, BASE64_GATE, rb"\A"):
            self._set.Add(pattern)  # (\A: matches every text, so a scan that ran finds at least it; once, at its
            # start: b"", which matches at every byte, made every state of the DFA a match and the scan 1.5x slower)
        self._set.Compile()
        self._member_at = len(patterns)  # the indices of what the set holds past the rules
        self._flags = {len(patterns): SECRET, len(patterns) + 1: PERCENT, len(patterns) + 2: BASE64_RUN,
                       len(patterns) + 3: 0}

    def __reduce__(self) -> tuple[type[Gate], tuple[tuple[str, ...]]]:
        return Gate, (self.patterns,)  # (an RE2 set does not pickle: a worker process compiles its own)

    def scan(self, data: bytes) -> int:
        """What `data` holds: SECRET, PERCENT and BASE64_RUN or-ed together."""
        found = self._set.Match(data)
        if found is None:  # (not even the empty pattern: the DFA gave up)
            return self._searched(data)
        flags, member_at = 0, self._member_at
        for n in found:
            flags |= SECRET if n < member_at else self._flags[n]
        return flags

    def rules(self, data: bytes) -> list[int]:
        """The indices of the default rules that match somewhere in `data`, in rule order."""
        found = self._set.Match(data)
        if found is None:
            return list(range(len(self.patterns))) if self.any_rule.search(data) is not None else []
        return sorted(n for n in found if n < self._member_at)

    def _searched(self, data: bytes) -> int:
        flags = SECRET if self.any_rule.search(data) is not None or self.member.search(data) is not None else 0
        if _PERCENT.search(data) is not None:
            flags |= PERCENT
        return flags | BASE64_RUN


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
        return _apply(value, edits, self._count)

    def text(self, value: str) -> str:
        """A string with every span a text rule matches masked (the same object when none does)."""
        if not self.rules.text:
            return value
        spans = self._text_spans(value, 0)
        if not spans:
            return value
        return _apply(value, [(s, e, MASK, rule) for s, e, rule in spans], self._count)

    def _edits(self, value: str, depth: int) -> list[Edit]:
        """The edits (start, end, new text, rule) the rules make to a string."""
        head = value[:1] if value[:1] not in " \t\r\n" else value.lstrip()[:1]
        if (head == "{" or head == "[") and len(value) > 1 and depth < MAX_LAYERS:
            if _json_container(value):
                if self.rules.only_defaults and not self._may_change(_utf8(value)):
                    return []
                return _JsonText(self, value, depth).edits()
        return [(s, e, MASK, rule) for s, e, rule in self._text_spans(value, depth)]

    def _text_spans(self, text: str, depth: int) -> list[tuple[int, int, str]]:
        """Where the text rules match `text` (character offsets), as written or once its
        escapes, URL encoding or base64 are undone: (start, end, rule name)."""
        data = _utf8(text)
        spans = _char_spans(text, data, self._spans(data))
        if not self.rules.defaults or depth >= MAX_LAYERS:
            return spans
        for view in views(text):
            if self._may_change(_utf8(view.text)):
                spans += [(*view.original(s, e), rule) for s, e, rule in self._text_spans(view.text, depth + 1)]
        for start, end, decoded in base64_runs(text):
            if self._may_change(_utf8(decoded)):
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
                _find(rules.defaults[n], data, spans, trim=True)
        if rules.engine is not None:
            rules.engine.spans(data, spans)
        for rule in rules.user:
            _find(rule, data, spans)
        return spans

    def _may_change(self, data: bytes, depth: int = 0) -> bool:
        """Whether a default rule may change a text (UTF-8) or a string inside it (the JSON
        text of a record or of tool arguments): whether it, or it with its encodings undone
        (`encodings`: escapes, URL encoding, base64), one inside another up to MAX_LAYERS + 1
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
                if self._may_change(_utf8(plain), depth + 1):
                    return True
        engine = self.rules.engine  # (on every layer: the engine's keywords, in the text as each layer reads)
        return engine is not None and bool(engine.holds(data))

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
                if key in keys or (t is str and secret_name and _secret_value(key, child)):
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
        return members is not None and members.search(_utf8(name)) is not None and not plain_member(name)

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
        text = _apply(text, edits, self._count) if edits else text
        spans = self._quoted(text, self._masked_value, self._masked_prefix)
        return _apply(text, [(s, e, MASK, ()) for s, e in spans], _ignore) if spans else text

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


def _pointer(text: str, where: str) -> tuple[str, ...]:
    if not text.startswith("/"):
        raise UsageError(f"redaction pointer {text[:80]!r} must start with /", path=where)
    return tuple(pointer_parts(text))


def _compile(pattern: str | bytes, max_mem: int) -> Any:  # (an RE2 pattern: re2 has no types)
    """An RE2 pattern: errors not logged (to stderr), memory bounded."""
    options = re2.Options()
    options.log_errors = False
    options.max_mem = max_mem
    return re2.compile(pattern, options)


def _user_rule(n: int, text: str, max_mem: int, where: str) -> TextRule:
    try:
        return TextRule(f"text rule {n}", _compile(text, max_mem))
    except re2.error as exc:
        reason = exc.args[0].decode(errors="replace") if exc.args and type(exc.args[0]) is bytes else str(exc)
        raise UsageError(f"redaction text rule {n} {shown(text, 80)} cannot be used: {reason} (redaction runs RE2, a "
                         "linear-time engine: no backreferences, lookaround, conditionals or (?x); "
                         f"{max_mem >> 10} KiB of memory per rule)", path=where) from None


def _read_rules(rules_path: str) -> dict[str, list[str]]:
    try:
        raw = read_small_file(rules_path, MAX_RULES_BYTES, "the redaction rules file")
    except ReadError as exc:
        raise UsageError(f"cannot read redaction rules: {exc.message}", path=exc.path) from None
    try:
        rules = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"redaction rules are not valid JSON: {exc}", path=str(rules_path)) from None
    if type(rules) is not dict or not set(rules) <= {"text", "pointers", "keys"} or not all(
            type(rules.get(k, [])) is list and all(type(x) is str for x in rules.get(k, []))
            for k in ("text", "pointers", "keys")):
        raise UsageError('redaction rules must be {"text": [regex...], "pointers": [pointer...], '
                         '"keys": [name...]}', path=str(rules_path))
    return rules


def load_redactor(rules_path: str | None, *, defaults: bool = True) -> Redactor:
    """The redactor for an export: the rules file (if any) plus the default secret rules
    (`secretrules`, which imports detect-secrets: only an export pays for it)."""
    user = _read_rules(rules_path) if rules_path is not None else {}
    where = str(rules_path)
    texts = user.get("text", [])
    found = _default_rules() if defaults else []
    max_mem = RULES_MEMORY // max(1, len(texts) + len(found))
    default_rules = tuple(TextRule(r.name, _compile(r.pattern, max_mem), r.groups,
                                   None if r.keep is None else KEEP[r.keep]) for r in found)
    user_rules = tuple(_user_rule(n, text, max_mem, where) for n, text in enumerate(texts, 1))
    pointers = tuple(_pointer(p, where) for p in user.get("pointers", []))
    keys = frozenset(user.get("keys", []))
    summary = None if rules_path is None else {"text": len(texts), "pointers": len(pointers), "keys": len(keys)}
    return Redactor(Rules(
        default_rules, user_rules, pointers, keys,
        gate=Gate(tuple(r.pattern for r in found)) if defaults else None,
        secret_members=_compile(SECRET_MEMBERS, NAME_MEMORY) if defaults else None,
        only_defaults=defaults and not texts and not keys,
        summary=summary, engine=_engine() if defaults else None))


def _default_rules() -> list[DefaultRule]:  # (imported here: only an export loads detect-secrets)
    from dshreplay.output.secretrules import default_rules
    return default_rules()


def _engine() -> Any:  # (imported here: only a command that redacts loads the engine's library)
    from dshreplay.output.secretengine import Engine, unusable
    return None if unusable() else Engine(KEEP["reference"])  # (None: the command says why, `engine_off`)


def engine_off(redactor: Redactor) -> str | None:
    """Why the default rules run without their base engine (None: they run with it, or do not run)."""
    if not redactor.rules.defaults or redactor.rules.engine is not None:
        return None
    from dshreplay.output.secretengine import unusable
    return unusable()


# -- where text rules match, and undoing escapes, URL encoding and base64 -------------------

def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _find(rule: TextRule, data: bytes, spans: list[Span], trim: bool = False) -> None:
    """Adds where `rule` matches `data`: the span of each group it masks (`trim`, for a
    default rule: less the spaces, quotes, `=` and `:` a pattern takes around a secret as its
    context, as detect-secrets' `(?:\\s|=|:|"|^)AKC...(?:\\s|"|$)`), and of a match that
    starts inside another (a value that ran on over the next secret's name: in
    `authorization: X/authorization: Y`, the first value is `X/authorization`) and masks more
    than it. One search per match, from just after where it starts: each stops at the next
    match at the latest, so the time stays linear."""
    keep = rule.keep
    pattern = rule.pattern
    for match in pattern.finditer(data):
        _found(rule, match, data, spans, keep, trim)
        inner = pattern.search(data, match.start() + 1)
        if inner is not None and inner.start() < match.end() < max(inner.end(g) for g in rule.groups):
            _found(rule, inner, data, spans, keep, trim)


_CONTEXT_BEFORE = frozenset(b" \t\r\n\v\f\"'`=:")  # (what a default pattern may take before a secret: not
_CONTEXT_AFTER = frozenset(b" \t\r\n\v\f\"'`")  # part of it, nor is what it takes after, but a final `=`)


def _found(rule: TextRule, match: Any, data: bytes, spans: list[Span], keep: Callable[[str, str], bool] | None,
           trim: bool) -> None:
    for group in rule.groups:
        start, end = whole = match.span(group)
        if trim:
            while start < end and data[start] in _CONTEXT_BEFORE:
                start += 1
            while end > start and data[end - 1] in _CONTEXT_AFTER:
                end -= 1
        if end > start and (keep is None or not _kept(keep, data, match.start(), (start, end), whole)):
            spans.append((start, end, rule.name))


def _kept(keep: Callable[[str, str], bool], data: bytes, at: int, span: tuple[int, int],
          whole: tuple[int, int]) -> bool:
    """Whether `keep` spares a masked span (or the group it was trimmed from: `" the"`), given
    what its match holds before it (a name: at most 64 bytes of it)."""
    for start, end in (span, whole) if whole != span else (span,):
        text, before = data[start:end], data[max(at, start - 64):start]
        if keep(text.decode("utf-8", "replace"), before.decode("utf-8", "replace")):
            return True
    return False


def _char_spans(text: str, data: bytes, spans: list[Span]) -> list[Span]:
    """Byte spans of `data` (the UTF-8 of `text`) as character spans of `text`, widened to
    whole characters (an RE2 \\C can end a match inside one)."""
    if not spans or len(data) == len(text):
        return spans
    whole = []
    for start, end, rule in spans:
        while start > 0 and data[start] & 0xC0 == 0x80:
            start -= 1
        while end < len(data) and data[end] & 0xC0 == 0x80:
            end += 1
        whole.append((start, end, rule))
    offsets = sorted({o for s, e, _ in whole for o in (s, e)})
    chars, at, count = {}, 0, 0
    for offset in offsets:
        count += len(data[at:offset].decode("utf-8", "surrogatepass"))
        chars[offset], at = count, offset
    return [(chars[s], chars[e], rule) for s, e, rule in whole]


def _apply(text: str, edits: Iterable[Edit], count: Callable[[str], None]) -> str:
    """`text` with each (start, end, new text, rule) edit made (overlapping ones as one: the
    first's new text), and `count(rule)` called for each edit found."""
    pieces: list[str] = []
    at = 0
    last: tuple[int, int, str] | None = None  # the edit being made: (start, end, new text)
    for start, end, new, rule in sorted(edits, key=lambda e: (e[0], -e[1])):
        for name in (rule,) if isinstance(rule, str) else rule:
            count(name)
        if last is not None and start < last[1]:
            last = (last[0], max(last[1], end), last[2])
            continue
        if last is not None:
            pieces += (text[at:last[0]], last[2])
            at = last[1]
        last = (start, end, new)
    if last is not None:
        pieces += (text[at:last[0]], last[2])
        at = last[1]
    pieces.append(text[at:])
    return "".join(pieces)


def _json_container(text: str) -> bool:
    """Whether a text is a JSON object or array (orjson reads most; the standard parser
    those with integers past 64 bits)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return False
    return type(value) is dict or type(value) is list


def _secret_value(name: str, value: str) -> bool:
    """Whether the text value of a secret-named member is one to mask (not already masked,
    not one of the plain values such a member also takes: `secretrules.plain_member_value`)."""
    return value != MASK and not plain_member_value(name, value)


# -- JSON text, masked in place ------------------------------------------------------------

_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_COLON = re.compile(r"[ \t\r\n]*:[ \t\r\n]*")
_SCALAR = re.compile(r"[^ \t\r\n,\]}]+")


def _json_escape(text: str) -> str:
    """Text as it stands inside a JSON string's quotes."""
    return json_bytes(text).decode("utf-8", "surrogatepass")[1:-1]


class _JsonText:
    """The edits the rules make to a JSON text, each inside the string it touches: a
    secret in a string, a member name the text rules change (numbered apart from the
    object's other names when it would collide), the text value of a secret-named
    member, the whole value of a member the keys rule names. Nothing else of the text
    changes. The text is valid JSON (orjson read it)."""

    def __init__(self, redactor: Redactor, text: str, depth: int) -> None:
        self.redactor, self.text, self.depth = redactor, text, depth
        self.tokens = [(m.start(), m.end()) for m in _JSON_STRING.finditer(text)]
        self.edits_: list[Edit] = []
        # object -> [(token, name, new name or None, the rules that renamed it)]
        self.names: dict[int, list[tuple[int, str, str | None, tuple[str, ...]]]] = {}

    def decoded(self, token: int) -> tuple[str, View | None]:
        start, end = self.tokens[token]
        view = json_view(self.text[start + 1:end - 1])
        return (self.text[start + 1:end - 1], None) if view is None else (view.text, view)

    def edits(self) -> list[Edit]:
        text, tokens, redactor = self.text, self.tokens, self.redactor
        keys = redactor.rules.keys
        stack: list[int | None] = []  # the open containers: an object's number, or None for an array
        objects = 0
        at = i = 0
        while i < len(tokens):
            start, end = tokens[i]
            objects = self._containers(at, start, stack, objects)
            colon = _COLON.match(text, end)
            if colon is None or not stack or stack[-1] is None:  # a string value
                self._string(i)
                at, i = end, i + 1
                continue
            name, _ = self.decoded(i)
            inner = self._inner(name) if redactor.rules.text else []
            new = _apply(name, inner, _ignore) if inner else name
            self.names.setdefault(stack[-1], []).append((i, name, None if new == name else new, _rules(inner)))
            value = colon.end()
            if name in keys:
                close, after = self._value_end(value, i + 1)
                redactor._remember(orjson.loads(text[value:close]))
                self.edits_.append((value, close, f'"{MASK}"', "keys"))
                at, i = close, after
                continue
            if redactor.secret_name(name) and i + 1 < len(tokens) and tokens[i + 1][0] == value:
                secret, _ = self.decoded(i + 1)
                if _secret_value(name, secret):
                    redactor._remember(secret)
                    self.edits_.append((value + 1, tokens[i + 1][1] - 1, MASK, "secret-named member"))
                    at, i = tokens[i + 1][1], i + 2
                    continue
            at, i = end, i + 1
        self._rename()
        return self.edits_

    def _string(self, token: int) -> None:
        """The edits inside one string (JSON text in it, masked in place in turn)."""
        value, view = self.decoded(token)
        self.edits_ += [(*self._place(token, view, s, e), _json_escape(new), rule)
                        for s, e, new, rule in self.redactor._edits(value, self.depth + 1)]

    def _inner(self, value: str) -> list[Edit]:
        return self.redactor._edits(value, self.depth + 1)

    def _place(self, token: int, view: View | None, start: int, end: int) -> tuple[int, int]:
        """A span of a string token's decoded text as a span of the JSON text."""
        if view is not None:
            start, end = view.original(start, end)
        base = self.tokens[token][0] + 1
        return base + start, base + end

    def _containers(self, at: int, end: int, stack: list[int | None], objects: int) -> int:
        """Opens and closes the containers whose brackets stand between two strings."""
        segment = self.text[at:end]
        if "{" in segment or "[" in segment or "}" in segment or "]" in segment:
            for char in segment:
                if char == "{":
                    objects += 1
                    stack.append(objects)
                elif char == "[":
                    stack.append(None)
                elif char == "}" or char == "]":
                    stack.pop()
        return objects

    def _value_end(self, value: int, token: int) -> tuple[int, int]:
        """Where the value starting at `value` ends, and the first string token after it."""
        text, tokens = self.text, self.tokens
        if text[value] == '"':
            return tokens[token][1], token + 1
        if text[value] not in "{[":
            scalar = _SCALAR.match(text, value)  # (valid JSON: a number, true, false or null stands there)
            return (len(text) if scalar is None else scalar.end()), token
        depth, at = 0, value
        while True:
            stop = tokens[token][0] if token < len(tokens) else len(text)
            for k in range(at, stop):
                char = text[k]
                if char == "{" or char == "[":
                    depth += 1
                elif (char == "}" or char == "]") and depth == 1:
                    return k + 1, token
                elif char == "}" or char == "]":
                    depth -= 1
            at, token = tokens[token][1], token + 1

    def _rename(self) -> None:
        """Member names the text rules changed: written in place, numbered apart (`#2`)
        from the names their object keeps and from each other."""
        for members in self.names.values():
            if not any(new is not None for _, _, new, _ in members):
                continue
            taken = {name for _, name, new, _ in members if new is None}
            given: set[str] = set()
            last: dict[str, int] = {}
            for token, _, new, rules in members:
                if new is None:
                    continue
                final = new
                if new in taken or new in given:
                    n = last.get(new, 2)
                    while f"{new}#{n}" in taken or f"{new}#{n}" in given:
                        n += 1
                    last[new] = n
                    final = f"{new}#{n}"
                given.add(final)
                if final != new:
                    rules += (NUMBERED,)
                start, end = self.tokens[token]
                self.edits_.append((start + 1, end - 1, _json_escape(final), rules))


def _rules(edits: Iterable[Edit]) -> tuple[str, ...]:
    """The rule names of edits (an edit of a renamed member name may carry several)."""
    return tuple(name for *_, rule in edits for name in ((rule,) if type(rule) is str else rule))


def _ignore(rule: str, n: int = 1) -> None:
    """(counting nothing: what a name's edits count is counted once it is renamed)"""
