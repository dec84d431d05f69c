"""How likely a string is as a stem the model has never seen: a character
model of the stems it has learned.

Lee et al.'s lexicon prices a new morph by its length alone,
gl (1 - gl)^length: every character costs the same, whatever it is. For a
word the model never saw, that makes leaving it whole nearly as cheap as
splitting off a suffix it knows: "jurists" as one new stem costs one
character more than the new stem "jurist", and the known suffix "s" costs
about as much as that character, so new words stay whole unless their stem
is already in the lexicon. Spelled by a character model of the learned stems
instead, "jurists" must spell a stem that ends in "-sts", which stems
rarely do, while "jurist" + "s" spells an ordinary stem and a suffix the
lexicon holds: the learned stems and affixes decide where a new word is cut.

`Spelling` is an interpolated character n-gram model (Witten-Bell) over the
distinct learned stems, with a start and an end mark, so it also prices the
length. It is a distribution over strings, as the geometric length is, and
it is learned from the model's own lexicon: nothing beyond the text the
model learned from.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Tuple

START, END = "\x02", "\x03"


class Spelling:
    """Log probabilities of strings under a character n-gram model."""

    def __init__(self, strings: Iterable[str], order: int = 3) -> None:
        """strings: the training strings (each counted once per occurrence;
        pass distinct stems for a type-level model). order: n of the n-grams
        (1 = characters alone)."""
        if order < 1:
            raise ValueError(f"Spelling: order must be at least 1, got {order!r}")
        self.order = order
        #: counts[k][context of k characters][next character]
        counts: List[Dict[str, Counter]] = [defaultdict(Counter) for _ in range(order)]
        alphabet = set()
        for string in strings:
            alphabet.update(string)
            padded = START * (order - 1) + string + END
            for i in range(order - 1, len(padded)):
                for k in range(order):
                    counts[k][padded[i - k:i]][padded[i]] += 1
        #: the uniform base: every character seen and the end mark, plus one
        #: for the characters never seen
        self.base = 1.0 / (len(alphabet) + 2)
        self._counts = [
            {context: (dict(nexts), sum(nexts.values()), len(nexts)) for context, nexts in level.items()}
            for level in counts
        ]
        self._char_cache: Dict[Tuple[str, str], float] = {}
        self._cache: Dict[str, float] = {}

    def _char_log_prob(self, context: str, char: str) -> float:
        key = (context, char)
        cached = self._char_cache.get(key)
        if cached is not None:
            return cached
        p = self.base
        for k in range(self.order):
            found = self._counts[k].get(context[len(context) - k:] if k else "")
            if found is None:
                break  # a longer context is unseen too
            nexts, total, kinds = found
            weight = total / (total + kinds)
            p = weight * nexts.get(char, 0) / total + (1.0 - weight) * p
        value = self._char_cache[key] = math.log(p)
        return value

    def log_prob(self, string: str) -> float:
        """log P(string), end mark included."""
        cached = self._cache.get(string)
        if cached is not None:
            return cached
        n = self.order - 1
        padded = START * n + string + END
        value = sum(self._char_log_prob(padded[i - n:i], padded[i]) for i in range(n, len(padded)))
        if len(self._cache) < 1_000_000:
            self._cache[string] = value
        return value
