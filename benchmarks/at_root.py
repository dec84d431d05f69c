"""Run one command of benchmarks/project.yml from the checkout's root folder.

`python -m spacy project run CMD benchmarks` runs each script line in the
project's folder, `benchmarks/`. The benchmark commands are written for the
root, as the root project.yml's are: the configs read `corpus/...` relative
to the working folder, `python -m tools.bench` imports `tools/` from it, the
benches find `.venvs/` there, and `${vars.data_dir}` is relative to it. So
every script line is `python at_root.py COMMAND...`, which runs COMMAND
unchanged with the root as its working folder and exits with its status.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list) -> int:
    if not argv:
        print("usage: python at_root.py COMMAND [ARG...]", file=sys.stderr)
        return 2
    # as spacy project run does: `python` is the interpreter running this
    if argv[0] in ("python", "python3"):
        argv = [sys.executable, *argv[1:]]
    return subprocess.call(argv, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
