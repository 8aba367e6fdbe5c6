"""Relational rules: turns, steps, tool calls, compaction brackets, metering, hooks, the fork seed.

FORMAT.md sections 7 and 8, and the pairing of `hook/invoked` with `hook/result`
(dsh's hook-protocol package). dsh checks these only in its optional invariant
companions; `validate` always checks them. Each family of rules is a module
of this package: an observer of the events it checks that reads the pass's
shared trackers (turns and steps, tool calls and hooks, compaction brackets,
replacements) and adds to the pass's one RuleFindings list. `Relations`
brings them into a pass, in the order of their findings on one event, and
adds at the end what only the end of the log can tell.
"""

from __future__ import annotations

from dshreplay.analyses.findings import DEFAULT_CAP, Finding, FindingList
from dshreplay.analyses.rules._base import RuleFindings, Where
from dshreplay.analyses.rules._compaction import CompactionRules, MeteringRules
from dshreplay.analyses.rules._hooks import HookRules
from dshreplay.analyses.rules._seed import SeedRules
from dshreplay.analyses.rules._tools import ToolRules
from dshreplay.analyses.rules._turns import TurnRules
from dshreplay.core.driver import Observer, Run

__all__ = ["Relations", "RuleFindings", "DEFAULT_CAP"]


class Relations(Observer):
    """The relation rules of a pass: `findings` once it is over, by seq.
    (Give `RuleFindings(cap)` to the pass to keep more or fewer per code.)"""

    requires = (RuleFindings, MeteringRules, SeedRules, TurnRules, ToolRules, CompactionRules, HookRules)

    def begin(self, run: Run) -> None:
        self.findings: FindingList = run.get(RuleFindings).findings
        self.cap = run.get(RuleFindings).cap

    def finish(self, run: Run) -> None:
        if not run.complete or run.unreadable_rest:  # (where the log ends is unknown: nothing is said of it)
            return
        last = run.last_item
        where: Where = {"seq": last.seq + last.count - 1, "line": last.end_line} if last else {}
        run.get(MeteringRules).at_end(last)
        run.get(CompactionRules).at_end()
        run.get(SeedRules).at_end(run.last_seq)
        run.get(TurnRules).at_end(where)
        run.get(HookRules).at_end(where)
        self.findings.sort(key=_by_seq)


def _by_seq(f: Finding) -> tuple[bool, int]:
    return (f.seq is None, f.seq if f.seq is not None else 0)
