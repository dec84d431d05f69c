"""morph_segmenter against Morfessor on the SIGMORPHON 2022 sets, on dev.

Every system learns from the same text and segments the same dev words.
Two protocols: transductive (the set's train and dev words, the protocol
of Lee et al. and of the Morfessor figures the targets quote) and
inductive (`--protocol inductive`: the train words alone, as a user learns
once and segments new text; the dev types the train text holds and lacks
are also scored apart, and the model's last stage is also scored with its
new words priced otherwise, by length (the paper's price) and flat per
character, as the controls). Scores, by the same
functions (`spacy_struct.morph_segmenter.scoring`):

- boundary P/R/F1 on the dev words whose gold is a surface segmentation,
  token-weighted (every running word) and type-weighted (each word once);
- the shared task's own metric on every dev item, canonical gold included
  (a system's surface morphs cannot match a canonical gold such as
  "cause @@ing", so every system loses those alike).

Systems: the two trivial segmentations (no split; a split after every
character); Morfessor Baseline 2.0.6 (once per seed) and Morfessor FlatCat
1.0.8 (from each seed's Baseline segmentation: FlatCat takes no seed of
its own; perplexity threshold `--flatcat-ppl`), run by
their own command-line tools in the virtual environment the workflow
makes (`--morfessor-bin`); and morph_segmenter, whose one run per seed
passes through the model stages (basic, + tags, + tag HMM, + agreement),
each stage's state scored as that row of Lee et al.'s ablation, with the
length prior, the affixes and the stem limits chosen by the text's code
length as the component's `tune_priors` chooses them; beside it, the basic
stage with the paper's priors as the control of that choice. With `--semi` the
gold of the train words is given to FlatCat (annotations) and to
morph_segmenter (clamped types), which runs twice through every stage:
with the paper's priors, and with the priors those annotations choose
(`tune_priors`).
`--supervised LABEL=PIPELINE` adds a trained pipeline (`supervised_morph_segmenter`, learned by `spacy train`
from the train split's gold), run over the dev docs' words in context and
scored by the same functions. All systems see the words lowercased
where that keeps their length; the cuts apply to the word as written.
"""
from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

#: how the systems learn: from the train and dev text, or the train text alone
PROTOCOLS = ("transductive", "inductive")

#: set name -> (level, language); "ud" is a UD treebank's multiword tokens
#: (its folder as DATA_DIR), dev only, so its text is its dev text
SETS = {
    "sent-eng": ("sentence", "eng"),
    "sent-ces": ("sentence", "ces"),
    "sent-mon": ("sentence", "mon"),
    "word-ces": ("word", "ces"),
    "word-mon": ("word", "mon"),
    "htb": ("ud", "he_htb"),
}


def say(text: str) -> None:
    """A progress line on stderr: a set takes minutes to hours, and the
    tables are written only at its end."""
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def _form(word: str) -> str:
    lower = word.lower()
    return lower if len(lower) == len(word) else word


def _recase(word: str, morphs: Sequence[str]) -> List[str]:
    """The morphs of `_form(word)` as cuts of `word` itself."""
    out, at = [], 0
    for morph in morphs:
        out.append(word[at:at + len(morph)])
        at += len(morph)
    if at != len(word):
        return [word]
    return out


@dataclass
class Row:
    """One system's scores (several runs for a sampler)."""

    label: str
    runs: List[Dict[str, float]] = field(default_factory=list)
    seconds: List[float] = field(default_factory=list)
    note: str = ""
    #: segmentations of chosen words, a line per run
    shown: List[str] = field(default_factory=list)


