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

A state is input like the log: whoever holds the log can seal one (the key
comes from its bytes when nothing is redacted). So `load_state` inflates it
only up to a ceiling the caller gives in proportion to the log (a state holds
about as many bytes as the log it was made of: 2x at most, measured on
hostile shapes of tiny events), and checks the shape of what it unpickled (a
pass, its run, its observers of the classes they are filed under, those the
caller needs among them) before the pass goes on from it.
"""

from __future__ import annotations

import hashlib
import hmac
import inspect
import io
import pickle
import types
from typing import TYPE_CHECKING, Any, Callable, Protocol

from dshreplay.core.driver import Observer, PassState, Record, Run

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

STATE_MODULES = ("dshreplay.io.", "dshreplay.core.", "dshreplay.analyses.", "dshreplay.sql.rows",
                 "dshreplay.integrity._chain")
ALLOWED = {("builtins", name) for name in ("set", "frozenset", "dict", "list", "tuple", "bytearray", "slice",
                                          "complex", "range")} | {
    ("collections", "Counter"), ("collections", "OrderedDict"), ("collections", "deque"),
    ("array", "array"), ("array", "_array_reconstructor"), ("copyreg", "_reconstructor"),
    ("builtins", "object")}
LEVEL = 3
STATE_RATIO, STATE_FLOOR = 8, 1 << 20  # the ceiling of a state's bytes: 8 times its log's, and 1 MiB more


def state_ceiling(log_bytes: int) -> int:
    """The most bytes the state of a pass over `log_bytes` bytes of log inflates to (sealed or not)."""
    return STATE_RATIO * log_bytes + STATE_FLOOR


def check_size(size: int, ceiling: int) -> None:
    """StateError when a kept state of `size` bytes (as kept, sealed) is past `ceiling` (read no further)."""
    if size > ceiling:
        raise StateError(f"the kept state is {size} bytes, more than the {ceiling} its log can need")


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


KEY_TAG = b"dshreplay pass state v6\n"  # the version of what a state holds: a state kept by a dshreplay whose
# trackers had other attributes or meanings (v1: before ToolTracker._results and Span.cut; v2: before the
# ledger forgot a turn's calls at its end; v3: before Span.closers and TurnSpans' run of closers; v4: before the
# package's modules moved, which renamed the classes a state holds; v5: before the trackers' modules were
# renamed: analyses.tools to toolcalls and hooks, analyses.index to logindex) then does
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
    from dshreplay._jsvalues import nesting_room
    with nesting_room():
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
    cipher, nonce = _cipher(key)
    return cipher.encrypt(nonce, zstandard.ZstdCompressor(level=LEVEL).compress(buffer.getvalue()), None)


def load_state(data: bytes, key: bytes, *, ceiling: int = STATE_FLOOR,
               needs: tuple[type[Observer], ...] = ()) -> PassState:
    """A state `dump_state` sealed with `key`, of at most `ceiling` bytes (`state_ceiling`) sealed or
    inflated, holding an observer of each class of `needs`; StateError when the bytes are not one."""
    import zstandard
    from cryptography.exceptions import InvalidTag
    check_size(len(data), ceiling)
    cipher, nonce = _cipher(key)
    try:
        data = cipher.decrypt(nonce, data, None)
    except (InvalidTag, ValueError, TypeError):
        raise StateError("the kept state does not open with this log's key (it was made of other bytes, "
                         "or changed)") from None
    try:
        raw = _inflate(zstandard.ZstdDecompressor(), data, ceiling)
        if len(raw) > ceiling:
            raise StateError(f"the kept state inflates past the {ceiling} bytes its log can need")
        state = _Unpickler(io.BytesIO(raw)).load()
    except StateError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the bytes are, they are no state to resume
        raise StateError(f"not a pass's state: {type(exc).__name__}: {exc}") from None
    checked: PassState = _check_shape(state, needs)
    return checked


def _inflate(decompressor: Any, data: bytes, ceiling: int) -> bytes:
    """The first frame of `data` inflated, read no further than `ceiling` + 1 bytes (whatever its header says)."""
    chunks, total = [], 0
    with decompressor.stream_reader(data) as reader:
        while total <= ceiling:
            chunk = reader.read(min(1 << 20, ceiling + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    return b"".join(chunks)


def _check_shape(state: Any, needs: tuple[type[Observer], ...]) -> PassState:
    """StateError unless `state` is a pass's state: a PassState, its run a Run with its header and line
    count, its observers of the classes they are filed under (those of `needs` among them), its record a Record."""
    if type(state) is not PassState:
        raise StateError("not a pass's state")
    run = state.run
    if type(run) is not Run or type(run.header) is not dict or type(run.lines) is not int or run.lines < 1 \
            or type(run.header_line) is not int or type(run.observers) is not dict:
        raise StateError("not a pass's state: its run is not one")
    if type(state.ordered) is not list or type(state.record) is not Record or not all(
            isinstance(cls, type) and isinstance(o, cls) for cls, o in run.observers.items()) or not all(
            isinstance(o, Observer) for o in state.ordered):
        raise StateError("not a pass's state: its observers are not a pass's")
    missing = [cls.__name__ for cls in needs if cls not in run.observers]
    if missing:
        raise StateError(f"not a pass's state: it holds no {', '.join(missing)}")
    return state
