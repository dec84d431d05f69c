"""Constituency trees on a Doc, under benepar's extension names.

Storage. `doc.user_data["spacy_struct_constituents"]` holds every node of
every tree, in preorder (outer first): parallel lists `starts`, `ends`
(token offsets, end exclusive) and `labels` (the labels of the span,
a unary chain top-down; empty for a word that is no phrase), and the doc's
token and character counts they were written for (`n_tokens`, `n_chars`):
reading trees of a doc that was cut (`Span.as_doc`) or retokenized since
raises a clear error instead of giving other words' labels. Every token of
a parsed sentence is a node, as in benepar, so `children` can list the
words too. Plain ints and strings: the trees survive `DocBin`,
`to_bytes` and `nlp.pipe(n_process=2)`.

Extensions (the names benepar uses, so a user can switch):
- `Span._.labels`: the tuple of labels of a constituent, () for a word
  that is no phrase; a span that is no node raises NonConstituentError.
- `Span._.parse_string`: its PTB brackets, with the tokens' tags as
  preterminals when the doc has tags (else "( word)", as benepar writes it).
- `Span._.constituents`: the nodes within it, preorder, itself first.
- `Span._.children`, `Span._.parent` (None at a sentence's root).
- `Token._.labels`, `Token._.parse_string`, `Token._.parent`.
- `Doc._.constituents`: every node of the doc, preorder.

`set_parse(doc_or_span, brackets)` puts a bracket string on as a (gold)
tree; `tree_of(doc, start, end)` reads the tree of a range back.
"""
from __future__ import annotations

import warnings
from bisect import bisect_left, bisect_right
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

from spacy.tokens import Doc, Span, Token

from .brackets import Node, TreeFormatError, escape, parse_brackets, tree_from_constituents, unescape
from .text import DocWhere, text_preview

USER_DATA_KEY = "spacy_struct_constituents"


class NonConstituentError(ValueError):
    """The span is not a node of the doc's constituency tree."""


# ------------------------------------------------------------------ storage
_EMPTY = {"starts": [], "ends": [], "labels": []}


def _fingerprint(doc: Doc) -> Tuple[int, int]:
    """(tokens, characters) of the doc, in constant time: what the stored
    offsets were written for."""
    return (len(doc), doc[-1].idx + len(doc[-1].text_with_ws)) if len(doc) else (0, 0)


def _stored(doc: Doc) -> Optional[Dict[str, list]]:
    """The doc's stored trees, checked against the doc (None when none are
    stored). Offsets written for another doc (one cut by `Span.as_doc`,
    retokenized, or edited by hand) raise a ValueError naming the doc
    instead of reading other words' labels."""
    data = doc.user_data.get(USER_DATA_KEY)
    if data is None:
        return None
    where = DocWhere(doc, "the constituency trees stored on the doc")
    if not isinstance(data, dict) or not all(isinstance(data.get(k), (list, tuple)) for k in _EMPTY):
        raise ValueError(f"{where} are not lists 'starts', 'ends' and 'labels'; put trees on with set_parse")
    sizes = {k: len(data[k]) for k in _EMPTY}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"{where} have lists of unequal length ({sizes}): they were written by hand "
                         f"or damaged; put trees on with set_parse")
    written = (data.get("n_tokens"), data.get("n_chars"))
    if written != (None, None):
        if tuple(written) != _fingerprint(doc):
            raise ValueError(
                f"{where} were written for a doc of {written[0]} tokens and {written[1]} characters; "
                f"this one has {_fingerprint(doc)[0]} and {_fingerprint(doc)[1]}: it was cut "
                f"(Span.as_doc), retokenized or changed after they were set. Parse it again (or "
                f"put the gold tree on again with set_parse)"
            )
    elif data["ends"] and max(data["ends"]) > len(doc):  # trees stored without the counts (older files)
        raise ValueError(f"{where} reach token {max(data['ends']) - 1}, past the doc's {len(doc)} tokens")
    return data


def _data(doc: Doc) -> Dict[str, list]:
    data = _stored(doc)
    if data is None:
        raise ValueError(
            "the doc has no constituency parse; add a 'joint_parser' to the pipeline "
            "(or put a tree on with spacy_struct.joint_parser.set_parse)"
        )
    return data


