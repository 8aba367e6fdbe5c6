"""Redaction for exports: rules that mask text and values in what is written.

A rules file is JSON: {"text": [regex, ...], "pointers": [JSON pointer, ...],
"keys": [key name, ...]}. `text` patterns (RE2 syntax) are masked in every
string, object keys included; `pointers` (into each log record, e.g.
"/data/header/system") and `keys` (any object member of that name, at any
depth) have their whole value replaced. The default rules mask obvious
secrets. Redaction applies to what dshreplay writes, never to the log it reads.

Every pattern, default or the user's, runs on RE2, an engine whose search time
grows linearly with the text whatever the pattern (Python's backtracking `re`
takes exponential time on `(a+)+$` and quadratic time on a default rule over
`x.x.x...`), within a fixed memory budget. Each rule is compiled and searched
on its own, so rules cannot interfere (group names and numbers, flags); the
spans they find in a string are masked together. What RE2 cannot run in
linear time (backreferences, lookaround, conditionals, `(?x)`...) is a usage
error naming the rule, never a rule that silently stops matching.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass, field

import orjson
import re2

from dshreplay.core.driver import Observer
from dshreplay.errors import ReadError, UsageError
from dshreplay.io.reader import read_small_file
from dshreplay.jsvalues import as_key, json_bytes, parse_count, pointer_parts, shown

MASK = "[REDACTED]"
MAX_RULES_BYTES = 1024**2
RULES_MEMORY = 64 << 20  # RE2 memory for all text rules together (each gets an even share as its max_mem)
GATE_MEMORY = 1 << 20  # RE2 memory of each word scan that gates the default rules
NUMBERED = "keys numbered apart"  # masked keys that would have collided with another key of their object

_SPACE = r"\s\v\x1c-\x1f\x85\p{Z}"  # what Python's \s matches (str.isspace); RE2's \s is ASCII only
_WORD = r"\p{L}\p{N}_"  # what Python's \w matches; RE2's is ASCII only

# The default rules: name, the words one of which a string must hold (in any case) for the rule to
# possibly match (a cheap scan before the rule; the last has a second such group), the pattern and
# the group it masks (0: the whole match).
DEFAULT_RULES = (
    ("private key", (("private key",),),
     r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----", 0),
    ("bearer token", (("bearer",),), rf"(?i)\bbearer[{_SPACE}]+[A-Za-z0-9._~+/=-]{{12,}}", 0),
    ("authorization", (("authorization",),),
     rf"(?i)\bauthorization[\"']?[{_SPACE}]*[:=][{_SPACE}]*[\"']?(?:basic[{_SPACE}]+|token[{_SPACE}]+)?"
     r"[A-Za-z0-9._~+/=-]{8,}", 0),
    ("sk-/pk-/rk- key", (("sk-", "pk-", "rk-"),), r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}", 0),
    ("AWS key id", (("akia",),), r"\bAKIA[0-9A-Z]{16}\b", 0),
    ("GitHub token", (("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),), r"\bgh[pousr]_[A-Za-z0-9]{30,}\b", 0),
    ("Slack token", (("xox",),), r"\bxox[abprs]-[A-Za-z0-9-]{10,}", 0),
    ("Google API key", (("aiza",),), r"\bAIza[0-9A-Za-z_-]{35}\b", 0),
    ("JSON web token", (("eyj",),), r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", 0),
    ("URL credentials", (("://",),), rf"://([^{_SPACE}/:@\"']+:[^{_SPACE}/@\"']+)@", 1),  # user:password
    ("curl -u credentials", (("-u", "--user"),),
     rf"(?:^|[^{_WORD}])((?:-u|--user)[{_SPACE}]+[^{_SPACE}:\"']+:[^{_SPACE}\"']+)", 1),
    ("secret-named assignment", (("api", "secret", "password", "passwd", "token", "key"), ("=", ":")),
     r"(?i)\b[A-Z0-9_.-]*(?:api[_-]?key|secret|password|passwd|token|access[_-]?key|private[_-]?key)"
     rf"\b[\"']?[{_SPACE}]*[=:][{_SPACE}]*[\"']?[^{_SPACE}\"',;]{{6,}}", 0),
)
# An object member whose name ends like one of these holds a secret when its value is text
# (numbers such as `inputTokens` are left alone).
DEFAULT_SECRET_KEYS = (r"(?i)(?:password|passwd|passphrase|secret|api[_-]?key|access[_-]?key|"
                       r"private[_-]?key|token|authorization|credentials?|cookie)s?\n?$")
DEFAULT_KEY_WORDS = ("password", "passwd", "passphrase", "secret", "key", "token", "authorization",
                     "credential", "cookie")


@dataclass(frozen=True)
class TextRule:
    """One text rule, compiled on its own."""

    name: str  # as counted in the manifest: a default rule's name, or "text rule N" of the rules file
    pattern: object  # an RE2 pattern
    gates: tuple = ()  # RE2 word scans that must each find something before the rule runs
    group: int = 0  # the group masked (0: the whole match)


@dataclass(frozen=True)
class Rules:
    """Everything an export masks, compiled once and shared by every session's redactor."""

    text: tuple[TextRule, ...] = ()
    pointers: tuple[tuple[str, ...], ...] = ()
    keys: frozenset[str] = frozenset()
    secret_keys: object = None  # RE2: member names whose text values are masked (the defaults)
    any_word: object = None  # RE2: any word of a default rule's gates (None: no default rule)
    key_word: object = None  # RE2: any word a secret member's name holds
    only_defaults: bool = False  # no rules file: a record none of whose bytes a default rule matches is kept
    summary: dict | None = None  # the rules file as the manifest records it: how many rules of each kind


