"""Benchmarks.

python -m tools.bench structs [--sizes 10 20 40 80] [--output FILE]
python -m tools.bench train CONFIG OUTPUT [--key.path value ...]
python -m tools.bench parse DEV LABEL=PIPELINE[,decoder=eisner][,gold_tags] ... [--output FILE]
python -m tools.bench spans DEV LABEL=PIPELINE ... [--spans-key sc] [--output FILE]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench")
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("structs", help="structure decoders vs their numpy references")
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40, 80])
    p.add_argument("--batch", type=int, default=64, help="sentences per batched call")
    p.add_argument("--min-time", type=float, default=0.3, help="seconds per measurement")
    p.add_argument("--only", default="", help="run the decoders whose name contains this")
    p.add_argument("--output", type=Path, help="also write the table to this Markdown file")
    t = sub.add_parser("train", help="spacy train, saving its wall-clock time")
    t.add_argument("config", type=Path)
    t.add_argument("output", type=Path)
    p = sub.add_parser("parse", help="parsers side by side on dev: accuracy and speed")
    p.add_argument("dev", type=Path, help=".spacy file with the gold trees")
    p.add_argument("systems", nargs="+", help="LABEL=PIPELINE_DIR[,decoder=eisner][,gold_tags]")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--title", default="")
    p.add_argument("--output", type=Path)
    p = sub.add_parser("spans", help="span taggers side by side on dev: accuracy and speed")
    p.add_argument("dev", type=Path, help=".spacy file with the gold spans")
    p.add_argument("systems", nargs="+", help="LABEL=PIPELINE_DIR")
    p.add_argument("--spans-key", default="sc")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--title", default="")
    p.add_argument("--output", type=Path)
    args, extra = parser.parse_known_args(argv)
    if args.what == "train":
        from spacy.cli._util import parse_config_overrides

        from .systems import timed_train

        info = timed_train(args.config, args.output, parse_config_overrides(extra))
        print(f"training took {info['seconds'] / 60:.1f} min")
        return 0
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.what in ("parse", "spans"):
        from .systems import parse_spec

        systems = [parse_spec(s) for s in args.systems]
        if args.what == "parse":
            from .parse import evaluate, format_table

            n_words, n_sents = evaluate(systems, args.dev, args.repeats)
            table = format_table(systems)
        else:
            from .spans import evaluate, format_table

            n_words, n_sents = evaluate(systems, args.dev, args.spans_key, args.repeats)
            table = format_table(systems, args.spans_key)
        machine = (f"{args.dev}: {n_sents} sentences, {n_words} words, gold tokenization; "
                   f"{platform.machine()}, {os.cpu_count()} cores, Python "
                   f"{platform.python_version()}; speed = best of {args.repeats} passes, "
                   f"tok2vec included")
        text = (f"### {args.title}\n\n" if args.title else "") + table + f"\n\n{machine}\n"
        print(text)
        if args.output:
            args.output.parent.mkdir(parents=True, exist_ok=True)
            args.output.write_text(text, encoding="utf8")
        return 0

    from . import structs

    rows = structs.run(args.sizes, args.batch, args.min_time, args.only)
    machine = (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
               f"numpy {np.__version__}; random scores, batch of {args.batch}, "
               f"{args.min_time}s per measurement")
    table = structs.format_table(rows)
    print(table)
    print(f"\n{machine}")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(table + f"\n\n{machine}\n", encoding="utf8")
    return 0 if all(r["agree"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
