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
    """Deep equality over JSON values as dsh compares them (1 == 1.0, True != 1)."""
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a == b
    if ta in (int, float) and tb in (int, float):
        return a == b
    if ta is dict and tb is dict:
        return a.keys() == b.keys() and all(js_equal(a[k], b[k]) for k in a)
    if ta is list and tb is list:
        return len(a) == len(b) and all(js_equal(x, y) for x, y in zip(a, b))
    return ta is tb and a == b


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


def short_json(value, width: int = 60) -> str:
    """A value as compact JSON, cut to `width` characters, for messages."""
    import orjson
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."