def read_set(data_dir: Path, name: str):
    """(train items, dev items, dev reference Docs) of a set."""
    from spacy_struct.convert.morphology import read_sigmorphon

    level, lang = SETS[name]
    if level == "ud":
        references = ud_references(data_dir / f"{lang}-ud-dev.conllu")
        return [], [_item(doc) for doc in references], references
    files = []
    for split in ("train", "dev"):
        # the local copy keeps word/ and sentence/ apart; the shared task's
        # repository has them in one folder, Mongolian words under surprise/
        candidates = [data_dir / level / f"{lang}.{level}.{split}.tsv", data_dir / f"{lang}.{level}.{split}.tsv",
                      data_dir / "surprise" / f"{lang}.{level}.{split}.tsv"]
        found = next((c for c in candidates if c.exists()), None)
        if found is None:
            raise FileNotFoundError(f"no {lang}.{level}.{split}.tsv under {data_dir}")
        files.append(found)
    train = list(read_sigmorphon(files[0], level))
    return train, list(read_sigmorphon(files[1], level)), dev_references(files[1], level)


def _item(doc):
    """A reference Doc as an item of `read_sigmorphon`'s form."""
    from spacy_struct.annotations.morphs import CANONICAL_KEY, doc_morphs

    words = [t.text for t in doc]
    return "", words, [list(m) if m is not None else None for m in doc_morphs(doc)], \
        list(doc.user_data.get(CANONICAL_KEY, words)), None


def ud_references(path: Path):
    """A CoNLL-U file's sentences as reference Docs (`convert ud-morphs`)."""
    import spacy
    from spacy.tokens import DocBin

    from spacy_struct.convert.morphology import convert_ud_morphs

    with tempfile.TemporaryDirectory() as tmp:
        convert_ud_morphs(path, Path(tmp) / "dev.spacy")
        return list(DocBin().from_disk(Path(tmp) / "dev.spacy").get_docs(spacy.blank("xx").vocab))


def dev_references(dev_file: Path, level: str):
    """The dev items as reference Docs (converted as `convert sigmorphon` does)."""
    import spacy
    from spacy.tokens import DocBin

    from spacy_struct.convert.morphology import convert_sigmorphon

    with tempfile.TemporaryDirectory() as tmp:
        convert_sigmorphon(dev_file, Path(tmp) / "dev.spacy", level)
        return list(DocBin().from_disk(Path(tmp) / "dev.spacy").get_docs(spacy.blank("xx").vocab))


