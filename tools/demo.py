"""The demo job: train each component, run it on raw text, render it with displaCy.

python -m tools.demo --data-dir ../shared/data --output displacy [--only parse|nested|segments|joint|morph]

- parse: with UD English-EWT in the data directory, mst_parser trains on it
  for a short budget (400 steps); otherwise on the embedded sample corpus.
  The pipeline (its senter finds the sentences) parses a raw text, and a
  displaCy dependency page is written (mst_parser.html).
- nested: with GENIA in the data directory, nested_ner trains on it for a
  short budget (250 steps); otherwise on the embedded nested-entity sample.
  It tags a few raw sentences (its tokenizer cuts them as GENIA does), and
  displaCy's span style, which draws nested spans, renders them
  (nested_ner.html).
- segments: with GENIA's coordinations (genia_discontinuous) in the data
  directory, overlap_segmenter trains for a short budget (DEMO_GENIA_STEPS)
  on the training sentences that hold a coordinated mention and as many
  that do not, and tags raw GENIA-style sentences ("human and mouse CD19
  genes" holds DNA "human ... CD19 genes"); when that model finds no
  discontinuous mention in them yet, or without the data, it trains on the
  embedded segment sample and tags CRAFT-style sentences ("BMP2 ... genes"
  in "BMP2 and BMP4 genes"). displaCy's span style draws every segment,
  the fragments of a discontinuous one labeled with its number
  (overlap_segmenter.html).
- joint: with the GENIA Treebank joint files in the data directory,
  joint_parser trains on its first 2,000 sentences for a short budget (200
  steps); otherwise on the embedded joint sample. It parses a few raw
  sentences into constituency trees with the entities in them, prints
  their brackets, and draws the trees with the entities marked
  (joint_parser.html).
- morph: with the SIGMORPHON 2022 English sentences in the data directory,
  morph_segmenter learns from their train and dev text (3 sweeps per
  model stage); otherwise from the embedded morphology sample. It
  segments a few raw sentences, prints each word's morphs in context and
  writes them as a page, stems in bold (morph_segmenter.html).
"""
from __future__ import annotations

import argparse
import sys
from itertools import islice
from pathlib import Path

# Raw text: the GENIA configs' tokenizer keeps hyphenated names whole
# ("NF-kappa", "TNF-alpha"), as GENIA does.
NESTED_SENTENCES = (
    "Expression of the IL-2 gene requires NF-kappa B and AP-1 in activated T cells.",
    "We detected TNF-alpha mRNA in human monocytes after IL-6-induced stimulation.",
    "STAT3 binds the HIV-1 long terminal repeat enhancer region in Jurkat cells.",
)

# Raw GENIA-style text with coordinations: discontinuous mentions.
GENIA_SEGMENT_SENTENCES = (
    "The promoters of both human and mouse CD19 genes were conserved.",
    "Oct-2 was found in CD4+ and CD8+ T cells from human peripheral blood.",
    "We studied the expression of c-fos and c-jun mRNAs in activated monocytes.",
)

#: training steps of the demo's GENIA segment model (under a minute on two cores)
DEMO_GENIA_STEPS = 600

# Raw text with overlapping, nested and discontinuous mentions (the sample's types).
SEGMENT_SENTENCES = (
    "BMP2 and BMP4 genes regulate apoptosis in chondrocytes.",
    "Shh is expressed in the limb bud of mice.",
    "Retinoic acid induces differentiation of neurons.",
)

# Raw text for the joint parser: trees with entities inside them.
JOINT_SENTENCES = (
    "Expression of the IL-2 gene was studied in human lymphocytes.",
    "STAT3 binds the c-fos promoter in Jurkat cells.",
)

# Raw text for the morphological segmenter: words seen and unseen in training.
MORPH_SENTENCES = (
    "The preachers were walking quickly towards the villages.",
    "She reconsidered the unhelpful suggestions of her neighbours.",
)

SENTENCES = (
    "A hearing is scheduled on the issue today. The old farmer sold the red car in the village. "
    "A dog arrived yesterday that found the ball. The teacher wrote a letter and the child painted a picture."
)


