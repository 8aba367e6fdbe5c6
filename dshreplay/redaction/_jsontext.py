"""JSON text masked in place: each string of it inside its own quotes, member names too.

A string that holds JSON (tool arguments, a result) is never parsed and written
back: a duplicated key keeps both values, `1.10` stays `1.10` and a
pretty-printed result stays pretty. Only the characters of a secret change.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Callable, Iterable, Union

import orjson

from dshreplay._jsvalues import json_bytes
from dshreplay.redaction._decode import View, json_view
from dshreplay.redaction._rules import MASK, secret_value

if TYPE_CHECKING:
    from dshreplay.redaction.redactor import Redactor

Edit = tuple[int, int, str, Union[str, tuple[str, ...]]]  # (start, end, new text, the rule or rules that made it)
NUMBERED = "keys numbered apart"  # masked keys that would have collided with another key of their object


def apply_edits(text: str, edits: Iterable[Edit], count: Callable[[str], None]) -> str:
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


def json_container(text: str) -> bool:
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



# -- JSON text, masked in place ------------------------------------------------------------

_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_COLON = re.compile(r"[ \t\r\n]*:[ \t\r\n]*")
_SCALAR = re.compile(r"[^ \t\r\n,\]}]+")


def _json_escape(text: str) -> str:
    """Text as it stands inside a JSON string's quotes."""
    return json_bytes(text).decode("utf-8", "surrogatepass")[1:-1]


class JsonText:
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
            new = apply_edits(name, inner, uncounted) if inner else name
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
                if secret_value(name, secret):
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


def uncounted(rule: str, n: int = 1) -> None:
    """(counting nothing: what a name's edits count is counted once it is renamed)"""
