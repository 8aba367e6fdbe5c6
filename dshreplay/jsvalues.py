"""JSON value predicates with JavaScript's number semantics.

dsh is written in TypeScript: `1.0` is an integer there, `true` is not a
number, and safe integers stop at 2**53 - 1. These helpers keep our checks
identical to dsh's on every parsed value.
"""

from __future__ import annotations

MAX_SAFE_INTEGER = 2**53 - 1
MISSING = object()  # a key absent from a record (JSON has no `undefined`)


def is_number(value: object) -> bool:
    t = type(value)
    return t is int or t is float


def is_safe_int(value: object) -> bool:
    t = type(value)
    if t is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    if t is float:
        return value.is_integer() and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    return False


def is_event_seq(value: object) -> bool:
    """A non-negative safe integer, as dsh requires of seqs."""
    return is_safe_int(value) and value >= 0


def js_equal(a: object, b: object) -> bool:
    """Deep equality over JSON values as dsh compares them (1 == 1.0, True != 1);
    iterative, so a value nested as deep as a parser allows compares too."""
    stack = [(a, b)]
    while stack:
        a, b = stack.pop()
        ta, tb = type(a), type(b)
        if ta is bool or tb is bool:
            same = ta is tb and a == b
        elif ta in (int, float) and tb in (int, float):
            same = a == b
        elif ta is dict and tb is dict:
            same = a.keys() == b.keys()
            if same:
                stack.extend((a[k], b[k]) for k in a)
        elif ta is list and tb is list:
            same = len(a) == len(b)
            if same:
                stack.extend(zip(a, b))
        else:
            same = ta is tb and a == b
        if not same:
            return False
    return True


def js_length(value: object):
    """`value.length` in JavaScript: strings and arrays have one, other values do not."""
    if type(value) in (str, list):
        return len(value)
    return None


def dig(value, *keys, default=None):
    """value[k1][k2]... through objects (and arrays, for int keys); `default` when absent."""
    for key in keys:
        if type(value) is dict:
            value = value.get(key, MISSING)
        elif type(value) is list and type(key) is int and -len(value) <= key < len(value):
            value = value[key]
        else:
            return default
        if value is MISSING:
            return default
    return value


def json_bytes(value, *, sort_keys: bool = False) -> bytes:
    """A JSON value as compact JSON bytes: orjson's, or for a value orjson cannot
    write (nested deeper than it goes, text that is not UTF-8) an encoder of
    our own that goes to any depth and shows undecodable text as \\xNN."""
    import orjson
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else None)
    except orjson.JSONEncodeError:
        return _deep_json(value, sort_keys).encode()


def _deep_json(value, sort_keys: bool) -> str:
    import json
    encode = json.encoder.encode_basestring  # (ensure_ascii off, as orjson)

    def text(s: str) -> str:
        return encode(s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))

    out: list[str] = []
    stack: list = [value]  # values to write, and the strings between them
    while stack:
        item = stack.pop()
        if type(item) is _Raw:
            out.append(item.text)
        elif type(item) is str:
            out.append(text(item))
        elif item is None or type(item) is bool:
            out.append("null" if item is None else "true" if item else "false")
        elif type(item) in (int, float):
            out.append(repr(item) if type(item) is float else str(item))
        elif type(item) is dict:
            pairs = sorted(item.items()) if sort_keys else list(item.items())
            parts: list = [_Raw("{")]
            for i, (k, v) in enumerate(pairs):
                parts += [_Raw(("," if i else "") + text(str(k)) + ":"), v]
            parts.append(_Raw("}"))
            stack.extend(reversed(parts))
        elif type(item) in (list, tuple):
            parts = [_Raw("[")]
            for i, v in enumerate(item):
                parts += [_Raw(",")] if i else []
                parts.append(v)
            parts.append(_Raw("]"))
            stack.extend(reversed(parts))
        else:
            raise TypeError(f"not a JSON value: {type(item).__name__}")
    return "".join(out)


class _Raw:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def as_key(value):
    """A JSON value usable as a dict key: itself when hashable, else its repr (lists, objects)."""
    return value if type(value) in (str, int, float, bool, type(None)) else repr(value)


def short_json(value, width: int = 60) -> str:
    """A value as compact JSON, cut to `width` characters, for messages."""
    try:
        text = json_bytes(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."
