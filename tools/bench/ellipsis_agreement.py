"""How consistently a corpus annotates coordination ellipsis, and which of a
model's gapped segments fall where it does not.

In "human and mouse CD19 genes" GENIA (3.02, coordinated terms restored)
annotates the first conjunct as [human] + [CD19 genes]; in "NF-AT and
AP-1 sites" it annotates [NF-AT] alone and [AP-1 sites]. Both are the same
construction, a conjunct A, a coordinator, and a mention "B ... N" whose
head N A shares or not. A model can only learn which one the annotators
chose from the words, so this measures how much the choice is a property
of the words:

- a *site* is a gold contiguous mention "B ... N" of two words or more
  right after a coordinator, and before the coordinator a conjunct A of one
  to three words that does not end with N's last word ("B cells and T
  cells" coordinates two whole names); it is *gapped* when a gold mention
  is made of A and later fragments, *alone* when A is a gold mention of
  its own, and counted once, with the shortest such A (gapped before
  alone; sites with neither are not counted);
- sites with the same words (A lowercased, the head N lowercased) are
  compared: the share of them on their key's majority side is the
  agreement a model that memorizes each key could reach, and the keys
  annotated both ways are listed;
- per head N, how many of its sites are gapped.

With `--model PIPELINE`, the model's gapped segments on the same corpus
are sorted: right, wrong with the same fragments and another label, wrong
with the first fragment a gold mention of its own, wrong otherwise; and
the gold ones it missed. With `--keys-from OTHER.spacy` too, the second
kind is split by whether its key (the first fragment's words, the last
word) is annotated gapped in OTHER: the construction the corpus
annotates both ways.

With `--rates-from OTHER.spacy`, how well OTHER's rates predict how the
corpus's sites are annotated: each site called gapped when the share of
gapped sites of its key in OTHER is above 1/2, the key's share smoothed
towards its head's and the head's towards OTHER's overall share (two
pseudo-sites each). Against always "alone" (the majority), it measures how
much of the choice a lexicon of keys and heads learned from OTHER carries
to new text. With `--model` the model's calls are compared the same way:
a site is called gapped when the model outputs a gapped segment from its
conjunct A to its head N.

`python -m tools.bench.ellipsis_agreement CORPUS.spacy [--model PIPELINE [--keys-from OTHER.spacy]] [--rates-from OTHER.spacy]`
"""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

from .segments import GAP_COORDINATORS as COORDINATORS  # the words the bench counts as coordinators

MAX_CONJUNCT = 3

Key = Tuple[str, str]


def sites(words: List[str], segments: Iterable[Tuple[str, Tuple[Tuple[int, int], ...]]]) -> List[Tuple[Key, str]]:
    """The coordination sites of one sentence and how each is annotated.

    words: the sentence's words.
    segments: its gold mentions as (label, fragments), fragments (start,
        end) token offsets, end exclusive.
    RETURNS: ((conjunct A lowercased, head N lowercased), "gapped" or
        "alone") per site.
    """
    return [(site_key(words, conjunct, head), kind) for conjunct, head, kind in site_positions(words, segments)]


def site_positions(words: List[str], segments: Iterable[Tuple[str, Tuple[Tuple[int, int], ...]]]
                   ) -> List[Tuple[Tuple[int, int], int, str]]:
    """`sites` as positions: (conjunct A's (start, end), the index of the
    head N, "gapped" or "alone") per site."""
    segments = list(segments)
    contiguous = {frags[0] for _, frags in segments if len(frags) == 1}
    gapped_first = {frags[0] for _, frags in segments if len(frags) > 1}
    found = []
    for start, end in sorted(contiguous):
        if end - start < 2 or start < 2 or words[start - 1].lower() not in COORDINATORS:
            continue
        head = words[end - 1].lower()
        if words[start - 2].lower() == head:
            continue  # A ends with the head already ("B cells and T cells"): nothing shared
        # conjuncts A ending before the coordinator, shortest first
        conjuncts = [(a_start, start - 1) for a_start in range(start - 2, max(-1, start - 2 - MAX_CONJUNCT), -1)]
        # one site per mention "B ... N": gapped if some A is, else alone
        for kind, annotated in (("gapped", gapped_first), ("alone", contiguous)):
            conjunct = next((a for a in conjuncts if a in annotated), None)
            if conjunct is not None:
                found.append((conjunct, end - 1, kind))
                break
    return found


def site_key(words: List[str], conjunct: Tuple[int, int], head: int) -> Key:
    """A site's key: the conjunct's words (start, end) and the head word
    at index `head`, lowercased."""
    return " ".join(words[conjunct[0]:conjunct[1]]).lower(), words[head].lower()


