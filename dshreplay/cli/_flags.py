"""The options commands share, each defined once, and what one run of the command line carries.

`Run` is the one value a run keeps on click's root context (`ctx.obj`): the
read options the global flags build, the output the command was asked for
(the error handler prints a JSON error object when it is JSON), the fleet's
mapper, the progress meter and the exit code an answer cut short ends with.
The global options (--max-bytes, --max-line, --debug) are taken before the
subcommand and after it (`DshCommand`): each sets its value on the `Run` when
it is parsed, so given in both places, the one after the subcommand wins.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable, Literal, NamedTuple, TypeVar

import click

from dshreplay.cli._params import SEQ, SIZE
from dshreplay.options import Options

if TYPE_CHECKING:
    from dshreplay.core._mapper import Mapper
    from dshreplay.core.progress import Meter

__all__ = ["DshCommand", "Output", "Run", "at_option", "global_params", "jobs_options", "log_argument",
           "output_options", "run_of", "snapshot_option"]

F = TypeVar("F", bound=Callable[..., Any])


class Output(NamedTuple):
    """The output a command was asked for: tables (`wide`: cells whole), one JSON value, or JSON lines.

    (This and `Run` are no dataclasses: building one costs every start-up ~1 ms.)"""

    format: Literal["text", "json", "jsonl"] = "text"
    wide: bool = False

    @property
    def machine(self) -> bool:
        """JSON of either kind: errors are JSON objects too, and no progress bar is drawn."""
        return self.format != "text"


class Run:
    """What one run of the command line carries (click's root `ctx.obj`)."""

    def __init__(self) -> None:
        self.options = Options()
        self.debug = False
        self.output = Output()
        self.mapper: Mapper | None = None  # set by `dshreplay fleet`: logs mapped on a Dask cluster
        self.meter: Meter | None = None
        self.metered = False  # the command's meter was made (it may be None: no terminal)
        self.exit: int | None = None  # the exit code of an answer cut short, given when the command ends


def run_of(ctx: click.Context | None = None) -> Run:
    """The run of `ctx` (default: the current context), made on first use."""
    return (ctx or click.get_current_context()).find_root().ensure_object(Run)


# -- global options: before or after the subcommand -------------------------------

def _read_setting(name: str) -> Callable[[click.Context, click.Parameter, int | None], None]:
    def set_it(ctx: click.Context, param: click.Parameter, value: int | None) -> None:
        if value is not None:
            run = run_of(ctx)
            run.options = run.options.with_(**{name: value})
    return set_it


def _set_debug(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        run_of(ctx).debug = True


def global_params() -> list[click.Parameter]:
    """The global options, new objects for each command that takes them (the group and every
    subcommand): each sets its value on the run as it is parsed."""
    return [
        click.Option(["--max-bytes"], type=SIZE, metavar="SIZE", expose_value=False,
                     callback=_read_setting("max_bytes"),
                     help="Refuse a .zstd log that decompresses to more than SIZE (default 8G): a decompression "
                          "bomb stops with an error. Global: before or after the command (after wins)."),
        click.Option(["--max-line"], type=SIZE, metavar="SIZE", expose_value=False,
                     callback=_read_setting("max_line"),
                     help="Refuse a line longer than SIZE (default 256M): a line with no end stops with an "
                          "error. Global: before or after the command (after wins)."),
        click.Option(["--debug"], is_flag=True, expose_value=False, callback=_set_debug,
                     help="Show the traceback of an internal error. Global: before or after the command."),
    ]


def json_help(command: str) -> str:
    """The --json help of `command`: the page and section that give the shape of what it prints (a test
    checks the section is there and names every key)."""
    return f'Print machine-readable JSON (its shape: docs/reference/json.md, section "dshreplay {command}").'


class DshCommand(click.Command):
    """A subcommand: its own options, then the global ones; --json says where its shape is given."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.extend(global_params())
        for param in self.params:
            if param.name == "as_json" and isinstance(param, click.Option) and self.name is not None:
                param.help = json_help(self.name)


# -- options many commands take ---------------------------------------------------

def output_options(func: Callable[..., None]) -> Callable[..., None]:
    """--json, --jsonl and --wide, handed to the command as one `output` value (and kept on
    the run, for the error handler)."""
    @functools.wraps(func)
    def with_output(*args: Any, as_json: bool, jsonl: bool, wide: bool, **kwargs: Any) -> None:
        output = Output("jsonl" if jsonl else "json" if as_json else "text", wide)
        run_of().output = output
        func(*args, output=output, **kwargs)
    with_output = click.option("--wide", is_flag=True,
                               help="Print table cells whole, however wide the table gets.")(with_output)
    with_output = click.option("--jsonl", is_flag=True,
                               help="Print one JSON object per line (a listing's rows; else its one object)."
                               )(with_output)
    return click.option("--json", "as_json", is_flag=True,  # (its help: `json_help`, by DshCommand)
                        help="Print machine-readable JSON.")(with_output)


def log_argument(func: F) -> F:
    return click.argument("log")(func)


def at_option(func: F) -> F:
    return click.option("--at", "at", type=SEQ, metavar="S",
                        help="Answer for the model's view right after event S (default: the end of the log)."
                        )(func)


def snapshot_option(func: F) -> F:
    return click.option("--snapshot", is_flag=True,
                        help="Accept whole-string placeholders such as \"{{cwd}}\" (dsh's test snapshots) as any "
                             "value; they are counted in one notice per file.")(func)


def jobs_options(func: F) -> F:
    """--jobs and --quiet, for commands that take many logs."""
    func = click.option("--quiet", "-q", is_flag=True,
                        help="No progress bar on stderr (under fleet, no word from Dask either).")(func)
    return click.option("--jobs", "-j", type=click.IntRange(min=1), metavar="N",
                        help="Use N processes: for N logs at once, or to read one large log in "
                             "parallel windows (default: the number of cores).")(func)