def setting_value(text: str):
    """A --setting value as the MorphSettings field takes it: an integer,
    a number, true or false, or else the string itself ("" included)."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def score(references, segment: Callable[..., Sequence[str]],
          learned: Optional[set] = None, with_position: bool = False) -> Dict[str, float]:
    """All scores of a segmentation function over the reference docs; with
    `learned` (the forms of the text learned from: the inductive protocol),
    the boundary scores of the words it holds ("seen_") and of the others
    ("unseen_") too. `with_position`: `segment` also takes whether the word
    begins its item (as `MorphModel.segment` does: a sentence's first word
    is capitalized whatever it is)."""
    from spacy.tokens import Doc
    from spacy.training import Example

    from spacy_struct.annotations.morphs import write_morphs
    from spacy_struct.morph_segmenter.scoring import (
        boundary_counts, prf, score_morphs, sigmorphon_pairs, sigmorphon_scores,
    )

    examples = []
    for ref in references:
        pred = Doc(ref.vocab, words=[t.text for t in ref], spaces=[bool(t.whitespace_) for t in ref])
        write_morphs(pred, {t.i: list(segment(t.text, t.i == 0) if with_position else segment(t.text))
                            for t in pred})
        examples.append(Example(pred, ref))
    scores = score_morphs(examples)
    scores.update(sigmorphon_scores(sigmorphon_pairs(examples)))
    if learned is not None:
        for part, keep in (("seen", lambda w: _form(w) in learned), ("unseen", lambda w: _form(w) not in learned)):
            scores.update(prf(*boundary_counts(examples, keep=keep), f"{part}_morph_boundary"))
            scores.update(prf(*boundary_counts(examples, by_type=True, keep=keep), f"{part}_morph_type_boundary"))
    return scores


def unseen_types(references, learned: set) -> Dict[str, int]:
    """How many dev word types with a surface gold the learned text holds
    and lacks (the inductive table's denominators)."""
    from spacy_struct.annotations.morphs import doc_morphs

    types = {t.text for ref in references for t, m in zip(ref, doc_morphs(ref)) if m is not None}
    unseen = sum(_form(w) not in learned for w in types)
    return {"seen": len(types) - unseen, "unseen": unseen}


def score_pipeline(references, system) -> Dict[str, float]:
    """All scores of a trained pipeline that sets `token._.morphs`, run over
    the reference docs' words (each doc whole, so a sentence is context),
    and its speed: the best of 3 passes, single-threaded as the caller runs it."""
    from spacy.training import Example

    from spacy_struct.morph_segmenter.scoring import score_morphs, sigmorphon_pairs, sigmorphon_scores

    from .systems import gold_token_docs, load_system

    nlp = load_system(system)
    best = float("inf")
    for _ in range(3):
        docs = gold_token_docs(system, [Example(ref, ref) for ref in references])
        start = time.perf_counter()
        docs = list(nlp.pipe(docs, batch_size=256))
        best = min(best, time.perf_counter() - start)
    examples = [Example(doc, ref) for doc, ref in zip(docs, references)]
    scores = score_morphs(examples)
    scores.update(sigmorphon_scores(sigmorphon_pairs(examples)))
    system.best_time = best
    return scores


def _gold_annotations(train) -> Dict[str, List[str]]:
    """Surface gold of the train words, by form (the first gold of each)."""
    out: Dict[str, List[str]] = {}
    for _, words, gold, _, _ in train:
        for word, morphs in zip(words, gold):
            if morphs and "".join(morphs) == word and _form(word) not in out:
                out[_form(word)] = [_form(m) if len(_form(m)) == len(m) else m for m in morphs]
    return out


def agreement_cue(items) -> str:
    """How often adjacent words that end alike (over the longer of their
    gold final suffixes) have the same gold final suffix: the premise of
    the agreement factor (Lee et al.: about 94% on the Arabic treebank).
    On the train gold; a UD set has only dev, so on that."""
    pairs = agree = 0
    for _, words, gold, _, _ in items:
        for (w1, g1), (w2, g2) in zip(zip(words, gold), list(zip(words, gold))[1:]):
            if not g1 or not g2 or "".join(g1) != w1 or "".join(g2) != w2:
                continue
            s1 = g1[-1] if len(g1) > 1 else ""
            s2 = g2[-1] if len(g2) > 1 else ""
            n = max(len(s1), len(s2))
            if n and len(w1) >= n and len(w2) >= n and w1[-n:] == w2[-n:]:
                pairs += 1
                agree += s1 == s2
    if not pairs:
        return ""
    return (f"Agreement cue in the gold: {pairs:,} pairs of adjacent words end alike over the "
            f"longer of their final suffixes; {100 * agree / pairs:.1f}% of them have the same final suffix "
            f"(Lee et al. report about 94% on the Arabic treebank).")


def run_morfessor(text: List[List[str]], words: Sequence[str], bin_dir: Path, seed: int, ppl: float,
                  annotations: Optional[Dict[str, List[str]]] = None) -> Dict[str, Row]:
    """Morfessor Baseline and FlatCat trained on `text` (given the token
    counts of the forms; morfessor-train's default dampening, "ones",
    counts each form once); RETURNS their rows, segmenting `words`."""
    counts = Counter(_form(w) for sentence in text for w in sentence)
    forms = sorted({_form(w) for w in words})
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "train.txt").write_text("".join(f"{c} {w}\n" for w, c in sorted(counts.items())), encoding="utf8")
        (tmp / "words.txt").write_text("".join(f"{w}\n" for w in forms), encoding="utf8")
        start = time.perf_counter()
        _run([bin_dir / "morfessor-train", "--traindata-list", "-r", str(seed), "-s", tmp / "baseline.bin",
              "-S", tmp / "baseline.seg", tmp / "train.txt"])
        baseline_seconds = time.perf_counter() - start
        _run([bin_dir / "morfessor-segment", "-l", tmp / "baseline.bin", "-o", tmp / "baseline.out",
              tmp / "words.txt"])
        rows["baseline"] = _segmented(tmp / "baseline.out", forms), baseline_seconds
        # "/" (FlatCat's category separator) and "," (its analysis separator)
        # occur in the words: neither is one here
        separators = ["--category-separator", "\u0001", "--analysis-separator", "NONE"]
        command = [bin_dir / "flatcat-train", tmp / "baseline.seg", "-p", str(ppl), "-s", tmp / "flatcat.tar.gz",
                   *separators]
        if annotations:
            (tmp / "annotations.txt").write_text(
                "".join(f"{w} {' '.join(m)}\n" for w, m in sorted(annotations.items())), encoding="utf8")
            command += ["-A", tmp / "annotations.txt"]
        start = time.perf_counter()
        _run(command)
        flatcat_seconds = baseline_seconds + time.perf_counter() - start
        _run([bin_dir / "flatcat-segment", tmp / "flatcat.tar.gz", "-o", tmp / "flatcat.out",
              "--category-separator", "\u0001", tmp / "words.txt"])
        rows["flatcat"] = _segmented(tmp / "flatcat.out", forms), flatcat_seconds
    return rows