def corpus_sites(docs) -> List[Tuple[Key, str]]:
    """`sites` of every doc, from its gold `doc._.segments`."""
    from spacy_struct.overlap_segmenter.scoring import get_segments

    found: List[Tuple[Key, str]] = []
    for doc in docs:
        found.extend(sites([t.text for t in doc], ((s.label_, tuple(s.offsets)) for s in get_segments(doc))))
    return found


def kinds_by_key_and_head(all_sites: List[Tuple[Key, str]]) -> Tuple[Dict[Key, Counter], Dict[str, Counter]]:
    """How many sites of each kind there are per key and per head N."""
    by_key: Dict[Key, Counter] = defaultdict(Counter)
    by_head: Dict[str, Counter] = defaultdict(Counter)
    for key, kind in all_sites:
        by_key[key][kind] += 1
        by_head[key[1]][kind] += 1
    return by_key, by_head


def agreement(all_sites: List[Tuple[Key, str]]) -> Dict[str, object]:
    """Counts, the majority agreement over repeated keys, the keys seen both
    ways and the gapped share per head, from `sites` of a whole corpus."""
    by_key, by_head = kinds_by_key_and_head(all_sites)
    repeated = {k: v for k, v in by_key.items() if sum(v.values()) >= 2}
    n_repeated = sum(sum(v.values()) for v in repeated.values())
    return {
        "sites": Counter(kind for _, kind in all_sites),
        "keys": len(by_key),
        "repeated_keys": len(repeated),
        "repeated_sites": n_repeated,
        "majority_agreement": sum(max(v.values()) for v in repeated.values()) / n_repeated if n_repeated else None,
        "mixed": {k: v for k, v in by_key.items() if len(v) > 1},
        "repeated_gapped": sum(v["gapped"] for v in repeated.values()),
        "mixed_gapped": sum(v["gapped"] for v in repeated.values() if len(v) > 1),
        "by_head": by_head,
    }


def predict_by_rates(learned: List[Tuple[Key, str]], scored: List[Tuple[Key, str]],
                     pseudo: float = 2.0) -> Dict[str, float]:
    """How well the gapped shares of keys and heads in `learned` sites
    predict how the `scored` sites are annotated (see the module docstring).

    learned, scored: `sites` of two corpora.
    pseudo: the pseudo-sites that pull a key's share to its head's, and a
        head's to the overall share.
    RETURNS: sites, accuracy, the accuracy of always "alone", and the P, R
        and F1 of the sites called gapped (fractions).
    """
    by_key, by_head = kinds_by_key_and_head(learned)
    overall = sum(kind == "gapped" for _, kind in learned) / len(learned) if learned else 0.0

    def share(count: Counter, prior: float) -> float:
        return (count["gapped"] + pseudo * prior) / (sum(count.values()) + pseudo)

    return score_calls([(kind, share(by_key[key], share(by_head[key[1]], overall)) > 0.5) for key, kind in scored])


def model_calls(gold_docs, predicted_docs) -> List[Tuple[str, bool]]:
    """How a model calls the gold sites: per site of the gold docs, its
    kind and whether the model output a gapped segment whose first
    fragment is the site's conjunct A and whose last word is its head N
    (docs in the same order, with `doc._.segments`)."""
    from spacy_struct.overlap_segmenter.scoring import get_segments

    calls = []
    for gold_doc, doc in zip(gold_docs, predicted_docs):
        words = [t.text for t in gold_doc]
        guessed = {(frags[0], frags[-1][1] - 1) for frags in (tuple(s.offsets) for s in get_segments(doc))
                   if len(frags) > 1}
        gold = ((s.label_, tuple(s.offsets)) for s in get_segments(gold_doc))
        calls.extend((kind, (conjunct, head) in guessed) for conjunct, head, kind in site_positions(words, gold))
    return calls


def score_calls(calls: List[Tuple[str, bool]]) -> Dict[str, float]:
    """Sites, accuracy, the accuracy of always "alone", and the P, R and F1
    of the sites called gapped (fractions), from (kind, called gapped)
    pairs."""
    tp = sum(called and kind == "gapped" for kind, called in calls)
    fp = sum(called and kind != "gapped" for kind, called in calls)
    fn = sum(not called and kind == "gapped" for kind, called in calls)
    n = len(calls)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {
        "sites": n,
        "accuracy": sum(called == (kind == "gapped") for kind, called in calls) / n if n else 0.0,
        "majority_accuracy": sum(kind == "alone" for kind, _ in calls) / n if n else 0.0,
        "precision": precision, "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
    }


