"""Redaction for exports: rules that mask text and values in what is written.

A rules file is JSON: {"text": [regex, ...], "pointers": [JSON pointer, ...],
"keys": [key name, ...]}. `text` patterns are replaced in every string;
`pointers` (into each log record, e.g. "/data/header/system") and `keys`
(any object member of that name, at any depth) have their whole value
replaced. The default rules mask obvious secrets. Redaction applies to what
dshreplay writes, never to the log it reads.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field

import orjson

from dshreplay.core.driver import Observer
from dshreplay.errors import ReadError, UsageError
from dshreplay.io.reader import read_small_file
from dshreplay.jsvalues import json_bytes

MASK = "[REDACTED]"
MAX_RULES_BYTES = 1024**2

# The default rules, each with the lower-cased words one of which a string must
# hold for the rule to possibly match (and, for the last, a second such group):
# a cheap test before the regular expression.
DEFAULT_RULES = (
    (("private key",), r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----"),
    (("bearer",), r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{12,}"),
    (("authorization",), r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:basic\s+|token\s+)?[A-Za-z0-9._~+/=-]{8,}"),
    (("sk-", "pk-", "rk-"), r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}"),
    (("akia",), r"\bAKIA[0-9A-Z]{16}\b"),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    (("xox",), r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    (("aiza",), r"\bAIza[0-9A-Za-z_-]{35}\b"),
    (("eyj",), r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # a JSON Web Token
    (("://",), r"(?<=://)[^\s/:@\"']+:[^\s/@\"']+(?=@)"),  # user:password in a URL
    (("-u ", "--user "), r"(?<!\w)(?:-u|--user)\s+[^\s:\"']+:[^\s\"']+"),  # curl -u user:password
    (("api", "secret", "password", "passwd", "token", "key"),
     r"(?i)\b[A-Z0-9_.-]*(?:api[_-]?key|secret|password|passwd|token|access[_-]?key|private[_-]?key)"
     r"\b[\"']?(\s*[=:]\s*)[\"']?[^\s\"',;]{6,}"),
)
# An object member whose name ends like one of these holds a secret when its value is text
# (numbers such as `inputTokens` are left alone).
DEFAULT_SECRET_KEYS = re.compile(r"(?i)(?:password|passwd|passphrase|secret|api[_-]?key|access[_-]?key|"
                                 r"private[_-]?key|token|authorization|credentials?|cookie)s?$")
DEFAULT_KEY_WORDS = ("password", "passwd", "passphrase", "secret", "key", "token", "authorization",
                     "credential", "cookie")
DEFAULT_RULE_NAMES = ("private key", "bearer token", "authorization", "sk-/pk-/rk- key", "AWS key id",
                      "GitHub token", "Slack token", "Google API key", "JSON web token", "URL credentials",
                      "curl -u credentials", "secret-named assignment")
DEFAULT_TEXT_RULES = tuple(rule for _, rule in DEFAULT_RULES)
DEFAULT_TRIGGERS = tuple(sorted({t for triggers, _ in DEFAULT_RULES for t in triggers} | set(DEFAULT_KEY_WORDS)))


@dataclass
class Redactor:
    """Masks strings and values; counts what it replaced while `counting`."""

    patterns: list[re.Pattern] = field(default_factory=list)
    pointers: list[tuple[str, ...]] = field(default_factory=list)
    keys: frozenset[str] = frozenset()
    rules_sha256: str | None = None
    counting: bool = False
    replacements: int = 0
    by_rule: Counter = field(default_factory=Counter)  # rule name -> replacements made
    triggers: tuple[str, ...] | None = None  # set when only the default rules apply
    secret_keys: re.Pattern | None = None  # member names whose text values are masked (the defaults)
    secret_calls: frozenset = frozenset()  # (turn, step, index) of tool calls whose arguments hold a secret

    @property
    def active(self) -> bool:
        return bool(self.patterns or self.pointers or self.keys or self.secret_keys)

    def for_calls(self, secret_calls) -> Redactor:
        """A fresh redactor with these rules that also masks the argument deltas of `secret_calls`."""
        return Redactor(self.patterns, self.pointers, self.keys, self.rules_sha256, triggers=self.triggers,
                        secret_keys=self.secret_keys, secret_calls=frozenset(secret_calls))

    def string(self, value: str) -> str:
        """A string with the rules applied; one that holds JSON (tool arguments, results)
        is read, redacted as a value (keys too), and written back when anything changed."""
        head = value.lstrip()[:1]
        if head in ("{", "[") and len(value) > 1:
            try:
                inner = orjson.loads(value)
            except orjson.JSONDecodeError:
                inner = None
            if type(inner) is dict or type(inner) is list:
                redacted = self.value(inner)
                return value if redacted is inner else json_bytes(redacted).decode()
        return self.text(value)

    def __post_init__(self) -> None:
        # with only the default rules, each rule runs only where its trigger words appear
        self._gated = [(triggers, re.compile(rule)) for triggers, rule in DEFAULT_RULES] \
            if self.triggers is not None else None
        self._keyword = self._gated[-1][1] if self._gated else None  # needs "=" or ":" too
        # whether a lower-cased text holds any trigger word, in one scan (as `t in lowered` for each)
        words = sorted(self.triggers or (), key=len, reverse=True)
        self._any_trigger = re.compile("|".join(map(re.escape, words))) if words else None
        self._any_byte_trigger = re.compile("|".join(map(re.escape, words)).encode()) if words else None
        self._raw_gated = [(tuple(t.encode() for t in triggers), re.compile(rule.encode()))
                           for triggers, rule in DEFAULT_RULES] if self.triggers is not None else None
        # one alternation of every text rule: one scan of each string, not one per rule
        # (rules with backreferences keep their own scan: joining would renumber groups)
        joinable = [p for p in self.patterns if not _BACKREF.search(p.pattern)]
        self._separate = [p for p in self.patterns if _BACKREF.search(p.pattern)]
        self._combined = re.compile("|".join(f"(?:{_scoped(p.pattern)})" for p in joinable)) \
            if joinable else None

    def text(self, value: str) -> str:
        if self._gated is not None:
            return self._gated_text(value)
        n = 0
        if self._combined is not None:
            value, n = self._combined.subn(MASK, value)
        for pattern in self._separate:
            value, more = pattern.subn(MASK, value)
            n += more
        self._count("text rules", n)
        return value

    def _count(self, rule: str, n: int = 1) -> None:
        if n and self.counting:
            self.replacements += n
            self.by_rule[rule] += n

    def _gated_text(self, value: str) -> str:
        lowered = value.lower()
        if self._any_trigger.search(lowered) is None:  # the common case: no rule can match
            return value
        for name, (triggers, pattern) in zip(DEFAULT_RULE_NAMES, self._gated):
            if any(t in lowered for t in triggers) and (pattern is not self._keyword or "=" in value
                                                         or ":" in value):
                value, more = pattern.subn(MASK, value)
                self._count(name, more)
        return value

    def value(self, value):
        """Any JSON value with the keys and text rules applied; unchanged parts are
        shared with the input, and an unchanged value is returned as it is.
        Iterative: a record nested as deep as the parser allows is redacted too."""
        t = type(value)
        if t is str:
            return self.string(value)
        if t is not dict and t is not list:
            return value
        stack = [_Copy(value, None)]
        while True:
            frame = stack[-1]
            step = next(frame.items, None)
            if step is None:
                stack.pop()
                if not stack:
                    return frame.result()
                stack[-1].put(frame.key, frame.result())
                continue
            key, child = step
            t = type(child)
            if frame.keyed and (key in self.keys or (t is str and self.secret_keys is not None and child != MASK
                                                     and self.secret_keys.search(key) is not None)):
                self._count("keys" if key in self.keys else "secret-named member")
                frame.put(key, MASK)
                continue
            if t is str:
                frame.put(key, self.string(child))
            elif t is dict or t is list:
                stack.append(_Copy(child, key))

    def record(self, record, raw: bytes | None = None):
        """One log record with the rules applied (pointers, then keys and text).

        `raw`, the line it was parsed from, lets the default rules skip a
        record none of whose bytes could match.
        """
        if not self.active:
            return record
        if self.secret_calls and type(record) is dict:
            record = self._mask_arguments(record)
        if self.pointers and type(record) is dict:
            record = orjson.loads(json_bytes(record))  # a copy to change in place
            for path in self.pointers:
                if _replace_at(record, path):
                    self._count("pointers")
        if raw is not None and self.triggers is not None and not self.keys:
            lowered = raw.lower()
            if self._any_byte_trigger.search(lowered) is None:
                return record
            if raw.isascii() and b"\\" not in raw and not any(t.encode() in lowered for t in DEFAULT_KEY_WORDS) \
                    and not any(
                    any(t in lowered for t in triggers) and pattern.search(raw)
                    for triggers, pattern in self._raw_gated):
                # no escapes and no other characters: every string of the record stands in
                # `raw` as it is, between quotes, so a rule that matches none of `raw` matches
                # none of them
                return record
        return self.value(record)


    def _mask_arguments(self, record: dict) -> dict:
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


def _call_key(data: dict, chunk: dict) -> tuple:
    """Which tool call of its step a delta belongs to: (turn, step, block index)."""
    return tuple(v if isinstance(v, (int, float, str, type(None))) else repr(v)
                 for v in (data.get("turn"), data.get("step"), chunk.get("index")))


class ArgumentDeltas(Observer):
    """Assembles the arguments of every tool call from its deltas, in a pass over
    the original log; `secret_calls(redactor)` names the calls whose assembled
    arguments the rules would change (a secret split across deltas shows only
    once they are put together)."""

    types = frozenset({"assistant/chunk"})

    def begin(self, run) -> None:
        self.parts: dict[tuple, list[str]] = {}

    def observe(self, record) -> None:
        item = record.item
        if item.row == "tool-call-chunks":
            data = item.row_data
            self.parts.setdefault(_call_key(data, data), []).extend(data["args"])
        elif item.row is None:
            data = item.record.get("data")
            chunk = data.get("chunk") if type(data) is dict else None
            if type(chunk) is dict and chunk.get("type") == "tool-call-delta" \
                    and type(chunk.get("argumentsDelta")) is str:
                self.parts.setdefault(_call_key(data, chunk), []).append(chunk["argumentsDelta"])

    def secret_calls(self, redactor: Redactor) -> frozenset:
        found = set()
        for key, parts in self.parts.items():
            text = "".join(parts)
            if redactor.string(text) != text:
                found.add(key)
        return frozenset(found)


_BACKREF = re.compile(r"\\[1-9]|\(\?P=")
_GLOBAL_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")


class _Copy:
    """An object or array being redacted: copied on its first change only."""

    __slots__ = ("original", "key", "keyed", "items", "copy")

    def __init__(self, original, key) -> None:
        self.original, self.key = original, key
        self.keyed = type(original) is dict
        self.items = iter(original.items()) if self.keyed else enumerate(original)
        self.copy = None

    def put(self, key, new) -> None:
        if new is not self.original[key]:
            if self.copy is None:
                self.copy = dict(self.original) if self.keyed else list(self.original)
            self.copy[key] = new

    def result(self):
        return self.original if self.copy is None else self.copy


def _scoped(pattern: str) -> str:
    """A pattern's leading global flags, e.g. (?i), made local so it can join an alternation."""
    match = _GLOBAL_FLAGS.match(pattern)
    if match is None:
        return pattern
    return f"(?{match.group(1)}:{pattern[match.end():]})"


