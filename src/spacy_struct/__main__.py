"""Command line.

python -m spacy_struct convert conllu INPUT OUTPUT [--n-sents 10] [--lang xx]
python -m spacy_struct convert spans-jsonl INPUT OUTPUT [--spans-key sc] [--crossing drop|keep] [--lang xx]
python -m spacy_struct convert craft INPUT OUTPUT [--spans-key sc] [--lang en] [--discontinuous covering|leave_out]
python -m spacy_struct convert ptb INPUT OUTPUT [--lang en]
python -m spacy_struct convert joint-jsonl INPUT OUTPUT [--spans-key sc] [--lang en]
python -m spacy_struct convert sigmorphon INPUT OUTPUT [--level word|sentence]
python -m spacy_struct convert ud-morphs INPUT OUTPUT
python -m spacy_struct annotate PIPELINE INPUT OUTPUT [--engine local|ray] [--n-process 1] [--workers 2]
    [--batch-size 64] [--address ADDRESS] [--shard-size 1000] [--max-chars 100000] [--code FILE] [--no-progress]
python -m spacy_struct teach OUTPUT CORPUS PIPELINE [PIPELINE ...] [--component NAME]
python -m spacy_struct average OUTPUT PIPELINE PIPELINE [PIPELINE ...]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _failed(err: object) -> int:
    """Print a command's error for the user, without a traceback; the exit
    status of a failed command."""
    print(f"error: {err}", file=sys.stderr)
    return 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spacy_struct")
    sub = parser.add_subparsers(dest="command", required=True)
    annotate = sub.add_parser("annotate", help="a pipeline over a corpus, into shards of .spacy and JSONL")
    annotate.add_argument("pipeline", help="path of a trained pipeline")
    annotate.add_argument("input", help="a file, a folder or a glob of JSONL ({id, text, ...}) or text "
                                        "(a document per line), gzipped or not")
    annotate.add_argument("output", type=Path, help="folder of shards and manifest.json (a re-run resumes)")
    annotate.add_argument("--engine", choices=("local", "ray"), default="local")
    annotate.add_argument("--n-process", type=int, default=1, help="local engine: processes")
    annotate.add_argument("--workers", type=int, default=2, help="ray engine: actors, one CPU each")
    annotate.add_argument("--batch-size", type=int, default=64, help="documents per nlp.pipe / Ray batch")
    annotate.add_argument("--address", default=None, help="ray engine: a cluster to join (default: a local Ray)")
    annotate.add_argument("--shard-size", type=int, default=1000, help="records per output shard")
    annotate.add_argument("--max-chars", type=int, default=100_000, help="longer texts go to the errors file")
    annotate.add_argument("--code", default=None, help="a Python file registering the pipeline's custom functions")
    annotate.add_argument("--no-progress", action="store_true", help="no progress bar")
    teach = sub.add_parser("teach", help="trained pipelines' averaged scores on a corpus, for training "
                                         "another pipeline toward them (SentenceDocs.v1's teacher)")
    teach.add_argument("output", type=Path, help=".npz file to write")
    teach.add_argument("corpus", type=Path, help="the .spacy training corpus (gold tokens)")
    teach.add_argument("pipelines", nargs="+", type=Path, help="trained pipelines (e.g. seeds of one config)")
    teach.add_argument("--component", default=None, help="the component to take scores from (default: the "
                                                         "pipelines' only one with a teacher_weight setting)")
    average = sub.add_parser("average", help="one pipeline whose weights are the mean of several trained from "
                                             "one config and one shared start (a weight average, not an ensemble)")
    average.add_argument("output", type=Path, help="a new (or empty) folder to write the averaged pipeline to")
    average.add_argument("pipelines", nargs="+", type=Path, help="trained pipelines (at least two)")
    convert = sub.add_parser("convert", help="corpus files to .spacy")
    formats = convert.add_subparsers(dest="format", required=True)
    conllu = formats.add_parser("conllu", help="CoNLL-U (plain or .gz), gold tokenization")
    conllu.add_argument("input", type=Path)
    conllu.add_argument("output", type=Path, help=".spacy file to write")
    conllu.add_argument("--n-sents", type=int, default=10, help="sentences per Doc")
    conllu.add_argument("--lang", default="xx", help="language code of the vocab")
    spans = formats.add_parser(
        "spans-jsonl", help="JSONL of tokens and token-offset spans (GENIA nested NER)"
    )
    spans.add_argument("input", type=Path)
    spans.add_argument("output", type=Path, help=".spacy file to write")
    spans.add_argument("--spans-key", default="sc", help="key in doc.spans")
    spans.add_argument(
        "--crossing", choices=("drop", "keep"), default="drop",
        help="spans that cross another: drop the shorter of each pair, or keep all",
    )
    spans.add_argument("--lang", default="xx", help="language code of the vocab")
    craft = formats.add_parser(
        "craft", help="CRAFT JSONL: overlapping and discontinuous mentions (doc._.segments)"
    )
    craft.add_argument("input", type=Path)
    craft.add_argument("output", type=Path, help=".spacy file to write")
    craft.add_argument(
        "--spans-key", default="sc",
        help="key in doc.spans for the mentions as contiguous (covering) spans",
    )
    craft.add_argument("--lang", default="en", help="language code of the vocab")
    craft.add_argument(
        "--discontinuous", choices=["covering", "leave_out"], default="covering",
        help="what doc.spans holds of a discontinuous mention: its covering span (for spancat) "
             "or nothing (for a tagger trained on the contiguous mentions alone)",
    )
    ptb = formats.add_parser("ptb", help="bracketed trees (PTB style), one Doc per tree")
    ptb.add_argument("input", type=Path)
    ptb.add_argument("output", type=Path, help=".spacy file to write")
    ptb.add_argument("--lang", default="en", help="language code of the vocab")
    joint = formats.add_parser(
        "joint-jsonl", help="JSONL of tokens, tags, a tree and entities (GENIA Treebank joint files)"
    )
    joint.add_argument("input", type=Path)
    joint.add_argument("output", type=Path, help=".spacy file to write")
    joint.add_argument("--spans-key", default="sc", help="key in doc.spans for the entities")
    joint.add_argument("--lang", default="en", help="language code of the vocab")
    sigmorphon = formats.add_parser(
        "sigmorphon", help="SIGMORPHON 2022 segmentation TSV, word or sentence level (token._.morphs)"
    )
    sigmorphon.add_argument("input", type=Path)
    sigmorphon.add_argument("output", type=Path, help=".spacy file to write")
    sigmorphon.add_argument(
        "--level", choices=("word", "sentence"), default=None,
        help="word or sentence level (default: from the file name, LANG.word.SPLIT.tsv)",
    )
    ud_morphs = formats.add_parser(
        "ud-morphs", help="CoNLL-U surface tokens, multiword tokens' words as morphs (token._.morphs)"
    )
    ud_morphs.add_argument("input", type=Path)
    ud_morphs.add_argument("output", type=Path, help=".spacy file to write")
    args = parser.parse_args(argv)

    if args.command == "annotate":
        from .annotate import annotate as run_annotate

        try:
            totals = run_annotate(
                args.pipeline, args.input, args.output, engine=args.engine, n_process=args.n_process,
                workers=args.workers, batch_size=args.batch_size, address=args.address,
                shard_size=args.shard_size, max_chars=args.max_chars, code=args.code,
                progress=not args.no_progress,
            )
        except (ValueError, OSError) as err:
            return _failed(err)
        print(f"{args.input} -> {args.output}: {totals['records']:,} records, {totals['docs']:,} annotated, "
              f"{totals['errors']:,} in the errors files, {totals['shards']} shards")
        return 0
    if args.command == "teach":
        from .pipeline.teacher import write_teacher_scores

        try:
            summary = write_teacher_scores(args.output, args.corpus, args.pipelines, component=args.component)
        except (ValueError, OSError) as err:
            return _failed(err)
        print(f"{args.corpus} -> {args.output}: {summary['sentences']:,} sentences of {summary['docs']:,} docs, "
              f"{summary['component']}'s scores averaged over {summary['teachers']} pipelines")
        return 0
    if args.command == "average":
        from .pipeline.weights import average_pipelines

        if any(args.output.resolve() == path.resolve() for path in args.pipelines):
            return _failed(f"the output {args.output} is one of the pipelines to average")
        if args.output.exists() and (not args.output.is_dir() or any(args.output.iterdir())):
            return _failed(f"{args.output} exists and is not an empty folder; give a new one")
        try:
            averaged = average_pipelines(args.pipelines)
            args.output.mkdir(parents=True, exist_ok=True)  # spaCy makes the last folder only
            averaged.to_disk(args.output)
        except (ValueError, OSError) as err:
            return _failed(err)
        print(f"{', '.join(map(str, args.pipelines))} -> {args.output}: the mean of {len(args.pipelines)} "
              f"pipelines' weights")
        return 0
    if args.command == "convert" and args.format == "conllu":
        from .convert.conllu import CoNLLUError, convert_file

        try:
            report = convert_file(args.input, args.output, args.n_sents, args.lang)
        except (CoNLLUError, FileNotFoundError) as err:
            return _failed(err)
        print(f"{args.input} -> {args.output}")
        for line in report.lines():
            print(f"  {line}")
    if args.command == "convert" and args.format == "spans-jsonl":
        from .convert.spans_jsonl import SpansJSONLError, convert_file as convert_spans

        try:
            report = convert_spans(
                args.input, args.output, spans_key=args.spans_key,
                crossing=args.crossing, lang=args.lang,
            )
        except (SpansJSONLError, FileNotFoundError) as err:
            return _failed(err)
        print(f"{args.input} -> {args.output}")
        for line in report.lines():
            print(f"  {line}")
    if args.command == "convert" and args.format == "craft":
        from .convert.craft import CRAFTError, convert_file as convert_craft

        try:
            report = convert_craft(args.input, args.output, spans_key=args.spans_key, lang=args.lang,
                                   discontinuous=args.discontinuous)
        except (CRAFTError, FileNotFoundError) as err:
            return _failed(err)
        print(f"{args.input} -> {args.output}")
        for line in report.lines():
            print(f"  {line}")
    if args.command == "convert" and args.format in ("ptb", "joint-jsonl"):
        from .convert.treebanks import TreebankError, convert_joint_jsonl, convert_ptb

        try:
            if args.format == "ptb":
                report = convert_ptb(args.input, args.output, lang=args.lang)
            else:
                report = convert_joint_jsonl(args.input, args.output, spans_key=args.spans_key, lang=args.lang)
        except (TreebankError, FileNotFoundError) as err:
            return _failed(err)
        print(f"{args.input} -> {args.output}")
        for line in report.lines():
            print(f"  {line}")
    if args.command == "convert" and args.format in ("sigmorphon", "ud-morphs"):
        from .convert.morphology import MorphologyFormatError, convert_sigmorphon, convert_ud_morphs

        try:
            if args.format == "sigmorphon":
                report = convert_sigmorphon(args.input, args.output, args.level)
            else:
                report = convert_ud_morphs(args.input, args.output)
        except (MorphologyFormatError, FileNotFoundError) as err:
            return _failed(err)
        print(f"{args.input} -> {args.output}")
        for line in report.lines():
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
