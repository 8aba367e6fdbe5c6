"""dshreplay: read DeepSeek Harness session logs offline and exactly.

`dshreplay.open(path)` gives a `Session`; `dshreplay.lineage(paths)` and
`dshreplay.export(paths, out)` take many logs. docs/guide/python.md shows each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (imported on first use below: the CLI starts faster)
    from dshreplay.analyses.query import EventFilter
    from dshreplay.bundle.export import export_bundle as export
    from dshreplay.errors import DshReplayError, FilterError, NoViewError, ReadError, UsageError
    from dshreplay.options import Options
    from dshreplay.session import Session, lineage

__version__ = "0.1.0"

__all__ = ["open", "Session", "Options", "EventFilter", "lineage", "export", "DshReplayError", "UsageError",
           "FilterError", "ReadError", "NoViewError", "__version__"]

# name -> (module, attribute) of each entry point imported when first asked for
_LAZY = {
    "Options": ("dshreplay.options", "Options"),
    "Session": ("dshreplay.session", "Session"),
    "EventFilter": ("dshreplay.analyses.query", "EventFilter"),
    "lineage": ("dshreplay.session", "lineage"),
    "export": ("dshreplay.bundle.export", "export_bundle"),
    "DshReplayError": ("dshreplay.errors", "DshReplayError"),
    "UsageError": ("dshreplay.errors", "UsageError"),
    "FilterError": ("dshreplay.errors", "FilterError"),
    "ReadError": ("dshreplay.errors", "ReadError"),
    "NoViewError": ("dshreplay.errors", "NoViewError"),
}


def open(source: Any, options: Options | None = None, **settings: Any) -> Session:  # noqa: A001 - the notebook entry point
    """Open a session log (a .jsonl or .jsonl.zstd file, a session folder, "-" or bytes).

    `options` is a `dshreplay.Options` (or give its fields as keywords, e.g.
    `max_bytes=...`). Returns a `dshreplay.Session`: `.header`,
    `.events`, `.fold(at)`, `.states(seqs)`, `.validate()`, `.shadows()`,
    `.brackets()`, `.provenance()`, `.diff(a, b)`, `.calls()`, `.request(n)`, `.tools()`,
    `.transcript()`, `.query(filter or keywords)`, `.inspect()`, `.stats()`, `.to_records()`,
    `.to_arrow()`; `dshreplay.lineage(paths)` and `dshreplay.export(paths, out)` take many logs.
    """
    from dshreplay.options import Options
    from dshreplay.session import Session
    if options is None:
        options = Options(**settings)
    elif settings:
        options = options.with_(**settings)
    return Session(source, options)


def __getattr__(name: str) -> Any:
    # the library's other entry points, imported on first use (the CLI starts faster)
    if name in _LAZY:
        import importlib
        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'dshreplay' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