def _run(command) -> None:
    out = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{Path(str(command[0])).name} failed:\n{out.stderr[-2000:]}")


def _segmented(path: Path, forms: Sequence[str]) -> Dict[str, List[str]]:
    lines = [line.rstrip("\n") for line in path.read_text(encoding="utf8").splitlines() if line.strip()]
    if len(lines) != len(forms):
        raise RuntimeError(f"{path.name}: {len(lines)} segmentations for {len(forms)} words")
    out = {}
    for form, line in zip(forms, lines):
        morphs = [m for m in line.replace(" + ", " ").split(" ") if m]
        out[form] = morphs if "".join(morphs) == form else [form]
    return out


#: the controls of how a learned model prices a new word's strings
CONTROLS = {"unsettled": "its last draw, not settled (settle off, the paper's)",
            "one chain": "its first chain alone (chains 1, the paper's)",
            "length": "new words priced by length (the paper's)",
            "flat": "new words priced flat per character, at the character model's mean",
            "caseless": "new words split alike whatever their case (new_word_case off)",
            "suffixes alone": "new words cut by the suffixes alone, not by how often the learned words ending so are "
                       "(new_word_endings off)",
            "held stems": "new words' stems weighed as the sampler weighs a learned word's, not by how often the "
                          "learned words a held stem could spell are so (new_word_stems off)"}


def controls(model) -> Dict[str, object]:
    """The learned `model` with its new words' strings priced otherwise
    (its lexicon as it is): "length", the paper's geometric length prior;
    "flat", the same price for every character (and the end), the mean
    per character of the character model of the stems, which tells the
    gain of that model's price per character from that of its choice of
    characters; "caseless", new words split as often whatever their case
    (`new_word_case` off); "suffixes alone", new words cut by their suffixes'
    probabilities alone (`new_word_endings` off); "held stems", a new word's
    stem weighed by the stems' Dirichlet-multinomial alone, which nearly
    never draws a new one (`new_word_stems` off)."""
    from spacy_struct.morph_segmenter.model import SPELLING_ORDER, MorphModel
    from spacy_struct.morph_segmenter.spelling import Spelling

    def copy(new_strings: str, **settings):
        return MorphModel.from_dict({**model.to_dict(), "settings": {**asdict(model.settings),
                                                                      "new_strings": new_strings, **settings}})

    stems = model.learned_stems()
    spelling = Spelling(stems, SPELLING_ORDER)
    per_char = sum(spelling.log_prob(stem) for stem in stems) / sum(len(stem) + 1 for stem in stems)
    flat = copy("spelling")
    flat._new_string_cost = lambda string: per_char * (len(string) + 1)
    out = {"length": copy("length"), "flat": flat}
    if model.settings.new_word_case:
        out["caseless"] = copy(model.settings.new_strings, new_word_case=False)
    if model.settings.new_word_endings:
        out["suffixes alone"] = copy(model.settings.new_strings, new_word_endings=False)
    if model.settings.new_word_stems:
        out["held stems"] = copy(model.settings.new_strings, new_word_stems=False)
    return out


