"""Library entry points: one function per question, no printing, no click.

Each returns a report dataclass that reporters turn into text or JSON.
"""

from __future__ import annotations

from dataclasses import dataclass

from dshreplay.errors import DeriveError, DshReplayError, FoldError, UsageError
from dshreplay.io.reader import TornTail
from dshreplay.core.scan import FOLD, expanded, not_holding
from dshreplay.core.surface import SurfaceFold, SurfaceState


@dataclass
class FoldReport:
    """The model's view of one log at one seq, or why there is none."""

    path: str
    header: dict
    seq: int | None  # the seq the state is for (None: a log with no events)
    state: SurfaceState | None
    messages: list | None  # derived messages, parallel to `node_messages`
    node_messages: list | None  # (seq, message or None) per node
    error: DshReplayError | None = None
    torn_tail: TornTail | None = None
    event_count: int | None = None  # None when reading stopped at `seq`

    @property
    def ok(self) -> bool:
        return self.error is None


def fold_log(source, at: int | None = None, **reader_options) -> FoldReport:
    """Fold a log, whole or up to and including event `at`.

    Raises ReadError (cannot read) and UsageError (`at` beyond the log);
    a fold or derive failure is returned in the report, not raised.
    """
    from dshreplay.session import Session

    if at is not None and at < 0:
        raise UsageError(f"seq {at} is negative: seqs count events from 0")
    session = source if isinstance(source, Session) else Session(source, **reader_options)
    return session.run_pass(FOLD, lambda p: _fold_pass(p, at))


def _fold_pass(p, at: int | None) -> FoldReport:
    header = p.header
    fold = SurfaceFold()
    last = None
    error = None
    for event in (p.items if at is None else expanded(p.items, not_holding([at]))):
        try:
            fold.apply(event)
        except FoldError as exc:
            exc.path = p.path
            error = exc
            break
        last = fold.next_seq - 1
        if at is not None and last >= at:
            break
    else:
        if at is not None and at != last:
            end = "it has no events" if last is None else f"its last seq is {last}"
            raise UsageError(f"--at {at} is beyond the log: {end}", path=p.path)
    count = None if (at is not None or error is not None) else p.event_count
    seq = at if at is not None else (None if error is not None else last)
    report = FoldReport(p.path, header, seq, None, None, None, error, p.torn_tail, count)
    if error is not None:
        return report
    state = fold.state(seq)
    report.state = state
    try:
        report.node_messages = state.node_messages()
    except DeriveError as exc:
        exc.path = p.path
        report.error = exc
        return report
    report.messages = [m for _, m in report.node_messages if m is not None]
    return report
