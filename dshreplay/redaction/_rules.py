"""The rules redaction applies: the user's rules file, the default rules compiled on RE2, the gate.

A rules file is JSON: {"text": [regex, ...], "pointers": [JSON pointer, ...],
"keys": [key name, ...]}. `text` patterns (RE2 syntax) are masked in every
string, object keys included; `pointers` (into each log record, e.g.
"/data/header/system") and `keys` (any object member of that name, at any
depth) have their whole value replaced. The default rules (`secretrules`:
detect-secrets' plugins and ours, with Betterleaks' engine beside them,
`engine`) mask secrets, and the text values of members named like one
(`password`, `apiKey`, `token`, ...).

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

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import orjson
import re2

from dshreplay._jsvalues import pointer_parts, shown
from dshreplay.errors import ReadError, UsageError
from dshreplay.io.reader import read_small_file
from dshreplay.redaction._decode import BASE64_GATE, PERCENT_PATTERN
from dshreplay.redaction._secretrules import KEEP, SECRET_MEMBER_IN_JSON, SECRET_MEMBERS, plain_member_value

if TYPE_CHECKING:
    from dshreplay.redaction._secretrules import DefaultRule

MASK = "[REDACTED]"
Span = tuple[int, int, str]  # (start, end, rule name): where a text rule matches
MAX_RULES_BYTES = 1024**2
RULES_MEMORY = 64 << 20  # RE2 memory for all text rules together (each gets an even share as its max_mem)
GATE_MEMORY = 16 << 20  # RE2 memory of the one pattern of every default rule
NAME_MEMORY = 1 << 20  # RE2 memory of a member-name pattern


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
SECRET, PERCENT, BASE64_RUN, ENGINE = 1, 2, 4, 8  # what a Gate scan finds: a default rule's match or a
# secret member's name, a URL escape, a run of base64 long enough to hide a secret, a keyword of the engine's rules


class Gate:
    """Every default rule, a secret member's name as JSON text writes it (`password":`), a
    URL escape, a run of base64 and the keywords of the engine's rules (`engine`), in one RE2
    set: one scan of a text (a DFA, no capture groups) says which of them it holds, where a
    search for each would take one scan each (most texts hold none). Made from the rules' own
    patterns: no second copy of a rule. A scan the DFA gives up on (its memory spent) is
    answered by the regexps instead. `keywords`: the engine's keyword pattern (None: there is
    no engine; "": it has no keyword pattern, so every text may hold one of its secrets)."""

    def __init__(self, patterns: tuple[str, ...], keywords: str | None = None) -> None:
        self.patterns, self.keywords = patterns, keywords
        self.any_rule = compile_re2("|".join(f"(?:{p})" for p in patterns), GATE_MEMORY)
        self.member = compile_re2(SECRET_MEMBER_IN_JSON, NAME_MEMORY)
        options = re2.Options()
        options.log_errors = False
        options.max_mem = GATE_MEMORY
        self._set = re2.Set.SearchSet(options)
        engine = () if keywords is None else (keywords or r"\A",)
        for pattern in (*patterns, SECRET_MEMBER_IN_JSON, PERCENT_PATTERN, BASE64_GATE, rb"\A", *engine):
            self._set.Add(pattern)  # (\A: matches every text, so a scan that ran finds at least it; once, at its
            # start: b"", which matches at every byte, made every state of the DFA a match and the scan 1.5x slower)
        self._set.Compile()
        self._member_at = len(patterns)  # the indices of what the set holds past the rules
        self._flags = {len(patterns): SECRET, len(patterns) + 1: PERCENT, len(patterns) + 2: BASE64_RUN,
                       len(patterns) + 3: 0, len(patterns) + 4: ENGINE}

    def __reduce__(self) -> tuple[type[Gate], tuple[tuple[str, ...], str | None]]:
        return Gate, (self.patterns, self.keywords)  # (an RE2 set does not pickle: a worker process compiles its own)

    def scan(self, data: bytes) -> int:
        """What `data` holds: SECRET, PERCENT, BASE64_RUN and ENGINE or-ed together."""
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
        return flags | BASE64_RUN | (0 if self.keywords is None else ENGINE)



def _pointer(text: str, where: str) -> tuple[str, ...]:
    if not text.startswith("/"):
        raise UsageError(f"redaction pointer {text[:80]!r} must start with /", path=where)
    return tuple(pointer_parts(text))


def compile_re2(pattern: str | bytes, max_mem: int) -> Any:  # (an RE2 pattern: re2 has no types)
    """An RE2 pattern: errors not logged (to stderr), memory bounded."""
    options = re2.Options()
    options.log_errors = False
    options.max_mem = max_mem
    return re2.compile(pattern, options)


def _user_rule(n: int, text: str, max_mem: int, where: str) -> TextRule:
    try:
        return TextRule(f"text rule {n}", compile_re2(text, max_mem))
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



def compile_rules(rules_path: str | None, *, defaults: bool = True) -> Rules:
    """The rules of an export: the rules file (if any) plus the default secret rules
    (`secretrules`, which imports detect-secrets: only an export pays for it)."""
    user = _read_rules(rules_path) if rules_path is not None else {}
    where = str(rules_path)
    texts = user.get("text", [])
    found = _default_rules() if defaults else []
    max_mem = RULES_MEMORY // max(1, len(texts) + len(found))
    default_rules = tuple(TextRule(r.name, compile_re2(r.pattern, max_mem), r.groups,
                                   None if r.keep is None else KEEP[r.keep]) for r in found)
    user_rules = tuple(_user_rule(n, text, max_mem, where) for n, text in enumerate(texts, 1))
    pointers = tuple(_pointer(p, where) for p in user.get("pointers", []))
    keys = frozenset(user.get("keys", []))
    summary = None if rules_path is None else {"text": len(texts), "pointers": len(pointers), "keys": len(keys)}
    engine = _engine() if defaults else None
    keywords = None if engine is None else engine.keywords or ""
    return Rules(
        default_rules, user_rules, pointers, keys,
        gate=Gate(tuple(r.pattern for r in found), keywords) if defaults else None,
        secret_members=compile_re2(SECRET_MEMBERS, NAME_MEMORY) if defaults else None,
        only_defaults=defaults and not texts and not keys,
        summary=summary, engine=engine)


def _default_rules() -> list[DefaultRule]:  # (imported here: only an export loads detect-secrets)
    from dshreplay.redaction._secretrules import default_rules
    return default_rules()


def _engine() -> Any:  # (imported here: only a command that redacts loads the engine's library)
    from dshreplay.redaction._engine import Engine, unusable
    return None if unusable() else Engine(KEEP["reference"])  # (None: the command says why, `engine_off`)


def why_engine_off(rules: Rules) -> str | None:
    """Why the default rules run without their base engine (None: they run with it, or do not run)."""
    if not rules.defaults or rules.engine is not None:
        return None
    from dshreplay.redaction._engine import unusable
    return unusable()


# -- where text rules match ---------------------------------------------------------------

def utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def find(rule: TextRule, data: bytes, spans: list[Span], trim: bool = False) -> None:
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


def char_spans(text: str, data: bytes, spans: list[Span]) -> list[Span]:
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


def secret_value(name: str, value: str) -> bool:
    """Whether the text value of a secret-named member is one to mask (not already masked,
    not one of the plain values such a member also takes: `secretrules.plain_member_value`)."""
    return value != MASK and not plain_member_value(name, value)