def run_ours(text: List[List[str]], references, last_stage: str, seeds: Sequence[int], sweeps: int,
             clamped: Optional[Dict[str, List[str]]] = None, settings: Optional[Dict[str, object]] = None,
             tune: bool = True, learned: Optional[set] = None, show: Sequence[str] = ()) -> Dict[str, Row]:
    """morph_segmenter, one run per seed; a row per stage. `settings`:
    MorphSettings fields other than their defaults. With `clamped` types
    and `tune`, each seed first chooses its priors as the component's
    `tune_priors` does: with enough clamped types, on a held-out fifth of
    them; otherwise by the text's code length. Its time is counted in the
    seconds to the model, and the rows' note names the choices. With
    `learned` (inductive), the last stage is also scored with the strings
    of the words it never saw priced otherwise (`controls`): rows
    "<stage>, length" and "<stage>, flat". With `settle` (the default),
    the last stage's draw before the cold sweeps is scored too, the same
    chains unsettled: row "<stage>, unsettled". With several `chains`
    (the default), the first chain's own model is scored too, the
    configured seed's single run: row "<stage>, one chain", its seconds
    those up to the end of that chain; each stage's row is then taken,
    and timed, when the last chain ends that stage, so its seconds hold
    the other chains' whole runs. `show`:
    words whose segmentation by each seed's last stage (and its control)
    the rows keep in `shown`, a line per seed."""
    from spacy_struct.morph_segmenter.model import STAGES, MorphModel, MorphSettings
    from spacy_struct.annotations.morphs import Morphs
    from spacy_struct.morph_segmenter.tuning import choose_settings

    rows: Dict[str, Row] = {}
    speeds: Dict[str, List[float]] = {}
    gold = {form: Morphs(morphs) for form, morphs in (clamped or {}).items()}
    choices: Counter = Counter()
    for number, seed in enumerate(seeds, 1):
        say(f"  seed {seed} ({number} of {len(seeds)})" + (": choosing the settings by the text's code length"
                                                           if tune else ""))
        start = time.perf_counter()
        scoring = [0.0]
        configured = MorphSettings(stage=last_stage, sweeps=sweeps, seed=seed, **(settings or {}))
        configured.check("morph_segmenter")
        tuned = choose_settings(configured, text, gold) if tune else None
        if tuned:
            choices[f"{tuned.best or 'the configured'} by {tuned.criterion}"] += 1
        model = MorphModel(tuned.settings if tuned else configured)

        def stage_end(stage: str, snapshot: MorphModel) -> None:
            say(f"  seed {seed}: stage {stage} learned, {time.perf_counter() - start:.0f} s")
            row = rows.setdefault(stage, Row(stage))
            row.seconds.append(time.perf_counter() - start - scoring[0])  # learning alone
            began = time.perf_counter()
            row.runs.append(score(references, snapshot.segment, learned, with_position=True))
            shown = lambda segmenter: f"seed {seed}: " + ", ".join("+".join(segmenter.segment(w)) for w in show)
            if show and stage == last_stage:
                row.shown.append(shown(snapshot))
            if learned is not None and stage == last_stage:
                for how, control_model in controls(snapshot).items():
                    control = rows.setdefault(f"{stage}, {how}", Row(f"{stage}, {how}"))
                    control.seconds.append(row.seconds[-1])
                    control.runs.append(score(references, control_model.segment, learned, with_position=True))
                    if show:
                        control.shown.append(shown(control_model))
            scoring[0] += time.perf_counter() - began

        first_chain_seconds = [0.0]

        def chain_started(number: int, chains: int) -> None:
            say(f"  seed {seed}: chain {number} of {chains}")
            if number == 2:  # the first chain has ended
                first_chain_seconds[0] = time.perf_counter() - start - scoring[0]

        def control_row(name: str, snapshot: MorphModel, seconds: Optional[float] = None) -> None:
            seconds = time.perf_counter() - start - scoring[0] if seconds is None else seconds
            began = time.perf_counter()
            row = rows.setdefault(f"{last_stage}, {name}", Row(f"{last_stage}, {name}"))
            row.seconds.append(seconds)
            row.runs.append(score(references, snapshot.segment, learned, with_position=True))
            scoring[0] += time.perf_counter() - began

        model.fit(text, gold, stage_end=stage_end, last_draw=lambda snapshot: control_row("unsettled", snapshot),
                  on_chain=chain_started,
                  first_chain=lambda snapshot: control_row("one chain", snapshot, first_chain_seconds[0]))
        n_types = len(model.forms)
        per_stage = [model.sweep_seconds[k * sweeps:(k + 1) * sweeps]
                     for k in range(STAGES.index(last_stage) + 1)]
        for stage, seconds in zip(STAGES, per_stage):
            speeds.setdefault(stage, []).append(n_types * len(seconds) / sum(seconds) if seconds else 0.0)
    for stage, row in rows.items():
        row.note = f"{statistics.mean(speeds[stage.split(',')[0]]):,.0f} types/s per sweep"
        if choices:
            row.note += "; settings chosen: " + ", ".join(f"{c} ({n} of {len(seeds)} seeds)" for c, n in choices.items())
    # the controls after the rows of the stages (the unsettled draw is scored before its stage's end)
    return dict(sorted(rows.items(), key=lambda item: ", " in item[0]))