def demo_parse(data_dir: Path, output: Path, training: Path) -> None:
    import spacy
    from spacy import displacy

    from .bench.systems import timed_train
    from spacy_struct.convert.conllu import convert_file

    ewt = data_dir / "ud_english_ewt"
    train_src = next(iter(sorted(ewt.glob("en_ewt-ud-train.conllu*"))), None) if ewt.exists() else None
    if train_src is not None:
        print(f"mst_parser: training on UD English-EWT from {ewt} (400 steps)")
        corpus = Path("corpus/ud_english_ewt")
        for split, src in (("train", train_src), ("dev", ewt / "en_ewt-ud-dev.conllu")):
            if not (corpus / f"{split}.spacy").exists():
                convert_file(src, corpus / f"{split}.spacy", lang="en")
        config = Path("configs/mst_parser_ewt.cfg")
        # first order with the crf loss: it learns fastest in the first
        # steps, and second order's (n+1)^3 parts would cost the demo time
        overrides = {"training.max_steps": 400, "training.eval_frequency": 400, "corpora.dev.limit": 100,
                     "components.mst_parser.model.order": 1, "components.mst_parser.loss": "crf"}
    else:
        print("mst_parser: UD English-EWT not found, training on the embedded sample corpus")
        for split in ("train", "dev"):
            if not Path(f"corpus/sample/{split}.spacy").exists():
                convert_file(Path(f"corpus/sample/sample-{split}.conllu"), Path(f"corpus/sample/{split}.spacy"),
                             lang="en")
        config, overrides = Path("configs/mst_parser_sample.cfg"), {}
    info = timed_train(config, training, overrides)
    print(f"trained in {info['seconds'] / 60:.1f} min")

    nlp = spacy.load(training / "model-best")
    doc = nlp(SENTENCES)
    for sent in doc.sents:
        print(" ".join(f"{t.text}<-{t.dep_}-{t.head.i - sent.start + 1 if t.head.i != t.i else 0}"
                       for t in sent))
    output.mkdir(parents=True, exist_ok=True)
    html = displacy.render(list(doc.sents), style="dep", page=True)
    (output / "mst_parser.html").write_text(html, encoding="utf8")
    print(f"wrote {output / 'mst_parser.html'}")


def demo_nested(data_dir: Path, output: Path, training: Path) -> None:
    import spacy
    from spacy import displacy

    from .bench.systems import timed_train
    from spacy_struct.convert.spans_jsonl import convert_file

    genia = data_dir / "genia_nested_ner"
    if (genia / "train.jsonl.gz").exists() and (genia / "dev.jsonl").exists():
        print(f"nested_ner: training on GENIA from {genia} (250 steps)")
        corpus = Path("corpus/genia_nested_ner")
        for split, name in (("train", "train.jsonl.gz"), ("dev", "dev.jsonl")):
            if not (corpus / f"{split}.spacy").exists():
                convert_file(genia / name, corpus / f"{split}.spacy", lang="en")
        config = Path("configs/nested_ner_genia.cfg")
        overrides = {"training.max_steps": 250, "training.eval_frequency": 250, "corpora.dev.limit": 500}
    else:
        print("nested_ner: GENIA not found, training on the embedded nested-entity sample")
        for split in ("train", "dev"):
            if not Path(f"corpus/sample/nested_{split}.spacy").exists():
                convert_file(Path(f"corpus/sample/sample-nested-{split}.jsonl"),
                             Path(f"corpus/sample/nested_{split}.spacy"), lang="en")
        config, overrides = Path("configs/nested_ner_sample.cfg"), {}
    info = timed_train(config, training, overrides)
    print(f"trained in {info['seconds'] / 60:.1f} min")

    nlp = spacy.load(training / "model-best")
    docs = list(nlp.pipe(NESTED_SENTENCES))
    for doc in docs:
        print(doc.text)
        for span in doc.spans["sc"]:
            print(f"  [{span.label_}] {span.text}")
    output.mkdir(parents=True, exist_ok=True)
    html = displacy.render(docs, style="span", options={"spans_key": "sc"}, page=True)
    (output / "nested_ner.html").write_text(html, encoding="utf8")
    print(f"wrote {output / 'nested_ner.html'}")


def _segment_demo_sentences(config: Path, training: Path, overrides: dict, sentences) -> list:
    """Train `overlap_segmenter` from `config` and tag the demo sentences."""
    import spacy

    from .bench.systems import timed_train

    info = timed_train(config, training, overrides)
    print(f"trained in {info['seconds'] / 60:.1f} min")
    return list(spacy.load(training / "model-best").pipe(sentences))


