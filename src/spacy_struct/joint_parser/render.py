"""Constituency trees drawn as SVG, entities marked under the words.

displaCy draws dependency arcs and spans but no constituency tree, so this
draws one per sentence: the words on a baseline, each constituent's labels
(a unary chain as "S > VP") centred over its children, a line from each
node to its children, and every entity of `doc.spans[spans_key]` as a
coloured bar under its words (nested ones stacked below the outer ones).

    from spacy_struct.joint_parser.render import render_trees
    html = render_trees(doc, page=True)
"""
from __future__ import annotations

import html
from typing import Dict, Iterable, List, Sequence, Tuple, Union

from spacy.tokens import Doc, Span

from ..annotations.trees import constituent_labels

_CHAR = 7.2          # px per character of the 12px font
_GAP = 14            # px between words
_LEVEL = 42          # px between tree levels
_BAR = 16            # px per row of entity bars
_COLOURS = ("#7aecec", "#bfeeb7", "#feca74", "#ff9561", "#aa9cfc", "#c887fb", "#9cc9cc", "#ffeb80")


def render_trees(target: Union[Doc, Span, Iterable[Span]], spans_key: str = "sc", page: bool = False) -> str:
    """SVG of the tree of each sentence of a Doc (or of the given sentence
    spans), with the entities under `doc.spans[spans_key]` marked.

    RETURNS: the SVG elements, one per sentence, or a whole HTML page with
        `page = True`. Raises ValueError when the doc has no parse.
    """
    if isinstance(target, Doc):
        sentences = list(target.sents) if target.has_annotation("SENT_START") else [target[:]]
    else:
        sentences = [target] if isinstance(target, Span) else list(target)
    svgs = [_sentence_svg(sent, spans_key) for sent in sentences]
    if not page:
        return "\n".join(svgs)
    body = "\n".join(f"<figure style='margin: 1em 0'>{svg}</figure>" for svg in svgs)
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>joint_parser</title></head>"
            f"<body style='font-family: sans-serif'>{body}</body></html>")


def _sentence_svg(sent: Span, spans_key: str) -> str:
    doc = sent.doc
    nodes = [(s, e, labels) for s, e, labels in constituent_labels(doc)
             if sent.start <= s and e <= sent.end]
    if not nodes:
        raise ValueError(f"no constituency parse for the sentence {sent.text[:50]!r}; run a joint_parser first")
    labels_of = {(s, e): labels for s, e, labels in nodes if labels}
    # x of each word's centre
    xs: Dict[int, float] = {}
    x = float(_GAP)
    for token in sent:
        width = max(len(token.text), len(token.tag_)) * _CHAR
        xs[token.i] = x + width / 2
        x += width + _GAP
    # a phrase's level: one above its highest child (a word is level 0)
    level: Dict[Tuple[int, int], int] = {}
    centre: Dict[Tuple[int, int], float] = {}
    children: Dict[Tuple[int, int], List[Tuple[int, int]]] = {}
    for key in sorted(labels_of, key=lambda n: n[1] - n[0]):
        kids = _children(key, nodes)
        children[key] = kids
        level[key] = 1 + max((level.get(k, 0) for k in kids), default=0)
        centre[key] = sum(centre.get(k, xs[k[0]]) for k in kids) / len(kids) if kids else xs[key[0]]
    word_y = (max(level.values(), default=0)) * _LEVEL + 30

    parts: List[str] = []
    for key, labels in labels_of.items():
        y = word_y - level[key] * _LEVEL
        for kid in children[key] or [(key[0], key[0] + 1)]:
            if kid in labels_of and kid != key:
                kx, ky = centre[kid], word_y - level[kid] * _LEVEL - 12
            else:
                kx, ky = xs[kid[0]], word_y - 12
            parts.append(f"<line x1='{centre[key]:.1f}' y1='{y + 4:.1f}' x2='{kx:.1f}' y2='{ky:.1f}' "
                         f"stroke='#999' stroke-width='1'/>")
        parts.append(f"<text x='{centre[key]:.1f}' y='{y:.1f}' text-anchor='middle' font-size='12' "
                     f"font-weight='bold'>{html.escape(' > '.join(labels))}</text>")
    for token in sent:
        parts.append(f"<text x='{xs[token.i]:.1f}' y='{word_y:.1f}' text-anchor='middle' font-size='12'>"
                     f"{html.escape(token.text)}</text>")
        if token.tag_:
            parts.append(f"<text x='{xs[token.i]:.1f}' y='{word_y + 13:.1f}' text-anchor='middle' "
                         f"font-size='9' fill='#888'>{html.escape(token.tag_)}</text>")
    bars = _entity_rows(sent, spans_key)
    colours: Dict[str, str] = {}
    for row, (start, end, label) in bars:
        colour = colours.setdefault(label, _COLOURS[len(colours) % len(_COLOURS)])
        x0 = xs[start] - len(doc[start].text) * _CHAR / 2 - 3
        x1 = xs[end - 1] + len(doc[end - 1].text) * _CHAR / 2 + 3
        y = word_y + 20 + row * _BAR
        parts.append(f"<rect x='{x0:.1f}' y='{y:.1f}' width='{x1 - x0:.1f}' height='{_BAR - 3}' rx='3' "
                     f"fill='{colour}'/>")
        parts.append(f"<text x='{x0 + 3:.1f}' y='{y + 10:.1f}' font-size='9'>{html.escape(label)}</text>")
    height = word_y + 24 + (max((r for r, _ in bars), default=-1) + 1) * _BAR + 8
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{x:.0f}' height='{height:.0f}' "
            f"font-family='sans-serif'>{''.join(parts)}</svg>")


def _children(key: Tuple[int, int], nodes: Sequence[Tuple[int, int, tuple]]) -> List[Tuple[int, int]]:
    """The children of node `key` (phrases and words, as (start, end)): the
    largest stored nodes inside it, left to right; none for a one-word node."""
    s, e = key
    inside = sorted({(a, b) for a, b, _ in nodes if s <= a and b <= e and (a, b) != (s, e)},
                    key=lambda n: (n[0], -(n[1] - n[0])))
    out, at = [], s
    for a, b in inside:
        if a >= at:
            out.append((a, b))
            at = b
    return out


def _entity_rows(sent: Span, spans_key: str) -> List[Tuple[int, Tuple[int, int, str]]]:
    """Entities of the sentence with the row of their bar: outer ones on
    top, a nested one a row below the one around it."""
    spans = [(s.start, s.end, s.label_) for s in sent.doc.spans.get(spans_key, [])
             if sent.start <= s.start and s.end <= sent.end]
    spans.sort(key=lambda x: (-(x[1] - x[0]), x[0]))
    rows: List[Tuple[int, Tuple[int, int, str]]] = []
    for span in spans:
        row = 0
        for r, other in rows:
            if other[0] < span[1] and span[0] < other[1]:
                row = max(row, r + 1)
        rows.append((row, span))
    return rows
