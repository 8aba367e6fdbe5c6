"""A resumable pass kept between runs: `PassState` as bytes, and back.

A state holds the log's values as the log does (unredacted), so it is kept
sealed with a key only the log itself gives: `state_key` of the bytes the pass
read (SHA-256 of a fixed tag and those bytes, HMAC-SHA256 under the evidence
key when the index redacts; never stored). Whoever holds the index but not the
log (nor, when it redacts, the key) learns nothing from a state, and a state changed by
anyone without the log fails to open (AES-GCM, `cryptography`). Sealing is
deterministic (the nonce comes from the key: one key seals one log prefix's
state), so the same log kept twice gives the same bytes.

Inside the seal the bytes are a pickle (compressed with zstd). A pickle can
name any function to call when it is loaded, so `load_state` also loads only
what a pass's state is made of: classes of the reading and analysing layers
(io, core, analyses) and of the index's rows, the builtin containers,
`collections.Counter` and `array.array`, and methods of those classes (dumped
as (object, method name), never as `getattr`, so that loading never reaches a
function of another module). Anything else is refused (`StateError`), and the
caller reads the log whole instead.
"""

from __future__ import annotations

import hashlib
import hmac
import inspect
import io
import pickle
import types
from typing import TYPE_CHECKING, Any, Callable, Protocol

from dshreplay.core.driver import PassState

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

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


def bound(obj: object, name: str) -> Callable[..., object]:
    """The method `name` of `obj`, an object of a state class (how a state's methods are loaded)."""
    if not _state_class(type(obj)) or not isinstance(inspect.getattr_static(type(obj), name, None),
                                                     types.FunctionType):
        raise StateError(f"{type(obj).__name__}.{name} is no method of a pass's state")
    method: Callable[..., object] = getattr(obj, name)
    return method


def _state_class(cls: object) -> bool:
    module = getattr(cls, "__module__", "") or ""
    return isinstance(cls, type) and any(module == m.rstrip(".") or module.startswith(m) for m in STATE_MODULES)


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: object
                         ) -> tuple[Callable[..., object], tuple[object, str]] | types.NotImplementedType:
        if type(obj) is types.MethodType:
            return bound, (obj.__self__, obj.__func__.__name__)
        return NotImplemented  # type: ignore[no-any-return]  # typeshed derives NotImplementedType from Any


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:  # (a class or function, as pickle's own)
        if (module, name) in ALLOWED:
            return super().find_class(module, name)
        if (module, name) == (__name__, "bound"):
            return bound
        if any(module == m.rstrip(".") or module.startswith(m) for m in STATE_MODULES):
            found = super().find_class(module, name)
            if _state_class(found):
                return found
        raise StateError(f"a pass's state holds no {module}.{name}")


KEY_TAG = b"dshreplay pass state v4\n"  # the version of what a state holds: a state kept by a dshreplay whose
# trackers had other attributes or meanings (v1: before ToolTracker._results and Span.cut; v2: before the
# ledger forgot a turn's calls at its end; v3: before Span.closers and TurnSpans' run of closers) then does
# not open (StateError) and the log is read whole, instead
# of a resumed pass failing on an attribute its state lacks or joining a later event to an earlier turn's call


class Hasher(Protocol):
    """What `state_key` gives: hashlib's SHA-256 or an hmac HMAC (both fed, then digested)."""

    def update(self, data: bytes, /) -> None: ...

    def digest(self) -> bytes: ...


def state_key(evidence: bytes | None = None) -> Hasher:
    """A hash whose digest, once it has been fed the bytes a pass read, seals that pass's state:
    SHA-256, or HMAC-SHA256 under the evidence key when the index redacts (a state's GCM tag checks
    a guess at the log's bytes as a plain hash of them would: then only the key's holder can)."""
    return hashlib.sha256(KEY_TAG) if evidence is None else hmac.new(evidence, KEY_TAG, "sha256")


def _cipher(key: bytes) -> tuple[AESGCM, bytes]:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    return AESGCM(key), hashlib.sha256(key + b"nonce").digest()[:12]


def dump_state(state: PassState, key: bytes) -> bytes:
    """The state as sealed, compressed bytes (`key`: the digest of `state_key` over the log read)."""
    import zstandard
    buffer = io.BytesIO()
    from dshreplay.jsvalues import nesting_room
    with nesting_room():
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
    cipher, nonce = _cipher(key)
    return cipher.encrypt(nonce, zstandard.ZstdCompressor(level=LEVEL).compress(buffer.getvalue()), None)


def load_state(data: bytes, key: bytes) -> PassState:
    """A state `dump_state` sealed with `key`; StateError when the bytes are not one."""
    import zstandard
    from cryptography.exceptions import InvalidTag
    cipher, nonce = _cipher(key)
    try:
        data = cipher.decrypt(nonce, data, None)
    except (InvalidTag, ValueError, TypeError):
        raise StateError("the kept state does not open with this log's key (it was made of other bytes, "
                         "or changed)") from None
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
