"""Fleets of sessions on Dask: the same per-log functions, mapped on a cluster.

`dshreplay fleet validate|stats|export ROOT --scheduler ADDRESS` runs exactly
the code of the local commands; only the mapper differs, so the outputs are
byte for byte those of `--jobs`. Without `--scheduler` a LocalCluster is
started. Needs the `fleet` extra (`pip install 'dshreplay[fleet]'`). Export
workers write into the bundle's staging folder, so on a real cluster `--out`
must be on a filesystem every worker shares.
"""

from __future__ import annotations

from dshreplay.errors import UsageError


class DaskMapper:
    """`mapper(fn, items)` on a Dask cluster, results in input order."""

    def __init__(self, scheduler: str | None = None, workers: int = 2) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise UsageError("dshreplay fleet needs Dask: pip install 'dshreplay[fleet]'") from None
        self.cluster = None
        if scheduler:
            try:
                self.client = Client(scheduler, timeout="30s")
            except (OSError, ValueError, TypeError) as exc:  # (a malformed address is a ValueError)
                raise UsageError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from None
        else:
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                        dashboard_address=None)
            self.client = Client(self.cluster)

    def __call__(self, fn, items):
        items = list(items)
        if not items:
            return []
        from dshreplay.core.parallel import Shipped, landed
        futures = self.client.map(Shipped(fn), items, pure=False)
        return [landed(result) for result in self.client.gather(futures)]

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