def has_trees(doc: Doc) -> bool:
    """Whether any tree is stored on the doc."""
    return bool((_stored(doc) or _EMPTY)["starts"])


def tree_ranges(doc: Doc) -> List[Tuple[int, int]]:
    """The token range of every stored tree (its root's), in order."""
    data = _stored(doc) or _EMPTY
    out: List[Tuple[int, int]] = []
    for start, end in zip(data["starts"], data["ends"]):  # preorder: a root starts past the last one
        if not out or start >= out[-1][1]:
            out.append((start, end))
    return out


def tree_nodes(root: Optional[Node], start: int, end: int) -> List[Tuple[int, int, Tuple[str, ...]]]:
    """The stored form of a parse tree (no entity nodes: `without_entities`)
    of tokens start..end: (start, end, labels) per node and word, preorder,
    offsets shifted by `start`, a unary chain one node. A root over part of
    the range (or none) gets a node with no label over the whole range."""
    out: List[Tuple[int, int, Tuple[str, ...]]] = []

    def visit(top: Node) -> None:
        """Preorder with a stack (trees may be deeper than Python's recursion
        limit); a unary chain's labels are carried down to its bottom node."""
        stack: List[Tuple[Union[Node, int], Tuple[str, ...]]] = [(top, ())]
        while stack:
            node, above = stack.pop()
            if isinstance(node, int):
                out.append((start + node, start + node + 1, above))
                continue
            labels = above + ((node.label,) if node.label else ())
            kids = node.children
            if len(kids) == 1:
                stack.append((kids[0], labels))
                continue
            out.append((start + node.start, start + node.end, labels))
            stack.extend((child, ()) for child in reversed(kids))

    n = end - start
    if root is None or (root.start, root.end) != (0, n):
        root = Node("", 0, n, [root] if root is not None else list(range(n)))
        if root.children and isinstance(root.children[0], Node):
            inner = root.children[0]
            root.children = list(range(0, inner.start)) + [inner] + list(range(inner.end, n))
    visit(root)
    return out


def write_nodes(doc: Doc, trees: Sequence[Tuple[int, int, Sequence[Tuple[int, int, Sequence[str]]]]]) -> None:
    """Store trees, each (start, end, its nodes from `tree_nodes`), replacing
    every stored node that shares a token with their ranges (inside them,
    or a stale tree over other sentence cuts that crosses or holds them);
    one sort per call, so a doc's sentences are written together."""
    try:
        data = _stored(doc) or _EMPTY
    except ValueError:  # trees written for the doc before it changed: parsing it again replaces them
        data = _EMPTY
    ranges = sorted((start, end) for start, end, _ in trees)
    range_starts = [start for start, _ in ranges]

    def replaced(s: int, e: int) -> bool:
        k = bisect_right(range_starts, s) - 1  # the last range starting at or before s
        if k >= 0 and s < ranges[k][1]:
            return True
        return k + 1 < len(ranges) and ranges[k + 1][0] < e  # the next one starts inside (s, e)

    rows = [(s, e, list(labels)) for s, e, labels in zip(data["starts"], data["ends"], data["labels"])
            if not replaced(s, e)]
    rows.extend((int(s), int(e), list(labels)) for _, _, nodes in trees for s, e, labels in nodes)
    rows.sort(key=lambda r: (r[0], -r[1]))
    n_tokens, n_chars = _fingerprint(doc)
    doc.user_data[USER_DATA_KEY] = {
        "starts": [r[0] for r in rows], "ends": [r[1] for r in rows], "labels": [r[2] for r in rows],
        "n_tokens": n_tokens, "n_chars": n_chars,
    }


