"""Why a trained overlap_segmenter does (not) output discontinuous segments.

python -m tools.bench segment-probe PIPELINE CORPUS [--limit 2000]

On the sentences of CORPUS (a .spacy file with doc._.segments, one
sentence per doc) that hold a gold segment with a gap, it prints:

- the decoder on gold-derived scores: every transition a gold segment uses
  scores 0, every other one -20; the component's own decoding settings (k,
  max_gap, threshold, restrictions) then either return each gold gapped
  segment or exclude it, which separates what the decoder can output from
  what the model learned;
- what the trained model gives the gold gapped segments: their rate
  exp(f) (the "crf" loss's estimate of the probability that they are
  gold), their rank among the segments of their type in the sentence, and
  the terms of f (start, next, skip, end) beside the gold contiguous
  segments' terms (with the coordination factor, the rate includes its
  phi; the rank, the terms and the best gapped rate per sentence read
  the transitions alone);
- how many of them the settings exclude before any score is read.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List

import numpy as np


def _terms(S: np.ndarray, t: int, words) -> Dict[str, float]:
    from spacy_struct.structs.segments import transitions

    n = S.shape[1] - 2
    a, b = transitions(n, words)
    vals = S[t, a, b]
    gaps = np.diff(np.asarray(words)) - 1
    return {
        "start": float(vals[0]),
        "end": float(vals[-1]),
        "next": float(vals[1:-1][gaps == 0].sum()),
        "skip": float(vals[1:-1][gaps > 0].sum()),
        "total": float(vals.sum()),
    }


def probe(pipeline: Path, corpus: Path, limit: int = 2000) -> str:
    import spacy
    from spacy.training import Example

    from spacy_struct.corpus import SentenceDocs
    from spacy_struct.overlap_segmenter import get_segments
    from spacy_struct.structs.coordination import coordination_parts
    from spacy_struct.structs.segments import Segments, kbest_segments

    from spacy_struct.overlap_segmenter import OverlapSegmenter

    nlp = spacy.load(pipeline)
    comp = next((proc for _, proc in nlp.pipeline if isinstance(proc, OverlapSegmenter)), None)
    if comp is None:
        raise ValueError(f"{pipeline} has no overlap_segmenter (pipes: {nlp.pipe_names})")
    examples = []
    for eg in SentenceDocs(corpus, gold_preproc=True)(nlp):
        examples.append(eg)
        if len(examples) >= limit:
            break
    structure = comp.structure
    gapped_gold = contiguous_gold = 0
    excluded = reference_total = 0
    gold_decoded_found = 0
    gold_decoded_extra = 0
    rates: List[float] = []
    ranks: List[int] = []
    terms_gapped: List[Dict[str, float]] = []
    terms_contig: List[Dict[str, float]] = []
    best_gapped_rates: List[float] = []
    for eg in examples:
        # the component's own gold: what training sees, on the doc its
        # upstream pipes (the tok2vec) have run on
        predicted = eg.predicted
        for _, proc in nlp.pipeline:
            if proc is comp:
                break
            predicted = proc(predicted)
        eg = Example(predicted, eg.reference)
        # the component's gold leaves out what its settings cannot represent:
        # count those from the reference itself
        reference_gapped = [seg for seg in get_segments(eg.reference) if seg.is_discontinuous]
        excluded += sum(not comp._representable([i for s, e in seg.offsets for i in range(s, e)])
                        for seg in reference_gapped)
        reference_total += len(reference_gapped)
        ranges, golds = comp.gold(eg, 0)
        if not any(np.any(np.diff(w) > 1) for g in golds for _, w in g.keys()):
            continue
        _, batch, scores = comp.score_docs([predicted])
        for full, gold, (s0, e0) in zip(scores, golds, ranges):
            full = full.astype(np.float64)
            S = coordination_parts(full)[0]
            keys = gold.keys()
            gapped = [(t, w) for t, w in keys if np.any(np.diff(w) > 1)]
            gapped_gold += len(gapped)
            contiguous_gold += len(keys) - len(gapped)
            # decoder on gold-derived scores
            favour = np.full_like(S, -20.0)
            indicator = structure.indicator(S.shape, gold)
            favour[indicator > 0] = 0.0
            decoded = set(structure.argmax([favour])[0].keys())
            gold_decoded_found += sum(k in decoded for k in gapped)
            gold_decoded_extra += len(decoded - set(keys))
            # the trained model's scores
            n = S.shape[1] - 2
            best = kbest_segments(S, k=max(4 * n, 16))
            listed = best.as_list()
            for t, w in gapped:
                f = _terms(S, t, w)
                terms_gapped.append(f)
                rates.append(float(np.exp(structure.score(full, Segments.from_list([(t, w)])))))
                same_type = [sc for tt, ww, sc in listed if tt == t]
                ranks.append(int(sum(sc > f["total"] for sc in same_type)) + 1)
            for t, w in keys:
                if not np.any(np.diff(w) > 1):
                    terms_contig.append(_terms(S, t, w))
            gapped_scores = [sc for tt, ww, sc in listed if np.any(np.diff(ww) > 1)]
            if gapped_scores:
                best_gapped_rates.append(float(np.exp(max(gapped_scores))))
    lines = [f"pipeline {pipeline}, corpus {corpus}, first {len(examples)} docs", ""]
    lines.append(f"gold segments with a gap: {gapped_gold} (contiguous beside them: {contiguous_gold})")
    lines.append(f"gold segments with a gap that max_gap / contiguous exclude from training and "
                 f"prediction: {excluded} of {reference_total}")
    lines.append(
        f"decoder on gold-derived scores (gold transitions 0, others -20), component settings "
        f"(k={comp.cfg['k']}, max_gap={comp.cfg['max_gap']}, threshold={structure.threshold:.2f}, "
        f"overlap={comp.cfg['allow_overlap']}, embedding={comp.cfg['allow_embedding']}): "
        f"{gold_decoded_found} of {gapped_gold} gold gapped segments returned; "
        f"{gold_decoded_extra} other segments made of gold transitions returned beside them"
    )
    if rates:
        r = np.array(rates)
        lines.append("")
        lines.append("trained model, gold segments with a gap:")
        lines.append(
            f"  rate exp(f): median {np.median(r):.4f}, 90th pct {np.quantile(r, 0.9):.4f}, "
            f"max {r.max():.3f}; above the threshold ({np.exp(structure.threshold):.2f}): "
            f"{int((r > np.exp(structure.threshold)).sum())}; "
            f"above 0.1: {int((r > 0.1).sum())}"
        )
        rk = np.array(ranks)
        lines.append(
            f"  rank among the segments of their type in the sentence (the 4n best listed; "
            f"lower ones count as 4n + 1): median {np.median(rk):.0f}; "
            f"first {int((rk == 1).sum())}, top 3 {int((rk <= 3).sum())}, top 10 {int((rk <= 10).sum())}"
        )
        if best_gapped_rates:
            lines.append(
                f"  best gapped segment of any type per sentence: median rate "
                f"{np.median(best_gapped_rates):.4f}, max {max(best_gapped_rates):.3f}"
            )
        for label, terms in (("gapped gold", terms_gapped), ("contiguous gold", terms_contig)):
            med = {k: np.median([t[k] for t in terms]) for k in ("start", "next", "skip", "end", "total")}
            lines.append(
                f"  terms of f, median, {label}: " + ", ".join(f"{k} {v:+.2f}" for k, v in med.items())
            )
    return "\n".join(lines)