def evaluate(data_dir: Path, name: str, seeds: Sequence[int], sweeps: int, bin_dir: Path, ppl: float,
             semi: bool = False, supervised: Sequence[str] = (), settings: Optional[Dict[str, object]] = None,
             protocol: str = "transductive", limit: int = 0, show: Sequence[str] = ()):
    """Every system on one set; RETURNS the rows in table order, the
    agreement cue's figure on the set's train gold (sentence sets), and,
    inductive, how many dev types the train text holds and lacks.

    protocol: "transductive" (every system learns from the train and dev
    text, Lee et al.'s protocol) or "inductive" (from the train text alone,
    as a user learns once and then segments new text; the rows then also
    score the seen and the unseen types apart). limit: learn from the
    first `limit` items of that text only (0: all). show: words whose
    segmentations by morph_segmenter's last stage the rows keep."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    level, _ = SETS[name]
    train, dev, references = read_set(data_dir, name)
    if protocol == "inductive" and not train:
        raise ValueError(f"{name} has no train split: the inductive protocol needs text to learn from before dev")
    text = [words for _, words, _, _, _ in (train if protocol == "inductive" else train + dev)]
    if limit:
        text = text[:limit]
    learned = {_form(w) for words in text for w in words} if protocol == "inductive" else None
    counts = unseen_types(references, learned) if learned is not None else {}
    dev_words = [t.text for ref in references for t in ref]
    rows = [Row("no split", [score(references, lambda w: (w,), learned)]),
            Row("split after every character", [score(references, tuple, learned)])]
    annotations = _gold_annotations(train) if semi else None
    if not seeds:  # the trained pipelines alone, beside the trivial rows
        return rows + supervised_rows(references, supervised), "", counts
    labels = {"baseline": "Morfessor Baseline", "flatcat": "Morfessor FlatCat"}
    if semi:
        labels = {"baseline": "Morfessor Baseline (no annotations)", "flatcat": "Morfessor FlatCat (annotations)"}
    peers = {key: Row(label) for key, label in labels.items()}
    for number, seed in enumerate(seeds, 1):
        say(f"{name}: Morfessor Baseline and FlatCat, seed {seed} ({number} of {len(seeds)})")
        segs = run_morfessor(text, dev_words, bin_dir, seed, ppl, annotations)
        for key, row in peers.items():
            found, seconds = segs[key]
            row.runs.append(score(references, lambda w, f=found: _recase(w, f.get(_form(w), [_form(w)])), learned))
            row.seconds.append(seconds)
    rows.extend(peers.values())
    last = "pos" if level == "word" else "token_seg"
    names = {"basic": "basic", "pos": "+ tags", "token_pos": "+ tag HMM over tokens",
             "token_seg": "+ agreement of neighbours (full model)"}
    if semi:  # the paper's priors, then the priors the annotations choose, through every stage
        runs = ((False, last, " (clamped train gold, the paper's priors)"),
                (True, last, " (clamped train gold, priors chosen on held-out train types)"))
    elif learned is not None:  # the settings the code length chooses; the control is the new words' price
        runs = ((True, last, ""),)
    else:  # the settings the code length chooses, and the paper's as the control at the basic stage
        runs = ((True, last, ""), (False, "basic", ", the paper's priors (no tuning)"))
    for tune, until, how in runs:
        say(f"{name}: morph_segmenter up to {names[until]}{how}")
        ours = run_ours(text, references, until, seeds, sweeps, annotations, settings, tune=tune, learned=learned,
                        show=show)
        for stage, row in ours.items():
            base, _, control = stage.partition(", ")
            row.label = f"morph_segmenter: {names[base]}{how}" + (f", {CONTROLS[control]}" if control else "")
            rows.append(row)
    rows.extend(supervised_rows(references, supervised))
    cue = agreement_cue(train) if level == "sentence" else agreement_cue(dev) if level == "ud" else ""
    return rows, cue, counts


def supervised_rows(references, specs: Sequence[str]) -> List[Row]:
    """A row per trained pipeline (LABEL=PATH): its scores, its training
    time, and its segmenting speed in words per second."""
    import json

    from .systems import parse_spec

    rows = []
    n_words = sum(len(ref) for ref in references)
    for spec in specs:
        system = parse_spec(spec)
        row = Row(system.label, [score_pipeline(references, system)])
        info = system.path.parent / "training_time.json"
        if info.exists():
            info = json.loads(info.read_text())
            row.seconds.append(info["seconds"])
            row.note = (f"{n_words / system.best_time:,.0f} words/s segmenting; trained "
                        f"{info.get('max_epochs') or info.get('max_steps')} "
                        f"{'epochs' if info.get('max_epochs') else 'steps'} on the train gold")
        else:
            row.note = f"{n_words / system.best_time:,.0f} words/s segmenting"
        rows.append(row)
    return rows


def _mean(row: Row, key: str) -> str:
    if not row.runs or any(key not in run for run in row.runs):
        return "-"  # a score this row has not (a trained pipeline's seen/unseen split)
    values = [100 * run[key] for run in row.runs]
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return f"{statistics.mean(values):.1f} ± {statistics.stdev(values):.1f}"


def _table(rows: Sequence[Row], headers: Sequence[str], keys: Sequence[str], note: str, cue: str) -> str:
    """Rows of score columns (`keys`, means over runs), then the runs, the
    seconds to the model and each row's note, under the header `note`."""
    headers = ["system", *headers, "runs", "seconds to the model", note]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        seconds = f"{statistics.mean(row.seconds):.0f}" if row.seconds else "-"
        cells = [row.label, *(_mean(row, key) for key in keys), str(len(row.runs)), seconds]
        lines.append("| " + " | ".join(cells + [row.note or "-"]) + " |")
    return "\n".join(lines) + (f"\n\n{cue}" if cue else "")


def format_inductive_table(rows: Sequence[Row], counts: Dict[str, int], cue: str = "") -> str:
    """The inductive table: all dev words, then the seen and the unseen
    types apart (token-weighted and type-weighted boundary F1)."""
    headers = ["token-weighted F1", "type-weighted F1", "SIGMORPHON F1 (all items)",
               f"seen ({counts['seen']:,} types): token F1", "type F1",
               f"unseen ({counts['unseen']:,} types): token F1", "type F1"]
    keys = ["morph_boundary_f", "morph_type_boundary_f", "sigmorphon_f", "seen_morph_boundary_f",
            "seen_morph_type_boundary_f", "unseen_morph_boundary_f", "unseen_morph_type_boundary_f"]
    return _table(rows, headers, keys, "notes", cue)


def format_table(rows: Sequence[Row], cue: str = "") -> str:
    """The table, and the agreement cue's figure under it."""
    headers = ["token-weighted P", "R", "F1", "type-weighted F1", "SIGMORPHON F1 (all items)"]
    keys = ["morph_boundary_p", "morph_boundary_r", "morph_boundary_f", "morph_type_boundary_f", "sigmorphon_f"]
    return _table(rows, headers, keys, "speed", cue)
