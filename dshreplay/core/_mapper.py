"""`Mapper`: how a command over many logs runs its per-log jobs.

`mapper(fn, items)` returns the list of `fn(item)` for each item, in order: in this
process (the default of every such function), in a local process pool
(`core.parallel.run_map`) or on Dask workers (`core.fleet.DaskMapper`).
"""

from __future__ import annotations

__all__ = ["Mapper"]

from typing import Any, Callable

Mapper = Callable[[Callable[[Any], Any], list[Any]], list[Any]]
