"""Child of `tools.bench.speed` for Morfessor Baseline, run by the Morfessor
virtual environment's Python (no spaCy there):

python morfessor_speed.py MODEL_FILE TOKENS_FILE REPEATS

Segments every token of TOKENS_FILE (one per line) with the model's
`viterbi_segment`, the call `morfessor-segment` makes per word, REPEATS
times, and prints the best seconds, the token count and the peak memory as JSON.
"""
import json
import resource
import sys
import time

import morfessor


def main(model_file: str, tokens_file: str, repeats: int) -> None:
    model = morfessor.MorfessorIO().read_binary_model_file(model_file)
    with open(tokens_file, encoding="utf8") as f:
        tokens = [line.rstrip("\n") for line in f if line.strip()]
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for token in tokens:
            model.viterbi_segment(token)
        best = min(best, time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": best, "words": len(tokens), "peak_mb": peak}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
