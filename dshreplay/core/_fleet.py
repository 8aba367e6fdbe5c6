"""Fleets of sessions on Dask: the same per-log functions, mapped on a cluster.

`dshreplay fleet validate|stats|export ROOT --scheduler ADDRESS` runs exactly
the code of the local commands; only the mapper differs, so the outputs are
byte for byte those of `--jobs`. Without `--scheduler` a LocalCluster is
started. Needs the `fleet` extra (`pip install 'dshreplay[fleet]'`). Export
workers write into the bundle's staging folder, so on a real cluster `--out`
must be on a filesystem every worker shares.

Dask's own chatter is not the command's output: a LocalCluster has no
dashboard (its HTTP server takes any free port, so a port in use is no
warning), and while the mapper is open distributed's loggers say only
errors (with `quiet`, nothing) and its warnings are not shown.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterable
from contextlib import ExitStack, contextmanager
from typing import Any, Iterator

from dshreplay.errors import UsageError

__all__ = ["DaskMapper"]

DASK_LOGGERS = ("distributed", "dask", "tornado", "bokeh")  # the loggers a cluster writes to stderr with


class DaskMapper:
    """`mapper(fn, items)` on a Dask cluster, results in input order.

    A LocalCluster keeps its scratch space (`dask-scratch-space`, with its lock
    files) in a temporary folder of its own, removed on `close`; an error or a
    signal while the cluster works closes it first, so that no worker still
    writes when the caller cleans up (an export's staging folder)."""

    def __init__(self, scheduler: str | None = None, workers: int = 2, *, quiet: bool = False) -> None:
        try:
            import dask
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise UsageError("dshreplay fleet needs Dask: pip install 'dshreplay[fleet]'") from None
        self.cluster: Any = None
        self.client: Any = None
        self.scratch: str | None = None
        self.quieted: ExitStack | None = ExitStack()
        self.quieted.enter_context(_quiet_dask(logging.CRITICAL + 1 if quiet else logging.ERROR))
        # (distributed's Client and LocalCluster have no annotations: their calls ignore no-untyped-call)
        if scheduler:
            try:
                self.client = Client(scheduler, timeout="30s")  # type: ignore[no-untyped-call]
            except (OSError, ValueError, TypeError) as exc:  # (a malformed address is a ValueError)
                self.close()
                raise UsageError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from None
            return
        self.scratch = tempfile.mkdtemp(prefix="dshreplay-dask-")
        self.quieted.enter_context(dask.config.set({"temporary-directory": self.scratch}))
        try:
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1,  # type: ignore[no-untyped-call]
                                        processes=True, dashboard_address=":0", scheduler_kwargs={"dashboard": False})
            self.client = Client(self.cluster)  # type: ignore[no-untyped-call]
        except BaseException:
            self.close()
            raise

    def __call__(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        items = list(items)
        if not items:
            return []
        from dshreplay.core._parallel import Shipped, landed
        try:
            futures = self.client.map(Shipped(fn), items, pure=False)
            return [landed(result) for result in self.client.gather(futures)]
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stop the client and a LocalCluster, remove its scratch folder, and give back dask's
        settings and loggers as they were (again: nothing)."""
        client, cluster, quieted, scratch = self.client, self.cluster, self.quieted, self.scratch
        self.client = self.cluster = self.quieted = self.scratch = None
        try:
            if client is not None:
                client.close()
            if cluster is not None:
                cluster.close()
        finally:
            if quieted is not None:
                quieted.close()
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)


@contextmanager
def _quiet_dask(level: int) -> Iterator[None]:
    """Dask's loggers at `level` at least, and its warnings (a port in use, a slow worker) not
    shown, while the context lasts; then as they were."""
    loggers = [logging.getLogger(name) for name in DASK_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(max(level, logger.getEffectiveLevel()))
    try:
        with warnings.catch_warnings():
            for module in DASK_LOGGERS:
                warnings.filterwarnings("ignore", module=rf"{module}(\.|$)")
            yield
    finally:
        for logger, old in zip(loggers, levels):
            logger.setLevel(old)
