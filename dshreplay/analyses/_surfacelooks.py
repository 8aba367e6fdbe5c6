"""The surface from one look to the next, in time proportional to what changed.

A pass that asks the fold for the whole surface at every model call pays the
surface's length each time: quadratic in a session whose surface keeps
growing while something in it is replaced between calls (a tool result
rewritten after each call). `SurfaceLooks` remembers the nodes of its last look
and where each stood; at the next it keeps the nodes before the first one a
replacement since then shadowed, and asks the fold only for the nodes after
them (`SurfaceFold.nodes_after`).
"""

from __future__ import annotations

from dshreplay.core.surface import SurfaceFold


class SurfaceLooks:
    """Successive looks at one fold's surface."""

    def __init__(self, fold: SurfaceFold) -> None:
        self.fold = fold
        self.nodes: list[int] = []  # the surface at the last look, in order
        self._place: dict[int, int] = {}  # node -> its place in `nodes`
        self._replacements = -1  # how many replacements the fold had made at the last look (-1: no look yet)

    def look(self) -> tuple[int, list[int]]:
        """(how many of the last look's first nodes are still the surface's first nodes, the
        nodes after them now, in order); `nodes` is then the surface."""
        fold, nodes, place = self.fold, self.nodes, self._place
        made = len(fold.replacements)
        if self._replacements < 0:
            kept = 0
            del nodes[:]
            place.clear()
        elif made == self._replacements:  # the surface only grew since the last look
            kept = len(nodes)
        else:  # the nodes before the first one shadowed since the last look are still the surface's first
            kept = min((place[s] for r in fold.replacements[self._replacements:] for s in r.shadowed_seqs
                        if s in place), default=len(nodes))
            for seq in nodes[kept:]:
                del place[seq]
            del nodes[kept:]
        tail = fold.nodes_after(nodes[-1] if nodes else None)
        for seq in tail:
            place[seq] = len(nodes)
            nodes.append(seq)
        self._replacements = made
        return kept, tail

    def forget(self) -> None:
        """The next look starts afresh (the pass lost track of the surface)."""
        self._replacements = -1
