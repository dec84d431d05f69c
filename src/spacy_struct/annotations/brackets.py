"""Constituency trees: reading and writing PTB brackets, and the span chart
a tree is decoded as.

A `Node` is a phrasal constituent over words start..end (end exclusive);
its children are nodes or word indices (the words themselves and their
part-of-speech tags live beside the tree, in `ParsedTree`). A node may carry
an entity type (`entity`, the joint representation of Finkel & Manning
2009), and a node with an empty `label` is an entity node inserted over a
run of children: it is not a constituent.

The chart. A tree over n words is decoded as a labeled binary tree of
exactly 2n - 1 spans (`structs.spans.SpanTrees`). `tree_to_chart` makes it:
- a unary chain (a node whose only child is a node) is one span labeled by
  its labels top-down joined with "+" ("S+VP"), since a binary tree holds a
  span once; the leaf chain above a word (NP over one noun) is that word's
  span label;
- a node with k > 2 children is binarized to the right: its span keeps its
  label and the spans of children 2..k, 3..k, ... are inserted with the
  empty label (the "no constituent" label that CKY gives every span that is
  only there to make the tree binary);
- every word not covered by a one-word node gets the empty label.
`chart_to_tree` inverts it: spans with the empty label are dissolved into
their parents and chains are expanded, so chart_to_tree(tree_to_chart(t))
is t for every tree without empty-label nodes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

#: joins the labels of a collapsed unary chain
CHAIN_SEPARATOR = "+"
#: separates a chart label's chain from its entity type ("NP|protein")
ENTITY_SEPARATOR = "|"
#: labels TOP-level wrappers carry in treebanks; dropped when reading
ROOT_LABELS = ("TOP", "ROOT", "")

_ESCAPES = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}
_UNESCAPES = {v: k for k, v in _ESCAPES.items()}
# whitespace inside a leaf (spaCy's whitespace tokens) would end it: each
# whitespace character is written as a name, so the brackets read back
_SPACE_NAMES = {" ": "-SP-", "\n": "-NL-", "\t": "-TAB-"}
_SPACE_CHARS = {v: k for k, v in _SPACE_NAMES.items()}
_SPACE_NAME = re.compile(r"-(?:SP|NL|TAB|U\+[0-9A-F]{4,6})-")
# "( word)": an open bracket with space after it and one word is an untagged
# word (benepar's form); "(" alone opens a labeled bracket
_UNTAGGED = "( "
_TOKEN = re.compile(r"\(\s+(?=[^\s()]+\s*\))|\(|\)|[^\s()]+")
#: the tag of PTB's empty elements (traces), which are not words
EMPTY_ELEMENT = "-NONE-"


class TreeFormatError(ValueError):
    """A bracket string that is not a tree, or does not fit its sentence."""


@dataclass(eq=False)
class Node:
    """A constituent over words start..end (end exclusive)."""

    label: str
    start: int
    end: int
    children: List[Union["Node", int]] = field(default_factory=list)
    entity: Optional[str] = None

    def nodes(self) -> Iterator["Node"]:
        """This node and every node below it, in preorder (outer first).

        Iterative, as all tree code here: a right-branching tree of a
        512-word sentence is 512 levels deep, past Python's recursion limit."""
        stack: List[Node] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(child for child in reversed(node.children) if isinstance(child, Node))

    def __repr__(self) -> str:
        ent = f" [{self.entity}]" if self.entity else ""
        return f"Node({self.label!r}{ent}, {self.start}..{self.end})"


@dataclass
class ParsedTree:
    """A tree read from brackets: the root (None for a tree with no phrasal
    node), the words (unescaped) and their tags (None where the bracket
    string gave a word without a preterminal)."""

    root: Optional[Node]
    words: List[str]
    tags: List[Optional[str]]


def escape(word: str) -> str:
    """A word as a PTB leaf: brackets as -LRB- etc.; whitespace characters
    as -SP-, -NL-, -TAB- or -U+00A0- (by code point)."""
    if word in _ESCAPES:
        return _ESCAPES[word]
    word = word.replace("(", "-LRB-").replace(")", "-RRB-")
    return re.sub(r"\s", lambda m: _SPACE_NAMES.get(m.group(), f"-U+{ord(m.group()):04X}-"), word)


