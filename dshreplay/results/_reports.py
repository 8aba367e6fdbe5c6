"""What `verify-export`, `index` and `usage` answer: plain results, each printable as its
command's `--json` (`to_json()`), which the reporters render and never compute.

They live here, below the reporters, so that a reporter needs nothing from the bundle or
the SQL index to print them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dshreplay._jsvalues import shown

__all__ = ["Difference", "InputCheck", "Verification", "IndexReport", "UsageRow", "FoldFailure", "Duplicate",
           "UsageReport", "TOKENS"]

# The token kinds of a model call, as the index's columns name them (`{kind}_tokens`).
TOKENS = ("input", "output", "cache_read", "cache_write", "reasoning")


@dataclass(frozen=True, slots=True)
class Difference:
    path: str
    problem: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "problem": self.problem}


@dataclass(frozen=True, slots=True)
class InputCheck:
    """What became of one input: its size at export, and whether it matches, grew, differs
    or was not checked (and why)."""

    input: str
    size: int | None  # bytes at export (None: the export could not read it)
    status: str  # "matches", "grew", "differs", "not found" or "not checked"
    detail: str = ""
    appended: dict[str, Any] | None = None  # grew: what the bundle does not cover

    def to_json(self) -> dict[str, Any]:
        return {"input": self.input, "sizeAtExport": self.size, "status": self.status, "detail": self.detail,
                "notCovered": self.appended}


@dataclass
class Verification:
    """Everything `verify-export` found and did: the differences, each input's check,
    what pinned the manifest (its digest, its signature), and what went unchecked."""

    bundle: Path
    format: object
    generated_at: object
    sessions: int
    differences: list[Difference]
    inputs: list[InputCheck]
    manifest_checked_by: list[str]  # "digest", "signature"
    not_checked: list[str]

    @property
    def anchored(self) -> bool:
        """Whether something the user holds vouched for the manifest, so for the bundle's files that
        match it: the digest written down at export, or the signature. Inputs that match it vouch
        for the inputs only: a file doctored and the manifest re-hashed with it still name the
        inputs' true hashes (the evidence key proves the logs, never the bundle)."""
        return self.sessions > 0 and bool(self.manifest_checked_by)

    @property
    def checked_inputs(self) -> list[InputCheck]:
        return [i for i in self.inputs if i.status in ("matches", "grew")]

    @property
    def bundle_verified(self) -> bool:
        """Whether the bundle's own files are verified: vouched for (`anchored`), and no difference
        in them or in the manifest (an input that differs is the input's, not the bundle's)."""
        inputs = {i.input for i in self.inputs}
        return self.anchored and not any(d.path not in inputs for d in self.differences)

    @property
    def ok(self) -> bool:
        return not self.differences and self.anchored

    def unchecked_inputs(self) -> list[str]:
        """The inputs not found with --bundle-only (`inputsNotChecked`, as before)."""
        return [i.input for i in self.inputs if i.status == "not found"]

    def grown(self) -> list[Difference]:
        return [Difference(i.input, i.detail) for i in self.inputs if i.status == "grew"]


@dataclass
class IndexReport:
    """What one run of `index` did, log by log."""

    db: str
    new: list[str] = field(default_factory=list)
    appended: list[tuple[str, str]] = field(default_factory=list)  # (log, what grew)
    resumed: int = 0  # grown logs read on from where they had been indexed (the others were read whole)
    rewritten: list[tuple[str, str]] = field(default_factory=list)  # (log, how it changed): indexed again whole
    unchanged: int = 0
    vanished: list[str] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (log, why)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (log, what was kept of it and not used)
    fold_failures: list[tuple[str, int]] = field(default_factory=list)  # (log, answered_up_to) of the logs
    # indexed in this run whose fold fails (their rows hold every line; the fold's answers stop there)
    sessions: int = 0  # sessions in the database after the run
    parquet: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"db": self.db, "sessions": self.sessions, "new": self.new,
                "appended": [{"log": log, "detail": d} for log, d in self.appended], "resumed": self.resumed,
                "rewritten": [{"log": log, "detail": d} for log, d in self.rewritten],
                "unchanged": self.unchanged, "vanished": self.vanished,
                "unreadable": [{"log": log, "error": e} for log, e in self.unreadable],
                "foldFailures": [{"log": log, "answeredUpTo": n} for log, n in self.fold_failures],
                "notes": [{"log": log, "note": n} for log, n in self.notes],
                "parquet": self.parquet}


@dataclass
class UsageRow:
    """One group's figures."""

    key: str
    sessions: set[str] = field(default_factory=set)
    calls: int = 0
    failed: dict[str, int] = field(default_factory=dict)  # error code -> failed main-loop calls
    retries: int = 0
    compactions: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKENS, 0))
    cost: float | None = 0.0  # None: some of its usage has no price (or no prices were given)
    log: str | None = None  # (--by session) the session's log

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "sessions": len(self.sessions), "calls": self.calls,
               "failedCalls": sum(self.failed.values()), "failedByCode": dict(sorted(self.failed.items())),
               "retries": self.retries, "compactions": self.compactions,
               "tokens": {"input": self.tokens["input"], "output": self.tokens["output"],
                          "cacheRead": self.tokens["cache_read"], "cacheWrite": self.tokens["cache_write"],
                          "reasoning": self.tokens["reasoning"]},
               "cost": None if self.cost is None else round(self.cost, 6)}
        if self.log is not None:
            out["log"] = self.log
        return out


@dataclass
class FoldFailure:
    """A log counted whose fold fails: its answers reach seqs 0..answered_up_to; `calls` of its counted
    calls, `past` of them after that point."""

    log: str
    answered_up_to: int
    calls: int = 0
    past: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"log": self.log, "answeredUpTo": self.answered_up_to, "calls": self.calls, "callsPast": self.past}

    def describe(self) -> str:
        return (f"the fold fails at seq {self.answered_up_to + 1}: {self.past} of its {self.calls} counted calls "
                f"lie past it, counted as logged (`stats` stops at seq {self.answered_up_to}; `validate` says why)")


@dataclass(frozen=True)
class Duplicate:
    """A log of a session another log given holds too (the same session id: a log and its zstd twin, a
    copy): its calls are not counted again."""

    log: str
    same_as: str  # the log the session is counted from (the first given)
    session_id: Any

    def to_json(self) -> dict[str, Any]:
        return {"log": self.log, "sameAs": self.same_as, "sessionId": self.session_id}

    def describe(self) -> str:
        return f"the same session ({shown(self.session_id, 80)}) as {self.same_as}: counted once, from that log"


@dataclass
class UsageReport:
    by: str
    rows: list[UsageRow]
    total: UsageRow
    priced: bool  # prices were given
    unpriced: list[str]  # models used with no price
    fold_failures: list[FoldFailure] = field(default_factory=list)  # in the order of their logs
    duplicates: list[Duplicate] = field(default_factory=list)  # logs of a session counted from another log

    def to_json(self) -> dict[str, Any]:
        return {"by": self.by, "rows": [r.to_json() for r in self.rows], "total": self.total.to_json(),
                "unpricedModels": self.unpriced, "foldFailures": [f.to_json() for f in self.fold_failures],
                "duplicates": [d.to_json() for d in self.duplicates]}
