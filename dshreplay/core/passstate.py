"""A resumable pass kept between runs: `PassState` as bytes, and back.

The bytes are a pickle (compressed with zstd). A pickle can name any function
to call when it is loaded, so `load_state` loads only what a pass's state is
made of: classes of the reading and analysing layers (io, core, analyses) and
of the index's rows, the builtin containers, `collections.Counter` and
`array.array`, and methods of those classes (dumped as (object, method name),
never as `getattr`, so that loading never reaches a function of another
module). Anything else is refused (`StateError`), and the caller reads the log
whole instead. A state is no secret-free summary: it holds the log's values,
as the log does.
"""

from __future__ import annotations

import inspect
import io
import pickle
import types

from dshreplay.core.driver import PassState

STATE_MODULES = ("dshreplay.io.", "dshreplay.core.", "dshreplay.analyses.", "dshreplay.output.rows",
                 "dshreplay.output.chain")
ALLOWED = {("builtins", name) for name in ("set", "frozenset", "dict", "list", "tuple", "bytearray", "slice",
                                          "complex", "range")} | {
    ("collections", "Counter"), ("collections", "OrderedDict"), ("collections", "deque"),
    ("array", "array"), ("array", "_array_reconstructor"), ("copyreg", "_reconstructor"),
    ("builtins", "object")}
LEVEL = 3


class StateError(Exception):
    """A kept state that cannot be loaded (damaged, of another version, or holding what a state never holds)."""


def bound(obj, name: str):
    """The method `name` of `obj`, an object of a state class (how a state's methods are loaded)."""
    if not _state_class(type(obj)) or not isinstance(inspect.getattr_static(type(obj), name, None),
                                                     types.FunctionType):
        raise StateError(f"{type(obj).__name__}.{name} is no method of a pass's state")
    return getattr(obj, name)


def _state_class(cls) -> bool:
    module = getattr(cls, "__module__", "") or ""
    return isinstance(cls, type) and any(module == m.rstrip(".") or module.startswith(m) for m in STATE_MODULES)


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if type(obj) is types.MethodType:
            return bound, (obj.__self__, obj.__func__.__name__)
        return NotImplemented


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in ALLOWED:
            return super().find_class(module, name)
        if (module, name) == (__name__, "bound"):
            return bound
        if any(module == m.rstrip(".") or module.startswith(m) for m in STATE_MODULES):
            found = super().find_class(module, name)
            if _state_class(found):
                return found
        raise StateError(f"a pass's state holds no {module}.{name}")


def dump_state(state: PassState) -> bytes:
    """The state as compressed bytes."""
    import zstandard
    buffer = io.BytesIO()
    from dshreplay.jsvalues import nesting_room
    with nesting_room():
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
    return zstandard.ZstdCompressor(level=LEVEL).compress(buffer.getvalue())


def load_state(data: bytes) -> PassState:
    """A state `dump_state` made; StateError when the bytes are not one."""
    import zstandard
    try:
        raw = zstandard.ZstdDecompressor().decompress(data, max_output_size=1 << 34)
        state = _Unpickler(io.BytesIO(raw)).load()
    except StateError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the bytes are, they are no state to resume
        raise StateError(f"not a pass's state: {type(exc).__name__}: {exc}") from None
    if type(state) is not PassState:
        raise StateError("not a pass's state")
    return state