def _replace_at(value, path: tuple[str, ...]) -> bool:
    for part in path[:-1]:
        if type(value) is dict and part in value:
            value = value[part]
        elif type(value) is list and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return False
    last = path[-1] if path else None
    if type(value) is dict and last in value:
        value[last] = MASK
        return True
    if type(value) is list and last is not None and last.isdigit() and int(last) < len(value):
        value[int(last)] = MASK
        return True
    return False


def _pointer(text: str) -> tuple[str, ...]:
    if not text.startswith("/"):
        raise UsageError(f"redaction pointer {text!r} must start with /")
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in text[1:].split("/"))


def load_redactor(rules_path: str | None, *, defaults: bool = True) -> Redactor:
    """The redactor for an export: the rules file (if any) plus the default secret rules."""
    texts: list[str] = list(DEFAULT_TEXT_RULES) if defaults else []
    pointers: list[tuple[str, ...]] = []
    keys: set[str] = set()
    digest = None
    if rules_path is not None:
        try:
            raw = read_small_file(rules_path, MAX_RULES_BYTES, "the redaction rules file")
        except ReadError as exc:
            raise UsageError(f"cannot read redaction rules: {exc.message}", path=exc.path) from None
        digest = hashlib.sha256(raw).hexdigest()
        try:
            rules = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise UsageError(f"redaction rules are not valid JSON: {exc}", path=str(rules_path)) from None
        if type(rules) is not dict or not set(rules) <= {"text", "pointers", "keys"} or not all(
                type(rules.get(k, [])) is list and all(type(x) is str for x in rules.get(k, []))
                for k in ("text", "pointers", "keys")):
            raise UsageError('redaction rules must be {"text": [regex...], "pointers": [pointer...], '
                             '"keys": [name...]}', path=str(rules_path))
        texts += rules.get("text", [])
        pointers = [_pointer(p) for p in rules.get("pointers", [])]
        keys = set(rules.get("keys", []))
    patterns = []
    for text in texts:
        try:
            patterns.append(re.compile(text))
        except re.error as exc:
            raise UsageError(f"redaction pattern {text!r} is not a valid regular expression: {exc}") from None
    only_defaults = defaults and rules_path is None
    return Redactor(patterns, pointers, frozenset(keys), digest,
                    triggers=DEFAULT_TRIGGERS if only_defaults else None,
                    secret_keys=DEFAULT_SECRET_KEYS if defaults else None)