def unescape(leaf: str) -> str:
    """A PTB leaf as the word it stands for (inverse of `escape`)."""
    if leaf in _UNESCAPES:
        return _UNESCAPES[leaf]
    leaf = leaf.replace("-LRB-", "(").replace("-RRB-", ")")
    return _SPACE_NAME.sub(lambda m: _SPACE_CHARS.get(m.group()) or chr(int(m.group()[3:-1], 16)), leaf)


def parse_brackets(text: str, where: str = "tree") -> ParsedTree:
    """Read one PTB bracket string, e.g. "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat))))".

    A preterminal "(TAG word)" gives the word and its tag, so every word
    needs one: "(NP dogs)" is the word "dogs" tagged NP, not a phrase.
    "( word)" (a space after the bracket, as benepar writes an untagged
    word) or a bare word inside a phrase is a word without a tag. Empty
    elements ("(-NONE- *T*-1)") are left out, and constituents left empty
    with them. The wrapper (TOP ...), (ROOT ...) or "( ...)" around a single
    tree is dropped; around several it becomes an unlabeled root.
    where: names the tree in error messages (e.g. "line 12 of dev.trees").
    RETURNS: the ParsedTree. Raises TreeFormatError on unbalanced brackets,
        a node without a label, an empty "()" (an unescaped bracket word),
        or a tree without words.
    """
    tokens = _TOKEN.findall(text)
    if not tokens:
        raise TreeFormatError(f"{where}: empty bracket string")
    words: List[str] = []
    tags: List[Optional[str]] = []
    pos = 0

    def fail(why: str) -> TreeFormatError:
        preview = text.strip()
        preview = preview if len(preview) <= 120 else preview[:117] + "..."
        return TreeFormatError(f"{where}: {why} in {preview!r}")

    def word(leaf: str, tag: Optional[str]) -> int:
        words.append(unescape(leaf))
        tags.append(tag)
        return len(words) - 1

    def read() -> Union[Node, int, None]:
        """The tree at tokens[pos], with an explicit stack of open
        constituents (label, first word, children) instead of recursion."""
        nonlocal pos
        open_nodes: List[Tuple[str, int, List[Union[Node, int]]]] = []
        while True:
            item: Union[Node, int, None, str] = "open"  # "open": a constituent was opened, nothing to attach
            if pos >= len(tokens):
                raise fail("unbalanced brackets (too many '(')")
            token = tokens[pos]
            if token.startswith("(") and token != "(":  # "( word)": untagged
                if pos + 2 >= len(tokens) or tokens[pos + 2] != ")":
                    raise fail("unbalanced brackets (too many '(')")
                item = word(tokens[pos + 1], None)
                pos += 3
            elif token == ")":
                if not open_nodes:
                    raise fail("unbalanced brackets (text after the tree, or too many ')')")
                pos += 1
                label, start, children = open_nodes.pop()
                # an empty constituent (or one of empty elements): nothing to keep
                item = Node(label, start, len(words), children) if children else None
            elif token != "(":
                item = word(token, None)
                pos += 1
            else:
                pos += 1
                if pos >= len(tokens):
                    raise fail("unbalanced brackets (too many '(')")
                label = ""
                if tokens[pos] not in "()":
                    label = tokens[pos]
                    pos += 1
                elif tokens[pos] == ")":
                    # "()" is no PTB node: a bracket written as a word, unescaped
                    raise fail("an empty bracket '()' (a bracket as a word must be written "
                               "-LRB- / -RRB-, e.g. (-LRB- -LRB-))")
                # preterminal: (TAG word); an empty element (-NONE- *T*-1) is no word
                if pos + 1 < len(tokens) and tokens[pos] not in "()" and tokens[pos + 1] == ")" and label:
                    pos += 2
                    item = None if label == EMPTY_ELEMENT else word(tokens[pos - 2], label)
                else:
                    open_nodes.append((label, len(words), []))
            if item == "open":
                continue
            if not open_nodes:
                return item  # type: ignore[return-value]
            if item is not None:
                open_nodes[-1][2].append(item)  # type: ignore[arg-type]

    if not tokens[0].startswith("("):
        raise fail("not a tree (it does not open with a bracket)")
    root = read()
    if pos != len(tokens):
        raise fail("unbalanced brackets (text after the tree, or too many ')')")
    if not words:
        raise fail("not a tree (no words)")
    if not isinstance(root, Node):  # a lone preterminal: one word, no constituent
        return ParsedTree(None, words, tags)
    # drop the wrapper(s) around a single tree; a wrapper around several is
    # an unlabeled root
    while root.label in ROOT_LABELS and len(root.children) == 1 and isinstance(root.children[0], Node):
        root = root.children[0]
    if root.label in ROOT_LABELS:
        root.label = ""
    if root.label == "" and not any(isinstance(c, Node) for c in root.children):
        root = None  # words only: no constituent
    for node in (root.nodes() if root is not None else ()):
        if not node.label and node is not root:
            raise fail("a constituent without a label")
    return ParsedTree(root, words, tags)


