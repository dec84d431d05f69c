"""How likely a string is as a morph the model has never seen: a character
model of the stems it has learned.

Lee et al.'s lexicon prices a new morph by its length alone,
gl (1 - gl)^length: a distribution over lengths, not over strings, in which
a character costs -log(1 - gl) = 0.69 nats at gl = 1/2, as if the alphabet
had two letters. For a word the model never saw, that makes leaving it
whole nearly as cheap as splitting off a suffix it knows: "jurists" as one
new stem costs one character more than the new stem "jurist", and the known
suffix "s" costs about as much as that character, so new words stay whole
unless their stem is already in the lexicon. A distribution over strings
must pay for which character comes, about 2.2 nats a character under this
model on the SIGMORPHON sentence sets: then a known affix, which costs no
spelling at all, comes off a new stem.

`Spelling` is an interpolated character n-gram model (Witten-Bell) over the
distinct learned stems, with a start and an end mark, so it also prices the
length; it is learned from the model's own lexicon, with no setting to
tune. What it gains on new words comes from that price per character, not
from which characters it prefers: a flat price per character at the same
mean segments the unseen dev types within two points of it on every
sentence set (docs/components/morph_segmenter.md). Characters the stems
never hold share one bucket of the lowest order, each given all of it: a
price, not a distribution, for them.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Dict, Iterable, List, Tuple

START, END = "\x02", "\x03"
#: entries of each cache before it starts over
CACHE_SIZE = 100_000


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
        #: both caches start over when full: new words bring new strings and
        #: contexts without end
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
        if len(self._char_cache) >= CACHE_SIZE:
            self._char_cache.clear()
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
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()
        self._cache[string] = value
        return value