def set_parse(target: Union[Doc, Span], brackets: str, set_tags: bool = True) -> None:
    """Put a PTB bracket string on a Doc (one tree over all its tokens) or a
    Span (a sentence), e.g. as the gold tree of a training example.

    The tree's words must be the tokens' texts (PTB escapes such as -LRB-
    are read as the bracket they stand for). set_tags: copy the
    preterminals to `token.tag_` where the token has no tag yet.
    Raises TreeFormatError naming the mismatch.
    """
    doc = target if isinstance(target, Doc) else target.doc
    start, end = (0, len(doc)) if isinstance(target, Doc) else (target.start, target.end)
    tokens = [t.text for t in doc[start:end]]
    where = f"tree for {text_preview(' '.join(tokens))}"
    tree = parse_brackets(brackets, where)
    check_words(tree.words, tokens, where)
    crossing = next(((s, e) for s, e, _ in constituent_labels(doc) if s < start < e or s < end < e), None)
    if crossing is not None:
        raise TreeFormatError(
            f"{where}: tokens {start}..{end - 1} cut the stored constituent over tokens "
            f"{crossing[0]}..{crossing[1] - 1}; put a tree on a whole sentence (or the doc)"
        )
    write_nodes(doc, [(start, end, tree_nodes(tree.root, start, end))])
    if set_tags:
        for token, tag in zip(doc[start:end], tree.tags):
            if tag and not token.tag_:
                token.tag_ = tag


def check_words(words: Sequence[str], tokens: Sequence[str], where: str) -> None:
    """Raise TreeFormatError unless a tree's words are the tokens."""
    if len(words) != len(tokens):
        raise TreeFormatError(f"{where}: the tree has {len(words)} words and the text {len(tokens)} tokens")
    for k, (w, t) in enumerate(zip(words, tokens)):
        if w != t and unescape(t) != w:  # w is unescaped; a token may keep the escape
            raise TreeFormatError(f"{where}: word {k} of the tree is {w!r}, the token is {t!r}")


def tree_of(doc: Doc, start: int, end: int) -> Optional[Node]:
    """The tree stored over tokens start..end, offsets relative to `start`
    (None when no tree is stored there; a root with the empty label over the
    words when the tree there has no constituent)."""
    data = _stored(doc)
    if not data:
        return None
    items, stored = [], False
    for s, e, labels in zip(data["starts"], data["ends"], data["labels"]):
        if start <= s and e <= end:
            stored = True
            items.extend((s - start, e - start, label) for label in labels)
    if stored and not items:  # a tree of words only ("Abstract"): no constituent
        return Node("", 0, end - start, list(range(end - start)))
    return tree_from_constituents(items, end - start)


def constituent_labels(doc: Doc) -> List[Tuple[int, int, Tuple[str, ...]]]:
    """Every stored node as (start, end, labels)."""
    data = _stored(doc) or _EMPTY
    return [(s, e, tuple(labels)) for s, e, labels in zip(data["starts"], data["ends"], data["labels"])]


def brackets(doc: Doc) -> List[Tuple[int, int, str]]:
    """Every stored constituent as (start, end, label), a unary chain's
    labels each their own bracket (what evalb counts)."""
    return [(s, e, label) for s, e, labels in constituent_labels(doc) for label in labels]


# --------------------------------------------------------------- extensions
def _position(span: Span) -> int:
    data = _data(span.doc)
    starts, ends = data["starts"], data["ends"]
    k = bisect_left(starts, span.start)  # nodes are sorted by start, then longest first
    while k < len(starts) and starts[k] == span.start:
        if ends[k] == span.end:
            return k
        k += 1
    inside = [(s, e) for s, e in tree_ranges(span.doc) if span.start <= s and e <= span.end]
    pieces = (f": it holds {len(inside)} trees, parsed apart (a sentence longer than max_sentence_length "
              f"is parsed in pieces; a dependency-parsed doc keeps its own sentences)"
              if len(inside) > 1 and (inside[0][0], inside[-1][1]) == (span.start, span.end) else "")
    raise NonConstituentError(
        f"span {span.text!r} (tokens {span.start}..{span.end - 1}) is not a constituent{pieces}")


def get_labels(span: Span) -> Tuple[str, ...]:
    return tuple(_data(span.doc)["labels"][_position(span)])


def get_constituents(span: Span) -> Iterator[Span]:
    data, k = _data(span.doc), _position(span)
    starts, ends = data["starts"], data["ends"]
    while k < len(starts) and starts[k] < span.end and ends[k] <= span.end:
        yield span.doc[starts[k]:ends[k]]
        k += 1


def get_children(span: Span) -> Iterator[Span]:
    data, k = _data(span.doc), _position(span)
    starts, ends = data["starts"], data["ends"]
    expected = span.start
    for j in range(k + 1, len(starts)):
        if starts[j] >= span.end:
            break
        if starts[j] == expected:
            yield span.doc[starts[j]:ends[j]]
            expected = ends[j]


