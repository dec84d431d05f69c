"""One lexicon from several chains: each type's analysis that the chains
agree with most.

Why: the sampler's runs from different seeds settle in different modes,
and which mode a run reaches is most of what separates two seeds' scores
(on the Mongolian sentences one chain's last draws hardly move within a
run, while the seeds spread by 0.7 token F1: docs/results/morph.md).
The boundary F1 the segmentation is judged by counts each cut on its
own, so the choice with the least expected boundary error, taking the
chains as draws from the posterior, is per type the analysis whose cuts
differ least from the other chains' cuts in total (a minimum Bayes risk
choice among the analyses the chains reached). It is always one chain's
analysis, so its stem and the letter restored to it come with it; where
the chains tie, the first chain's is kept, so one chain is the model as
before and a run is reproducible.
"""
from __future__ import annotations

from typing import Sequence, Tuple

import numpy as np

#: the seed of chain c is the configured seed + c * CHAIN_SEED_STRIDE, so
#: chain 0 is the configured seed's own run and no chain of one seed is a
#: chain of another (below 2**32)
CHAIN_SEED_STRIDE = 2 ** 32


def chain_seed(seed: int, chain: int) -> int:
    """The sampler seed of chain `chain` (0-based) of a model seeded `seed`."""
    return seed + chain * CHAIN_SEED_STRIDE


def consensus_rows(chain_rows: np.ndarray, cuts: Sequence[Tuple[int, ...]]) -> np.ndarray:
    """Per type, the row (hypothesis) of the chain whose cuts differ least
    from the other chains' cuts of that type.

    chain_rows: (chains, types) ints, each chain's hypothesis row per type.
    cuts: per hypothesis row, its cut positions (increasing).
    RETURNS: (types,) the rows chosen: of the chains' rows of a type, the
        one with the fewest cuts, summed over the other chains, that one
        of the two has and the other lacks; the first chain's on a tie.
    """
    chain_rows = np.asarray(chain_rows)
    if chain_rows.ndim != 2 or chain_rows.shape[0] == 0:
        raise ValueError(f"chain_rows must be (chains, types) with at least one chain, got shape {chain_rows.shape}")
    chosen = chain_rows[0].copy()
    disputed = np.flatnonzero((chain_rows != chain_rows[0]).any(axis=0))
    for t in disputed:
        rows = chain_rows[:, t]
        sets = [frozenset(cuts[r]) for r in rows]
        errors = [sum(len(a ^ b) for b in sets) for a in sets]
        chosen[t] = rows[int(np.argmin(errors))]  # argmin keeps the first of equals
    return chosen


def agreement(chain_rows: np.ndarray, chosen: np.ndarray) -> dict:
    """How far the chains agreed: of the types (`chain_rows` (chains,
    types)), how many some chain analysed otherwise than another
    ("disputed"), and how many keep another analysis than the first
    chain's ("not_first_chain")."""
    chain_rows = np.asarray(chain_rows)
    return {"chains": int(chain_rows.shape[0]), "types": int(chain_rows.shape[1]),
            "disputed": int((chain_rows != chain_rows[0]).any(axis=0).sum()),
            "not_first_chain": int((np.asarray(chosen) != chain_rows[0]).sum())}
