"""Entities joined with a constituency tree (Finkel & Manning 2009, NAACL).

An entity that is exactly a constituent marks that constituent (its entity
type is added to the node's label in the chart); an entity that is a single
word with no phrase of its own, or a run of two or more, but not all,
children of one node, gets a new node inserted over them (empty label: it is not a constituent, and the parse
scorer never sees it). What is left crosses a bracket and cannot be a node
of the tree; such entities are counted, not silently dropped
(`JoinReport`), and the caller decides what to do with them.

Entities are placed outer first, so a nested entity is found inside the
node inserted for the one around it. Two entities of different types over
the same words cannot both be a node of a chain (the chart keeps one
entity per span): the second is reported as `same_span`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

from .brackets import Node

Entity = Tuple[int, int, str]  # start, end exclusive, type


@dataclass
class JoinReport:
    """What became of each entity given to `join_entities`."""

    constituents: int = 0
    words: int = 0
    runs: int = 0
    duplicates: int = 0
    crossing: List[Entity] = field(default_factory=list)
    same_span: List[Entity] = field(default_factory=list)

    @property
    def left_out(self) -> List[Entity]:
        """The entities the tree cannot hold."""
        return self.crossing + self.same_span

    def add(self, other: "JoinReport") -> None:
        self.constituents += other.constituents
        self.words += other.words
        self.runs += other.runs
        self.duplicates += other.duplicates
        self.crossing.extend(other.crossing)
        self.same_span.extend(other.same_span)


def join_entities(root: Optional[Node], n_words: int, entities: Sequence[Entity]) -> Tuple[Node, JoinReport]:
    """Put the entities onto the tree (changed in place; a root is made over
    the words when there is none).

    RETURNS: (the root, the report of what went where).
    """
    if root is None:
        root = Node("", 0, n_words, list(range(n_words)))
    report = JoinReport()
    for start, end, label in outer_first(entities):
        if not (0 <= start < end <= n_words):
            raise ValueError(f"entity {label} {start}..{end} is outside the {n_words} words")
        _place(root, (start, end, label), report)
    report.duplicates = len(entities) - len(set(entities))
    return root, report


def _place(node: Node, entity: Entity, report: JoinReport) -> None:
    start, end, label = entity
    while True:
        if (node.start, node.end) == (start, end):
            if node.entity is None:
                node.entity = label
                report.constituents += 1
            else:
                report.same_span.append(entity)
            return
        child = next((c for c in node.children if isinstance(c, Node) and c.start <= start and end <= c.end), None)
        if child is None:
            break
        node = child
    # a run of children of `node`?
    bounds = [(c, c + 1) if isinstance(c, int) else (c.start, c.end) for c in node.children]
    first = next((k for k, (s, _) in enumerate(bounds) if s == start), None)
    last = next((k for k, (_, e) in enumerate(bounds) if e == end), None)
    if first is None or last is None or last < first:
        report.crossing.append(entity)
        return
    inserted = Node("", start, end, node.children[first:last + 1], entity=label)
    node.children[first:last + 1] = [inserted]
    if first == last:
        report.words += 1
    else:
        report.runs += 1


def outer_first(entities: Sequence[Entity]) -> List[Entity]:
    """The distinct entities, each before those inside it: by start, the
    longest first, then by type (the order they are placed in a tree)."""
    return sorted(set(entities), key=lambda x: (x[0], -x[1], x[2]))


def entities_of(root: Optional[Node]) -> List[Entity]:
    """The entities a (predicted) tree holds, outer first."""
    if root is None:
        return []
    return [(n.start, n.end, n.entity) for n in root.nodes() if n.entity]
