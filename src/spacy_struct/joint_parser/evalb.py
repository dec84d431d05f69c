"""Labeled bracket scores as `evalb` computes them with COLLINS.prm.

What evalb does (and so this module), per sentence:
- words whose tag is a deleted label (`,` `:` `` '' `.` and -NONE-) are
  removed, and every bracket is re-indexed over the words left;
- a bracket that then covers no word is dropped, and so is one whose label,
  cut at its first "-" or "=" (function tags), is a deleted label (TOP);
- labels equal under EQ_LABEL (ADVP = PRT) match each other;
- brackets are matched one to one by (start, end, label), so the two NPs of
  an NP -> NP chain are two brackets, and single-word brackets count.
Precision is matched / test brackets, recall matched / gold brackets, both
summed over the sentences (micro), as evalb's "Bracketing" summary lines.

Both trees of a sentence are read with the same tags (the gold ones), as
parsers that do not predict tags are scored: the words evalb deletes are
then the same in both.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple



@dataclass(frozen=True)
class EvalbParams:
    """The settings of an evalb parameter file that change the scores."""

    delete_labels: FrozenSet[str] = frozenset({"TOP", "-NONE-", ",", ":", "``", "''", "."})
    equal_labels: Tuple[Tuple[str, str], ...] = (("ADVP", "PRT"),)

    def canonical(self, label: str) -> str:
        """The label cut at its function tags, with equal labels made one."""
        for k, ch in enumerate(label):
            if ch in "-=":
                label = label[:k]
                break
        for a, b in self.equal_labels:
            if label == b:
                return a
        return label


COLLINS = EvalbParams()


@dataclass
class BracketCounts:
    """Matched, gold and test brackets, summed over sentences."""

    matched: int = 0
    gold: int = 0
    test: int = 0
    sentences: int = 0
    per_label: Dict[str, List[int]] = field(default_factory=dict)  # label -> [matched, gold, test]

    @property
    def precision(self) -> float:
        return self.matched / self.test if self.test else 0.0

    @property
    def recall(self) -> float:
        return self.matched / self.gold if self.gold else 0.0

    @property
    def f(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


Constituents = Iterable[Tuple[int, int, str]]


def evalb_brackets(items: Constituents, tags: Sequence[Optional[str]],
                   params: EvalbParams = COLLINS) -> Counter:
    """The brackets evalb scores among a sentence's constituents (start,
    end exclusive, label; `trees.constituents` of a tree), given its words'
    tags: a multiset of (start, end, label) over the words not deleted."""
    deleted = params.delete_labels
    kept_before = [0]
    for tag in tags:
        kept_before.append(kept_before[-1] + (0 if tag in deleted else 1))
    out: Counter = Counter()
    for start, end, label in items:
        s, e = kept_before[start], kept_before[end]
        if s == e:
            continue
        label = params.canonical(label)
        if label in deleted:
            continue
        out[(s, e, label)] += 1
    return out


def score_brackets(pairs: Iterable[Tuple[Constituents, Constituents, Sequence[Optional[str]]]],
                   params: EvalbParams = COLLINS) -> BracketCounts:
    """Score (gold constituents, test constituents, tags) per sentence, e.g.
    from `trees.constituents` of two trees (which leaves entity nodes out)."""
    counts = BracketCounts()
    for gold_items, test_items, tags in pairs:
        gold = evalb_brackets(gold_items, tags, params)
        test = evalb_brackets(test_items, tags, params)
        matched = gold & test
        counts.matched += sum(matched.values())
        counts.gold += sum(gold.values())
        counts.test += sum(test.values())
        counts.sentences += 1
        for bag, slot in ((matched, 0), (gold, 1), (test, 2)):
            for (_, _, label), k in bag.items():
                counts.per_label.setdefault(label, [0, 0, 0])[slot] += k
    return counts
