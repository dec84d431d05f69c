"""python -m spacy_struct.bench structs [--sizes 10 20 40 80] [--output FILE]"""
from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spacy_struct.bench")
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("structs", help="structure decoders vs their numpy references")
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40, 80])
    p.add_argument("--batch", type=int, default=64, help="sentences per batched call")
    p.add_argument("--min-time", type=float, default=0.3, help="seconds per measurement")
    p.add_argument("--only", default="", help="run the decoders whose name contains this")
    p.add_argument("--output", type=Path, help="also write the table to this Markdown file")
    args = parser.parse_args(argv)

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