def to_brackets(root: Optional[Node], words: Sequence[str], tags: Optional[Sequence[Optional[str]]] = None,
                wrapper: Optional[str] = "TOP") -> str:
    """PTB brackets of a tree: "(TOP (S (NP (DT The) (NN cat)) ...))".

    Entity nodes (empty label) are dissolved; words are escaped; a word
    with a tag is written as its preterminal "(TAG word)", one without as
    "( word)" (as benepar writes it: a bare word under a one-word phrase
    would read back as its tag). wrapper: the label of an outer bracket
    (None for none).
    Words the tree does not cover (root None, or a root over part of the
    words) are written beside it under the wrapper.
    """
    def leaf(i: int) -> str:
        word = escape(words[i])
        tag = tags[i] if tags is not None else None
        return f"({tag or ''} {word})"

    def write(root: Node) -> List[str]:
        """The pieces of the brackets, in order, without recursion: a node
        with a label opens and closes around its children."""
        out: List[str] = []
        stack: List[Union[Node, int, str]] = [root]
        while stack:
            item = stack.pop()
            if isinstance(item, str):  # the close of a labeled node, after its last child
                out[-1] += item
            elif isinstance(item, int):
                out.append(leaf(item))
            else:
                if item.label:
                    out.append(f"({item.label}")
                    stack.append(")")
                stack.extend(reversed(item.children))
        return out

    parts: List[str] = []
    covered = (root.start, root.end) if root is not None else (len(words), len(words))
    parts.extend(leaf(i) for i in range(0, covered[0]))
    if root is not None:
        parts.extend(write(root))
    parts.extend(leaf(i) for i in range(covered[1], len(words)))
    body = " ".join(parts)
    if wrapper is None:
        return body
    return f"({wrapper} {body})"


def constituents(root: Optional[Node]) -> List[Tuple[int, int, str]]:
    """(start, end exclusive, label) of every constituent, outer first (a
    unary chain top-down); entity nodes (empty label) are left out."""
    if root is None:
        return []
    return [(n.start, n.end, n.label) for n in root.nodes() if n.label]


def tree_from_constituents(items: Sequence[Tuple[int, int, str]], n_words: int) -> Optional[Node]:
    """Rebuild a tree from its constituents (any order; a repeated span is a
    unary chain in the order given). The constituents must not cross.
    RETURNS: the root, or None without constituents; several top-level
    constituents get a root with the empty label over all the words."""
    return _assemble([(s, e, label, None) for s, e, label in items], n_words)


def _assemble(items: Sequence[Tuple[int, int, str, Optional[str]]], n_words: int) -> Optional[Node]:
    """Nodes (start, end exclusive, label, entity) into a tree, outer first
    by span and in the given order within a span; the words fill in."""
    if not items:
        return None
    order = sorted(range(len(items)), key=lambda k: (items[k][0], -items[k][1], k))
    top = Node("", 0, n_words)
    stack = [top]
    for k in order:
        s, e, label, entity = items[k]
        if not (0 <= s < e <= n_words):
            raise TreeFormatError(f"constituent {label} {s}..{e} is outside the {n_words} words")
        while not (stack[-1].start <= s and e <= stack[-1].end):
            stack.pop()
        parent = stack[-1]
        if parent.children and isinstance(parent.children[-1], Node) and parent.children[-1].end > s:
            raise TreeFormatError(f"constituent {label} {s}..{e} crosses another one")
        node = Node(label, s, e, entity=entity)
        parent.children.append(node)
        stack.append(node)
    _fill_words(top)
    if len(top.children) == 1 and isinstance(top.children[0], Node) and \
            (top.children[0].start, top.children[0].end) == (0, n_words):
        return top.children[0]
    return top


def _fill_words(top: Node) -> None:
    """Put the words not covered by a child node into each node's
    `children`, in order (every node below `top` has only nodes as children)."""
    for node in list(top.nodes()):
        kids: List[Union[Node, int]] = []
        at = node.start
        for child in node.children:
            assert isinstance(child, Node)
            kids.extend(range(at, child.start))
            kids.append(child)
            at = child.end
        kids.extend(range(at, node.end))
        node.children = kids


