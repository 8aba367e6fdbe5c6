"""Events as flat records for pandas, DuckDB and Arrow (`Session.to_records`, `Session.to_arrow`).

One record per event, the columns of `EventRow.to_record`. With redaction the
log is read through the export's redactor (`redaction.redactor`), set up as an
export sets up each session's: the rules, and the argument deltas of every
tool call whose assembled arguments hold a secret; the surface column is
classified on the original, as the export's events.csv is.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from dshreplay._jsvalues import json_bytes
from dshreplay.core.driver import run_pass
from dshreplay.errors import UsageError

if TYPE_CHECKING:
    from dshreplay.io.reader import LogSource
    from dshreplay.redaction.redactor import Redactor

__all__ = ["Redaction", "COLUMNS", "redacting", "records_table"]

# What `redact=` takes: None or False (no redaction), True (the export's default rules), a rules
# file (the defaults and its rules, as `export --redact FILE`), or a Redactor made by the caller.
Redaction = Union[None, bool, str, Path, "Redactor"]

# The Arrow type of each column. A log writes what it likes where dsh writes a string or a number:
# a text column holds such a value as its JSON text, a number column holds null for it.
COLUMNS: dict[str, str] = {
    "seq": "int64", "line": "int64", "time": "string", "type": "string", "turn": "int64", "step": "int64",
    "surface": "string", "op": "string", "callId": "string", "tool": "string", "arguments": "string",
    "compactionId": "string", "text": "string",
}


def redactor_for(redact: Redaction) -> Redactor | None:
    """The Redactor `redact=` asks for (None: none)."""
    if redact is None or redact is False:
        return None
    from dshreplay.redaction.redactor import Redactor, load_redactor
    if isinstance(redact, Redactor):
        return redact
    if redact is True:
        return load_redactor(None)
    if isinstance(redact, (str, Path)):
        return load_redactor(str(redact))
    raise UsageError(f"redact: give True, a rules file or a Redactor, not {type(redact).__name__}")


def redacting(source: LogSource, redact: Redaction) -> LogSource:
    """`source` read through the redaction `redact=` asks for (itself when none): the rules,
    and the deltas of every tool call whose assembled arguments hold a secret (a pass over
    the original finds them, as an export's does)."""
    redactor = redactor_for(redact)
    if redactor is None:
        return source
    from dshreplay.redaction.redactor import ArgumentDeltas
    deltas = ArgumentDeltas()
    run_pass(source, [deltas])
    return source.transformed(redactor.for_calls(deltas.secret_calls(redactor)).record)


def records_table(records: list[dict[str, Any]]) -> Any:
    """The records as a `pyarrow.Table` with the types of COLUMNS (`.to_pandas()` makes a
    DataFrame of it; DuckDB queries it by name). UsageError naming the extra without pyarrow."""
    try:
        import pyarrow
    except ImportError:
        raise UsageError("to_arrow needs pyarrow: pip install 'dshreplay[sql]'") from None
    columns = {name: [_cell(r.get(name), kind) for r in records] for name, kind in COLUMNS.items()}
    schema = pyarrow.schema([(name, getattr(pyarrow, kind)()) for name, kind in COLUMNS.items()])
    return pyarrow.table(columns, schema=schema)


def _cell(value: object, kind: str) -> object:
    """One value in a column of `kind`: a number column keeps integers (a bool or any other
    value is null), a text column keeps text (any other value as its JSON text)."""
    if value is None:
        return None
    if kind == "int64":
        return value if type(value) is int and -2**63 <= value < 2**63 else None
    return value if type(value) is str else json_bytes(value).decode()
