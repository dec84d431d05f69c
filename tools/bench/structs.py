"""Speed of every structure decoder next to its straightforward numpy reference.

Both sides decode the same random score arrays in the same process, so the
ratio holds even on a noisy machine. The Cython side gets the whole batch in
one call (its intended use); the reference is called sentence by sentence,
as a numpy implementation would be. Every row also checks that both sides
agree on the result (the argmax's score, log Z and every marginal, the
k-best scores in order), so a fast wrong answer cannot pass as a speed-up.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, List, Sequence

import numpy as np

from spacy_struct.structs import dependency, segments, siblings, spans
from spacy_struct.structs.reference import dependency as ref_dependency
from spacy_struct.structs.reference import segments as ref_segments
from spacy_struct.structs.reference import siblings as ref_siblings
from spacy_struct.structs.reference import spans as ref_spans

N_LABELS = 5       # span labels (GENIA has 5 entity types)
N_TYPES = 3        # segment types
K_BEST = 10        # segments kept per type


@dataclass
class Case:
    name: str
    make: Callable[[int, np.random.Generator], np.ndarray]
    fast: Callable[[List[np.ndarray]], list]          # batched
    slow: Callable[[np.ndarray], object]              # one sentence
    value: Callable[[np.ndarray, object], object]     # what both sides must agree on
    note: str = ""


def _arcs(n, rng):
    return rng.normal(scale=2.0, size=(n + 1, n + 1))


def _parts(n, rng):
    return rng.normal(scale=2.0, size=(n + 1, n + 1, n + 1))


def _part_tree(s, heads):
    return siblings.tree_part_score(s, heads)


def _spans(n, rng):
    return rng.normal(scale=2.0, size=(n, n, N_LABELS))


def _segments(n, rng):
    return rng.normal(scale=2.0, size=(N_TYPES, n + 2, n + 2))


def _tree(s, heads):
    return dependency.tree_score(s, heads)


def _log_z(s, result):
    return float(result[0] if isinstance(result, tuple) else result)


def _log_z_and_marginals(s, result):
    return np.concatenate([[result[0]], np.ravel(result[1])])


def _span_score(s, result):
    return float(result[1])


def _segment_scores(s, result):
    return np.asarray(result.scores)


CASES = [
    Case("chu_liu_edmonds single-root", _arcs,
         lambda b: dependency.chu_liu_edmonds(b), lambda s: ref_dependency.chu_liu_edmonds(s), _tree,
         "reference: recursive contraction, one decode per root child when needed"),
    Case("chu_liu_edmonds multi-root", _arcs,
         lambda b: dependency.chu_liu_edmonds(b, single_root=False),
         lambda s: ref_dependency.chu_liu_edmonds(s, single_root=False), _tree),
    Case("eisner argmax", _arcs, lambda b: dependency.eisner(b), lambda s: ref_dependency.eisner(s), _tree),
    Case("eisner log Z + marginals", _arcs, lambda b: dependency.eisner_marginals(b),
         lambda s: ref_dependency.eisner_log_partition(s), _log_z, "reference computes log Z only"),
    Case("matrix-tree log Z + marginals", _arcs, lambda b: dependency.matrix_tree_marginals(b),
         lambda s: ref_dependency.matrix_tree_marginals(s), _log_z_and_marginals,
         "reference: numpy/LAPACK, one slogdet and one inverse per sentence"),
    Case("second-order eisner argmax", _parts, lambda b: siblings.sibling_eisner(b),
         lambda s: ref_siblings.sibling_eisner(s), _part_tree),
    Case("second-order eisner log Z + marginals", _parts, lambda b: siblings.sibling_marginals(b),
         lambda s: ref_siblings.sibling_log_partition(s), _log_z, "reference computes log Z only"),
    Case("cky argmax", _spans, lambda b: spans.cky_argmax(b), lambda s: ref_spans.cky_argmax(s), _span_score),
    Case("cky log Z + marginals", _spans, lambda b: spans.cky_marginals(b),
         lambda s: ref_spans.cky_marginals(s), _log_z_and_marginals),
    Case("laminar argmax", _spans, lambda b: spans.laminar_argmax(b),
         lambda s: ref_spans.laminar_argmax(s), _span_score),
    Case("laminar log Z + marginals", _spans, lambda b: spans.laminar_marginals(b),
         lambda s: ref_spans.laminar_marginals(s), _log_z_and_marginals),
    Case(f"k-best segments (T={N_TYPES}, k={K_BEST})", _segments,
         lambda b: segments.kbest_segments(b, K_BEST), lambda s: ref_segments.kbest_segments(s, K_BEST),
         _segment_scores),
]


def _rate(run: Callable[[], object], count: int, min_time: float) -> float:
    """Items per second of `run`, repeated until `min_time` has passed."""
    run()                                   # warm up (allocation, imports)
    reps, start = 0, time.perf_counter()
    while True:
        run()
        reps += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return reps * count / elapsed


def measure(case: Case, n: int, batch: int, min_time: float, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed + n)
    data = [case.make(n, rng) for _ in range(batch)]
    fast_out = case.fast(data)
    # the reference gets as many sentences as it manages in about min_time
    slow_start = time.perf_counter()
    slow_out = []
    for s in data:
        slow_out.append(case.slow(s))
        if time.perf_counter() - slow_start > min_time and len(slow_out) >= 2:
            break
    checked = len(slow_out)
    agree = all(
        np.allclose(case.value(s, f), case.value(s, r), rtol=1e-7, atol=1e-7)
        for s, f, r in zip(data, fast_out, slow_out)
    )
    fast_rate = _rate(lambda: case.fast(data), batch, min_time)
    subset = data[:checked]
    slow_rate = _rate(lambda: [case.slow(s) for s in subset], checked, min_time)
    return {"decoder": case.name, "n": n, "fast": fast_rate, "slow": slow_rate,
            "ratio": fast_rate / slow_rate, "agree": agree, "checked": checked}


def run(sizes: Sequence[int] = (10, 20, 40, 80), batch: int = 64, min_time: float = 0.3,
        only: str = "", skip: str = "") -> List[dict]:
    rows = []
    for case in CASES:
        if (only and only not in case.name) or (skip and skip in case.name):
            continue
        for n in sizes:
            rows.append(measure(case, n, batch, min_time))
    return rows


def format_table(rows: List[dict]) -> str:
    lines = [
        "| decoder | n | Cython sent/s | numpy reference sent/s | ratio | same result |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['decoder']} | {r['n']} | {r['fast']:,.0f} | {r['slow']:,.1f} | "
            f"{r['ratio']:,.0f}x | {'yes' if r['agree'] else 'NO'} ({r['checked']} sent.) |"
        )
    shown = {r["decoder"] for r in rows}
    notes = [f"- {c.name}: {c.note}" for c in CASES if c.note and c.name in shown]
    return "\n".join(lines + [""] + notes)
