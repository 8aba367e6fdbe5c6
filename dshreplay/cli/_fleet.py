"""`dshreplay fleet`: validate, stats, export and index with their logs mapped on a Dask cluster.

Each module of `dshreplay.cli` holds a family of commands and is imported only
when one of them runs (or the help lists them): see `cli.COMMANDS`.
"""

from __future__ import annotations

from typing import Any

import click

from dshreplay.cli import DshGroup
from dshreplay.cli._aggregate import stats
from dshreplay.cli._checks import validate
from dshreplay.cli._database import index
from dshreplay.cli._export import export
from dshreplay.cli._flags import run_of


@click.group(cls=DshGroup)
def fleet() -> None:
    """Run validate, stats, export or index over many sessions on a Dask cluster.

    Same options and outputs as the local commands, plus --scheduler
    ADDRESS (default: start a LocalCluster with --workers processes). Needs
    the fleet extra: pip install 'dshreplay[fleet]'.

    Example: dshreplay fleet stats ~/.dsh/sessions --scheduler tcp://10.0.0.5:8786
    """


def _fleet_variant(command: click.Command) -> click.Command:
    def callback(scheduler: str | None, workers: int, quiet: bool, **kwargs: Any) -> Any:
        from dshreplay.core._fleet import DaskMapper
        ctx = click.get_current_context()
        mapper = DaskMapper(scheduler, workers, quiet=quiet)
        run_of(ctx).mapper = mapper
        try:
            assert command.callback is not None
            return ctx.invoke(command.callback, jobs=1, quiet=quiet, **kwargs)  # one process per log on the cluster
        finally:
            mapper.close()
    params = [p for p in command.params if p.name != "jobs"] + [
        click.Option(["--scheduler"], metavar="ADDRESS",
                     help="The Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: a LocalCluster)."),
        click.Option(["--workers"], type=click.IntRange(min=1), default=2, show_default=True,
                     help="Worker processes of the LocalCluster started without --scheduler.")]
    text = (command.help or "").replace("Example: dshreplay ", "Example: dshreplay fleet ")
    return click.Command(command.name, callback=callback, params=params, help=text,
                         short_help=command.get_short_help_str(limit=70))


for _command in (validate, stats, export, index):
    fleet.add_command(_fleet_variant(_command))