def get_parent(span: Span) -> Optional[Span]:
    data, k = _data(span.doc), _position(span)
    starts, ends = data["starts"], data["ends"]
    for j in range(k - 1, -1, -1):  # trees do not overlap: the nearest node around it
        if starts[j] <= span.start and span.end <= ends[j]:
            return span.doc[starts[j]:ends[j]]
    return None


def get_parse_string(span: Span) -> str:
    doc = span.doc
    data = _data(doc)
    tagged = doc.has_annotation("TAG")
    pos = _position(span)

    starts, ends, all_labels = data["starts"], data["ends"], data["labels"]
    # The stored nodes are in preorder and the ones after `pos` that start
    # inside the span are below it: walk them keeping the phrases still open
    # on a stack (no recursion: a tree may be deeper than Python's limit).
    # A piece is an opening "(LABEL", or a word with the labels above it; a
    # phrase closes onto the last piece when a node starts at or after its end.
    pieces: List[str] = []
    open_phrases: List[Tuple[int, int]] = []  # (end, labels opened)

    def close_until(at: int) -> None:
        while open_phrases and at >= open_phrases[-1][0]:
            pieces[-1] += ")" * open_phrases.pop()[1]

    k = pos
    while k < len(starts) and starts[k] < span.end and (k == pos or span.start <= starts[k]):
        s, e, labels = starts[k], ends[k], all_labels[k]
        close_until(s)
        if e - s == 1:
            token = doc[s]
            word = f"({token.tag_ if tagged else ''} {escape(token.text)})"
            pieces.append("".join(f"({label} " for label in labels) + word + ")" * len(labels))
        else:
            pieces.extend(f"({label}" for label in labels)
            open_phrases.append((e, len(labels)))
        k += 1
    close_until(span.end)
    return " ".join(pieces)


def get_doc_constituents(doc: Doc) -> Iterator[Span]:
    data = _data(doc)
    for s, e in zip(data["starts"], data["ends"]):
        yield doc[s:e]


def _token_span(token: Token) -> Span:
    return token.doc[token.i:token.i + 1]


# Token getters are module-level functions, not closures: spaCy pickles the
# extension registry into every worker of nlp.pipe(n_process=...) under the
# spawn start method, and a lambda cannot be pickled.
def get_token_labels(token: Token) -> Tuple[str, ...]:
    return get_labels(_token_span(token))


def get_token_parse_string(token: Token) -> str:
    return get_parse_string(_token_span(token))


def get_token_parent(token: Token) -> Optional[Span]:
    return get_parent(_token_span(token))


def register_extensions() -> None:
    """Register the extensions under benepar's names (idempotent). Where
    another package (benepar) registered one of the names first, it is left
    alone, with a warning: the trees stay readable through this module's
    functions (`tree_of`, `brackets`, `constituent_labels`)."""
    wanted = [(Span, name, getter) for name, getter in (
        ("labels", get_labels), ("parse_string", get_parse_string), ("constituents", get_constituents),
        ("children", get_children), ("parent", get_parent))]
    wanted += [(Token, name, getter) for name, getter in (
        ("labels", get_token_labels), ("parse_string", get_token_parse_string), ("parent", get_token_parent))]
    wanted.append((Doc, "constituents", get_doc_constituents))
    taken = []
    for cls, name, getter in wanted:
        if not cls.has_extension(name):
            cls.set_extension(name, getter=getter)
        elif cls.get_extension(name)[2] is not getter:
            taken.append(f"{cls.__name__}._.{name}")
    if taken and not _warned_taken:
        _warned_taken.append(True)
        warnings.warn(
            f"spacy_struct: {', '.join(taken)} are registered by another package (benepar uses "
            f"the same names) and are left to it, so they do not read spacy_struct's trees; read "
            f"these with spacy_struct.annotations.trees (tree_of, brackets, constituent_labels), "
            f"or use one of the two packages in a process"
        )


_warned_taken: List[bool] = []


__all__ = [
    "NonConstituentError", "brackets", "constituent_labels", "has_trees", "register_extensions", "set_parse",
    "tree_nodes", "tree_of", "tree_ranges", "write_nodes",
]