def _coordination_subset(source: Path, output: Path) -> None:
    """The JSONL sentences of `source` that hold a discontinuous mention,
    and as many of the others (every k-th), as a .spacy file: a corpus on
    which a few hundred steps learn what a coordination looks like."""
    import json

    from spacy_struct.convert import open_text
    from spacy_struct.convert.craft import convert_file

    with open_text(source) as f:
        lines = [line for line in f if line.strip()]
    gapped = [line for line in lines if any(len(m["fragments"]) > 1 for m in json.loads(line)["spans"])]
    every = max(1, (len(lines) - len(gapped)) // max(len(gapped), 1))
    holds = set(gapped)
    others = [line for line in lines if line not in holds][::every]
    output.parent.mkdir(parents=True, exist_ok=True)
    subset = output.with_suffix(".jsonl")
    subset.write_text("".join(gapped + others), encoding="utf8")
    convert_file(subset, output)


def demo_segments(data_dir: Path, output: Path, training: Path) -> None:
    from spacy import displacy
    from spacy_struct.convert.craft import convert_file
    from spacy_struct.overlap_segmenter import segments_view

    genia = data_dir / "genia_discontinuous"
    docs = []
    if (genia / "train.jsonl.gz").exists() and (genia / "dev.jsonl").exists():
        print(f"overlap_segmenter: training on GENIA's coordinations from {genia} ({DEMO_GENIA_STEPS} steps "
              f"on the sentences that hold one and as many others)")
        corpus = Path("corpus/genia_discontinuous_demo")
        if not (corpus / "train.spacy").exists():
            _coordination_subset(genia / "train.jsonl.gz", corpus / "train.spacy")
        if not (corpus / "dev.spacy").exists():
            _coordination_subset(genia / "dev.jsonl", corpus / "dev.spacy")
        overrides = {"training.max_steps": DEMO_GENIA_STEPS, "training.eval_frequency": DEMO_GENIA_STEPS,
                     "paths.train": str(corpus / "train.spacy"), "paths.dev": str(corpus / "dev.spacy"),
                     "corpora.dev.limit": 100}
        docs = _segment_demo_sentences(Path("configs/overlap_segmenter_genia.cfg"), training, overrides,
                                       GENIA_SEGMENT_SENTENCES)
        if not any(s.is_discontinuous for doc in docs for s in doc._.segments):
            print(f"overlap_segmenter: {DEMO_GENIA_STEPS} steps found no coordination in the demo sentences "
                  f"(`spacy project run segment` trains the full model); the page shows the embedded "
                  f"sample's model instead")
            docs = []
    if not docs:
        if not (genia / "train.jsonl.gz").exists():
            print("overlap_segmenter: GENIA's coordinations not found, training on the embedded segment sample")
        for split in ("train", "dev"):
            if not Path(f"corpus/sample/segments_{split}.spacy").exists():
                convert_file(Path(f"corpus/sample/sample-segments-{split}.jsonl"),
                             Path(f"corpus/sample/segments_{split}.spacy"))
        docs = _segment_demo_sentences(Path("configs/overlap_segmenter_sample.cfg"), training / "sample", {},
                                       SEGMENT_SENTENCES)
    for doc in docs:
        print(doc.text)
        for segment in doc._.segments:
            print(f"  [{segment.label_}] {segment.text}")
        segments_view(doc, "segments")
    output.mkdir(parents=True, exist_ok=True)
    html = displacy.render(docs, style="span", options={"spans_key": "segments"}, page=True)
    (output / "overlap_segmenter.html").write_text(html, encoding="utf8")
    print(f"wrote {output / 'overlap_segmenter.html'}")


def demo_joint(data_dir: Path, output: Path, training: Path) -> None:
    import spacy

    from .bench.systems import timed_train
    from spacy_struct.convert import open_text
    from spacy_struct.convert.treebanks import convert_joint_jsonl
    from spacy_struct.joint_parser import render_trees

    gtb = data_dir / "genia_treebank"
    if (gtb / "joint_train.jsonl.gz").exists() and (gtb / "joint_dev.jsonl").exists():
        print(f"joint_parser: training on 2,000 GENIA Treebank sentences from {gtb} (200 steps)")
        corpus = Path("corpus/genia_treebank_demo")
        for split, name, n in (("train", "joint_train.jsonl.gz", 2000), ("dev", "joint_dev.jsonl", 300)):
            if not (corpus / f"{split}.spacy").exists():
                corpus.mkdir(parents=True, exist_ok=True)
                with open_text(gtb / name) as f:
                    head = list(islice(f, n))
                (corpus / f"{split}.jsonl").write_text("".join(head), encoding="utf8")
                convert_joint_jsonl(corpus / f"{split}.jsonl", corpus / f"{split}.spacy")
        config = Path("configs/joint_parser_genia.cfg")
        overrides = {"training.max_steps": 200, "training.eval_frequency": 200,
                     "paths.train": str(corpus / "train.spacy"), "paths.dev": str(corpus / "dev.spacy")}
    else:
        print("joint_parser: the GENIA Treebank joint files not found, training on the embedded joint sample")
        for split in ("train", "dev"):
            if not Path(f"corpus/sample/joint_{split}.spacy").exists():
                convert_joint_jsonl(Path(f"corpus/sample/sample-joint-{split}.jsonl"),
                                    Path(f"corpus/sample/joint_{split}.spacy"))
        config, overrides = Path("configs/joint_parser_sample.cfg"), {}
    info = timed_train(config, training, overrides)
    print(f"trained in {info['seconds'] / 60:.1f} min")

    nlp = spacy.load(training / "model-best")
    docs = list(nlp.pipe(JOINT_SENTENCES))
    for doc in docs:
        for sent in doc.sents:
            print(sent._.parse_string)
        for span in doc.spans["sc"]:
            print(f"  [{span.label_}] {span.text}")
    output.mkdir(parents=True, exist_ok=True)
    page = render_trees([sent for doc in docs for sent in doc.sents], page=True)
    (output / "joint_parser.html").write_text(page, encoding="utf8")
    print(f"wrote {output / 'joint_parser.html'}")


def demo_morph(data_dir: Path, output: Path, training: Path) -> None:
    import html

    import spacy

    from .bench.systems import timed_train
    from spacy_struct.convert.morphology import convert_sigmorphon

    sentences = data_dir / "sigmorphon2022_segmentation" / "sentence"
    if (sentences / "eng.sentence.train.tsv").exists() and (sentences / "eng.sentence.dev.tsv").exists():
        print(f"morph_segmenter: learning from the SIGMORPHON English sentences in {sentences} (3 sweeps per stage)")
        corpus = Path("corpus/sigmorphon_demo")
        for split in ("train", "dev"):
            if not (corpus / f"eng_{split}.spacy").exists():
                convert_sigmorphon(sentences / f"eng.sentence.{split}.tsv", corpus / f"eng_{split}.spacy")
        overrides = {"paths.train": str(corpus / "eng_train.spacy"), "paths.dev": str(corpus / "eng_dev.spacy"),
                     "components.morph_segmenter.sweeps": 3, "corpora.dev.limit": 100,
                     "initialize.components.morph_segmenter.extra_text": [str(corpus / "eng_dev.spacy")]}
    else:
        print("morph_segmenter: the SIGMORPHON data not found, learning from the embedded morphology sample")
        for split in ("train", "dev"):
            if not Path(f"corpus/sample/morph_{split}.spacy").exists():
                convert_sigmorphon(Path(f"corpus/sample/sample-morph-{split}.tsv"),
                                   Path(f"corpus/sample/morph_{split}.spacy"), level="sentence")
        overrides = {}
    info = timed_train(Path("configs/morph_segmenter_sample.cfg"), training, overrides)
    print(f"learned in {info['seconds'] / 60:.1f} min")

    nlp = spacy.load(training / "model-best")
    rows = []
    for doc in nlp.pipe(MORPH_SENTENCES):
        print(" ".join("-".join(t._.morphs) for t in doc))
        words = []
        for t in doc:
            m = t._.morphs
            parts = [html.escape(x) for x in m.prefixes] + [f"<b>{html.escape(m.stem)}</b>"]
            parts += [html.escape(x) for x in m.suffixes]
            words.append("&middot;".join(parts))
        rows.append(f"<p>{' '.join(words)}</p>")
    output.mkdir(parents=True, exist_ok=True)
    page = ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>morph_segmenter</title></head>"
            "<body style='font-family: sans-serif; font-size: 20px'>"
            "<h3>Morphs in context (stems in bold)</h3>" + "".join(rows) + "</body></html>")
    (output / "morph_segmenter.html").write_text(page, encoding="utf8")
    print(f"wrote {output / 'morph_segmenter.html'}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.demo")
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--output", type=Path, default=Path("displacy"))
    parser.add_argument("--training", type=Path, default=Path("training/demo"))
    parser.add_argument("--only", choices=("parse", "nested", "segments", "joint", "morph"),
                        help="run one component's demo")
    args = parser.parse_args(argv)
    if args.only in (None, "parse"):
        demo_parse(args.data_dir, args.output, args.training / "mst_parser")
    if args.only in (None, "nested"):
        demo_nested(args.data_dir, args.output, args.training / "nested_ner")
    if args.only in (None, "segments"):
        demo_segments(args.data_dir, args.output, args.training / "overlap_segmenter")
    if args.only in (None, "joint"):
        demo_joint(args.data_dir, args.output, args.training / "joint_parser")
    if args.only in (None, "morph"):
        demo_morph(args.data_dir, args.output, args.training / "morph_segmenter")
    return 0


if __name__ == "__main__":
    sys.exit(main())
