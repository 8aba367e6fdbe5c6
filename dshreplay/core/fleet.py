"""Fleets of sessions on Dask: the same per-log functions, mapped on a cluster.

`dshreplay fleet validate|stats|export ROOT --scheduler ADDRESS` runs exactly
the code of the local commands; only the mapper differs, so the outputs are
byte for byte those of `--jobs`. Without `--scheduler` a LocalCluster is
started. Needs the `fleet` extra (`pip install 'dshreplay[fleet]'`). Export
workers write into the bundle's staging folder, so on a real cluster `--out`
must be on a filesystem every worker shares.
"""

from __future__ import annotations

import shutil
import tempfile

from dshreplay.errors import UsageError


class DaskMapper:
    """`mapper(fn, items)` on a Dask cluster, results in input order.

    A LocalCluster keeps its scratch space (`dask-scratch-space`, with its lock
    files) in a temporary folder of its own, removed on `close`; an error or a
    signal while the cluster works closes it first, so that no worker still
    writes when the caller cleans up (an export's staging folder)."""

    def __init__(self, scheduler: str | None = None, workers: int = 2) -> None:
        try:
            import dask
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise UsageError("dshreplay fleet needs Dask: pip install 'dshreplay[fleet]'") from None
        self.cluster = self.client = self.config = self.scratch = None
        if scheduler:
            try:
                self.client = Client(scheduler, timeout="30s")
            except (OSError, ValueError, TypeError) as exc:  # (a malformed address is a ValueError)
                raise UsageError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from None
            return
        self.scratch = tempfile.mkdtemp(prefix="dshreplay-dask-")
        self.config = dask.config.set({"temporary-directory": self.scratch})
        try:
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                        dashboard_address=None)
            self.client = Client(self.cluster)
        except BaseException:
            self.close()
            raise

    def __call__(self, fn, items):
        items = list(items)
        if not items:
            return []
        from dshreplay.core.parallel import Shipped, landed
        try:
            futures = self.client.map(Shipped(fn), items, pure=False)
            return [landed(result) for result in self.client.gather(futures)]
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stop the client and a LocalCluster, and remove its scratch folder (again: nothing)."""
        client, cluster, config, scratch = self.client, self.cluster, self.config, self.scratch
        self.client = self.cluster = self.config = self.scratch = None
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
        if config is not None:
            config.__exit__(None, None, None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