@dataclass
class Redactor:
    """Masks strings and values with `rules`; while `counting`, counts what it
    replaced and remembers the values it masked whole (to mask them in findings)."""

    rules: Rules = field(default_factory=Rules)
    secret_calls: frozenset = frozenset()  # (turn, step, index) of tool calls whose arguments hold a secret
    counting: bool = False
    replacements: int = 0
    by_rule: Counter = field(default_factory=Counter)  # rule name -> replacements made

    def __post_init__(self) -> None:
        self._clean_keys: dict[str, bool] = {}  # member names no rule changes -> whether one names a secret
        self.masked_values = MaskedValues()  # values masked whole while counting (by pointer, keys, name, as a key)

    @property
    def active(self) -> bool:
        rules = self.rules
        return bool(rules.text or rules.pointers or rules.keys or rules.secret_keys)

    @property
    def summary(self) -> dict | None:
        return self.rules.summary

    def for_calls(self, secret_calls) -> Redactor:
        """A fresh redactor with these rules that also masks the argument deltas of `secret_calls`."""
        return Redactor(self.rules, frozenset(secret_calls))

    # -- strings ---------------------------------------------------------------------------

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

    def text(self, value: str) -> str:
        """A string with every span a text rule matches masked (the same object when none does)."""
        if not self.rules.text:
            return value
        data = value.encode("utf-8", "surrogatepass")
        spans = self._spans(data)
        if not spans:
            return value
        for _, _, name in spans:
            self._count(name)
        return _masked(data, spans)

    def _spans(self, data: bytes) -> list[tuple[int, int, str]]:
        """Where each text rule matches `data` (UTF-8): (start, end, rule name); empty matches left out."""
        rules = self.rules
        words = rules.any_word is not None and rules.any_word.search(data) is not None
        spans = []
        for rule in rules.text:
            if rule.gates and not (words and all(gate.search(data) is not None for gate in rule.gates)):
                continue
            for match in rule.pattern.finditer(data):
                start, end = match.span(rule.group)
                if end > start:
                    spans.append((start, end, rule.name))
        return spans

    def _count(self, rule: str, n: int = 1) -> None:
        if n and self.counting:
            self.replacements += n
            self.by_rule[rule] += n

    # -- values and records ----------------------------------------------------------------

    def value(self, value):
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
                if key in keys or (t is str and secret_name and child != MASK):
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
        secret = self.rules.secret_keys is not None and self.rules.secret_keys.search(key) is not None
        if masked is key:
            if len(self._clean_keys) < 4096:
                self._clean_keys[key] = secret
        else:
            self._remember(key)
            frame.rename(key, masked)
        return secret

    def record(self, record, raw: bytes | None = None):
        """One log record with the rules applied (pointers, then keys and text).

        `raw`, the line it was parsed from, lets the default rules skip a
        record none of whose bytes could match.
        """
        if not self.active:
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
        if raw is not None and self.rules.only_defaults and self._unmatched(raw):
            return record
        return self.value(record)

    def _unmatched(self, raw: bytes) -> bool:
        """Whether no default rule can change the record parsed from `raw`."""
        rules = self.rules
        if b"\\u" in raw:  # an escaped letter could spell a word only the parsed string shows
            return False
        if rules.any_word.search(raw) is None and rules.key_word.search(raw) is None:
            return True
        # no escapes and no other characters: every string of the record (member names too)
        # stands in `raw` as it is, between quotes, so a rule that matches none of `raw`
        # matches none of them
        return raw.isascii() and b"\\" not in raw and rules.key_word.search(raw) is None and not self._spans(raw)

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

    # -- findings --------------------------------------------------------------------------

    def _remember(self, value) -> None:
        if self.counting:
            self.masked_values.add(value)

    def finding(self, finding: dict) -> dict:
        """A finding (computed on the original log) as the bundle writes it: its message and
        pointer with the text rules applied, and every value the session's records had masked
        whole (by a pointer, keys or member-name rule, or as a member name) masked wherever the
        message quotes it (as Python or JSON quotes it, even cut short by "...") or the
        pointer names it."""
        pointer = finding.get("pointer")
        return {**finding, "message": self.message(finding["message"]),
                "pointer": None if pointer is None else self.pointer(pointer)}

    def message(self, text: str) -> str:
        """A finding's message, as `finding` writes it."""
        text = self.text(text)
        spans = []
        for quote in ("'", '"'):
            opens = _unescaped(text, quote)
            # every stretch between two quotes in a row may be a quoted value; the last may be one cut short
            for start, end in zip(opens, [*opens[1:], len(text)]):
                inner = text[start + 1:end]
                cut = inner.find("...")
                if end < len(text) and self._masked_value(inner):
                    spans.append((start + 1, end))
                elif cut > 0 and self._masked_prefix(inner[:cut]):
                    spans.append((start + 1, start + 1 + cut))
        pieces, at = [], 0
        for start, end in _merged(spans):
            pieces += (text[at:start], MASK)
            at = end
        return "".join(pieces) + text[at:] if pieces else text

    def pointer(self, pointer: str) -> str:
        """A finding's JSON pointer, as `finding` writes it: a segment that names a masked value masked."""
        parts = self.text(pointer).split("/")
        for n, part in enumerate(parts[1:], 1):
            if self._masked_value(pointer_parts("/" + part)[0], escaped=False):
                parts[n] = MASK
        return "/".join(parts)

    def _masked_value(self, quoted: str, *, escaped: bool = True) -> bool:
        value = _unescape(quoted) if escaped else quoted
        return self.masked_values.holds(quoted) or self.masked_values.holds(value) or self.text(value) != value

    def _masked_prefix(self, quoted: str) -> bool:
        value = _unescape(quoted)
        return self.masked_values.starts(quoted) or self.masked_values.starts(value) or self.text(value) != value


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

    def add(self, value) -> None:
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


_ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", "v": "\v", "a": "\a", "0": "\0"}


def _unescape(quoted: str) -> str:
    """The text of a Python repr or JSON string literal's inside (a cut-off escape is kept as it is)."""
    if "\\" not in quoted:
        return quoted

    def one(match: re.Match) -> str:
        body = match.group()[1:]
        if len(body) > 1:
            return chr(int(body[1:], 16)) if int(body[1:], 16) <= 0x10FFFF else match.group()
        return _SIMPLE_ESCAPES.get(body, body)

    # JSON writes characters past U+FFFF as two escaped surrogates: join them
    return _ESCAPE.sub(one, quoted).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _merged(spans) -> list[list[int]]:
    """(start, end) spans in order, overlapping ones merged into one."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def _masked(data: bytes, spans) -> str:
    """UTF-8 `data` with each (start, end, _) span replaced by MASK (overlapping spans by one)."""
    whole = []
    for start, end, _ in spans:
        while start > 0 and data[start] & 0xC0 == 0x80:  # (an RE2 \C can end a match inside a character)
            start -= 1
        while end < len(data) and data[end] & 0xC0 == 0x80:
            end += 1
        whole.append((start, end))
    pieces, at, mask = [], 0, MASK.encode()
    for start, end in _merged(whole):
        pieces += (data[at:start], mask)
        at = end
    pieces.append(data[at:])
    return b"".join(pieces).decode("utf-8", "surrogatepass")


def _call_key(data: dict, chunk: dict) -> tuple:
    """Which tool call of its step a delta belongs to: (turn, step, block index)."""
    return tuple(as_key(v) for v in (data.get("turn"), data.get("step"), chunk.get("index")))


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


class _Copy:
    """An object or array being redacted: copied on its first change only; member
    names the rules mask are renamed when it is done, numbered apart when two
    would collide (`numbered` counts those)."""

    __slots__ = ("original", "key", "keyed", "items", "copy", "renames", "numbered")

    def __init__(self, original, key) -> None:
        self.original, self.key = original, key
        self.keyed = type(original) is dict
        self.items = iter(original.items()) if self.keyed else enumerate(original)
        self.copy = None
        self.renames: dict[str, str] | None = None
        self.numbered = 0

    def put(self, key, new) -> None:
        if new is not self.original[key]:
            if self.copy is None:
                self.copy = dict(self.original) if self.keyed else list(self.original)
            self.copy[key] = new

    def rename(self, key: str, new: str) -> None:
        if self.renames is None:
            self.renames = {}
        self.renames[key] = new

    def result(self):
        members = self.original if self.copy is None else self.copy
        if self.renames is None:
            return members
        taken = {k for k in members if k not in self.renames}  # names kept as they are
        renamed: dict = {}
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


def _replace_at(value, path: tuple[str, ...]):
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


def _compile(pattern: str, max_mem: int):
    """An RE2 pattern: errors not logged (to stderr), memory bounded."""
    options = re2.Options()
    options.log_errors = False
    options.max_mem = max_mem
    return re2.compile(pattern, options)


def _words(words) -> object:
    return _compile("(?i)" + "|".join(re2.escape(w) for w in words), GATE_MEMORY)


def _user_rule(n: int, text: str, max_mem: int, where: str) -> TextRule:
    try:
        return TextRule(f"text rule {n}", _compile(text, max_mem))
    except re2.error as exc:
        reason = exc.args[0].decode(errors="replace") if exc.args and type(exc.args[0]) is bytes else str(exc)
        raise UsageError(f"redaction text rule {n} {shown(text, 80)} cannot be used: {reason} (redaction runs RE2, a "
                         "linear-time engine: no backreferences, lookaround, conditionals or (?x); "
                         f"{max_mem >> 10} KiB of memory per rule)", path=where) from None


def _read_rules(rules_path: str) -> dict:
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
    """The redactor for an export: the rules file (if any) plus the default secret rules."""
    user = _read_rules(rules_path) if rules_path is not None else {}
    where = str(rules_path)
    texts = user.get("text", [])
    max_mem = RULES_MEMORY // max(1, len(texts) + (len(DEFAULT_RULES) if defaults else 0))
    text_rules = [TextRule(name, _compile(pattern, max_mem), tuple(_words(words) for words in gates), group)
                  for name, gates, pattern, group in DEFAULT_RULES] if defaults else []
    text_rules += [_user_rule(n, text, max_mem, where) for n, text in enumerate(texts, 1)]
    pointers = tuple(_pointer(p, where) for p in user.get("pointers", []))
    keys = frozenset(user.get("keys", []))
    summary = None if rules_path is None else {"text": len(texts), "pointers": len(pointers), "keys": len(keys)}
    gate_words = {w for _, gates, _, _ in DEFAULT_RULES for w in gates[0]}
    return Redactor(Rules(
        tuple(text_rules), pointers, keys,
        secret_keys=_compile(DEFAULT_SECRET_KEYS, GATE_MEMORY) if defaults else None,
        any_word=_words(sorted(gate_words)) if defaults else None,
        key_word=_words(DEFAULT_KEY_WORDS) if defaults else None,
        only_defaults=defaults and not texts and not keys,
        summary=summary))
