"""Matrix-Tree log Z and marginals: ours against SuPar's batched torch version.

The same random arc scores go to `spacy_struct.structs.matrix_tree_marginals`
(numpy/LAPACK, one stacked call per sentence length) in this process and to
SuPar's `MatrixTree` (torch: slogdet, marginals by autograd) in SuPar's
virtual environment, both with the bench's threads (one by default), taking turns in one run. Both
compute log Z and every arc marginal of single-root non-projective trees,
and the table says whether they agree.
"""
from __future__ import annotations

import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import List, Sequence

import numpy as np

from spacy_struct.structs import dependency

# Runs inside SuPar's environment: times MatrixTree on the saved scores.
SUPAR_SCRIPT = r"""
import json, os, sys, time
import numpy as np, torch
from supar.structs import MatrixTree
torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
path, repeats, min_time = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
S = np.load(path)                         # (B, N, N) scores[h, d]
B, N, _ = S.shape
scores = torch.tensor(S.transpose(0, 2, 1).copy())   # SuPar: [batch, dependent, head]
lens = torch.full((B,), N - 1, dtype=torch.long)

def run():
    s = scores.clone().requires_grad_()
    dist = MatrixTree(s, lens, multiroot=False)
    log_z = dist.log_partition
    marg, = torch.autograd.grad(log_z.sum(), s)
    return log_z.detach(), marg

log_z, marg = run()
best = float("inf")
for _ in range(repeats):
    start, reps = time.perf_counter(), 0
    while True:
        run(); reps += 1
        if time.perf_counter() - start >= min_time:
            break
    best = min(best, (time.perf_counter() - start) / reps)
np.save(path + ".marg.npy", marg.numpy().transpose(0, 2, 1))
print(json.dumps({"seconds": best, "log_z": log_z.tolist()}))
"""


def _ours(arrays: List[np.ndarray], repeats: int, min_time: float):
    out = dependency.matrix_tree_marginals(arrays)
    best = float("inf")
    for _ in range(repeats):
        start, reps = time.perf_counter(), 0
        while True:
            dependency.matrix_tree_marginals(arrays)
            reps += 1
            if time.perf_counter() - start >= min_time:
                break
        best = min(best, (time.perf_counter() - start) / reps)
    return best, out


def run(supar_python: Path, sizes: Sequence[int] = (10, 20, 40, 80), batch: int = 64,
        repeats: int = 5, min_time: float = 0.5, seed: int = 0) -> List[dict]:
    """One row per sentence length: sentences per second of both, and
    whether their log Z and marginals agree."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "supar_mt.py"
        script.write_text(SUPAR_SCRIPT)
        for n in sizes:
            rng = np.random.default_rng(seed + n)
            S = rng.normal(scale=2.0, size=(batch, n + 1, n + 1))
            path = Path(tmp) / f"scores{n}.npy"
            np.save(path, S)
            ours_seconds, ours = _ours(list(S), repeats, min_time)
            done = subprocess.run([str(supar_python), str(script), str(path), str(repeats), str(min_time)],
                                  capture_output=True, text=True,
                                  env={"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
            if done.returncode != 0:
                raise RuntimeError(f"SuPar's MatrixTree failed:\n{done.stderr[-2000:]}")
            theirs = json.loads(done.stdout.strip().splitlines()[-1])
            their_marg = np.load(str(path) + ".marg.npy")
            agree = all(
                np.isclose(z, tz, rtol=1e-6, atol=1e-6) and np.allclose(m[:, 1:], tm[:, 1:], atol=1e-6)
                for (z, m), tz, tm in zip(ours, theirs["log_z"], their_marg)
            )
            rows.append({"n": n, "ours": batch / ours_seconds, "supar": batch / theirs["seconds"],
                         "agree": agree})
    return rows


def format_table(rows: Sequence[dict], batch: int) -> str:
    lines = ["| words | ours, sentences/s | SuPar MatrixTree, sentences/s | ours / SuPar | same log Z and marginals |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['n']} | {r['ours']:,.0f} | {r['supar']:,.0f} | {r['ours'] / r['supar']:.2f}x | "
                     f"{'yes' if r['agree'] else 'NO'} |")
    return "\n".join(lines)
