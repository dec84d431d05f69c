"""Benchmarks.

python -m tools.bench structs [--sizes 10 20 40 80] [--output FILE [--section NAME]]
python -m tools.bench matrix-tree [--supar-python .venvs/supar/bin/python] [--output FILE [--section NAME]]
python -m tools.bench train CONFIG OUTPUT [--key.path value ...]
python -m tools.bench parse DEV LABEL=PIPELINE[,decoder=eisner][,gold_tags] ... [--output FILE [--section NAME]]
python -m tools.bench spans DEV LABEL=PIPELINE ... [--spans-key sc] [--output FILE [--section NAME]]
python -m tools.bench segments DEV LABEL=PIPELINE[,coordination_rule][,COMPONENT.SETTING=VALUE] ...
    [--output FILE [--section NAME]]
python -m tools.bench segment-probe PIPELINE CORPUS [--limit 2000]
python -m tools.bench unlabelled-docs OUT.spacy IN.spacy...
python -m tools.bench segments-ensemble DEV PIPELINE PIPELINE... [--output FILE --section NAME]
python -m tools.bench scale LABEL=PIPELINE ... --texts CORPUS.spacy ... [--n 20000] [--ray-runs 3] [--output FILE [--section NAME]]
python -m tools.bench scale-ceiling [--n 20000] [--ms-per-doc 5.6] [--runs 3] [--output FILE [--section NAME]]
    (2 workers vs 1 for perfectly parallel work: plain processes, annotate --engine ray, Ray Core actors)
python -m tools.bench memory [--docs 400] [--output FILE [--section NAME]]   (peak RSS of large nlp.pipe runs)
python -m tools.bench.coordination CORPUS   (the coordination rule on gold contiguous mentions)
python -m tools.bench joint DEV LABEL=PIPELINE|LABEL=supar:MODEL ... [--supar-bin PATH] [--output FILE [--section NAME]]
python -m tools.bench trees SPACY_FILE PTB_FILE   (the gold trees as PTB lines, for SuPar)
python -m tools.bench assemble OUTPUT PIPELINE PIPELINE ...   (one pipeline of their components)
python -m tools.bench split-docs IN.jsonl[.gz] REST.jsonl[.gz] HELD_OUT.jsonl[.gz] [--every 10]
python -m tools.bench raw-text OUT.jsonl IN.jsonl[.gz] ...   (the records' text, for spacy pretrain)
python -m tools.bench morph DATA_DIR --set sent-eng [--seeds 5] [--sweeps 50] [--semi]
    [--protocol inductive [--limit N] [--show WORD ...]]
    [--supervised LABEL=PIPELINE] [--output FILE [--section NAME]]

With `--output docs/results/<task>.md --section NAME`, the table (with the
data, split, budget and machine it was measured on) replaces the block
between `<!-- NAME:start -->` and `<!-- NAME:end -->` in that page, so the
prose around it stays; without the markers the block is appended.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from pathlib import Path

# The thread variables every BLAS and OpenMP library we load reads once, when
# it is loaded: numpy's OpenBLAS, thinc's blis, torch in the peers' venvs.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def pin_threads(n: int) -> None:
    """Run every measurement with `n` threads: the systems compared take
    turns in one process, and a library left to pick its own thread count
    picks differently for each, so the ratio would measure the threading.
    Must run before numpy is imported (the libraries read the variables
    once); peers run in subprocesses inherit them."""
    if "numpy" in sys.modules:
        raise RuntimeError("pin_threads must run before numpy is imported")
    for name in THREAD_VARIABLES:
        os.environ[name] = str(n)


def main(argv=None) -> int:
    threads = argparse.ArgumentParser(add_help=False)
    threads.add_argument("--threads", type=int, default=argparse.SUPPRESS,
                         help="threads of every measurement (default 1), set through "
                              + ", ".join(THREAD_VARIABLES) + ", which it overrides")
    parser = argparse.ArgumentParser(prog="python -m tools.bench", parents=[threads])
    sub = parser.add_subparsers(dest="what", required=True)

    def measurement(name: str, **kw) -> argparse.ArgumentParser:
        """A subcommand that measures, so takes --threads after its name too."""
        return sub.add_parser(name, parents=[threads], **kw)

    p = measurement("structs", help="structure decoders vs their numpy references")
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40, 80])
    p.add_argument("--batch", type=int, default=64, help="sentences per batched call")
    p.add_argument("--min-time", type=float, default=0.3, help="seconds per measurement")
    p.add_argument("--only", default="", help="run the decoders whose name contains this")
    p.add_argument("--skip", default="", help="leave out the decoders whose name contains this")
    p.add_argument("--output", type=Path, help="also write the table to this Markdown file")
    p.add_argument("--section", default="", help="the marked block of --output to replace")
    p = measurement("matrix-tree", help="Matrix-Tree marginals: ours against SuPar's MatrixTree, same threads")
    p.add_argument("--supar-python", type=Path, default=Path(".venvs/supar/bin/python"))
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40, 80])
    p.add_argument("--batch", type=int, default=64, help="sentences per batched call")
    p.add_argument("--output", type=Path)
    p.add_argument("--section", default="")
    t = sub.add_parser("train", help="spacy train, saving its wall-clock time")
    t.add_argument("config", type=Path)
    t.add_argument("output", type=Path)
    p = measurement("parse", help="parsers side by side on dev: accuracy and speed")
    p.add_argument("dev", type=Path, help=".spacy file with the gold trees")
    p.add_argument("systems", nargs="+", help="LABEL=PIPELINE_DIR[,decoder=eisner][,gold_tags]")
    p.add_argument("--raw", action="store_true",
                   help="parse the raw text (own tokenizer and sentences), not gold words and sentences")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--title", default="")
    p.add_argument("--output", type=Path)
    p.add_argument("--section", default="")
    p = measurement("spans", help="span taggers side by side on dev: accuracy and speed")
    p.add_argument("dev", type=Path, help=".spacy file with the gold spans")
    p.add_argument("systems", nargs="+", help="LABEL=PIPELINE_DIR[,tokenizer=REGISTERED_NAME]")
    p.add_argument("--spans-key", default="sc")
    p.add_argument("--raw", action="store_true",
                   help="tag each sentence's raw text through the pipeline's tokenizer")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--title", default="")
    p.add_argument("--output", type=Path)
    p.add_argument("--section", default="")
    p = measurement("segments", help="segmenters side by side on dev: accuracy and speed")
    p.add_argument("dev", type=Path, help=".spacy file with the gold segments (doc._.segments)")
    p.add_argument("systems", nargs="+", help="LABEL=PIPELINE_DIR[,COMPONENT.SETTING=VALUE]")
    p.add_argument("--spans-key", default="sc")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--title", default="")
    p.add_argument("--output", type=Path)
    p.add_argument("--section", default="")
    p = measurement("segments-ensemble", help="overlap_segmenter pipelines alone and as the average of their scores")
    p.add_argument("dev", type=Path, help=".spacy file with the gold segments (doc._.segments)")
    p.add_argument("pipelines", nargs="+", type=Path, help="trained pipelines of one config (two or more)")
    p.add_argument("--output", type=Path)
    p.add_argument("--section", default="")
    p = sub.add_parser("segment-probe", help="why a trained overlap_segmenter does or does not output gapped segments")
    p.add_argument("pipeline", type=Path)
    p.add_argument("corpus", type=Path, help=".spacy file with the gold segments (doc._.segments)")
    p.add_argument("--limit", type=int, default=2000, help="docs read from the corpus")
    p = measurement("joint", help="constituency parsers and joint models side by side on dev")
    p.add_argument("dev", type=Path, help=".spacy file with the gold trees (and entities)")
    p.add_argument("systems", nargs="+", help="LABEL=PIPELINE_DIR or LABEL=supar:MODEL_FILE")
    p.add_argument("--spans-key", default="sc")
    p.add_argument("--supar-bin", type=Path, default=Path(".venvs/supar/bin/crf-con"))
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--title", default="")
    p.add_argument("--output", type=Path)
    p.add_argument("--section", default="")
    p = measurement("morph", help="morph_segmenter and Morfessor on a SIGMORPHON 2022 set, dev")
    p.add_argument("data_dir", type=Path, help="the SIGMORPHON 2022 folder (word/ and sentence/)")
    p.add_argument("--set", dest="set_name", required=True,
                   help="sent-eng, sent-ces, sent-mon, word-ces, word-mon (DATA_DIR: the SIGMORPHON folder) or "
                        "htb (DATA_DIR: the UD Hebrew-HTB folder)")
    p.add_argument("--seeds", type=int, default=5, help="sampler runs (seeds 0..N-1); 0: only the trivial rows and --supervised")
    p.add_argument("--sweeps", type=int, default=50, help="sweeps per model stage")
    p.add_argument("--semi", action="store_true", help="give the train words' gold to FlatCat and to ours")
    p.add_argument("--protocol", choices=["transductive", "inductive"], default="transductive",
                   help="learn from the train and dev text (transductive) or the train text alone (inductive: "
                        "dev's seen and unseen types also scored apart)")
    p.add_argument("--limit", type=int, default=0,
                   help="inductive: learn from the first N train sentences (or words) only")
    p.add_argument("--show", nargs="*", default=[], metavar="WORD",
                   help="add to the table how morph_segmenter's last stage segments these words, per seed")
    p.add_argument("--supervised", action="append", default=[], metavar="LABEL=PIPELINE",
                   help="also score a trained pipeline that sets token._.morphs (repeatable)")
    p.add_argument("--morfessor-bin", type=Path, default=Path(".venvs/morfessor/bin"))
    p.add_argument("--flatcat-ppl", type=float, default=10.0, help="FlatCat's perplexity threshold")
    p.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE",
                   help="a morph_segmenter setting other than its default, e.g. max_suffixes=4, "
                        "new_word_case=false or restored_endings= (none) (repeatable)")
    p.add_argument("--output", type=Path)
    p.add_argument("--section", default="")
    p = measurement("scale", help="documents/s of nlp.pipe, annotate --engine local -n 2, --engine ray 1|2 workers")
    p.add_argument("systems", nargs="+", help="LABEL=PIPELINE")
    p.add_argument("--texts", type=Path, nargs="+", required=True, help=".spacy corpora whose sentences are the texts")
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--output", type=Path)
    p.add_argument("--ray-runs", type=int, default=3, help="times the 1- and 2-worker Ray runs are run, taking turns (odd: the median is one run)")
    p.add_argument("--section", default="scale")
    p = measurement("scale-ceiling", help="2 workers vs 1 for perfectly parallel work, per way of using two cores")
    p.add_argument("--n", type=int, default=20000, help="documents")
    p.add_argument("--ms-per-doc", type=float, default=5.6,
                   help="CPU time of each document (the default parser's in nlp.pipe, docs/results/scale.md)")
    p.add_argument("--runs", type=int, default=3, help="times each way's pair of runs is made, in turns (odd)")
    p.add_argument("--output", type=Path)
    p.add_argument("--section", default="scale-ceiling")
    p = measurement("memory", help="peak memory of a large nlp.pipe, each case in a fresh process")
    p.add_argument("--docs", type=int, default=400)
    p.add_argument("--output", type=Path)
    p.add_argument("--section", default="memory")
    p = measurement("speed", help="components and their peers: words/s and peak memory, each in a fresh process")
    p.add_argument("dev", type=Path, help=".spacy file whose gold words (or, --raw, texts) are processed")
    p.add_argument("systems", nargs="+", help="LABEL=PIPELINE[,COMPONENT.SETTING=VALUE] or LABEL=morfessor:MODEL_FILE")
    p.add_argument("--raw", action="store_true", help="the documents' text through each pipeline's tokenizer")
    p.add_argument("--repeats", type=int, default=3, help="passes per process (the best counts)")
    p.add_argument("--rounds", type=int, default=2, help="times the systems take turns")
    p.add_argument("--unit", default="words", help="what the rate counts (words, tokens)")
    p.add_argument("--morfessor-python", type=Path, default=Path(".venvs/morfessor/bin/python"))
    p.add_argument("--title", default="")
    p.add_argument("--output", type=Path)
    p.add_argument("--section", default="")
    p = sub.add_parser("speed-morfessor-train", help="Morfessor Baseline learned from a .spacy corpus's running text")
    p.add_argument("corpus", type=Path)
    p.add_argument("model_file", type=Path)
    p.add_argument("--morfessor-bin", type=Path, default=Path(".venvs/morfessor/bin"))
    p = sub.add_parser("assemble", help="one pipeline of the components of trained pipelines")
    p.add_argument("output", type=Path, help="directory to write the pipeline (and its training time) to")
    p.add_argument("pipelines", nargs="+", type=Path)
    p = sub.add_parser("split-docs", help="hold out every k-th document of a JSONL corpus (by doc_id)")
    p.add_argument("input", type=Path)
    p.add_argument("rest", type=Path)
    p.add_argument("held_out", type=Path)
    p.add_argument("--every", type=int, default=10)
    p.add_argument("--fold", type=int, default=-1, help="which fold to hold out, 0 .. every-1 (default: the last)")
    p = sub.add_parser("unlabelled-docs", help="the docs of .spacy corpora with their words alone (no annotation)")
    p.add_argument("output", type=Path, help=".spacy file to write")
    p.add_argument("inputs", nargs="+", type=Path)
    p = sub.add_parser("raw-text", help="the text of JSONL corpora as {\"text\"} lines, for spacy pretrain")
    p.add_argument("output", type=Path)
    p.add_argument("inputs", nargs="+", type=Path)
    p = sub.add_parser("trees", help="the gold trees of a .spacy file as PTB lines")
    p.add_argument("input", type=Path)
    p.add_argument("output", type=Path)
    args, extra = parser.parse_known_args(argv)
    args.threads = getattr(args, "threads", 1)
    if args.threads < 1:
        parser.error(f"--threads must be at least 1, not {args.threads}")
    if args.what != "train":
        pin_threads(args.threads)
    import numpy as np
    if args.what == "assemble":
        from .systems import assemble

        print(f"{assemble(args.output, args.pipelines)} -> {args.output}")
        return 0
    if args.what == "split-docs":
        from .split import split_docs

        docs, held, kept = split_docs(args.input, args.rest, args.held_out, args.every, fold=args.fold)
        print(f"{docs} documents ({held} lines) -> {args.held_out}; {kept} lines -> {args.rest}")
        return 0
    if args.what == "segments-ensemble":
        from .ensemble import evaluate as evaluate_ensemble, format_table as ensemble_table

        rows = evaluate_ensemble(args.dev, args.pipelines)
        return emit(ensemble_table(rows) + f"\n\nData: {args.dev}; gold tokenization and sentences; each "
                    f"pipeline's own settings, the ensemble decoded with the first's. {machine_line()}\n", args)
    if args.what == "unlabelled-docs":
        from .raw_text import write_unlabelled_docs

        print(f"{write_unlabelled_docs(args.inputs, args.output):,} docs -> {args.output}")
        return 0
    if args.what == "raw-text":
        from .raw_text import write_raw_text

        written, skipped = write_raw_text(args.inputs, args.output)
        print(f"{written:,} lines -> {args.output}")
        for reason, n in skipped.items():
            print(f"  skipped {n:,} records ({reason})")
        return 0
    if args.what == "trees":
        from .joint import write_trees

        print(f"{write_trees(args.input, args.output)} trees -> {args.output}")
        return 0
    if args.what == "scale":
        from . import scale

        if args.ray_runs < 1 or args.ray_runs % 2 == 0:
            raise SystemExit(f"--ray-runs must be an odd number >= 1 (the median is one run), not {args.ray_runs}")
        texts = scale.sentence_texts(args.texts, args.n)
        results = {}
        for spec in args.systems:
            label, path = spec.split("=", 1)
            results[label] = scale.measure(path, texts, ray_runs=args.ray_runs)
            print(label, results[label], flush=True)
        words = sum(len(t.split()) for t in texts)
        text = (scale.format_table(results, len(texts)) + f"\n\nTexts: the first {len(texts):,} sentences of "
                f"{', '.join(str(p) for p in args.texts)} ({words:,} whitespace-separated words), raw text, each "
                f"pipeline's own tokenizer; batch size 64; annotate writes shards of {scale.default_shard_size():,}, the command's default (DocBin and JSONL). "
                f"Each Ray run starts its own local Ray (included in its seconds); the 1- and 2-worker Ray runs "
                f"are run {args.ray_runs} times, taking turns, and their rows give the run with the median 2-vs-1 ratio. {threads_phrase()}. {machine_line()}\n")
        return emit(text, args)
    if args.what == "scale-ceiling":
        from . import scale_ceiling

        if args.runs < 1 or args.runs % 2 == 0:
            raise SystemExit(f"--runs must be an odd number >= 1 (the median is one run), not {args.runs}")
        results = scale_ceiling.measure(args.n, args.ms_per_doc, args.runs)
        text = scale_ceiling.format_table(results, args.n) + f" {threads_phrase().capitalize()}. {machine_line()}\n"
        return emit(text, args)
    if args.what == "memory":
        from . import memory

        results = memory.evaluate(args.docs)
        text = memory.format_table(results, args.docs) + f"\n\n{memory.about(args.docs)} {machine_line()}\n"
        return emit(text, args)
    if args.what == "speed":
        from . import speed

        if any("=morfessor:" in spec for spec in args.systems):
            speed.write_tokens(args.dev)
        results = speed.evaluate(args.systems, args.dev, args.raw, args.repeats, args.rounds, args.morfessor_python)
        condition = ("raw text: each pipeline's own tokenizer and sentences" if args.raw
                     else "gold words and sentences")
        text = ((f"{args.title}\n\n" if args.title else "") + speed.format_table(results, args.unit)
                + f"\n\nData: {args.dev}, {next(iter(results.values()))['words']:,} gold {args.unit}; "
                f"{condition}. Each system in a fresh process, best of {args.repeats} passes x "
                f"{args.rounds} turns, nlp.pipe(batch_size=256); peak RSS includes the loaded pipeline. "
                f"{machine_line()}\n")
        return emit(text, args)
    if args.what == "speed-morfessor-train":
        from .speed import train_morfessor

        train_morfessor(args.corpus, args.model_file, args.morfessor_bin)
        return 0
    if args.what == "segment-probe":
        from .segment_probe import probe

        print(probe(args.pipeline, args.corpus, args.limit))
        return 0
    if args.what == "train":
        from spacy.cli._util import parse_config_overrides

        from .systems import timed_train

        info = timed_train(args.config, args.output, parse_config_overrides(extra))
        print(f"training took {info['seconds'] / 60:.1f} min")
        return 0
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.what == "morph":
        from . import morph

        if args.set_name not in morph.SETS:
            parser.error(f"--set must be one of {sorted(morph.SETS)}")
        try:
            settings = {k: morph.setting_value(v) for k, v in (item.split("=", 1) for item in args.setting)}
        except ValueError:
            parser.error(f"--setting takes KEY=VALUE, got {args.setting}")
        inductive = args.protocol == "inductive"
        level, lang = morph.SETS[args.set_name]
        if inductive and level == "ud":
            parser.error(f"--set {args.set_name} has no train split: the inductive protocol needs one")
        if args.limit < 0 or (args.limit and not inductive):
            parser.error("--limit takes a positive number, with --protocol inductive")
        rows, cue, counts = morph.evaluate(args.data_dir, args.set_name, list(range(args.seeds)), args.sweeps,
                                           args.morfessor_bin, args.flatcat_ppl, semi=args.semi,
                                           supervised=args.supervised, settings=settings,
                                           protocol=args.protocol, limit=args.limit, show=args.show)
        title = (f"#### {args.set_name}{' inductive' if inductive else ''}"
                 f"{f', learned from the first {args.limit:,}' if args.limit else ''}"
                 f"{' semi-supervised' if args.semi else ''}"
                 f"{' supervised' if not args.seeds else ''}")
        if not args.seeds:
            about = (f"\n\nData: {args.data_dir}/{level}/{lang}.{level}.{{train,dev}}.tsv; each pipeline "
                     f"learns from the train split's gold (`spacy train`, dev only to pick the best "
                     f"checkpoint) and is scored on dev. Seconds: its training run. ")
        else:
            about = ((f"\n\nData: {args.data_dir}/{level}/{lang}.{level}.{{train,dev}}.tsv; every system learns "
                      f"from the train and dev text and is scored on dev. " if level != "ud" else
                      f"\n\nData: {args.data_dir}/{lang}-ud-dev.conllu (no train split here); every system "
                      f"learns from the dev text and is scored on it. ")
                     + (f"morph_segmenter settings: {', '.join(args.setting)}; the others its defaults. "
                        if args.setting else "")
                     + f"Budget: {args.sweeps} sweeps per model "
                     f"stage, seeds 0..{args.seeds - 1} (mean ± sd); Morfessor's defaults, FlatCat perplexity "
                     f"threshold {args.flatcat_ppl:g}; Baseline with the same seeds, FlatCat from each. Seconds: learning alone, {threads_phrase()}"
                     + ("; a supervised pipeline's, its `spacy train` run on the train split's gold (dev only "
                        "to pick the best checkpoint). " if args.supervised else ". "))
        if inductive and args.seeds:
            about = about.replace("every system learns from the train and dev text",
                                  "every system learns from the train text alone (dev words it holds are seen, "
                                  "the others unseen: types with a surface gold)")
        if args.limit:
            about += f"Learned from the first {args.limit:,} items of that text only. "
        table = morph.format_inductive_table(rows, counts, cue) if inductive else morph.format_table(rows, cue)
        shown = [f"- {row.label}, {line}" for row in rows for line in row.shown]
        if shown:
            table += "\n\nHow the last stage segments chosen words:\n" + "\n".join(shown)
        text = f"{title}\n\n" + table + about + f"{machine_line()}\n"
        return emit(text, args)
    if args.what in ("parse", "spans", "segments", "joint"):
        from .systems import parse_spec

        systems = [parse_spec(s) for s in args.systems]
        if args.what == "parse":
            from .parse import evaluate, format_table

            n_words, n_sents = evaluate(systems, args.dev, args.repeats, raw=args.raw)
            table = format_table(systems, raw=args.raw)
        elif args.what == "joint":
            from .joint import evaluate, format_table

            examples = evaluate(systems, args.dev, args.repeats, args.spans_key, args.supar_bin)
            n_words, n_sents = sum(len(eg.reference) for eg in examples), len(examples)
            table = format_table(systems, examples, args.spans_key)
        elif args.what == "segments":
            from .segments import evaluate, format_table

            n_words, n_sents = evaluate(systems, args.dev, args.spans_key, args.repeats)
            table = format_table(systems, args.spans_key)
        else:
            from .spans import evaluate, format_table

            n_words, n_sents = evaluate(systems, args.dev, args.spans_key, args.repeats, raw=args.raw)
            table = format_table(systems, args.spans_key)
        condition = ("raw text: each system's own tokenizer (and sentences), scored through "
                     "spaCy's alignment to the gold tokens" if getattr(args, "raw", False)
                     else "gold tokenization and sentences")
        speed = (f"Speed: best of {args.repeats} passes, tok2vec included, {threads_phrase()}"
                 if args.what != "joint" else
                 f"Speed: prediction alone, {threads_phrase()}, ours the best of {args.repeats} passes "
                 f"of nlp.pipe, SuPar's as its predict logs it (torch with the same threads)")
        machine = (f"Data: {args.dev}, {n_sents} docs, {n_words} gold words; {condition}. "
                   f"{speed}. "
                   f"Budget: the training column. {machine_line()}")
        text = (f"#### {args.title}\n\n" if args.title else "") + table + f"\n\n{machine}\n"
        return emit(text, args)

    if args.what == "matrix-tree":
        from . import matrix_tree

        rows = matrix_tree.run(args.supar_python, args.sizes, args.batch)
        text = (matrix_tree.format_table(rows, args.batch)
                + f"\n\nRandom arc scores (normal, sd 2), single root, batches of {args.batch} sentences of "
                f"one length, log Z and every marginal; best of 5 timings of at least 0.5 s each, the two "
                f"implementations taking turns in one run, {threads_phrase()} (SuPar: torch.set_num_threads "
                f"from OMP_NUM_THREADS). {machine_line()}\n")
        print(text)
        if args.output:
            write_results(args.output, args.section, text)
        return 0 if all(r["agree"] for r in rows) else 1

    from . import structs

    rows = structs.run(args.sizes, args.batch, args.min_time, args.only, args.skip)
    machine = (f"Random scores, batch of {args.batch}, {args.min_time}s per measurement; "
               f"numpy {np.__version__}. {machine_line()}")
    table = structs.format_table(rows)
    print(table)
    print(f"\n{machine}")
    if args.output:
        write_results(args.output, args.section, table + f"\n\n{machine}\n")
    return 0 if all(r["agree"] for r in rows) else 1


def threads_phrase() -> str:
    """How many threads the measurements ran with, for the text under a table."""
    n = os.environ.get("OMP_NUM_THREADS", "")
    return "single-threaded" if n == "1" else (f"{n} threads" if n else "threads left to the libraries")


def processor_phrase() -> str:
    """The processor's model name, or nothing where the system does not say.

    Speed ratios between pipelines depend on it: thinc's matrix library
    (blis) is fast on some processors and slow on others, while numpy's
    products go through OpenBLAS, so the same two pipelines can swap places.
    """
    try:
        with open("/proc/cpuinfo", encoding="utf8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return f" ({line.split(':', 1)[1].strip()})"
    except OSError:
        pass
    name = platform.processor()
    return f" ({name})" if name and name != platform.machine() else ""


def machine_line() -> str:
    """Where and when a figure was measured, for the line under its table."""
    threads = ", ".join(f"{k}={os.environ[k]}" for k in THREAD_VARIABLES
                        if k in os.environ) or "thread variables unset"
    try:
        from importlib.metadata import version

        libs = f"spaCy {version('spacy')}, thinc {version('thinc')}, "
    except Exception:  # the structs bench needs no spaCy
        libs = ""
    return (f"Machine: {platform.machine()}{processor_phrase()}, {os.cpu_count()} cores, no GPU, Python "
            f"{platform.python_version()}, {libs}{threads}; "
            f"{datetime.date.today().isoformat()}.")


def emit(text: str, args) -> int:
    """Print a result, and write it into its results page when --output is given."""
    print(text)
    if getattr(args, "output", None):
        write_results(args.output, args.section, text)
    return 0


def write_results(path: Path, section: str, text: str) -> None:
    """Write `text` to the results page `path`: into its `section` block
    when it has one, else appended in a new block (or as the whole page
    without a section name)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not section:
        path.write_text(text, encoding="utf8")
        return
    start, end = f"<!-- {section}:start -->", f"<!-- {section}:end -->"
    block = f"{start}\n{text.rstrip()}\n{end}"
    page = path.read_text(encoding="utf8") if path.exists() else ""
    if start in page and end in page:
        before, rest = page.split(start, 1)
        page = before + block + rest.split(end, 1)[1]
    else:
        page = page.rstrip() + ("\n\n" if page else "") + block + "\n"
    path.write_text(page, encoding="utf8")


if __name__ == "__main__":
    sys.exit(main())
