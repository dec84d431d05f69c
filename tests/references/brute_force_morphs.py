"""The collapsed joint of Lee et al. (2011) recomputed from scratch, for
checking the sampler: from the sentences (lists of type ids), each type's
morph strings and roles, and the tags, with no counts kept between calls."""
from collections import Counter
from math import lgamma, log


def _dm(counts, alpha, size):
    if size == 0:
        return 0.0
    counts = [c for c in counts if c]
    return (lgamma(alpha * size) - lgamma(sum(counts) + alpha * size)
            + sum(lgamma(c + alpha) - lgamma(alpha) for c in counts))


def segmentation_of(table, h):
    """(prefix strings, stem string, suffix strings) of hypothesis h."""
    ids = list(table.morphs[h, :table.n_morphs[h]])
    strings = [table.morph_strings[k] for k in ids]
    stem = int(table.stem_pos[h])
    return strings[:stem], strings[stem], strings[stem + 1:]


def log_joint(segs, tags, sentences, words, settings, active_tags, token_pos, token_seg, most_morphs=5):
    """segs: per type (prefixes, stem, suffixes); tags: per type; sentences:
    lists of type ids; words: the types' strings; most_morphs: the most
    morphs a hypothesis of the table has (where the geometric prior on the
    number of morphs is truncated)."""
    gl, gs = settings["gamma_length"], settings["gamma_segments"]
    alpha = settings["alpha"]
    total = 0.0
    prefixes, stems, suffixes = set(), set(), set()
    for pre, stem, suf in segs:
        prefixes.update(pre)
        stems.add(stem)
        suffixes.update(suf)
    for s in prefixes | stems | suffixes:
        total += log(gl) + len(s) * log(1 - gl)
    for lexicon, key in ((prefixes, "gamma_prefix"), (stems, "gamma_stem"), (suffixes, "gamma_suffix")):
        total += log(settings[key]) + len(lexicon) * log(1 - settings[key])
    norm = sum(gs * (1 - gs) ** j for j in range(1, most_morphs + 1))
    for pre, stem, suf in segs:
        total += log(gs) + (len(pre) + 1 + len(suf)) * log(1 - gs) - log(norm)
    total += _dm(Counter(tags).values(), alpha, active_tags)
    total += _dm(Counter(stem for _, stem, _ in segs).values(), alpha, len(stems))
    for t in range(active_tags):
        total += _dm(Counter(p for (pre, _, _), tag in zip(segs, tags) if tag == t for p in pre).values(),
                     alpha, len(prefixes))
        total += _dm(Counter(s for (_, _, suf), tag in zip(segs, tags) if tag == t for s in suf).values(),
                     alpha, len(suffixes))
    tokens = Counter(i for sentence in sentences for i in sentence)
    if token_pos:
        a = settings["alpha_emission"]
        for t in range(active_tags):
            members = [i for i in range(len(segs)) if tags[i] == t]
            if members:
                total += _dm([tokens[i] for i in members], a, len(members))
                # _dm drops zero counts; every type here has tokens
        boundary = "B"
        transitions = Counter()
        for sentence in sentences:
            states = [boundary] + [tags[i] for i in sentence] + [boundary]
            transitions.update(zip(states, states[1:]))
        outcomes = list(range(active_tags)) + [boundary]
        for source in outcomes:
            total += _dm([transitions[source, b] for b in outcomes], settings["alpha_transition"], len(outcomes))
    if token_seg:
        betas = [log(b) for b in settings["betas"]]
        for sentence in sentences:
            for i, j in zip(sentence, sentence[1:]):
                s1 = segs[i][2][-1] if segs[i][2] else ""
                s2 = segs[j][2][-1] if segs[j][2] else ""
                n = max(len(s1), len(s2))
                if n == 0 or words[i][-n:] != words[j][-n:] or len(words[i]) < n or len(words[j]) < n:
                    total += betas[2]
                else:
                    total += betas[0] if s1 == s2 else betas[1]
    return total