def gapped_errors(gold_docs, predicted_docs, gapped_keys: Optional[Set[Key]] = None) -> Counter:
    """The model's gapped segments and the gold ones, sorted as the module's
    docstring says; docs in the same order, with `doc._.segments`.
    gapped_keys: keys annotated gapped elsewhere (`sites` of another corpus).
    """
    from spacy_struct.overlap_segmenter.scoring import _reference_keys, get_segments

    counts: Counter = Counter()
    for gold_doc, doc in zip(gold_docs, predicted_docs):
        gold = _reference_keys(get_segments(gold_doc))
        guess = _reference_keys(get_segments(doc))
        gold_gapped = {k for k in gold if len(k[1]) > 1}
        guess_gapped = {k for k in guess if len(k[1]) > 1}
        counts["right"] += len(gold_gapped & guess_gapped)
        counts["missed"] += len(gold_gapped - guess_gapped)
        for label, frags in guess_gapped - gold_gapped:
            if any(g_frags == frags for _, g_frags in gold_gapped):
                counts["wrong: another label"] += 1
            elif any(g_frags == (frags[0],) for _, g_frags in gold):
                counts["wrong: first fragment a gold mention of its own"] += 1
                if gapped_keys is not None:
                    key = site_key([t.text for t in gold_doc], frags[0], frags[-1][1] - 1)
                    counts["  of which the key is annotated gapped elsewhere"] += key in gapped_keys
            else:
                counts["wrong: other"] += 1
    return counts


def print_calls(caller: str, called: Dict[str, float]) -> None:
    """One line: how `caller` called the sites (`score_calls`' figures)."""
    print(f"the {called['sites']} sites as called by {caller}: accuracy {100 * called['accuracy']:.1f}% "
          f"(always 'alone': {100 * called['majority_accuracy']:.1f}%); gapped P "
          f"{100 * called['precision']:.1f} / R {100 * called['recall']:.1f} / F1 {100 * called['f1']:.1f}")


def main(argv: Optional[List[str]] = None) -> int:
    import argparse

    import spacy
    from spacy.tokens import Doc, DocBin

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a .spacy file with doc._.segments")
    parser.add_argument("--model", type=Path, help="an overlap_segmenter pipeline to sort the errors of")
    parser.add_argument("--keys-from", type=Path, help="with --model: a corpus whose gapped keys to look the errors up in")
    parser.add_argument("--rates-from", type=Path,
                        help="a corpus whose keys' and heads' gapped shares predict this corpus's sites")
    parser.add_argument("--heads", type=int, default=12, help="how many heads to list")
    args = parser.parse_args(argv)

    nlp = spacy.load(args.model) if args.model else spacy.blank("en")
    gold_docs = list(DocBin().from_disk(args.corpus).get_docs(nlp.vocab))
    all_sites = corpus_sites(gold_docs)
    found = agreement(all_sites)
    print(f"{args.corpus}: {len(all_sites)} coordination sites, {dict(found['sites'])}")
    if found["repeated_sites"]:
        print(f"{found['repeated_keys']} keys (A, N) occur twice or more ({found['repeated_sites']} sites): "
              f"{100 * found['majority_agreement']:.1f}% of those sites are on their key's majority side; "
              f"{len(found['mixed'])} keys are annotated both ways; of the {found['repeated_gapped']} gapped sites "
              f"among them, {found['mixed_gapped']} have a key annotated alone elsewhere")
    for key, count in sorted(found["mixed"].items(), key=lambda kv: -sum(kv[1].values()))[:10]:
        print(f"  {key[0]!r} ... {key[1]!r}: {dict(count)}")
    print("gapped share per head N (the commonest heads):")
    for head, count in sorted(found["by_head"].items(), key=lambda kv: -sum(kv[1].values()))[:args.heads]:
        total = sum(count.values())
        print(f"  {head!r}: {count['gapped']} of {total} gapped ({100 * count['gapped'] / total:.0f}%)")
    if args.rates_from:
        learned = corpus_sites(DocBin().from_disk(args.rates_from).get_docs(nlp.vocab))
        print_calls(f"the gapped shares of {args.rates_from}'s {len(learned)} sites",
                    predict_by_rates(learned, all_sites))
    if args.model:
        docs = list(nlp.pipe(Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d])
                             for d in gold_docs))
        gapped_keys = None
        if args.keys_from:
            other = DocBin().from_disk(args.keys_from).get_docs(nlp.vocab)
            gapped_keys = {key for key, kind in corpus_sites(other) if kind == "gapped"}
        print_calls(str(args.model), score_calls(model_calls(gold_docs, docs)))
        for kind, count in gapped_errors(gold_docs, docs, gapped_keys).items():
            print(f"{args.model}'s gapped segments, {kind}: {count}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