# ------------------------------------------------------------------- the chart
ChartLabel = Tuple[str, Optional[str]]  # (chain label, entity type or None)
EMPTY: ChartLabel = ("", None)


def tree_to_chart(root: Optional[Node], n_words: int) -> List[Tuple[int, int, ChartLabel]]:
    """The 2n - 1 spans of the binarized tree (module docstring).

    RETURNS: (start, end inclusive, (chain, entity)) per span, outer first.
    A chain whose nodes carry two different entities keeps the outermost
    (`join_entities` never makes one).
    """
    out: List[Tuple[int, int, ChartLabel]] = []

    def chain_of(node: Node) -> Tuple[ChartLabel, Node]:
        labels, entity = [], None
        while True:
            if node.label:
                if CHAIN_SEPARATOR in node.label or ENTITY_SEPARATOR in node.label:
                    raise TreeFormatError(
                        f"label {node.label!r} contains {CHAIN_SEPARATOR!r} or {ENTITY_SEPARATOR!r}, "
                        f"which chart labels use to join a unary chain and an entity type; "
                        f"rename it (PTB's ADVP|PRT means either: pick one)"
                    )
                labels.append(node.label)
            entity = entity or node.entity
            if len(node.children) == 1 and isinstance(node.children[0], Node):
                node = node.children[0]
            else:
                return (CHAIN_SEPARATOR.join(labels), entity), node

    def bounds(item: Union[Node, int]) -> Tuple[int, int]:
        return (item, item) if isinstance(item, int) else (item.start, item.end - 1)

    # Work items: (children, first, last, label), a span over the
    # consecutive children[first..last]; a stack instead of recursion, and
    # index ranges instead of slices (a wide node is not copied per level).
    work: List[Tuple[Sequence[Union[Node, int]], int, int, ChartLabel]] = []

    def run() -> None:
        while work:
            items, first, last, label = work.pop()
            if first == last:
                item = items[first]
                if isinstance(item, int):
                    out.append((item, item, label))
                    continue
                inner, bottom = chain_of(item)  # a single item always comes with EMPTY
                if len(bottom.children) == 1:  # a chain ending above a word
                    out.append((bottom.start, bottom.end - 1, inner))
                else:
                    work.append((bottom.children, 0, len(bottom.children) - 1, inner))
                continue
            out.append((bounds(items[first])[0], bounds(items[last])[1], label))
            work.append((items, first + 1, last, EMPTY))  # popped after the first child's span
            work.append((items, first, first, EMPTY))

    if root is None:
        if n_words:
            work.append((list(range(n_words)), 0, n_words - 1, EMPTY))
            run()
        return out
    if (root.start, root.end) != (0, n_words):
        raise TreeFormatError(f"the tree covers words {root.start}..{root.end}, not all {n_words}")
    work.append(([root], 0, 0, EMPTY))
    run()
    return out


def chart_to_tree(spans: Sequence[Tuple[int, int, ChartLabel]], n_words: int) -> Optional[Node]:
    """The tree of a chart (spans (start, end inclusive, (chain, entity)) of a
    binary tree, any order): empty-label spans are dissolved, chains expanded
    top-down, a span with an entity and no chain becomes an entity node.
    RETURNS: the root (a node with the empty label over all words when the
        top span has none), or None for a chart without any label."""
    items = []
    for s, e, (chain, entity) in spans:
        labels = chain.split(CHAIN_SEPARATOR) if chain else ([""] if entity else [])
        items.extend((s, e + 1, label, entity if depth == 0 else None) for depth, label in enumerate(labels))
    return _assemble(items, n_words)


def without_entities(root: Optional[Node]) -> Optional[Node]:
    """A copy of the tree with entity nodes dissolved and entity marks dropped."""
    if root is None:
        return None

    # Bottom-up without recursion: each node's copy (a list of parts: the
    # node itself, or its children's parts when it is an entity node) is
    # made after its children's, in reverse preorder.
    copies: Dict[int, List[Union[Node, int]]] = {}
    for node in reversed(list(root.nodes())):
        kids = [part for child in node.children
                for part in ([child] if isinstance(child, int) else copies.pop(id(child)))]
        copies[id(node)] = [Node(node.label, node.start, node.end, kids)] if node.label else kids
    parts = copies[id(root)]
    if len(parts) == 1 and isinstance(parts[0], Node):
        return parts[0]
    return Node("", root.start, root.end, parts)
