"""`lineage`: the tree of parent and child sessions, with each child's seed checked.

A fork or subagent child names its parent (`parentSession`) and repeats the
parent's first `seedLength` events. Sessions are found in a store root
(`<root>/<project>/<session>/session.jsonl[.zstd]`), in session directories,
or as files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from dshreplay._jsvalues import as_key, js_equal, shown
from dshreplay.core._mapper import Mapper
from dshreplay.errors import DshReplayError
from dshreplay.io._store import discover, log_files
from dshreplay.io.reader import Event, LogSource, seed_length
from dshreplay.options import DEFAULT, Options

__all__ = ["Node", "lineage"]


@dataclass
class Node:
    path: str
    session_id: object
    parent_id: object = None
    origin: object = None
    depth: object = None
    seed_length: int | None = None  # reader.seed_length of the header (None: no seed to check)
    descriptor: object = None  # the child's own subagent/descriptor data
    children: list[Node] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seed_checked: bool | None = None  # True: prefix equals the parent's; None: not checked

    def to_json(self) -> dict[str, Any]:
        """This node and its descendants, nested (built with an explicit stack: a
        fork chain may be thousands of sessions deep)."""
        top = self._own_json()
        stack: list[tuple[Node, dict[str, Any]]] = [(self, top)]
        while stack:
            node, out = stack.pop()
            for child in node.children:
                child_json = child._own_json()
                out["children"].append(child_json)
                stack.append((child, child_json))
        return top

    def _own_json(self) -> dict[str, Any]:
        return {"path": self.path, "sessionId": self.session_id, "parentSession": self.parent_id,
                "origin": self.origin, "delegationDepth": self.depth, "seedLength": self.seed_length,
                "descriptor": self.descriptor, "seedVerified": self.seed_checked, "problems": self.problems,
                "children": []}

    def walk(self) -> Iterator[tuple[int, Node]]:
        """(depth, node) for this node and its descendants, depth first, parents
        before children (iterative, at any depth)."""
        stack = [(0, self)]
        while stack:
            depth, node = stack.pop()
            yield depth, node
            stack.extend((depth + 1, child) for child in reversed(node.children))


def _events(source: LogSource) -> Iterator[Event]:
    with source.reader() as reader:
        yield from (event for event in reader.events() if event.count)  # (not a line out of place)


def _descriptor(source: LogSource, limit: int) -> Any:
    for event in _events(source):
        if event.seq < limit:
            continue
        if event.type == "subagent/descriptor":
            return event.record.get("data")
        if event.type == "step/start":
            return None
    return None


def compare_seed(child: LogSource, parent: LogSource, seed_length: int) -> str | None:
    """The first difference between the child's seed and the parent's events, or None."""
    parent_events = _events(parent)
    for event in _events(child):
        if event.seq >= seed_length:
            return None
        other = next(parent_events, None)
        if other is None:
            return f"the parent has only {event.seq} events; the seed needs {seed_length}"
        mine, theirs = _comparable(event.record), _comparable(other.record)
        if not js_equal(mine, theirs):
            return f"seed event {event.seq} ({event.type}) differs from the parent's ({other.type})"
    return f"the child has fewer than seedLength = {seed_length} events"


def _comparable(record: dict[str, Any]) -> dict[str, Any]:
    """An event without its envelope timing: the seed repeats content, seq and type."""
    return {k: v for k, v in record.items() if k not in ("time", "seq")}


def _node_info(item: tuple[str, Options]) -> Node | str:
    """A session's node (header facts and its own subagent descriptor), or why it is unreadable."""
    path, options = item
    try:
        session = LogSource(path, options)
        with session.reader() as reader:
            header = reader.header
        node = Node(session.path, header.get("id"), header.get("parentSession"), header.get("origin"),
                    header.get("delegationDepth"), seed_length(header))
        if node.seed_length is None and "seedLength" in header:
            node.problems.append(f"header seedLength {shown(header['seedLength'])} is not a non-negative "
                                 "safe integer: the seed is not checked")
        node.descriptor = _descriptor(session, node.seed_length or 0)
        return node
    except DshReplayError as exc:
        return str(exc)


def lineage(inputs: Iterable[str | os.PathLike[str]], options: Options = DEFAULT,
            mapper: Mapper | None = None) -> tuple[list[Node], list[str]]:
    """Build the forest. Returns (roots, problems that concern no single session).

    `mapper(fn, items)` reads the headers (default: in this process)."""
    nodes: list[Node] = []
    sessions: dict[int, LogSource] = {}
    errors: list[str] = []
    paths = discover(inputs)
    log_files(paths, "lineage", "a parent's log is read again for the seed its children repeat")
    mapper = mapper or (lambda fn, items: [fn(i) for i in items])
    for path, info in zip(paths, mapper(_node_info, [(p, options) for p in paths])):
        if isinstance(info, str):
            errors.append(info)
            continue
        node = info
        sessions[id(node)] = LogSource(path, options)
        nodes.append(node)
    by_id: dict[Any, Node] = {}
    for node in nodes:
        key = as_key(node.session_id)
        if key in by_id:
            node.problems.append(f"session id also used by {by_id[key].path}")
            continue
        by_id[key] = node
    roots: list[Node] = []
    cyclic = _on_cycles(nodes, by_id)
    for node in nodes:
        session = sessions[id(node)]
        seed = node.seed_length
        parent = _parent(node, by_id)
        if node.parent_id is None:
            roots.append(node)
            continue
        if parent is None:
            node.problems.append(f"parent session {shown(node.parent_id)} not found")
            roots.append(node)
            continue
        if id(node) in cyclic:
            node.problems.append(f"cycle: {shown(node.parent_id)} descends from this session")
            roots.append(node)
            continue
        parent.children.append(node)
        if seed is not None:  # a spawned child starts fresh; a fork repeats the parent's prefix
            mismatch = compare_seed(session, sessions[id(parent)], seed)
            node.seed_checked = mismatch is None
            if mismatch:
                node.problems.append(mismatch)
    return roots, errors


def _parent(node: Node, by_id: dict[Any, Node]) -> Node | None:
    return by_id.get(node.parent_id) if isinstance(node.parent_id, str) else None


def _on_cycles(nodes: list[Node], by_id: dict[Any, Node]) -> set[int]:
    """The ids of the nodes whose parents lead back to themselves. Each node
    has one parent at most, so one walk up from each node not yet seen, that
    stops at the first node seen before, finds every cycle: linear time."""
    walk_of: dict[int, int] = {}  # id(node) -> the walk that first reached it
    cyclic: set[int] = set()
    for start, first in enumerate(nodes):
        path: list[Node] = []
        current: Node | None = first
        while current is not None and id(current) not in walk_of:
            walk_of[id(current)] = start
            path.append(current)
            current = _parent(current, by_id)
        if current is not None and walk_of[id(current)] == start:  # this walk met itself: a cycle
            ring = path[next(i for i, n in enumerate(path) if n is current):]
            cyclic.update(id(n) for n in ring)
    return cyclic
