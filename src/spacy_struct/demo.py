"""The demo job: train a parser, parse raw sentences, render them with displaCy.

python -m spacy_struct.demo --data-dir ../shared/data --output displacy

With UD English-EWT in the data directory the parser trains on it for a
short budget (1 epoch); otherwise on the embedded sample corpus. Then a
sentencizer splits a few raw sentences, the parser parses them, and one
displaCy dependency page is written.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

SENTENCES = (
    "A hearing is scheduled on the issue today. The old farmer sold the red car in the village. "
    "A dog arrived yesterday that found the ball. The teacher wrote a letter and the child painted a picture."
)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spacy_struct.demo")
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--output", type=Path, default=Path("displacy"))
    parser.add_argument("--training", type=Path, default=Path("training/demo"))
    args = parser.parse_args(argv)

    import spacy
    from spacy import displacy

    from .bench.systems import timed_train
    from .convert.conllu import convert_file

    ewt = args.data_dir / "ud_english_ewt"
    train_src = next(iter(sorted(ewt.glob("en_ewt-ud-train.conllu*"))), None) if ewt.exists() else None
    if train_src is not None:
        print(f"training on UD English-EWT from {ewt} (1 epoch)")
        corpus = Path("corpus/ud_english_ewt")
        for split, src in (("train", train_src), ("dev", ewt / "en_ewt-ud-dev.conllu")):
            if not (corpus / f"{split}.spacy").exists():
                convert_file(src, corpus / f"{split}.spacy", lang="en")
        config, overrides = Path("configs/mst_parser_ewt.cfg"), {"training.max_epochs": 1}
    else:
        print("UD English-EWT not found: training on the embedded sample corpus")
        for split in ("train", "dev"):
            convert_file(Path(f"corpus/sample/sample-{split}.conllu"), Path(f"corpus/sample/{split}.spacy"), lang="en")
        config, overrides = Path("configs/mst_parser_sample.cfg"), {}
    info = timed_train(config, args.training, overrides)
    print(f"trained in {info['seconds'] / 60:.1f} min")

    nlp = spacy.load(args.training / "model-best")
    nlp.add_pipe("sentencizer", first=True)
    doc = nlp(SENTENCES)
    for sent in doc.sents:
        print(" ".join(f"{t.text}<-{t.dep_}-{t.head.i - sent.start + 1 if t.head.i != t.i else 0}"
                       for t in sent))
    args.output.mkdir(parents=True, exist_ok=True)
    html = displacy.render(list(doc.sents), style="dep", page=True)
    (args.output / "mst_parser.html").write_text(html, encoding="utf8")
    print(f"wrote {args.output / 'mst_parser.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
